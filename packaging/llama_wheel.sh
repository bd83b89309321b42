#!/usr/bin/env bash
# Builds llama-cpp-python for a portable x86-64 baseline and prints the wheel's path.
#
# Why: llama.cpp's default (GGML_NATIVE=ON) compiles for the build machine's CPU. A VM may
# report AMX or AVX-512 and still fault on it (SIGILL in libggml-cpu.so), and a bundle built
# that way crashes on its users' laptops. pip's wheel cache does not key on CMAKE_ARGS, so a
# native wheel once built comes back silently: this script never uses pip's cache and keeps
# its own, keyed by the package version and the flags.
#
# usage: packaging/llama_wheel.sh PYTHON VERSION   (prints the wheel path on stdout)
set -euo pipefail
PY=${1:?python}; VERSION=${2:?version}
# x86-64-v3 (Haswell, 2013, and every x86-64 laptop since): AVX2 + FMA + F16C + BMI2.
# No AVX-512, no AVX-VNNI, no AMX: measured in README "Performance" against the native build.
FLAGS="${FOLIO_LLAMA_CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAVA_BUILD=OFF -DGGML_BACKEND_DL=OFF}"
case "$(uname -m)" in x86_64|amd64) ;; *) FLAGS="${FOLIO_LLAMA_CMAKE_ARGS:--DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF}";; esac
KEY=$(printf '%s|%s|%s' "$VERSION" "$FLAGS" "$("$PY" -c 'import sys;print(sys.implementation.cache_tag)')" | sha256sum | cut -c1-16)
DIR="${FOLIO_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/folio/wheels}/llama-cpp-python-$VERSION-$KEY"
[ -n "${FOLIO_LLAMA_REBUILD:-}" ] && rm -rf "$DIR"
WHEEL=$(ls "$DIR"/llama_cpp_python-*.whl 2>/dev/null | head -1 || true)
if [ -z "$WHEEL" ]; then
    echo "Building llama-cpp-python $VERSION for a portable CPU baseline (6-15 min on 2 cores)..." >&2
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
