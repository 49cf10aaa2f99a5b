# Every target does its own set-up: a fresh machine needs only python3.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install run test lint typecheck bench compiled clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

## make run: the main job on the embedded local stack (Ctrl-C stops it).
run: $(STAMP)
	$(BIN)/skillstream live

## make test: lint, types, and the whole suite.
test: $(STAMP)
	$(BIN)/ruff check stream tests
	$(BIN)/ruff format --check stream tests
	$(BIN)/mypy
	$(BIN)/pytest -q

lint: $(STAMP)
	$(BIN)/ruff check stream tests
	$(BIN)/ruff format --check stream tests

typecheck: $(STAMP)
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/skillstream bench engine

## make compiled: optional; the rating arithmetic compiled with mypyc (a C compiler needed), the
## same results bit for bit, replays several times faster (docs/benchmarks.md).
compiled: $(STAMP)
	$(BIN)/skillstream compile

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache stream/ratings/_compiled_*
