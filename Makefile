# Two commands set everything up on a fresh machine: `make demo` and `make test`.
# The CPU build of torch is installed first, pinned, so that nothing pulls the
# multi-GB CUDA build; the package itself only asks for a range.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TORCH_CPU ?= torch==2.13.0
STAMP := $(VENV)/.installed

.PHONY: demo test lint docs typecheck bench clean install

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "$(TORCH_CPU)"
	$(BIN)/python -m pip install --quiet -e ".[dev,postgres,serve,ray]"
	touch $(STAMP)

demo: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/assay demo --approve

test: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -q
	$(BIN)/ruff check assay migrations tests benchmarks examples docs/hooks evals
	$(BIN)/lint-imports
	$(BIN)/pyright --project pyproject.toml
	$(MAKE) docs

lint: $(STAMP)
	$(BIN)/ruff check assay migrations tests benchmarks examples docs/hooks evals
	$(BIN)/ruff format --check assay migrations tests benchmarks examples docs/hooks evals
	$(BIN)/lint-imports

# The reference manual; --strict turns every warning (a broken link, a page left out
# of the navigation) into a failure. Built into a scratch directory, never committed.
docs: $(STAMP)
	site=$$(mktemp -d); $(BIN)/mkdocs build --strict --quiet --site-dir "$$site"; status=$$?; \
		rm -rf "$$site"; exit $$status

typecheck: $(STAMP)
	$(BIN)/pyright --project pyproject.toml

bench: $(STAMP)
	for b in ledger tool_bus gate pathological_inputs verifier_speed graph_overhead; do \
		HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python benchmarks/$$b.py || exit 1; done

clean:
	rm -rf $(VENV) build site *.egg-info .pytest_cache .ruff_cache assay.db assay.db-wal assay.db-shm
