"""The one settings object: defaults in code, saved as TOML in the config dir. Qt-free."""

from __future__ import annotations

import dataclasses
import logging
import os
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from desktop_app.core import paths
from desktop_app.core.errors import KnownError, io_error
from desktop_app.core.text import lang
from desktop_app.core.types import CitationStyle

logger = logging.getLogger(__name__)


def _default_threads() -> int:
    # llama.cpp built with OpenMP collapses when its threads compete with another busy
    # process (DESIGN.md): leave one core for the GUI, parsing and embedding.
    return max(1, (os.cpu_count() or 2) - 1)



def prompt_languages() -> tuple[tuple[str, str], ...]:
    """The prompt languages a person chooses from, (code, name): "auto", then every
    registered lexicon (core/text/lang/): a language added there is a choice here."""
    return (("auto", "Automatic"), *((x.code, x.name or x.code) for x in lang.all_lexicons()))

@dataclass(frozen=True)
class Settings:
    answer_model: str = "default"  # "default" | "small" | a path to a .gguf file | "server"
    server_url: str = ""  # the model server's address when answer_model is "server"
    server_model: str = ""  # the model it serves; empty: the first it lists (its key: server_key_path())
    embedder: str = "default"  # "default" (multilingual-e5-small) | "minilm" | a folder with model.onnx + tokenizer.json
    citation_style: str = CitationStyle.LABEL  # a CitationStyle: "label" | "shortid"
    sources_per_answer: int = 5
    max_tokens: int = 320
    temperature: float = 0.1
    threads: int = dataclasses.field(default_factory=_default_threads)
    context_tokens: int = 4096
    # After an answer, ask the model whether each checked sentence's passage says it (its
    # P(yes) decides green or not confirmed, and whether a red stays: core/verdicts/judge.py), at most MAX_JUDGED
    # questions and none started after judge_budget_s (bench/verdicts.py: ~2-3 s each).
    judge: bool = True
    judge_budget_s: float = 30.0  # no new judge question after this many seconds
    prompt_language: str = "auto"  # "auto" | a registered language's code (prompt_languages)
    use_grammar: bool = False
    # Ask the model first how likely it is to say its sources do not hold the answer
    # (gate.ABSTAIN_PROBABILITY). Off: with the default 1.5B model it declined as many
    # answerable questions as unanswerable ones on the held-out half (bench/gate.py).
    abstain: bool = False
    data_dir: str = ""  # empty: the platform default (or FOLIO_HOME)
    parse_timeout_s: float = 60.0  # per file; + parse_pool.OCR_SECONDS_PER_PAGE a page to OCR
    ocr: bool = True  # read scanned pages (no text layer) and garbled ones with OCR
    # Tokens of evidence a prompt carries in all (core/answer/evidence.py); 0: whole chunks.
    evidence_tokens: int = 280
    # Draft tokens a step by prompt lookup (core/models/generate.py); 0: off.
    prompt_lookup: int = 0
    # "Find the passage only": show the document's own answering sentence (the answer
    # finder, core/answer/finder.py) and its sources, and run no model.
    quote_only: bool = False

    def validate(self) -> None:
        if self.citation_style not in tuple(CitationStyle):
            raise KnownError(f"Unknown citation style {self.citation_style!r}.", "Use label or shortid.")
        choices = [code for code, _ in prompt_languages()]
        if self.prompt_language not in choices:
            raise KnownError(f"Unknown prompt language {self.prompt_language!r}.",
                             f"Use {', '.join(choices[:-1])} or {choices[-1]}.")
        if not 0.0 < self.judge_budget_s <= 600.0:
            raise KnownError("The judge's time budget must be between 0 and 600 seconds.")
        if not 1 <= self.sources_per_answer <= 20:
            raise KnownError("Sources per answer must be between 1 and 20.")
        if not 16 <= self.max_tokens <= 4096:
            raise KnownError("Max tokens must be between 16 and 4096.")
        if not 0.0 <= self.temperature <= 2.0:
            raise KnownError("Temperature must be between 0 and 2.")
        if not 1 <= self.threads <= 256:
            raise KnownError("CPU threads must be between 1 and 256.")
        if self.answer_model == SERVER:
            if not self.server_url.strip():
                raise KnownError("No model server URL given.", "Enter the server's address, e.g. http://127.0.0.1:8080/v1.")
            normalize_server_url(self.server_url)
        elif self.answer_model not in ("default", "small"):
            path = Path(self.answer_model)
            if path.suffix.lower() != ".gguf" or not path.is_file():
                raise KnownError(f"{self.answer_model} is not a .gguf file.", "Pick a GGUF model file.")
            with path.open("rb") as handle:
                if handle.read(4) != b"GGUF":
                    raise KnownError(
                        f"{path.name} is not a GGUF model: it does not start with the GGUF magic bytes.",
                        "Pick a GGUF model file (llama.cpp's format).",
                    )
        if self.embedder not in ("default", "minilm"):
            folder = Path(self.embedder)
            if not (folder / "model.onnx").is_file() or not (folder / "tokenizer.json").is_file():
                raise KnownError(
                    f"{self.embedder} does not hold model.onnx and tokenizer.json.",
                    "Pick a folder with an ONNX sentence embedder.",
                )
        if not 0 <= self.evidence_tokens <= 8192:
            raise KnownError("The evidence budget must be between 0 (whole passages) and 8192 tokens.")
        if not 0 <= self.prompt_lookup <= 64:
            raise KnownError("Prompt-lookup draft tokens must be between 0 (off) and 64.")
        if not 512 <= self.context_tokens <= 131072:
            raise KnownError("The context window must be between 512 and 131072 tokens.")
        if not 1.0 <= self.parse_timeout_s <= 3600.0:
            raise KnownError("The parse time limit must be between 1 and 3600 seconds.")
        if self.data_dir:
            self._validate_data_dir(Path(self.data_dir).expanduser())

    @staticmethod
    def _validate_data_dir(folder: Path) -> None:
        hint = "Pick an existing folder you can write to (or leave it empty for the default)."
        if not folder.is_absolute():
            raise KnownError(f"The data folder {folder} is not an absolute path.", hint)
        if folder.exists() and not folder.is_dir():
            raise KnownError(f"The data folder {folder} is a file, not a folder.", hint)
        existing = folder if folder.exists() else folder.parent
        if not existing.is_dir():
            raise KnownError(f"The data folder's parent {existing} does not exist.", hint)
        if not os.access(existing, os.W_OK | os.X_OK):
            raise KnownError(f"Folio cannot write to {existing}.", hint)

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)


