"""Prefill and decode speed of one GGUF under several llama-cpp-python builds, interleaved.

Used to choose the build's CPU flags (issue 11): the portable baseline (Makefile,
packaging/llama_wheel.sh) against a native build (pip's default, GGML_NATIVE=ON), each
in its own virtual environment. Every round runs each build once in a fresh process;
the figures are medians over rounds, and the ratio is portable / native.

    python bench/llama_build.py MODEL.gguf --python .venv/bin/python \
        --python /tmp/native-venv/bin/python --rounds 5 [--threads 1] [--prompt-tokens 512]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess

MEASURE = r"""
import json, sys, time
import llama_cpp
path, threads, prompt_tokens, decode_tokens = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
llm = llama_cpp.Llama(model_path=path, n_ctx=prompt_tokens + decode_tokens + 16, n_threads=threads,
                      n_threads_batch=threads, n_batch=512, use_mmap=False, verbose=False)
words = ("the pump at station seven is inspected every twelve weeks and its seals are replaced "
         "after nine hundred hours of running ").split()
text = " ".join(words[i % len(words)] for i in range(prompt_tokens * 2))
tokens = llm.tokenize(text.encode(), add_bos=True)[:prompt_tokens]
started = time.perf_counter()
llm.eval(tokens)
prefill = time.perf_counter() - started
started = time.perf_counter()
produced = 0
for _ in llm.generate([], temp=0.0, reset=False):
    produced += 1
    if produced >= decode_tokens:
        break
decode = time.perf_counter() - started
info = llama_cpp.llama_print_system_info().decode()
print(json.dumps({"prefill_tps": len(tokens) / prefill, "decode_tps": produced / decode,
                  "features": " ".join(p.split("=")[0].strip() for p in info.split("|") if "= 1" in p)}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("--python", action="append", required=True, help="a venv's python (repeat)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--prompt-tokens", type=int, default=512)
    parser.add_argument("--decode-tokens", type=int, default=64)
    args = parser.parse_args()
    runs: dict[str, list[dict[str, float]]] = {p: [] for p in args.python}
    features: dict[str, str] = {}
    for round_no in range(args.rounds):
        for python in args.python:
            out = subprocess.run(
                [python, "-c", MEASURE, args.model, str(args.threads), str(args.prompt_tokens),
                 str(args.decode_tokens)], capture_output=True, text=True, check=True,
            ).stdout.strip().splitlines()[-1]
            result = json.loads(out)
            features[python] = result.pop("features")
            runs[python].append(result)
            print(f"round {round_no + 1} {python}: prefill {result['prefill_tps']:.1f} tok/s,"
                  f" decode {result['decode_tps']:.1f} tok/s", flush=True)
    print(f"\n{args.model}: {args.prompt_tokens}-token prompt, {args.decode_tokens} tokens,"
          f" {args.threads} thread(s), median of {args.rounds} interleaved rounds")
    base = None
    for python, results in runs.items():
        prefill = statistics.median(r["prefill_tps"] for r in results)
        decode = statistics.median(r["decode_tps"] for r in results)
        base = base or (prefill, decode)
        print(f"  {python}: prefill {prefill:.1f} tok/s ({prefill / base[0]:.2f}x),"
              f" decode {decode:.1f} tok/s ({decode / base[1]:.2f}x)  [{features[python]}]")


if __name__ == "__main__":
    main()
