# The two commands a newcomer needs: `make run` (the dashboard) and `make test`.
# Both create the virtual environment .venv on first use.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test etl

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.runtime: requirements.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.dev: requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	touch $@ $(VENV)/.runtime

# With LITELLM_DATABASE_URL (or DATABASE_URL) set, copy the spend logs first.
run: $(VENV)/.runtime
	@if [ -n "$${LITELLM_DATABASE_URL:-}$${DATABASE_URL:-}" ]; then $(BIN)/python -m etl run; fi
	$(BIN)/python -m streamlit run app.py

etl: $(VENV)/.runtime
	$(BIN)/python -m etl run

test: $(VENV)/.dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/python -m pytest
