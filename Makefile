# gradviz developer entry points. Every target that needs Python builds/updates .venv itself.
#   make demo          run the bundled example through the installed `gradviz` command
#   make test          lint + the test suite, no torch needed (PARITY=1: with the torch parity tests)
#   make lint          ruff, and import-linter's layers contract (docs/architecture.md)
#   make bench         benchmarks: gradviz against NumPy (and PyTorch with PARITY=1)
#   make docs          the documentation site into site/ (executed tutorials, API reference), offline
#   make strip         sync each tutorial's .py and .ipynb (jupytext) and strip notebook outputs
#   make clean         remove build artefacts and caches (keeps .venv); `make distclean` also drops .venv
#   make test PYTHON=python3.13 VENV=.venv-3.13   the suite on another Python, in its own venv

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
# One stamp per install flavour; each is redone only when pyproject.toml is newer than it.
STAMP        := $(VENV)/.installed-stamp
PARITY_STAMP := $(VENV)/.installed-parity-stamp
DOCS_STAMP   := $(VENV)/.installed-docs-stamp

# The parity tests (tests/parity/, torch==2.13.0) run on request: `make test PARITY=1`. The plain
# `make test` is what a newcomer types, and CI runs it as typed (.ci/run), then the parity run.
PARITY ?= 0
ifeq ($(PARITY),1)
TEST_DEPS := $(PARITY_STAMP)
else
TEST_DEPS := $(STAMP)
endif

PIP_FLAGS   ?= --disable-pip-version-check --progress-bar off
PYTEST_ARGS ?=

.PHONY: bench-compare help venv demo test lint bench docs strip clean distclean

help:
	@sed -n 's/^#   //p' $(firstword $(MAKEFILE_LIST))

venv: $(STAMP)

# Order-only: the interpreter's mtime must never trigger a reinstall.
$(PY):
	$(PYTHON) -m venv $(VENV)

# The docs extra comes with the test install: tests/test_docs_site.py builds the site.
$(STAMP): pyproject.toml | $(PY)
	$(PIP) install $(PIP_FLAGS) -e '.[test,docs]'
	@touch $@ $(DOCS_STAMP)

# The parity install is a superset of the test install, so it refreshes both stamps.
$(PARITY_STAMP): pyproject.toml | $(PY)
	$(PIP) install $(PIP_FLAGS) -e '.[test,parity,docs]'
	@touch $(STAMP) $(DOCS_STAMP) $@

$(DOCS_STAMP): pyproject.toml | $(PY)
	$(PIP) install $(PIP_FLAGS) -e '.[test,docs]'
	@touch $(STAMP) $@

demo: venv
	$(VENV)/bin/gradviz demo

# The sources are compiled to bytecode first, as an installed package is: where the shell sets
# PYTHONDONTWRITEBYTECODE, every process a test starts (the CLI's, the notebooks' kernels) would
# otherwise compile all of gradviz again (tests/test_cli_trace.py: 51 s without, 27 s with).
test: $(TEST_DEPS)
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports
	bash scripts/ensure-chromium.sh
	$(PY) -m compileall -q gradviz cli > /dev/null
	GRADVIZ_PARITY=$(PARITY) $(PY) -m pytest $(PYTEST_ARGS)

lint: venv
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports

bench: $(TEST_DEPS)
	$(PY) benchmarks/run.py

# Before and after in one run: `make bench-compare BASE=main` (a git revision or a folder).
BASE ?= main
bench-compare: $(TEST_DEPS)
	$(PY) benchmarks/compare.py $(BASE)

# The tutorials execute while the site builds, in kernels of this .venv (scripts/docs_ext.py's
# on_config: PATH and docs/jupyter/'s settings). Tutorial 13 runs real PyTorch, so the build needs
# the torch extra as well as the docs one.
# NO_MKDOCS_2_WARNING: Material prints an end-of-life banner on every build otherwise.
docs: $(PARITY_STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict
	@echo "site/index.html"

# Keep each tutorial's pair in step, then drop outputs and per-run metadata from the notebooks.
NBSTRIP_KEYS := metadata.jupytext metadata.language_info cell.metadata.lines_to_next_cell
strip: venv
	$(VENV)/bin/jupytext --sync tutorials/[0-9][0-9]_*.py
	$(VENV)/bin/nbstripout --extra-keys "$(NBSTRIP_KEYS)" tutorials/[0-9][0-9]_*.ipynb

clean:
	rm -rf build dist gradviz-out site .cache .pytest_cache .ruff_cache .hypothesis
	find . -path ./$(VENV) -prune -o \( -name '__pycache__' -o -name '*.egg-info' \
		-o -name '.ipynb_checkpoints' \) -type d -print0 | xargs -0 rm -rf

distclean: clean
	rm -rf .venv .venv-*
