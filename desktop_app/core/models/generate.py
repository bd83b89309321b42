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
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from desktop_app.core.errors import Cancelled, KnownError
from desktop_app.core.models import cores, steer
from desktop_app.core.models.speed import SpeedMeter
from desktop_app.core.models.steer import SentenceMarkers, SourceChoice, TokenTable
from desktop_app.core.stages import Deltas, Message
from desktop_app.core.types import GenerationStats, Steering

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

logger = logging.getLogger(__name__)


class _CompletionChoice(TypedDict):
    text: str


class CompletionChunk(TypedDict):
    """One streamed chunk of llama-cpp-python's ``create_completion`` (the fields read here)."""

    choices: list[_CompletionChoice]


# Used when a GGUF carries no chat template (ChatML, which most small instruct models know).
_CHATML = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content']"
    " + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


# Sampling. ``repeat_penalty`` stays at 1.0: a penalty over the last 64 tokens lowers the odds
# of the second ``[1]`` of an answer and of figures copied from the sources (bench/citing.py).
TOP_P = 0.9
REPEAT_PENALTY = 1.0
# Prompt-lookup decoding (llama-cpp-python's LlamaPromptLookupDecoding): after each token the
# draft proposes the tokens that followed the last two tokens' earlier occurrence in the
# prompt, and one batched step checks them all. Answers copy names and figures from their
# sources, so whole phrases are accepted. A one-token match is mostly chance: its drafts are
# rejected and each costs a batched step, so the draft needs the last LOOKUP_MIN_NGRAM tokens
# to recur. Measured with bench/lookup.py (tokens/s, accepted drafts, and the same text at
# temperature 0; figures in docs/evaluation.md, "Constants and their figures").
LOOKUP_TOKENS = 10  # draft tokens proposed per step
LOOKUP_NGRAM = 3  # the longest n-gram looked up
LOOKUP_MIN_NGRAM = 2  # ... and the shortest


class _CountingLookup:
    """LlamaPromptLookupDecoding's search (llama_cpp.llama_speculative) for n-grams of
    LOOKUP_MIN_NGRAM tokens or more; counts the tokens it proposed and those accepted."""

    def __init__(self, num_pred_tokens: int, max_ngram_size: int = LOOKUP_NGRAM,
                 min_ngram_size: int = LOOKUP_MIN_NGRAM) -> None:
        self.num_pred_tokens = num_pred_tokens
        self.max_ngram_size = max_ngram_size
        self.min_ngram_size = min_ngram_size
        self.drafted = 0
        self.accepted = 0
        self._pending: tuple[int, npt.NDArray[np.intc]] | None = None  # (position, proposed tokens) of the last draft

    def reset(self) -> None:
        self.drafted = self.accepted = 0
        self._pending = None

    def __call__(self, input_ids: npt.NDArray[np.intc], /, **kwargs: object) -> npt.NDArray[np.intc]:
        import numpy as np

        if self._pending is not None:
            position, proposed = self._pending
            actual = input_ids[position : position + len(proposed)]
            same = 0
            for a, b in zip(proposed, actual, strict=False):
                if a != b:
                    break
                same += 1
            self.accepted += same
            self._pending = None
        proposed = np.array([], dtype=np.intc)
        for size in range(self.max_ngram_size, self.min_ngram_size - 1, -1):
            # LlamaPromptLookupDecoding.find_candidate_pred_tokens for this one size: the
            # first earlier occurrence of the last ``size`` tokens, and what followed it.
            if len(input_ids) <= size:
                continue
            tail = input_ids[-size:]
            windows = np.lib.stride_tricks.sliding_window_view(input_ids[:-1], (size,))
            hits = np.nonzero(np.all(windows == tail, axis=1))[0]
            if len(hits):
                start = int(hits[0]) + size
                proposed = np.asarray(input_ids[start : min(start + self.num_pred_tokens, len(input_ids))],
                                      dtype=np.intc)
                if len(proposed):
                    break
        if len(proposed):
            self.drafted += len(proposed)
            self._pending = (len(input_ids), proposed)
        return proposed


# Prompt tokens evaluated between two cancellation checks: ~2.5 s on 1 thread with the 1.5B
# model, the smallest step that reads a prompt as fast as llama.cpp's own 512-token batches
# (bench/answer.py; docs/evaluation.md, "Constants and their figures").
PREFILL_STEP = 128
# Prompt heads (system prompt and worked examples, one per language) whose KV cache is kept
# after priming, to be restored for a question in that language: 28 KiB a token for the 1.5B
# model (28 layers, 2 KV heads of 128, f16), ~10 MB a head.
MAX_HEADS = 4