SERVER = "server"  # the answer_model value that sends questions to a model server
SERVER_KEY_ENV = "FOLIO_SERVER_KEY"  # overrides the key file (the command line, CI)


def normalize_server_url(url: str) -> str:
    """The OpenAI-compatible base URL (``http://host:port/v1``) for what a person typed:
    the scheme defaults to http, an empty path becomes ``/v1``. A user name or password in
    the URL is refused: it would be saved in settings.toml, which is not private."""
    text = url.strip()
    if "://" not in text:
        text = "http://" + text
    hint = "Use an address like http://127.0.0.1:8080/v1 (llama-server, vLLM) or http://127.0.0.1:11434/v1 (Ollama)."
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError as exc:
        raise KnownError(f"{url!r} is not a server address ({exc}).", hint) from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise KnownError(f"{url!r} is not a server address.", hint)
    if parts.username or parts.password:
        raise KnownError("The server URL holds a user name or password.",
                         "Put the key in the API key field: it is kept in a private file, not in settings.toml.")
    path = parts.path.rstrip("/") or "/v1"
    return f"{parts.scheme}://{parts.netloc}{path}"


def server_key_path() -> Path:
    """The model server's API key: its own file, readable by its owner only (0600)."""
    return paths.config_dir() / "server-key"


