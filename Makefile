# llm-serving-cost — developer commands.
#
# Needs only python3 (>= 3.11) and make on a Debian/Ubuntu machine; everything else is
# installed by the targets themselves, into .venv (Python packages, pinned) and, for the
# browser tests, Debian's chromium via apt-get (as root).
#
#   make run          install the runtime set + the project, start the app on :8501
#   make test         install the dev set (+ chromium), run every test
#   make lint         ruff check, ruff format --check, mypy (core strict, app relaxed)
#   make bench        speed figures: the cost model, the load model, each page's rerun and figure sizes
#   make docs         regenerate the README's option and calibration tables from the code and data
#   make screenshots  run the browser tests, saving PNGs to docs/screenshots/
#   make prices       regenerate core/data/api_prices.json from the installed genai-prices (offline)
#   make load         load test, no browser (Streamlit's websocket protocol): SESSIONS=50 SECONDS=60
#   make load-burst   the same, but every session changes its input at once, BURST=3 times
#   make load-scaled  two replicas behind HAProxy (Debian's package, installed if missing), SESSIONS=100
#   make peers        our estimate beside llm-analysis' and GenZ's, one scenario (installs requirements-peers.txt)
#   make clean        remove caches and build output (make distclean also removes .venv)
#
# Installs are stamped (.venv/.stamp-*): they rerun only when requirements*.txt or
# pyproject.toml change, so `make run` and `make test` are cheap to repeat.
# requirements.txt holds only pins; the project (packages core and app) is installed
# editable on top, so `python -m core` works from any directory and edits take effect
# without reinstalling. The dashboard itself runs from the repo root either way.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PY ?= python3
VENV ?= .venv
VPY := $(VENV)/bin/python
PIP := $(VPY) -m pip
PORT ?= 8501
CHROMIUM := /usr/bin/chromium
SCREENSHOT_DIR ?= $(CURDIR)/docs/screenshots

STAMP_RUN := $(VENV)/.stamp-run
STAMP_DEV := $(VENV)/.stamp-dev
STAMP_PEERS := $(VENV)/.stamp-peers
PINS_RUN := $(VENV)/requirements-pins.txt
PINS_DEV := $(VENV)/requirements-dev-pins.txt

export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: help venv install install-dev chromium run test lint bench docs screenshots clean distclean prices peers

help:
	@sed -n 's/^#   make /  make /p' $(firstword $(MAKEFILE_LIST))

# --- virtual environment ------------------------------------------------------------------

venv: $(VPY)

$(VPY):
	@$(PY) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || { \
	  echo "error: '$(PY)' is missing or older than Python 3.11; run e.g. 'make PY=python3.11 ...'" >&2; \
	  exit 1; }
	rm -rf $(VENV)
	@if ! $(PY) -m venv $(VENV); then \
	  rm -rf $(VENV); \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "'$(PY) -m venv' failed: installing Debian's python3-venv"; \
	    apt-get update -qq -o DPkg::Lock::Timeout=300; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 python3-venv; \
	    $(PY) -m venv $(VENV); \
	  else \
	    echo "error: '$(PY) -m venv' failed; install Python's venv module (Debian/Ubuntu:" \
	         "'sudo apt-get install python3-venv') and run make again" >&2; \
	    exit 1; \
	  fi; \
	fi
	@$(VPY) -V

# Runtime set (requirements.txt) + the project, editable.
# setuptools' editable install maps only the packages that exist when it runs, so the
# stamp also depends on core/__init__.py: installed before core/ existed, it is redone
# once core/ appears.
$(STAMP_RUN): requirements.txt pyproject.toml $(wildcard core/__init__.py) $(wildcard app/__init__.py) | $(VPY)
	$(PIP) install -q -r requirements.txt
	cp requirements.txt $(PINS_RUN)
	$(PIP) install -q --no-deps -e .
	@touch $@

# Dev set on top, constrained so that no runtime pin can move.
$(STAMP_DEV): requirements-dev.txt $(STAMP_RUN)
	grep -vxF -e '-r requirements.txt' requirements-dev.txt > $(PINS_DEV)
	$(PIP) install -q -c $(PINS_RUN) -r $(PINS_DEV)
	@touch $@

install: $(STAMP_RUN)
install-dev: $(STAMP_DEV)

