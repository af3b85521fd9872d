# chemgauge: `make demo` and `make test` set everything up from a fresh clone.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.chemgauge-installed

.PHONY: setup demo test lint typecheck pytest bench clean system-deps

$(STAMP): pyproject.toml
	@test -n "$(PYTHON)" || { echo "error: Python 3.11+ not found (set PYTHON=...)"; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@

setup: $(STAMP) system-deps

# External programs the real back-ends need (Java for OPSIN). Installed with apt when
# running as root (CI); otherwise the message says what to install.
system-deps:
	@bash scripts/system-deps.sh

# The forward benchmark on the demo corpus shipped inside the package (every outcome the
# harness reports, from real engine output); rows and report go to a temporary folder.
demo: setup
	$(BIN)/chemgauge matchers --known
	@tmp=$$(mktemp -d) && $(BIN)/chemgauge forward benchmark --executor serial \
		--output-rows $$tmp/rows.jsonl --output-report $$tmp/report.json && rm -rf $$tmp

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: setup
	$(BIN)/python -m pytest

test: lint typecheck pytest

bench: setup
	$(BIN)/python bench/canon.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