def load_server_key(*, environment: bool = True) -> str:
    """The API key for the model server ("" when none): ``FOLIO_SERVER_KEY`` if set (and
    ``environment``), else the key file. Never logged."""
    if environment and os.environ.get(SERVER_KEY_ENV):
        return os.environ[SERVER_KEY_ENV].strip()
    path = server_key_path()
    try:
        if path.stat().st_mode & 0o077:
            logger.warning("the API key file %s was readable by others; made it private", path)
            path.chmod(0o600)
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return ""
    except OSError as exc:
        logger.warning("the API key file %s is unreadable (%s)", path, exc.strerror)
        return ""
    except UnicodeDecodeError:
        logger.warning("the API key file %s is not text; ignored (enter the key again)", path)
        return ""


def save_server_key(key: str) -> Path:
    """Write the key to its private file (created 0600, never world-readable, not even for
    a moment); an empty key removes the file."""
    path = server_key_path()
    key = key.strip()
    if not key:
        path.unlink(missing_ok=True)
        return path
    try:
        return paths.write_atomic(path, (key + "\n").encode("utf-8"), mode=0o600)
    except OSError as exc:
        raise _write_error(exc, path, "saving the API key") from exc


def _write_error(exc: OSError, path: Path, doing: str) -> KnownError:
    return io_error(exc, path, doing) or KnownError(f"Could not write {path}: {exc.strerror or exc}.")


def settings_path() -> Path:
    return paths.config_dir() / "settings.toml"


@dataclass(frozen=True)
class Loaded:
    """Settings as read, and ``notice``: what a person must be told ("" when nothing),
    e.g. that a damaged settings file was kept aside and the defaults are in use."""

    settings: Settings
    notice: str = ""


def load(path: Path | None = None) -> Settings:
    return load_checked(path).settings


def load_checked(path: Path | None = None) -> Loaded:
    """The saved settings. A file that is no TOML (binary junk, a torn write from before
    writes were atomic) or holds values of the wrong kind gives the defaults, and is kept
    aside as ``settings.toml.broken-<time>`` for the person (never deleted) so the next
    save does not overwrite it; ``notice`` says so."""
    path = path or settings_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Loaded(Settings())
    except OSError as exc:
        logger.warning("settings file %s unreadable (%s); using defaults", path, exc)
        return Loaded(Settings(), f"Folio could not read {path} ({exc.strerror or exc}); "
                                  "it is using the default settings for now.")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
        known = {f.name for f in dataclasses.fields(Settings)}
        settings = Settings(**{k: v for k, v in data.items() if k in known})
        _check_kinds(settings)
        return Loaded(settings)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, TypeError, ValueError) as exc:
        logger.info("settings file %s damaged (%s); using defaults", path, exc)
        kept = _keep_aside(path)
        where = f"it was kept as {kept.name}" if kept else "it was left as it is"
        return Loaded(Settings(), f"The settings file {path} could not be read ({_reason(exc)}): {where}, "
                                  "and Folio uses the default settings. Choose your settings again "
                                  "(Settings in the window) or copy them back from that file.")


def _reason(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "it is not text"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _check_kinds(settings: Settings) -> None:
    """A value of the wrong kind (a number where text belongs) is a damaged file."""
    defaults = Settings()
    for f in dataclasses.fields(Settings):
        value, default = getattr(settings, f.name), getattr(defaults, f.name)
        if isinstance(default, bool) and not isinstance(value, bool):
            raise TypeError(f"{f.name} must be true or false")
        if isinstance(default, (int, float)) and not isinstance(default, bool) and (
                isinstance(value, bool) or not isinstance(value, (int, float))):
            raise TypeError(f"{f.name} must be a number")
        if isinstance(default, str) and not isinstance(value, str):
            raise TypeError(f"{f.name} must be text")


def _keep_aside(path: Path) -> Path | None:
    target = path.with_name(f"{path.name}.broken-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        os.replace(path, target)
    except OSError as exc:
        logger.warning("could not keep %s aside: %s", path, exc)
        return None
    return target


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def save(settings: Settings, path: Path | None = None) -> Path:
    settings.validate()
    path = path or settings_path()
    lines = [f"{f.name} = {_toml_value(getattr(settings, f.name))}" for f in dataclasses.fields(settings)]
    try:
        return paths.write_atomic(path, ("\n".join(lines) + "\n").encode("utf-8"))
    except OSError as exc:
        raise _write_error(exc, path, "saving the settings") from exc
