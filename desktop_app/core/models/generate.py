"""Answer generation with a local GGUF model (llama-cpp-python). Qt-free, no asyncio.

One ``LlamaGenerator`` owns one ``Llama`` instance; the facade calls it from a single
owner thread. The chat template comes from the GGUF and is rendered in Jinja's
immutable sandbox, so a hostile template cannot reach Python.

``stream`` reads the prompt in steps of :data:`PREFILL_STEP` tokens, checking for
cancellation between them (a prompt takes 20-60 s on a 2-core machine), and reuses the
KV cache for the prefix the previous prompt shared (the system prompt and the worked
example never change). It checks a grammar with llama.cpp's parser first (an invalid one
would crash the process when sampling starts) and pulls the first chunk before handing
the stream out, so a broken model fails as a KnownError, not as half an answer.
Figures: bench/answer.py (Folio vs llama.cpp alone), bench/citing.py (sampling).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop_app.core.errors import Cancelled, KnownError
from desktop_app.core.stages import Message

logger = logging.getLogger(__name__)


# Used when a GGUF carries no chat template (ChatML, which most small instruct models know).
_CHATML = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content']"
    " + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


@dataclass(frozen=True)
class GenerationStats:
    prompt_tokens: int
    completion_tokens: int  # streamed chunks: llama-cpp-python yields one per sampled token
    seconds_to_first_token: float
    seconds: float
    cached_tokens: int = 0  # prompt tokens found in the KV cache (read for an earlier prompt)

    @property
    def tokens_per_second(self) -> float:
        """Decode speed after the first token (the prompt's cost is in the time to first token)."""
        decoding = self.seconds - self.seconds_to_first_token
        return (self.completion_tokens - 1) / decoding if self.completion_tokens > 1 and decoding > 0 else 0.0


# Sampling. ``repeat_penalty`` stays at 1.0: a penalty over the last 64 tokens lowers the odds
# of the second ``[1]`` of an answer and of figures copied from the sources (bench/citing.py).
TOP_P = 0.9
REPEAT_PENALTY = 1.0
# Prompt tokens evaluated between two cancellation checks: ~2.5 s on 1 thread with the 1.5B
# model. Steps of 64 made its prompt 6% slower than llama.cpp's own 512 (19.3 vs 18.2 s for
# 900 tokens); 128 cost nothing measurable (18.2 s).
PREFILL_STEP = 128


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


def _cancelled() -> Iterator[str]:
    raise Cancelled()
    yield ""  # pragma: no cover - makes this a generator: Cancelled comes from iterating


@contextlib.contextmanager
def _captured_stderr() -> Iterator[Callable[[], list[str]]]:
    """Capture what native code writes to file descriptor 2 inside the block."""
    lines: list[str] = []
    try:
        saved = os.dup(2)
    except OSError:  # no stderr to capture (a windowed app): run the block as it is
        yield lambda: lines
        return
    with tempfile.TemporaryFile() as sink:
        try:
            sys.stderr.flush()
            os.dup2(sink.fileno(), 2)
            yield lambda: lines
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            lines.extend(sink.read(8192).decode("utf-8", errors="replace").splitlines())


class LlamaGenerator:
    def __init__(self, model_path: Path | str, *, context_tokens: int = 4096, threads: int | None = None,
                 seed: int = 42) -> None:
        path = Path(model_path)
        if not path.is_file():
            raise KnownError(f"The answer model {path} does not exist.",
                             "Run `folio models install` or pick a GGUF file in Settings.")
        try:
            with path.open("rb") as handle:
                magic = handle.read(4)
        except OSError as exc:
            raise KnownError(f"The answer model {path} cannot be read ({exc.strerror}).",
                             "Check the file's permissions or pick another GGUF file.") from exc
        if magic != b"GGUF":
            raise KnownError(f"The answer model {path} is not a GGUF file.",
                             "Reinstall it (`folio models install`) or pick another GGUF file.")
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
                # Read, not mapped: llama.cpp repacks the weights for the CPU, and with mmap
                # the file's pages stayed resident beside the repacked copy (1.5B model:
                # 1,904 MiB resident mapped, 1,313 MiB read; same tokens/s, bench/rss.py).
                use_mmap=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise KnownError(f"The answer model {path} could not be loaded ({exc}).",
                             "Is it a complete GGUF file? Reinstall it or pick another one.") from exc
        self.context_tokens = int(self._llm.n_ctx())
        meta: dict[str, Any] = dict(getattr(self._llm, "metadata", {}) or {})
        self._template = meta.get("tokenizer.chat_template") or _CHATML
        self.model_id = str(meta.get("general.name") or path.stem)
        self._bos = self._token_text(self._llm.token_bos())
        self._eos = self._token_text(self._llm.token_eos())
        model: Any = getattr(self._llm, "_model", None)
        self._adds_bos = bool(model.add_bos_token()) if hasattr(model, "add_bos_token") else False
        self.last_stats: GenerationStats | None = None
        self._cached = 0
        # Set by the worker process (llm_worker.py): arms llama.cpp's abort callback while
        # the prompt is read, so a cancel stops a prefill step midway.
        self.abort_hook: Callable[[bool], None] | None = None

    def _token_text(self, token: int) -> str:
        if token < 0:
            return ""
        try:
            raw: bytes = self._llm.detokenize([token], special=True)
        except TypeError:  # older llama-cpp-python without ``special``
            raw = self._llm.detokenize([token])
        return raw.decode("utf-8", errors="ignore")

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
        tokens = self.prompt_tokens(prompt)
        prompt_tokens = len(tokens)
        room = self.context_tokens - prompt_tokens
        if room < 16:
            raise KnownError(
                f"The question and its sources take {prompt_tokens} tokens; the model's window is {self.context_tokens}.",
                "Ask with fewer sources per answer.",
            )
        kwargs: dict[str, Any] = {}
        if grammar:
            from llama_cpp import LlamaGrammar

            self.check_grammar(grammar)
            kwargs["grammar"] = LlamaGrammar.from_string(grammar, verbose=False)
        started = time.perf_counter()
        if not self._prefill(tokens, should_cancel):
            self.last_stats = GenerationStats(prompt_tokens, 0, 0.0, time.perf_counter() - started,
                                              self._cached)
            return _cancelled()
        chunks = self._llm.create_completion(
            tokens, max_tokens=min(max_tokens, room), temperature=temperature, top_p=TOP_P,
            repeat_penalty=REPEAT_PENALTY, stream=True,
            stop=[s for s in (self._eos, "<|im_end|>", "<|endoftext|>") if s], **kwargs,
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

    def prime(self, messages: Sequence[Message], should_cancel: Callable[[], bool] = lambda: False) -> int:
        """Read ``messages`` into the KV cache ahead of a question, so that the part a
        later prompt shares with them (the system prompt and the worked example) is not
        read again. Returns how many prompt tokens are now cached."""
        if not self._prefill(self.prompt_tokens(self.render(messages)), should_cancel):
            return 0
        return int(self._llm.n_tokens)

    def prompt_tokens(self, prompt: str) -> list[int]:
        """The tokens of a rendered prompt as the model reads them (the template's special
        tokens parsed, BOS added once if the model wants one)."""
        tokens: list[int] = self._llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
        bos = self._llm.token_bos()
        if self._adds_bos and bos >= 0 and tokens[:1] != [bos]:
            tokens.insert(0, bos)
        return tokens

    def _prefill(self, tokens: Sequence[int], should_cancel: Callable[[], bool]) -> bool:
        """Evaluate the prompt (all but its last token) in steps, checking ``should_cancel``
        between them: on this kind of machine a prompt takes 20-60 s, and Stop must work
        during that wait too. Reuses the KV cache for the prefix the previous prompt shared
        (the system prompt and the worked example), as llama-cpp-python would. False if
        cancelled. ``create_completion`` then finds all but the last token cached."""
        llm = self._llm
        try:
            cached = llm.input_ids[: llm.n_tokens]
        except AttributeError:  # pragma: no cover - another llama-cpp-python layout
            return not should_cancel()
        keep = 0
        for old, new in zip(cached, tokens[:-1], strict=False):
            if old != new:
                break
            keep += 1
        llm.n_tokens = keep  # eval() drops the KV cache beyond this point
        self._cached = keep
        if self.abort_hook is not None:
            self.abort_hook(True)
        try:
            for start in range(keep, len(tokens) - 1, PREFILL_STEP):
                if should_cancel():
                    return False
                try:
                    llm.eval(tokens[start : min(start + PREFILL_STEP, len(tokens) - 1)])
                except RuntimeError as exc:
                    if should_cancel():  # llama.cpp's abort callback stopped this step
                        llm.n_tokens = start  # the next eval drops the step's partial cache
                        return False
                    llm.reset()
                    raise KnownError(f"The model failed to read the prompt ({exc}).",
                                     "Try the small model or another GGUF.") from exc
        finally:
            if self.abort_hook is not None:
                self.abort_hook(False)
        return not should_cancel()

    def check_grammar(self, grammar: str) -> None:
        """Raise KnownError unless llama.cpp parses ``grammar``.

        llama-cpp-python 0.3.x does not parse a grammar until sampling starts, and a grammar
        it cannot parse then crashes the process (a NULL sampler): parse it here first, with
        llama.cpp's own parser, and keep the parser's message (it writes it to stderr).
        """
        import llama_cpp

        vocab = getattr(getattr(self._llm, "_model", None), "vocab", None)
        if vocab is None:  # pragma: no cover - another llama-cpp-python layout
            raise KnownError("This llama-cpp-python cannot check a grammar before using it.",
                             "Turn off the citation grammar (use_grammar) in Settings.")
        with _captured_stderr() as captured:
            sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode("utf-8"), b"root")
        if not sampler:
            detail = " ".join(dict.fromkeys(line.strip() for line in captured() if line.strip()))
            raise KnownError(f"The citation grammar is not valid GBNF ({detail or 'no root rule'}).",
                             "Turn off the citation grammar (use_grammar) in Settings.")
        llama_cpp.llama_sampler_free(sampler)

    def _drain(self, first: Any, iterator: Iterator[Any], should_cancel: Callable[[], bool],
               prompt_tokens: int, started: float, first_at: float) -> Iterator[str]:
        import time

        produced = 0
        try:
            if first is not None:
                produced += 1
                if first["choices"][0]["text"]:
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
                                              time.perf_counter() - started, self._cached)
