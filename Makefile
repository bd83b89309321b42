# Folio — the two commands of the README:
#   make run    set everything up (venv, dependencies, default models) and open the window
#   make test   set up what the tests need (venv, dependencies, small models) and run them
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# Where `make test` keeps the small models it installs (shared by every test run).
TEST_HOME := $(CURDIR)/.folio-test-home
PYTEST_ARGS ?=

.PHONY: run test test-slow test-packaging bundle lint deps system-deps models-default models-small bench clean llama-rebuild

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip wheel

# llama-cpp-python compiles llama.cpp from source (6-15 min on 2 cores) for a portable CPU
# level, never -march=native and never AMX (packaging/llama_wheel.sh says why). The wheel is kept in
# Folio's own cache, keyed by version and flags, never taken from pip's cache (which ignores
# CMAKE_ARGS and may hold a native build). The version is the one pinned in pyproject.toml.
LLAMA_VERSION := $(shell sed -n 's/.*"llama-cpp-python==\([0-9.]*\)".*/\1/p' pyproject.toml)
# auto: x86-64-v4 (AVX-512) where this machine really executes it, else x86-64-v3 (AVX2).
LLAMA_CPU ?= auto

$(VENV)/.llama-installed: packaging/llama_wheel.sh pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --no-cache-dir --no-deps --force-reinstall \
		"$$(packaging/llama_wheel.sh $(BIN)/python $(LLAMA_VERSION) $(LLAMA_CPU))"
	touch $@

# rapidocr-onnxruntime (OCR) without its opencv-python dependency: pyproject.toml lists
# the rest, with opencv-python-headless (opencv-python's Qt plugins clash with PySide6).
RAPIDOCR := rapidocr-onnxruntime==1.4.4

$(VENV)/.deps-installed: pyproject.toml $(VENV)/.llama-installed
	$(BIN)/pip install --quiet -e '.[test]'
	$(BIN)/pip install --quiet --no-deps '$(RAPIDOCR)'
	$(BIN)/pip uninstall --quiet --yes opencv-python 2>/dev/null || true
	touch $@

# Build llama.cpp again (portable flags), e.g. after "Illegal instruction" (README);
# `make llama-rebuild LLAMA_CPU=x86-64-v3` for the AVX2 level whatever this CPU can do.
llama-rebuild: | $(BIN)/python
	FOLIO_LLAMA_REBUILD=1 packaging/llama_wheel.sh $(BIN)/python $(LLAMA_VERSION) $(LLAMA_CPU) >/dev/null
	rm -f $(VENV)/.llama-installed
	$(MAKE) $(VENV)/.llama-installed

deps: $(VENV)/.deps-installed

# Qt's xcb platform plugin and a virtual screen for the window tests (Debian/Ubuntu, as root).
system-deps:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && ! dpkg -s xvfb libxcb-cursor0 fonts-noto-cjk qemu-user >/dev/null 2>&1; then \
		apt-get update -q && apt-get install -y -q --no-install-recommends xvfb xauth \
		libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxcb-xkb1 \
		libxkbcommon-x11-0 libxcb-cursor0 libxcb-shape0 libegl1 libgl1 libfontconfig1 libdbus-1-3 \
		fonts-noto-cjk qemu-user; \
	fi

models-default: deps
	$(BIN)/folio models install --default

models-small: deps
	FOLIO_HOME=$(TEST_HOME) $(BIN)/folio models install --small

run: deps models-default
	$(BIN)/folio $(ARGS)

test: deps system-deps models-small
	$(BIN)/lint-imports
	$(BIN)/mypy
	FOLIO_MODELS_DIR=$(TEST_HOME)/data/models FOLIO_REQUIRE_MODELS=1 QT_QPA_PLATFORM=offscreen \
		$(BIN)/python -m pytest -m "not slow and not packaging" $(PYTEST_ARGS)

# The slow tier: whole shared corpus, hostile files, real-model answers. .ci/run runs it too.
test-slow: deps system-deps models-small
	FOLIO_MODELS_DIR=$(TEST_HOME)/data/models FOLIO_REQUIRE_MODELS=1 QT_QPA_PLATFORM=offscreen \
		$(BIN)/python -m pytest -m "slow" $(PYTEST_ARGS)

# The desktop bundle (PyInstaller one-folder build): dist/folio/folio. See packaging/.
bundle: deps
	VIRTUAL_ENV=$(abspath $(VENV)) packaging/build.sh $(CURDIR)/dist

# Builds the bundle afresh in a temporary folder and drives it (--version, models, index,
# the window offscreen). FOLIO_BUNDLE_DIR=dist/folio reuses a built one when run by hand.
test-packaging: deps system-deps models-small
	FOLIO_MODELS_DIR=$(TEST_HOME)/data/models FOLIO_REQUIRE_MODELS=1 QT_QPA_PLATFORM=offscreen \
		$(BIN)/python -m pytest -m "packaging" $(PYTEST_ARGS)

lint: deps
	$(BIN)/ruff check desktop_app tests bench
	$(BIN)/lint-imports
	$(BIN)/mypy

clean:
	rm -rf $(VENV) $(TEST_HOME) build dist *.egg-info
