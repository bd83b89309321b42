#!/usr/bin/env bash
# Builds llama-cpp-python for a portable CPU level and prints the wheel's path.
#
# usage: packaging/llama_wheel.sh PYTHON VERSION [LEVEL]   prints the wheel's path
#        packaging/llama_wheel.sh --level                  prints the level "auto" picks here
#
# LEVEL (default: $FOLIO_LLAMA_CPU, else auto):
#   x86-64-v3  AVX2 + FMA + F16C + BMI2: every x86-64 laptop since 2013. The desktop bundle
#              always uses this level: it runs on its users' machines, not on this one.
#   x86-64-v4  v3 + AVX-512 F/CD/BW/DQ/VL: 1.7x the prompt speed of v3 on this machine kind
#              (README, Performance).
#   auto       v4 if this machine really executes AVX-512 instructions (a probe program is
#              compiled and run; a CPU or VM that only *reports* them dies in the probe, not
#              in llama.cpp), else v3.
# Never -march=native and never AMX, AVX-VNNI or AVX512-VNNI/BF16: llama.cpp's default
# (GGML_NATIVE=ON) compiles for whatever the CPU reports, and a VM may report AMX and still
# fault on it (SIGILL in libggml-cpu.so, issue 11).
#
# pip's wheel cache does not key on CMAKE_ARGS, so a native wheel once built comes back
# silently: this script never uses pip's cache. It keeps its own, keyed by the version, the
# flags and the Python ABI ($FOLIO_WHEEL_CACHE, default ~/.cache/folio/wheels).
# FOLIO_LLAMA_REBUILD=1 builds again even when the cache holds the wheel.
# FOLIO_PROBE_RUNNER runs the probe through an emulator (tests: "qemu-x86_64 -cpu Haswell").
set -euo pipefail

probe_avx512() {
	command -v "${CC:-cc}" >/dev/null || return 1
	local dir; dir=$(mktemp -d)
	cat >"$dir/probe.c" <<'C'
#include <immintrin.h>
int main(int argc, char **argv) {
    (void)argv;  /* argc keeps the compiler from folding the work away */
    __m512i a = _mm512_set1_epi32(argc), b = _mm512_add_epi32(a, a);          /* F  */
    __m512i c = _mm512_abs_epi8(_mm512_sub_epi8(b, a));                        /* BW */
    __m512i d = _mm512_conflict_epi32(c);                                      /* CD */
    __m512d e = _mm512_and_pd(_mm512_set1_pd(argc), _mm512_set1_pd(3.0));      /* DQ */
    __m256i f = _mm256_maskz_add_epi32(0x0f, _mm512_castsi512_si256(c),
                                       _mm256_set1_epi32(argc));               /* VL */
    volatile long r = _mm512_reduce_add_epi32(c) + _mm512_reduce_add_epi32(d)
                      + (long)_mm512_reduce_add_pd(e) + _mm256_extract_epi32(f, 0);
    return r > 0 ? 0 : 1;
}
C
	local ok=1
	if "${CC:-cc}" -O1 -mavx512f -mavx512cd -mavx512bw -mavx512dq -mavx512vl \
		"$dir/probe.c" -o "$dir/probe" 2>/dev/null && ${FOLIO_PROBE_RUNNER:-} "$dir/probe" 2>/dev/null; then
		ok=0
	fi
	rm -rf "$dir"
	return $ok
}

auto_level() {
	case "$(uname -m)" in
	x86_64 | amd64) if probe_avx512; then echo x86-64-v4; else echo x86-64-v3; fi ;;
	*) echo generic ;;
	esac
}

if [ "${1:-}" = "--level" ]; then
	auto_level
	exit 0
fi

PY=${1:?python}
VERSION=${2:?version}
LEVEL=${3:-${FOLIO_LLAMA_CPU:-auto}}
[ "$LEVEL" = auto ] && LEVEL=$(auto_level)

COMMON="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF -DGGML_BACKEND_DL=OFF"
V3="-DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
NEVER="-DGGML_AVX_VNNI=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
case "$LEVEL" in
x86-64-v3) FLAGS="$COMMON $V3 -DGGML_AVX512=OFF $NEVER" ;;
x86-64-v4) FLAGS="$COMMON $V3 -DGGML_AVX512=ON $NEVER" ;;
generic) FLAGS="$COMMON" ;;
*)
	echo "llama_wheel.sh: unknown CPU level '$LEVEL' (x86-64-v3, x86-64-v4, auto)" >&2
	exit 2
	;;
esac

KEY=$(printf '%s|%s|%s' "$VERSION" "$FLAGS" "$("$PY" -c 'import sys;print(sys.implementation.cache_tag)')" | sha256sum | cut -c1-16)
DIR="${FOLIO_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/folio/wheels}/llama-cpp-python-$VERSION-$LEVEL-$KEY"
[ -n "${FOLIO_LLAMA_REBUILD:-}" ] && rm -rf "$DIR"
WHEEL=$(ls "$DIR"/llama_cpp_python-*.whl 2>/dev/null | head -1 || true)
if [ -z "$WHEEL" ]; then
	echo "Building llama-cpp-python $VERSION for $LEVEL (6-15 min on 2 cores)..." >&2
	TMP=$(mktemp -d)
	CMAKE_ARGS="$FLAGS" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
		"$PY" -m pip wheel --no-cache-dir --no-binary llama-cpp-python --no-deps \
		-w "$TMP" "llama-cpp-python==$VERSION" >&2
	mkdir -p "$DIR"
	printf '%s\n' "$FLAGS" >"$TMP/CMAKE_ARGS"
	mv "$TMP"/* "$DIR"/ && rmdir "$TMP"
	WHEEL=$(ls "$DIR"/llama_cpp_python-*.whl | head -1)
fi
echo "$WHEEL"
