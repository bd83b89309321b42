#!/usr/bin/env bash
# Build the desktop bundle: packaging/build.sh [DIST_DIR [WORK_DIR]]
#   DIST_DIR  where dist/folio/ goes (default: <repo>/dist); the app is DIST_DIR/folio/folio
#   WORK_DIR  PyInstaller's work folder (default: <repo>/build/pyinstaller; reused by reruns)
# Uses the virtualenv in $VIRTUAL_ENV, else <repo>/.venv; installs PyInstaller into it if
# missing. Safe to rerun: the previous DIST_DIR/folio is replaced.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${VIRTUAL_ENV:-$REPO/.venv}"
PY="$VENV/bin/python"
DIST="$(mkdir -p "${1:-$REPO/dist}" && cd "${1:-$REPO/dist}" && pwd)"
WORK="${2:-$REPO/build/pyinstaller}"

if [ ! -x "$PY" ]; then
	echo "build.sh: no Python at $PY (run \`make deps\` first, or set VIRTUAL_ENV)" >&2
	exit 1
fi
if ! "$PY" -c "import PyInstaller" 2>/dev/null; then
	echo "build.sh: installing PyInstaller into $VENV" >&2
	"$PY" -m pip install --quiet 'pyinstaller>=6'
fi

start=$(date +%s)
# The bundle's llama.cpp is the portable x86-64-v3 build (packaging/llama_wheel.sh), not the
# venv's, which may be built for this machine's AVX-512.
VERSION=$("$PY" -c 'import importlib.metadata as m; print(m.version("llama-cpp-python"))')
LEVEL=x86-64-v3
case "$(uname -m)" in x86_64 | amd64) ;; *) LEVEL=generic ;; esac
WHEEL=$("$REPO/packaging/llama_wheel.sh" "$PY" "$VERSION" "$LEVEL")
mkdir -p "$WORK"
rm -rf "$WORK/llama-wheel"
"$PY" -m zipfile -e "$WHEEL" "$WORK/llama-wheel"
export FOLIO_LLAMA_LIB="$WORK/llama-wheel/llama_cpp/lib"
echo "bundle: llama.cpp for $LEVEL from $WHEEL"
"$PY" -m PyInstaller --noconfirm --log-level WARN \
	--distpath "$DIST" --workpath "$WORK" "$REPO/packaging/folio.spec"
# The desktop entry and its icon travel beside the executable (copy them to
# ~/.local/share/applications and ~/.local/share/icons/hicolor/256x256/apps to install).
cp "$REPO/packaging/folio.desktop" "$REPO/packaging/folio.png" "$DIST/folio/"
seconds=$(( $(date +%s) - start ))

echo "bundle: $DIST/folio/folio"
echo "bundle size: $(du -sh "$DIST/folio" | cut -f1) ($(du -sb "$DIST/folio" | cut -f1) bytes), built in ${seconds} s"
