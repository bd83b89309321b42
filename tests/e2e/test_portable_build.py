"""llama.cpp as installed by `make`: built for a portable CPU level chosen by what this
machine really executes (packaging/llama_wheel.sh), never for what it merely reports, and
a long prompt, the path that died with SIGILL on a native build (issue 11), runs to a
normal exit."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import require

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]

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

# What llama.cpp's native build turns on from CPUID alone, and what neither level uses.
NEVER = ("AMX", "AVX_VNNI", "AVX512_VNNI", "AVX512_BF16", "AVX512_VBMI")


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86-64 CPU levels")
def test_llama_cpp_is_built_for_the_level_this_machine_executes() -> None:
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode()
    features = {part.split("=")[0].strip() for part in info.replace("CPU :", "").split("|") if "= 1" in part}
    level = subprocess.run(["bash", str(REPO / "packaging" / "llama_wheel.sh"), "--level"],
                           capture_output=True, text=True, check=True).stdout.strip()
    assert {"AVX2", "FMA", "F16C", "BMI2"} <= features, info
    assert not features & set(NEVER), info
    assert ("AVX512" in features) == (level == "x86-64-v4"), (level, info)


@pytest.mark.slow
def test_a_prompt_of_1500_tokens_runs_to_a_normal_exit(small_model_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", LONG_PROMPT, str(small_model_path)],
                          capture_output=True, text=True, timeout=600, cwd=REPO)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    prompt_tokens = int(done.stdout.split()[0])
    assert prompt_tokens >= 1500


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86-64 CPU levels")
@pytest.mark.parametrize("cpu", ["Haswell", "Skylake-Server"])
def test_a_cpu_that_cannot_execute_avx512_gets_the_avx2_level(cpu: str) -> None:
    """Under an emulated CPU (qemu-user, installed by `make test`) the level probe runs
    where AVX-512 is absent (Haswell) or reported but not executable (qemu's Skylake-Server
    model, whose AVX-512 its emulator cannot run): both must get x86-64-v3."""
    import os
    import shutil

    if shutil.which("qemu-x86_64") is None:
        require(False, "qemu-x86_64 (Debian's qemu-user) is not installed: `make system-deps` installs it")
    env = dict(os.environ, FOLIO_PROBE_RUNNER=f"qemu-x86_64 -cpu {cpu}")
    level = subprocess.run(["bash", str(REPO / "packaging" / "llama_wheel.sh"), "--level"], env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert level == "x86-64-v3"
