# chemgauge: `make demo` and `make test` set everything up from a fresh clone.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.chemgauge-installed

.PHONY: setup demo test lint typecheck pytest docs bench results clean system-deps mutation check durations namers

$(STAMP): pyproject.toml
	@test -n "$(PYTHON)" || { echo "error: Python 3.11+ not found (set PYTHON=...)"; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@

setup: $(STAMP) system-deps namers

# The open structure-to-name generators the names tests and bench drive (orthonym,
# openclatura, nispo), each in a virtual environment of its own under the user cache (each
# pins its own RDKit; none goes into .venv). Reused when already installed.
namers: $(STAMP)
	$(BIN)/chemgauge names namers install orthonym openclatura nispo

# External programs the real back-ends need (Java for OPSIN). Installed with apt when
# running as root (CI); otherwise the message says what to install.
system-deps:
	@bash scripts/system-deps.sh

# The forward benchmark on the demo corpus shipped inside the package (every outcome the
# harness reports, from real engine output), then a check and an HTML page of the run. Then a
# second system on the same corpus (the embedded set's amide-coupling rules alone) and a board
# of the two: values with intervals, ranks, letter groups, per-breakdown boards.
DEMO_OUT ?= demo-out
DEMO_RULES := src/chemgauge/families/forward/engine/forward_rules.jsonl
demo: setup
	$(BIN)/chemgauge matchers --known
	$(BIN)/chemgauge forward benchmark --executor serial --out $(DEMO_OUT)
	$(BIN)/chemgauge verify $(DEMO_OUT)
	$(BIN)/chemgauge report $(DEMO_OUT) --out $(DEMO_OUT)/report.html
	grep '"reaction_class": "amide_coupling"' $(DEMO_RULES) > $(DEMO_OUT)/amide-rules.jsonl
	$(BIN)/chemgauge forward benchmark --executor serial --quiet \
		--template-source file --templates $(DEMO_OUT)/amide-rules.jsonl \
		--out $(DEMO_OUT)/amide-only
	$(BIN)/chemgauge board $(DEMO_OUT) $(DEMO_OUT)/amide-only \
		--out $(DEMO_OUT)/board
	@echo "demo: rows, report, $(DEMO_OUT)/report.html and $(DEMO_OUT)/board/board.html are in $(DEMO_OUT)/"

# The p2s task loader and scorer promise a bare Python 3.9+: these modules (all they import)
# must need nothing newer (tests/families/p2s/test_scoring.py checks the list is complete).
STDLIB_39 := src/chemgauge/__init__.py src/chemgauge/errors.py src/chemgauge/exports.py \
	src/chemgauge/registry.py src/chemgauge/families/__init__.py src/chemgauge/families/p2s/__init__.py \
	src/chemgauge/families/p2s/spec.py src/chemgauge/families/p2s/taskfile.py \
	src/chemgauge/families/p2s/scoring.py src/chemgauge/eval/__init__.py \
	src/chemgauge/eval/lines.py src/chemgauge/eval/rates.py

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/vermin -t=3.9- --violations --no-tips $(STDLIB_39)

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: setup
	$(BIN)/python -m pytest

# The documentation site (docs/, mkdocs.yml), built strictly and offline into site/.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

test: lint typecheck pytest docs

# Lint, types and the fast tests: those not marked slow or external and not measured at
# >= 0.3 s in tests/durations.json (`make durations` re-measures them).
check: lint typecheck
	$(BIN)/python -m pytest --fast -q

durations: setup
	$(BIN)/python -m pytest -m "not slow and not external" -q --record-durations

# The bench scripts that fit in about ten minutes together; each writes its JSON result in
# bench/results/, then RESULTS.md is rendered from every result file and the run fails if a
# target these scripts measure is missed. The long ones (forward_uspto, forward_benchmark_uspto,
# retro_vs_syntheseus, ocsr_jpo, jobs_scaling, scale*) are run one by one on a quiet machine:
# their commands are in bench/RESULTS.md; `make results` re-renders after any of them.
BENCH_QUICK := canon names_opsin p2s_xtb
bench: setup
	$(BIN)/python bench/canon.py
	$(BIN)/python bench/names_opsin.py
	$(BIN)/python bench/p2s_xtb.py --sources 400
	$(BIN)/python bench/render_results.py --check $(BENCH_QUICK)

results: $(STAMP)
	$(BIN)/python bench/render_results.py

# Mutation score of the modules that produce published numbers (mutmut; modules and oracle
# tests in pyproject.toml's [tool.mutmut]); writes bench/results/mutation.json, renders
# RESULTS.md, fails below 90% for a module. A run from scratch (no mutants/ cache), two
# mutmut children as on CI's two cores; verdicts independent of load and of Hypothesis's
# draw (bench/mutation.py's docstring). A full run's wall time is printed and recorded in
# bench/results/mutation.json ("The run took ... min on 2 cores"); .ci/run runs it after
# `make test`.
MUTATION_CHILDREN ?= 2
mutation: $(STAMP)
	$(BIN)/python bench/mutation.py --max-children $(MUTATION_CHILDREN)
	$(BIN)/python bench/render_results.py --check mutation

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis site
