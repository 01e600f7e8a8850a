# Two commands set everything up on a fresh machine: `make demo` and `make test`.
# The CPU build of torch is installed first, pinned, so that nothing pulls the
# multi-GB CUDA build; the package itself only asks for a range.
#
# Each need has its own install stamp: `make demo` installs the package alone (what
# the demo runs); test, lint, docs, typecheck and bench add the dev, postgres, serve
# and ray extras on top of it.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TORCH_CPU ?= torch==2.13.0
BASE := $(VENV)/.installed-base
DEV := $(VENV)/.installed-dev
# Test processes (pytest-xdist): one per core by default; WORKERS=0 runs in this
# process, WORKERS=3 three workers.
WORKERS ?= auto
# COVERAGE=1 (set by .ci/run) measures the coverage of the assay package and fails
# below the floor. Off by default: tracing every line slows the tests down.
COVERAGE ?=
COVERAGE_FLOOR ?= 92
COVERAGE_ARGS := $(if $(COVERAGE),--cov --cov-report=)
COVERAGE_LAST := $(if $(COVERAGE),--cov --cov-append --cov-report=term:skip-covered \
	--cov-fail-under=$(COVERAGE_FLOOR))
# The Ray tests run in one process of their own after the others: a Ray driver inside
# a pytest-xdist worker brought the worker down, and xdist then waited for it forever.
RAY_TESTS := tests/evals/test_ray.py
CHECKED := assay migrations tests benchmarks examples docs/hooks evals
OFFLINE := HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

.PHONY: demo test pytest lint docs typecheck bench clean install install-dev

install: $(BASE)
install-dev: $(DEV)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "$(TORCH_CPU)"

$(BASE): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $(BASE)

$(DEV): pyproject.toml $(BASE)
	$(BIN)/python -m pip install --quiet -e ".[dev,postgres,serve,ray]"
	touch $(DEV)

demo: $(BASE)
	$(OFFLINE) $(BIN)/assay demo --approve

# The linters first (seconds), then the tests (in parallel, in a random order) and
# the type check side by side: pyright runs on one core while the tests wait on their
# servers and subprocesses, and while the Ray tests run alone. -O prints each one's
# output whole when it ends. The manual is built by tests/test_docs.py (`make docs`
# builds it alone).
test: lint
	$(MAKE) --no-print-directory -j2 -O pytest typecheck

# Not -q: the header shows pytest-randomly's seed (docs/development.md, "Tests").
pytest: $(DEV)
	$(OFFLINE) $(BIN)/python -m pytest -n $(WORKERS) --ignore=$(RAY_TESTS) $(COVERAGE_ARGS)
	$(OFFLINE) $(BIN)/python -m pytest $(RAY_TESTS) $(COVERAGE_LAST)

lint: $(DEV)
	$(BIN)/ruff check $(CHECKED)
	$(BIN)/ruff format --check $(CHECKED)
	$(BIN)/lint-imports

# The reference manual; --strict turns every warning (a broken link, a page left out
# of the navigation) into a failure. Built into a scratch directory, never committed.
docs: $(DEV)
	site=$$(mktemp -d); $(BIN)/mkdocs build --strict --quiet --site-dir "$$site"; status=$$?; \
		rm -rf "$$site"; exit $$status

typecheck: $(DEV)
	$(BIN)/pyright --project pyproject.toml

bench: $(DEV)
	for b in ledger tool_bus gate pathological_inputs verifier_speed graph_overhead; do \
		$(OFFLINE) $(BIN)/python benchmarks/$$b.py || exit 1; done

clean:
	rm -rf $(VENV) build site *.egg-info .pytest_cache .ruff_cache .coverage .coverage.* \
		assay.db assay.db-wal assay.db-shm
