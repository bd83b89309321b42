"""Answer generation with a local GGUF model (llama-cpp-python). Qt-free, no asyncio.

One ``LlamaGenerator`` owns one ``Llama`` instance; the facade calls it from a single
owner thread. The chat template comes from the GGUF and is rendered in Jinja's
immutable sandbox, so a hostile template cannot reach Python. The first chunk is
pulled before the stream is handed out, so a broken model fails as an error, not as
half an answer.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from desktop_app.core.errors import Cancelled, KnownError

logger = logging.getLogger(__name__)

Message = dict[str, str]

# Used when a GGUF carries no chat template (ChatML, which most small instruct models know).
_CHATML = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content']"
    " + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


class Generator(Protocol):
    model_id: str
    context_tokens: int

    def count_tokens(self, text: str) -> int: ...

    def render(self, messages: Sequence[Message]) -> str: ...

    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        grammar: str | None = None,
        should_cancel: Callable[[], bool] = lambda: False,
    ) -> Iterator[str]: ...


@dataclass(frozen=True)
class GenerationStats:
    prompt_tokens: int
    completion_tokens: int
    seconds_to_first_token: float
    seconds: float


def render_chat_template(template: str, messages: Sequence[Message], bos: str, eos: str) -> str:
    from jinja2.exceptions import SecurityError, TemplateError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)

    def raise_exception(message: str) -> None:
        raise TemplateError(message)

    try:
        return env.from_string(template).render(
            messages=list(messages), bos_token=bos, eos_token=eos, add_generation_prompt=True,
            raise_exception=raise_exception, tools=None,
        )
    except SecurityError as exc:
        raise KnownError(f"The model's chat template tried something unsafe: {exc}.",
                         "Use another GGUF file.") from exc
    except TemplateError as exc:
        raise KnownError(f"The model's chat template failed: {exc}.", "Use another GGUF file.") from exc


class LlamaGenerator:
    def __init__(self, model_path: Path | str, *, context_tokens: int = 4096, threads: int | None = None,
                 seed: int = 42) -> None:
        path = Path(model_path)
        if not path.is_file():
            raise KnownError(f"The answer model {path} does not exist.",
                             "Run `folio models install` or pick a GGUF file in Settings.")
        try:
            from llama_cpp import Llama
        except ImportError as exc:  # pragma: no cover - install problem
            raise KnownError("llama-cpp-python is not installed.", "Run `make run` to set Folio up.") from exc
        self.path = path
        self.threads = threads or max(1, (os.cpu_count() or 2) - 1)
        try:
            self._llm = Llama(
                model_path=str(path), n_ctx=context_tokens, n_threads=self.threads,
                n_threads_batch=self.threads, seed=seed, verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise KnownError(f"The model file {path.name} could not be loaded ({exc}).",
                             "Is it a complete GGUF file? Reinstall it or pick another one.") from exc
        self.context_tokens = int(self._llm.n_ctx())
        meta: dict[str, Any] = dict(getattr(self._llm, "metadata", {}) or {})
        self._template = meta.get("tokenizer.chat_template") or _CHATML
        self.model_id = str(meta.get("general.name") or path.stem)
        self._bos = self._token_text(self._llm.token_bos())
        self._eos = self._token_text(self._llm.token_eos())
        self.last_stats: GenerationStats | None = None

    def _token_text(self, token: int) -> str:
        if token < 0:
            return ""
        try:
            return self._llm.detokenize([token], special=True).decode("utf-8", errors="ignore")
        except TypeError:  # older llama-cpp-python without ``special``
            return self._llm.detokenize([token]).decode("utf-8", errors="ignore")

    def count_tokens(self, text: str) -> int:
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def render(self, messages: Sequence[Message]) -> str:
        return render_chat_template(self._template, messages, self._bos, self._eos)

    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        grammar: str | None = None,
        should_cancel: Callable[[], bool] = lambda: False,
    ) -> Iterator[str]:
        """Yield text deltas. Raises KnownError before the first delta if the model fails."""
        import time

        prompt = self.render(messages)
        prompt_tokens = self.count_tokens(prompt)
        room = self.context_tokens - prompt_tokens
        if room < 16:
            raise KnownError(
                f"The question and its sources take {prompt_tokens} tokens; the model's window is {self.context_tokens}.",
                "Ask with fewer sources per answer.",
            )
        kwargs: dict[str, Any] = {}
        if grammar:
            from llama_cpp import LlamaGrammar

            kwargs["grammar"] = LlamaGrammar.from_string(grammar, verbose=False)
        started = time.perf_counter()
        chunks = self._llm.create_completion(
            prompt, max_tokens=min(max_tokens, room), temperature=temperature, top_p=0.9,
            repeat_penalty=1.1, stream=True, stop=[s for s in (self._eos, "<|im_end|>", "<|endoftext|>") if s],
            **kwargs,
        )
        iterator = iter(chunks)
        try:
            first = next(iterator)
        except StopIteration:
            first = None
        except (RuntimeError, ValueError) as exc:
            raise KnownError(f"The model failed to generate ({exc}).", "Try the small model or another GGUF.") from exc
        first_at = time.perf_counter()
        return self._drain(first, iterator, should_cancel, prompt_tokens, started, first_at)

    def _drain(self, first: Any, iterator: Iterator[Any], should_cancel: Callable[[], bool],
               prompt_tokens: int, started: float, first_at: float) -> Iterator[str]:
        import time

        produced = 0
        try:
            if first is not None:
                produced += 1
                yield first["choices"][0]["text"]
            for chunk in iterator:
                if should_cancel():
                    raise Cancelled()
                produced += 1
                text = chunk["choices"][0]["text"]
                if text:
                    yield text
        finally:
            close = getattr(iterator, "close", None)
            if close is not None:
                close()
            self.last_stats = GenerationStats(prompt_tokens, produced, first_at - started,
                                              time.perf_counter() - started)
