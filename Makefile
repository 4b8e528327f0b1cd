# Every target creates .venv and installs what it needs when missing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export PYTHONDONTWRITEBYTECODE := 1

# Debian packages the tests use (PACKAGE:a file it provides): a real browser for the page,
# a real PostgreSQL server (started by the tests in a temporary directory).
SYSTEM := chromium:/usr/bin/chromium chromium-driver:/usr/bin/chromedriver \
	postgresql:/usr/lib/postgresql/15/bin/initdb

.PHONY: install demo demo-web langgraph-dev test lint bench bench-startup interop clean eval crash system screenshots fuzz bench-estop

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,server]'
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/labwright demo --config examples/lab.yaml

# The web page on a fresh simulated lab: prints the URL and an approver's token.
demo-web: $(STAMP)
	$(BIN)/labwright web --demo --config examples/lab.yaml

# The task graph on LangGraph's own server (in memory, offline, no telemetry): port 2024.
langgraph-dev: $(STAMP)
	LANGGRAPH_CLI_NO_ANALYTICS=1 LANGSMITH_TRACING=false $(BIN)/langgraph dev --no-browser --allow-blocking --config langgraph.json

# The pages as PNG files in docs/ (a real headless Chromium, as the page tests drive it).
screenshots: $(STAMP) system
	LABWRIGHT_SCREENSHOTS=docs $(BIN)/python -m pytest tests/test_web_page.py -q

system:
	@bash .ci/system-packages $(SYSTEM)

test: $(STAMP) system
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python bench/run.py
	$(BIN)/python bench/planner_bench.py

# e-stop latency during a 1,008-operation transfer, 20 trials with real stdio servers
bench-estop: $(STAMP)
	$(BIN)/python bench/estop_latency.py --trials 20

# the fuzz properties of the tools, the CLI and the lab file at 10,000 cases each
fuzz: $(STAMP)
	$(BIN)/python bench/fuzz.py --cases 10000

# 200 trials of 8 servers started together on a fresh state directory (about 15 min on 2 cores)
bench-startup: $(STAMP)
	$(BIN)/python bench/startup_race.py --trials 200 --servers 8

interop: $(STAMP)
	bash interop/run.sh

eval: $(STAMP)
	$(BIN)/labwright eval evals/scenarios --report eval-report

clean:
	rm -rf $(VENV) .venv-opentrons examples/.labwright-state

crash: $(STAMP)
	$(BIN)/python bench/crash_harness.py
	$(BIN)/python bench/crash_harness.py --concurrent
	$(BIN)/python bench/crash_estop.py
