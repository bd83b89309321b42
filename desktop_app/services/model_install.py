"""Model set-up for the window: is everything installed, what is a model file, install the
defaults on a worker thread. Qt-free.

The window never imports ``core.models`` itself: it asks :func:`check_models` at start (a
few ``stat`` calls), shows :class:`AnswerModelInfo` / :class:`EmbedderInfo` in the settings
dialog (read off the GUI thread), and runs :class:`ModelInstall`, whose progress arrives on
the event loop and which stops promptly after :meth:`ModelInstall.cancel`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from desktop_app.core.errors import KnownError, ModelMissingError
from desktop_app.core.models import catalog as models
from desktop_app.core.models.catalog import (
    InstallProgress,
    InstallStep,
    ModelRole,
    install,
    list_models,
)
from desktop_app.core.models.gguf_info import GgufInfo, human_size, read_info
from desktop_app.core.samples.pdfs import write_samples
from desktop_app.core.settings import SERVER, Settings

logger = logging.getLogger(__name__)

__all__ = [  # the first run also needs the sample folder and a readable size
    "AnswerModelInfo",
    "EmbedderInfo",
    "InstallProgress",
    "InstallStep",
    "Installer",
    "ModelCheck",
    "ModelInstall",
    "ModelProblem",
    "check_models",
    "describe_answer_model",
    "human_size",
    "install",
    "keep_alive_seconds",
    "list_models",
    "stop_kept_models",
    "write_samples",
    "describe_embedder",
]

BUILT_IN = ("default", "small")


class Installer(Protocol):
    """``models.install``'s signature: the real installer, or a fake in tests."""

    def __call__(
        self,
        which: str = ...,
        progress: Callable[[InstallProgress], None] | None = ...,
        should_cancel: Callable[[], bool] | None = ...,
    ) -> list[Path]: ...


@dataclass(frozen=True)
class ModelProblem:
    role: str  # "answer model" | "embedder"
    message: str
    hint: str


@dataclass(frozen=True)
class ModelCheck:
    """What is missing for the current settings, and what installing would fix."""

    problems: tuple[ModelProblem, ...]
    install_set: str  # the model set "Install" would fetch: "default" or "small"
    install_bytes: int  # bytes of that set not installed yet
    fixable_by_install: bool  # installing ``install_set`` fixes every problem

    @property
    def ready(self) -> bool:
        return not self.problems

    def missing(self, role: str) -> bool:
        return any(p.role == role for p in self.problems)


def check_models(settings: Settings) -> ModelCheck:
    """Look on disk only (sizes and magic bytes, no hashing): fast enough for start-up."""
    problems: list[ModelProblem] = []
    fixable = True
    try:
        if settings.answer_model != SERVER:  # a model server: nothing to install here
            models.resolve_answer_model(settings.answer_model)
    except ModelMissingError as error:
        problems.append(ModelProblem("answer model", error.message, error.hint))
        fixable = fixable and settings.answer_model in BUILT_IN
    try:
        models.resolve_embedder(settings.embedder)
    except ModelMissingError as error:
        problems.append(ModelProblem("embedder", error.message, error.hint))
        fixable = fixable and settings.embedder in models.EMBEDDER_CHOICES
    which = settings.answer_model if settings.answer_model in BUILT_IN else "small"
    needed = sum(m.expected_size for m in models.list_models(which) if not m.installed)
    return ModelCheck(tuple(problems), which, needed, fixable and bool(problems))


# --------------------------------------------------------------------------- describing


@dataclass(frozen=True)
class AnswerModelInfo:
    choice: str
    path: Path | None
    installed: bool
    summary: str  # one line for people: size, context window, architecture
    gguf: GgufInfo | None = None
    problem: str = ""  # why it cannot be used; "" when it can


@dataclass(frozen=True)
class EmbedderInfo:
    choice: str
    installed: bool
    summary: str
    problem: str = ""


def _built_in_spec(choice: str, role: ModelRole) -> models.ModelSpec:
    return next(s for s in models.load_manifest() if s.role is role and choice in s.sets)


def answer_model_info(choice: str) -> AnswerModelInfo:
    """Blocking (reads the file's header): call :func:`describe_answer_model` from the UI."""
    if choice in BUILT_IN:
        spec = _built_in_spec(choice, ModelRole.ANSWER)
        try:
            path = models.resolve_answer_model(choice)
        except ModelMissingError as error:
            summary = f"{spec.filename} · not installed ({human_size(spec.size)} to download)"
            return AnswerModelInfo(choice, None, False, summary, problem=str(error))
    else:
        path = Path(choice).expanduser()
    try:
        info = read_info(path)
    except KnownError as error:
        return AnswerModelInfo(choice, path, False, "", problem=str(error))
    return AnswerModelInfo(choice, path, True, f"{path.name} · {info.describe()}", info)


def embedder_info(choice: str) -> EmbedderInfo:
    spec = models.embedder_spec(choice)
    try:
        model, tokenizer = models.resolve_embedder(choice)
    except ModelMissingError as error:
        if spec is not None:
            amount = human_size(spec.size)
            summary = f"{spec.id} · not installed ({amount}{' after conversion' if spec.convert else ' to download'})"
            return EmbedderInfo(choice, False, summary, str(error))
        return EmbedderInfo(choice, False, "", str(error))
    size = model.stat().st_size + tokenizer.stat().st_size
    name = spec.id if spec is not None else model.parent.name
    return EmbedderInfo(choice, True, f"{name} · ONNX · {human_size(size)}")


async def describe_answer_model(choice: str) -> AnswerModelInfo:
    return await asyncio.to_thread(answer_model_info, choice)


async def describe_embedder(choice: str) -> EmbedderInfo:
    return await asyncio.to_thread(embedder_info, choice)


# --------------------------------------------------------------------------- installing


class ModelInstall:
    """One run of the installer on its own worker thread.

    Progress callbacks are handed to the event loop (``call_soon_threadsafe``), so
    ``on_progress`` may touch widgets. :meth:`cancel` makes the installer raise
    ``Cancelled`` at its next check (pip is terminated within a fraction of a second).
    """

    def __init__(self, which: str = "default", installer: Installer | None = None) -> None:
        self.which = which
        self.installer: Installer = installer or models.install
        self._cancel = threading.Event()

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    async def run(self, on_progress: Callable[[InstallProgress], None]) -> list[Path]:
        loop = asyncio.get_running_loop()

        def progress(event: InstallProgress) -> None:
            loop.call_soon_threadsafe(on_progress, event)

        def work() -> list[Path]:
            return self.installer(self.which, progress=progress, should_cancel=self._cancel.is_set)

        pool = ThreadPoolExecutor(1, thread_name_prefix="folio-install")
        try:
            result = await loop.run_in_executor(pool, work)
        except asyncio.CancelledError:
            self._cancel.set()  # the thread notices and ends on its own
            raise
        finally:
            pool.shutdown(wait=False)
        await asyncio.sleep(0)  # progress callbacks queued before the result run first
        logger.info("installed the %s models: %s", self.which, ", ".join(p.name for p in result))
        return result


def keep_alive_seconds() -> float:
    """How long the command line's answer model stays loaded after a command (FOLIO_KEEP_ALIVE;
    0 where it cannot be kept: not POSIX)."""
    from desktop_app.core.models import keep_alive

    return keep_alive.idle_seconds() if keep_alive.supported() else 0.0


def stop_kept_models() -> list[int]:
    """End the answer models kept loaded between commands (``folio models stop``): their pids."""
    from desktop_app.core.models import keep_alive

    return keep_alive.stop_all()
