# Every target creates .venv and installs what it needs when missing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: install demo test lint bench interop clean eval crash

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/labwright demo --config examples/lab.yaml

test: $(STAMP)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python bench/run.py

interop: $(STAMP)
	bash interop/run.sh

eval: $(STAMP)
	$(BIN)/labwright eval evals/scenarios --report eval-report

clean:
	rm -rf $(VENV) .venv-opentrons examples/.labwright-state

crash: $(STAMP)
	$(BIN)/python bench/crash_harness.py
	$(BIN)/python bench/crash_estop.py
