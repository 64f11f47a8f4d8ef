# The two commands: `make demo` (the main job) and `make test` (everything).
# Both do all set-up on a fresh machine: the virtualenv, the pinned sdist,
# materializing pristine + patches into src/, and the npm-installed servers.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.requirements.stamp
SERIES := $(PYTHON) tools/series.py
WORKERS ?= 4
NPM_DIR := tests/integration/third_party_mcp_apps
export PYTHONPATH := $(CURDIR)/src:$(CURDIR)/tests/integration/fixtures:$(CURDIR)/contributing/samples
export PYTHONDONTWRITEBYTECODE := 1
# playwright (requirements-dev.txt) drives Debian's Chromium; never a download.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD := 1

.PHONY: venv sync patches check-patches check-series check-series-full check-commits \
	wheel demo test test-full unit conformance conformance-check bench bench-smoke amend-start \
	amend-finish amend-abort npm-servers page chromium sweep compat-core compat-mcp1

$(STAMP): requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $(STAMP)

venv: $(STAMP)

sync:
	$(SERIES) sync

patches:
	$(SERIES) export

check-patches:
	$(SERIES) check-patches

# Lower prefixes run their own PR's tests; the top prefix only imports (its
# tests are `make test`'s full run on the same tree). check-series-full is
# the complete matrix: every prefix runs the tests of every PR up to it.
check-series: venv sync
	$(SERIES) check-series --python $(abspath $(PY)) --workers $(WORKERS)

check-series-full: venv sync
	$(SERIES) check-series --python $(abspath $(PY)) --workers $(WORKERS) --full

# Fast: every mail applies with git am and every commit imports; no tests.
check-commits: venv sync
	$(SERIES) check-series --python $(abspath $(PY)) --no-tests

amend-start:
	@test -n "$(PR)" || { echo 'usage: make amend-start PR=<number>'; exit 2; }
	$(SERIES) amend-start $(PR)

amend-finish:
	$(SERIES) amend-finish

amend-abort:
	$(SERIES) amend-abort

wheel: venv sync page
	$(PY) tools/series.py wheel --python $(abspath $(PY))

npm-servers:
	@if [ -f $(NPM_DIR)/package-lock.json ]; then \
	  $(PY) -c 'import sys; sys.path.insert(0, "$(NPM_DIR)"); import servers; servers.ensure_installed()'; \
	fi

# The renderer page's AppBridge bundle (the published ext-apps package,
# pinned in tools/page/package-lock.json) and its licenses, built into
# package data; generated, never committed (tools/build_page.py).
page: sync
	$(PYTHON) tools/build_page.py

# Debian's Chromium, for the View tests (no test tool downloads a browser).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }

# The whole suite on the whole stack, with the series tool's own tests.
unit: venv sync npm-servers page chromium
	$(PY) -m pytest -p no:cacheprovider -q -n $(WORKERS) --dist loadfile \
	  tests tools/tests

# docs/conformance.md's Proof column from the tests' conformance markers:
# `conformance` regenerates it, `conformance-check` (a stage of `make test`)
# fails when the committed map differs.
conformance: venv
	$(PY) tools/conformance_check.py --write

conformance-check: venv
	$(PY) tools/conformance_check.py

# Everything, each test once, in timed stages (tools/run_tests.py); a killed
# run leaves nothing behind. test-full adds the complete prefix matrix.
test:
	$(PYTHON) tools/run_tests.py --workers $(WORKERS)

test-full:
	$(PYTHON) tools/run_tests.py --workers $(WORKERS) --full

# Ends whatever a killed `make test` of this checkout left running.
sweep:
	$(PYTHON) tools/run_tests.py --sweep-only

# The drop-in promise where the project venv cannot show it: the core
# install without mcp (the built wheel as the top prefix), and MCP SDK 1.x.
# Each leg keeps its own virtualenv under .cache/compat/.
compat-core: wheel
	$(PY) tools/compat_legs.py core --wheel $(firstword $(wildcard dist/google_adk-*.whl))

compat-mcp1: venv sync
	$(PY) tools/compat_legs.py mcp1

# Part 3 serves the Views in the browser (adk web --mcp_apps) until Ctrl-C;
# DEMO_HEADLESS=1, or stdin not a terminal, drives them in headless Chromium,
# saves a screenshot and exits (tools/demo_web.py).
demo: venv sync npm-servers page chromium
	$(PY) tools/demo.py

bench: venv sync npm-servers
	$(PY) benchmarks/run.py

bench-smoke: venv sync npm-servers
	$(PY) benchmarks/run.py --smoke
