"""llama.cpp as installed by `make`: built for the portable baseline (no AVX-512, no AMX,
whatever the build machine had), and a long prompt, the path that died with SIGILL on a
native build (issue 11), runs to a normal exit."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

LONG_PROMPT = """
import sys
from desktop_app.core.models.generate import LlamaGenerator

generator = LlamaGenerator(sys.argv[1], context_tokens=4096, threads=1)
sources = "\\n".join(
    f"[{n}] Section {n} of the maintenance manual says the pump at station {n} is inspected every"
    f" {n + 3} weeks, its seals are replaced after {n * 150} hours, and the log is kept by crew {n % 7}."
    for n in range(1, 41)
)
messages = [{"role": "system", "content": "You answer in one short sentence."},
            {"role": "user", "content": sources + "\\n\\nQuestion: How often is pump 12 inspected?"}]
text = "".join(generator.stream(messages, max_tokens=24, temperature=0.0))
stats = generator.last_stats
print(stats.prompt_tokens, repr(text))
"""


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86-64 baseline flags")
def test_llama_cpp_is_built_for_the_portable_x86_64_baseline() -> None:
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode()
    assert "AVX2 = 1" in info and "FMA = 1" in info, info
    # What a native build on this machine kind would add, and what a VM may not run.
    assert "AVX512" not in info and "AMX" not in info, info


@pytest.mark.slow
def test_a_prompt_of_1500_tokens_runs_to_a_normal_exit(small_model_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", LONG_PROMPT, str(small_model_path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    prompt_tokens = int(done.stdout.split()[0])
    assert prompt_tokens >= 1500