def default_batch_threads(threads: int) -> int:
    """Threads that read a prompt (llama.cpp's n_threads_batch) when none are set: 0, chosen
    at each prompt from the cores free at that moment (core/models/cores.py): on this 2-core
    machine 2 threads read a prompt in 0.51x the time of 1 when nothing else ran, and 2.2x
    when other work kept the cores busy (``bench/first_word.py threads``)."""
    del threads
    return 0


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


def _cancelled() -> Deltas:
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


class Vocabulary:
    """A GGUF's tokenizer without its weights (llama.cpp's ``vocab_only``): counts tokens
    exactly as the model reads them, in the caller's process, in microseconds. The worker's
    caller loads it once the worker has loaded the same file (a file that crashes llama.cpp
    then crashes the worker, not the window)."""

    def __init__(self, model_path: Path | str) -> None:
        import llama_cpp
        from llama_cpp._internals import LlamaModel

        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        try:
            self._model = LlamaModel(path_model=str(model_path), params=params, verbose=False)
        except (ValueError, RuntimeError, OSError) as exc:
            raise KnownError(f"The answer model's vocabulary could not be read ({exc}).",
                             "Reinstall it (`folio models install`) or pick another GGUF file.") from exc

    def count_tokens(self, text: str) -> int:
        return len(self._model.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def close(self) -> None:
        self._model.close()


class _Abort:
    """llama.cpp's abort callback, armed only while the prompt is read: during decoding
    the flag is checked between tokens instead (a Python call per graph node would cost
    ~3% of decode speed)."""

    def __init__(self, llm: object, flag: Callable[[], bool]) -> None:
        import llama_cpp

        self._ctx = getattr(getattr(llm, "_ctx", None), "ctx", None)
        self._set = getattr(llama_cpp, "llama_set_abort_callback", None)
        self._callback = llama_cpp.ggml_abort_callback(lambda _data: bool(flag())) if self._set else None
        self._none = llama_cpp.ggml_abort_callback() if self._set else None  # a NULL function pointer

    def arm(self, on: bool) -> None:
        if self._set is None or self._ctx is None:
            return
        self._set(self._ctx, self._callback if on else self._none, None)


class LlamaGenerator:
    scores_replies = True  # reply_logprob reads the model's own logits

    def __init__(self, model_path: Path | str, *, context_tokens: int = 4096, threads: int | None = None,
                 seed: int = 42, prompt_lookup: int = 0, batch_threads: int | None = None) -> None:
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
        # 0: chosen at each prompt (cores.free_cores); the threads last used: prefill_threads.
        self.batch_threads = batch_threads or default_batch_threads(self.threads)
        self.prefill_threads = self.batch_threads or self.threads
        # The process whose question is being answered, when it is not this one's parent (a
        # kept model serving a command): its threads are not "other work" (cores.free_cores).
        self.asker_pid: int | None = None
        # prompt_lookup > 0: draft that many tokens a step by prompt lookup (LOOKUP_TOKENS).
        self._draft = _CountingLookup(prompt_lookup) if prompt_lookup > 0 else None
        self.speed = SpeedMeter()
        self._seed = seed
        try:
            self._llm = Llama(
                model_path=str(path), n_ctx=context_tokens, n_threads=self.threads,
                n_threads_batch=self.prefill_threads, seed=seed, verbose=False, draft_model=self._draft,
                # A draft's tokens are checked from their logits: one row per context position
                # (allocated lazily; only the rows of the answer are written, see _prefill).
                logits_all=self._draft is not None,
                # Read, not mapped: llama.cpp repacks the weights for the CPU, and a mapped
                # file's pages stay resident beside the repacked copy at the same tokens/s
                # (bench/rss.py; docs/evaluation.md, "Constants and their figures").
                use_mmap=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise KnownError(f"The answer model {path} could not be loaded ({exc}).",
                             "Is it a complete GGUF file? Reinstall it or pick another one.") from exc
        self.context_tokens = int(self._llm.n_ctx())
        meta: dict[str, str] = dict(getattr(self._llm, "metadata", {}) or {})
        self._template = meta.get("tokenizer.chat_template") or _CHATML
        self.model_id = str(meta.get("general.name") or path.stem)
        self._bos = self._token_text(self._llm.token_bos())
        self._eos = self._token_text(self._llm.token_eos())
        model: object = getattr(self._llm, "_model", None)
        self._adds_bos = bool(model.add_bos_token()) if hasattr(model, "add_bos_token") else False
        self.last_stats: GenerationStats | None = None
        self._cached = 0
        self._tokens_table: TokenTable | None = None  # read while priming, else on the first steered answer
        self.last_steer: SentenceMarkers | None = None
        self.last_choice: SourceChoice | None = None
        # Read for the prompt being answered (a probe's reading and the stream's): tokens, seconds.
        self._read_tokens = 0
        self._read_s = 0.0
        self._heads: dict[tuple[int, ...], bytes] = {}  # primed heads' tokens -> their KV cache
        # Arms llama.cpp's abort callback while the prompt is read, so that a cancel stops a
        # prefill step midway (abort_reading_when).
        self.abort_hook: Callable[[bool], None] | None = None

    def restart_sampling(self) -> None:
        """Sample the next answers as a freshly loaded model would (each answer draws its seed
        from the one before): a kept model answers a command as the command's own would."""
        self._llm.set_seed(self._seed)

    def abort_reading_when(self, flag: Callable[[], bool]) -> None:
        """Let llama.cpp stop reading a prompt midway (between graph nodes) once ``flag()``
        is true (the worker's shared cancel flag)."""
        self.abort_hook = _Abort(self._llm, flag).arm

    @property
    def chat_template(self) -> str:
        return str(self._template)

    @property
    def bos_text(self) -> str:
        return self._bos

    @property
    def eos_text(self) -> str:
        return self._eos

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

    def estimate_s(self, prompt_tokens: int) -> float:
        return self.speed.estimate(prompt_tokens)

    def close(self) -> None:
        """Free the model's memory now (the instance is unusable afterwards)."""
        self._heads.clear()
        self._llm.close()

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
        steering: Steering | None = None,
    ) -> Deltas:
        """Yield text deltas. Raises KnownError before the first delta if the model fails.
        With ``steering`` a Chinese sentence does not end without a marker and the number in
        a marker is weighed by the sources' support and order (steer.py)."""
        import time

        begun = time.perf_counter()
        prompt = self.render(messages)
        tokens = self.prompt_tokens(prompt)
        prompt_tokens = len(tokens)
        room = self.context_tokens - prompt_tokens
        if room < 16:
            raise KnownError(
                f"The question and its sources take {prompt_tokens} tokens; the model's window is {self.context_tokens}.",
                "Ask with fewer sources per answer.",
            )
        kwargs: dict[str, object] = {}
        if grammar:
            from llama_cpp import LlamaGrammar

            self.check_grammar(grammar)
            kwargs["grammar"] = LlamaGrammar.from_string(grammar, verbose=False)
        elif steering is not None:
            from llama_cpp import LogitsProcessorList

            self.last_steer, self.last_choice = steer.processors(self._steering_table(), prompt_tokens, steering)
            active = [p for p in (self.last_steer, self.last_choice) if p is not None]
            if active:
                kwargs["logits_processor"] = LogitsProcessorList(active)
        started = time.perf_counter()
        setup_s = started - begun
        if self._draft is not None:
            self._draft.reset()
        read = self._prefill(tokens, should_cancel)
        read_at = time.perf_counter()
        if not read:
            self.last_stats = GenerationStats(prompt_tokens, 0, 0.0, time.perf_counter() - started,
                                              self._cached, prefill_tokens=self._read_tokens,
                                              prefill_s=self._read_s, setup_s=setup_s,
                                              prefill_threads=self.prefill_threads)
            self._read_tokens, self._read_s = 0, 0.0
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
        return self._drain(first, iterator, should_cancel, prompt_tokens, started, first_at,
                           (setup_s, first_at - read_at))

    def prime(self, messages: Sequence[Message], should_cancel: Callable[[], bool] = lambda: False) -> int:
        """Read ``messages`` into the KV cache ahead of a question, so that the part a
        later prompt shares with them (the system prompt and the worked example) is not
        read again. Returns how many prompt tokens are now cached. Also reads the
        vocabulary table the steering needs (0.3 s), off the first answer's path.

        The head's KV cache is kept (up to MAX_HEADS of them, one per prompt language), so
        a question whose prompt starts with any primed head reads only what follows it."""
        tokens = self.prompt_tokens(self.render(messages))
        read = self._prefill(tokens, should_cancel)  # all but the last token, as a question's prompt
        self._read_tokens, self._read_s = 0, 0.0
        if not read:
            return 0
        head = tuple(tokens[:-1])  # what the cache now holds
        if head not in self._heads and len(self._heads) < MAX_HEADS:
            kept = self._kv_cache()
            if kept is not None:
                self._heads[head] = kept
        self._steering_table()
        return int(self._llm.n_tokens)

    def _restore_head(self, tokens: Sequence[int], keep: int) -> int:
        """Load the kept head that shares the most leading tokens with ``tokens`` when that
        is more than the ``keep`` the cache already shares; returns the tokens now shared."""
        best, shared = None, keep
        for head in self._heads:
            common = 0
            for old, new in zip(head, tokens, strict=False):
                if old != new:
                    break
                common += 1
            if common > shared:
                best, shared = head, common
        if best is None:
            return keep
        if not self._restore_kv_cache(best, self._heads[best]):
            self._heads.pop(best, None)
            return 0
        return shared

    def _kv_cache(self) -> bytes | None:
        """The KV cache of the tokens read (sequence 0 only: not llama-cpp-python's
        save_state, which also copies a row of logits per token, ~0.6 MB each)."""
        import ctypes

        import llama_cpp

        ctx = self._llm._ctx.ctx
        size = int(llama_cpp.llama_state_seq_get_size(ctx, 0))
        buffer = (ctypes.c_uint8 * size)()
        written = int(llama_cpp.llama_state_seq_get_data(ctx, buffer, size, 0))
        if written <= 0:
            logger.info("could not keep the primed head's cache")
            return None
        return bytes(buffer[:written])

    def _restore_kv_cache(self, head: tuple[int, ...], kv: bytes) -> bool:
        """Put a kept head's KV cache back in place of the current one."""
        import ctypes

        import llama_cpp

        llm = self._llm
        llm._ctx.kv_cache_seq_rm(-1, 0, -1)
        buffer = (ctypes.c_uint8 * len(kv)).from_buffer_copy(kv)
        if int(llama_cpp.llama_state_seq_set_data(llm._ctx.ctx, buffer, len(kv), 0)) != len(kv):
            logger.warning("could not restore a primed head's cache")
            llm._ctx.kv_cache_seq_rm(-1, 0, -1)
            llm.n_tokens = 0
            return False
        llm.input_ids[: len(head)] = head
        llm.n_tokens = len(head)
        return True

    def _steering_table(self) -> TokenTable:
        if self._tokens_table is None:
            self._tokens_table = TokenTable.of(self._llm)
        return self._tokens_table

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
        keep = self._restore_head(tokens[:-1], keep)
        llm.n_tokens = keep  # eval() drops the KV cache beyond this point
        self._cached = keep
        begun = time.perf_counter()
        if len(tokens) - 1 - keep > 1:  # one token is read by the decode threads anyway
            self._set_prefill_threads(self.batch_threads or cores.free_cores(self.threads, asker=self.asker_pid))
        if self.abort_hook is not None:
            self.abort_hook(True)
        # With a draft model llama-cpp-python asks logits of every token (to check a draft's
        # tokens in one step); the prompt needs only its last token's, which generate() reads.
        logits_all = getattr(llm, "_logits_all", False)
        llm._logits_all = False
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
            llm._logits_all = logits_all
            if self.abort_hook is not None:
                self.abort_hook(False)
            self._read_tokens += max(0, int(llm.n_tokens) - keep)
            self._read_s += time.perf_counter() - begun
        return not should_cancel()

    def _set_prefill_threads(self, threads: int) -> None:
        if threads != self.prefill_threads:
            self._llm._ctx.set_n_threads(self.threads, threads)
            self.prefill_threads = threads

    def reply_logprob(self, messages: Sequence[Message], reply: str,
                      should_cancel: Callable[[], bool] = lambda: False) -> float:
        """The natural log of the probability that the model answers ``messages`` with
        exactly ``reply`` (teacher-forced, one token at a time after the prompt). The prompt
        is read as ``stream`` reads it (the KV cache keeps it), so the answer that may follow
        re-reads only its last token: this costs the reply's tokens, ~0.5 s on 2 cores."""
        import math

        import numpy as np

        tokens = self.prompt_tokens(self.render(messages))
        if len(tokens) + 16 > self.context_tokens:
            raise KnownError("The question and its sources do not fit the model's window.",
                             "Ask with fewer sources per answer.")
        if not self._prefill(tokens, should_cancel):
            raise Cancelled()
        llm = self._llm
        llm.eval(tokens[-1:])
        total = 0.0
        for token in llm.tokenize(reply.encode("utf-8"), add_bos=False, special=False):
            if should_cancel():
                raise Cancelled()
            logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),))
            top = float(logits.max())
            total += float(logits[token]) - top - math.log(float(np.exp(logits - top).sum()))
            llm.eval([token])
        return total

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

    def _drain(self, first: CompletionChunk | None, iterator: Generator[CompletionChunk, None, None], should_cancel: Callable[[], bool],
               prompt_tokens: int, started: float, first_at: float,
               setup: tuple[float, float]) -> Deltas:
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
            iterator.close()  # create_completion's generator: closing it ends the generation
            draft = self._draft
            self.last_stats = GenerationStats(prompt_tokens, produced, first_at - started,
                                              time.perf_counter() - started, self._cached,
                                              draft.drafted if draft else 0, draft.accepted if draft else 0,
                                              prefill_tokens=self._read_tokens, prefill_s=self._read_s,
                                              setup_s=setup[0], first_decode_s=setup[1],
                                              prefill_threads=self.prefill_threads)
            self._read_tokens, self._read_s = 0, 0.0
            self.speed.add(self.last_stats)