# $(call debian_package,COMMAND,PACKAGE,WHAT NEEDS IT): Debian's package, installed with apt-get
# when COMMAND is missing (as root; otherwise the command to run is printed and make stops).
define debian_package
	@if command -v $(1) >/dev/null; then exit 0; fi; \
	if ! command -v apt-get >/dev/null; then \
	  echo "error: $(1) is missing and there is no apt-get; install $(2) there" >&2; \
	  exit 1; \
	fi; \
	if [ "$$(id -u)" != 0 ]; then \
	  echo "error: $(1) is missing, and $(3) cannot run without it. As root, run:" >&2; \
	  echo "  apt-get update && apt-get install -y $(2)" >&2; \
	  echo "(or: sudo apt-get update && sudo apt-get install -y $(2)), then make again" >&2; \
	  exit 1; \
	fi; \
	echo "Installing Debian's $(2) for $(3)"; \
	apt-get update -qq -o DPkg::Lock::Timeout=300; \
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 $(2)
endef

# Debian's chromium for the Playwright tests (never Playwright's own browser download: it fetches a
# browser build of its own, which is not possible everywhere).
chromium:
	$(call debian_package,$(CHROMIUM),chromium,the browser tests)

# --- targets ------------------------------------------------------------------------------

run: $(STAMP_RUN)
	$(VPY) -m streamlit run streamlit_app.py --server.port=$(PORT)

# The Dockerfile / packaging checks first (fast, fail early), then everything else:
# unit, property, AppTest and browser (e2e) tests.
test: $(STAMP_DEV) chromium
	$(VPY) -m pytest -q tests/test_packaging.py
	$(VPY) -m pytest --ignore=tests/test_packaging.py

lint: $(STAMP_DEV)
	$(VPY) -m ruff check .
	$(VPY) -m ruff format --check .
	$(VPY) -m mypy

bench: $(STAMP_DEV)
	$(VPY) benchmarks/bench_core.py
	$(VPY) benchmarks/bench_serving.py
	$(VPY) benchmarks/bench_app.py

# The peers are optional and large (~1.2 GB): installed only here, never by test or run.
# --no-deps: requirements-peers.txt lists everything they import (its header says why).
$(STAMP_PEERS): requirements-peers.txt $(STAMP_DEV)
	$(PIP) install -q --no-deps -r requirements-peers.txt
	@touch $@

peers: $(STAMP_PEERS)
	$(VPY) benchmarks/peers.py

docs: $(STAMP_RUN)
	$(VPY) -m core.cli.options_doc --write
	$(VPY) -m core.cli.calibration_doc --write

screenshots: $(STAMP_DEV) chromium
	mkdir -p $(SCREENSHOT_DIR)
	SCREENSHOT_DIR=$(SCREENSHOT_DIR) $(VPY) -m pytest -m e2e tests/e2e

clean:
	rm -rf build dist *.egg-info .pytest_cache .hypothesis .ruff_cache .mypy_cache
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)

# The API price catalogue core reads: written from the snapshot bundled in the pinned genai-prices
# (no download), with the prices in force today at 12:00 UTC. Rerun after bumping genai-prices
# (a test fails until you do) or after the "next scheduled change" date that `python -m core prices` shows.
prices: $(STAMP_RUN)
	$(VPY) tools/export_api_prices.py

# --- load test ----------------------------------------------------------------------------
# benchmarks/load.py: protocol-level sessions (no browser) against servers started as the
# Docker image starts them; it prints latency percentiles, errors, health-probe latency,
# server CPU and memory, and the issue's targets with PASS/FAIL. Figures to read: the exit
# code is 0 unless the tool could not run. LOAD_JSON=path also writes them as JSON;
# LOAD_ARGS passes anything else (e.g. LOAD_ARGS='--seed 2 --query model=llama-3.1-8b').

SECONDS ?= 60
PERIOD ?= 5
PAGE ?= overview
BURST ?=
LOAD_JSON ?=
LOAD_ARGS ?=
LOAD := $(VPY) benchmarks/load.py --seconds $(SECONDS) --period $(PERIOD) --page $(PAGE) \
	$(if $(LOAD_JSON),--json $(LOAD_JSON)) $(LOAD_ARGS)

.PHONY: load load-burst load-scaled haproxy

load: $(STAMP_RUN)
	$(LOAD) --sessions $(or $(SESSIONS),50) $(if $(BURST),--burst $(BURST))

load-burst: $(STAMP_RUN)
	$(LOAD) --sessions $(or $(SESSIONS),50) --burst $(or $(BURST),3)

load-scaled: $(STAMP_RUN) haproxy
	$(LOAD) --sessions $(or $(SESSIONS),100) --replicas 2 $(if $(BURST),--burst $(BURST))

# Debian's haproxy for load-scaled (two replicas behind a real balancer).
haproxy:
	$(call debian_package,haproxy,haproxy,make load-scaled)
