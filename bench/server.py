"""Answers from a model server against the model in-process: decode tokens/s.

Starts llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``) on
127.0.0.1 with the same GGUF, context and thread count, then asks the same question at
temperature 0 once in-process (LlamaGenerator) and once through the server
(ServerGenerator: HTTP, server-sent events), alternating which goes first. Deltas are
timed where the caller receives them; figures are medians over rounds. Both read the
prompt once and then find it cached, so the figures are about decoding and transport.

    python bench/server.py [--model small|default|PATH] [--rounds 7] [--max-tokens 96] [--threads 1]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import httpx

from desktop_app.core.models import catalog as models
from desktop_app.core.models.generate import LlamaGenerator
from desktop_app.core.models.server_client import ServerGenerator

MESSAGES = [
    {"role": "system", "content": "You answer questions about the sources, citing them like [1]."},
    {"role": "user", "content": (
        "Sources:\n[1] The pump must be inspected every 12 weeks by a certified technician, and"
        " its seals replaced after 900 hours of running.\n[2] The warranty covers parts for two"
        " years from the date of purchase, labour for one year.\n\n"
        "Question: Describe the pump's maintenance and its warranty in detail.")},
]


def timed(ask: Callable[[], Iterator[str]]) -> tuple[str, float, float, int]:
    """(text, seconds to the first delta, decode tokens/s after it, deltas) as the caller sees
    them; ``ask`` starts the stream (both generators wait for the first token there)."""
    parts: list[str] = []
    started = time.perf_counter()
    first = last = 0.0
    for delta in ask():
        last = time.perf_counter()
        if not parts:
            first = last
        parts.append(delta)
    rate = (len(parts) - 1) / (last - first) if len(parts) > 1 and last > first else 0.0
    return "".join(parts), first - started, rate, len(parts)


def start_server(path: Path, threads: int, context: int, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(path), "--host", "127.0.0.1",
             "--port", str(port), "--n_ctx", str(context), "--n_threads", str(threads),
             "--n_threads_batch", str(threads)],
            stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(f"{url}/models", timeout=2.0, trust_env=False).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit(f"llama_cpp.server did not start:\n{log.read_text()[-2000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="small")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    path = Path(args.model) if args.model.endswith(".gguf") else models.resolve_answer_model(args.model)
    context = 2048
    with tempfile.TemporaryDirectory() as scratch:
        process, url = start_server(path, args.threads, context, Path(scratch) / "server.log")
        local = LlamaGenerator(path, context_tokens=context, threads=args.threads)
        server = ServerGenerator(url, context_tokens=context)
        rates: dict[str, list[float]] = {"in-process": [], "server": []}
        firsts: dict[str, list[float]] = {"in-process": [], "server": []}
        texts: dict[str, set[str]] = {"in-process": set(), "server": set()}
        try:
            for generator in (local, server):  # both read the prompt once before the rounds
                "".join(generator.stream(MESSAGES, max_tokens=4, temperature=0.0))
            for round_no in range(args.rounds):
                order = [("in-process", local), ("server", server)]
                if round_no % 2:
                    order.reverse()
                for name, generator in order:
                    text, first, rate, count = timed(
                        partial(generator.stream, MESSAGES, max_tokens=args.max_tokens, temperature=0.0))
                    rates[name].append(rate)
                    firsts[name].append(first)
                    texts[name].add(text)
                    print(f"round {round_no + 1} {name}: {count} deltas, first after {first * 1000:.0f} ms,"
                          f" {rate:.1f} tok/s", flush=True)
        finally:
            server.close()
            process.terminate()
            process.wait(10)
    local_rate, server_rate = statistics.median(rates["in-process"]), statistics.median(rates["server"])
    print(f"\n{path.name}, {args.threads} thread(s), {args.rounds} interleaved rounds (median),"
          f" {args.max_tokens} tokens at temperature 0:")
    print(f"  in-process llama.cpp   {local_rate:6.1f} tok/s, first token after"
          f" {statistics.median(firsts['in-process']) * 1000:.0f} ms")
    print(f"  llama_cpp.server (HTTP) {server_rate:6.1f} tok/s, first token after"
          f" {statistics.median(firsts['server']) * 1000:.0f} ms")
    print(f"  server/in-process {server_rate / local_rate:.3f}")
    print(f"  same text at temperature 0: {texts['in-process'] == texts['server'] and len(texts['server']) == 1}")


if __name__ == "__main__":
    main()
