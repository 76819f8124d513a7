# Two commands: `make run` (serve the demo) and `make test` (the whole check).
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000

.PHONY: run test check lint typecheck pytest setup docs clean

$(VENV)/.installed: pyproject.toml
	@test -x $(PY) || "$$(scripts/find_python.sh)" -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[dev]"
	@touch $@

setup: $(VENV)/.installed

# The local demo runs with the checkout's .env (DEBUG on); production sets DEBUG=0 and a SECRET_KEY, which win.
run: setup .env
	$(PY) manage.py migrate --noinput
	$(PY) manage.py seed_demo
	$(PY) manage.py collectstatic --noinput -v0
	$(PY) manage.py demo_token --curl --port $(PORT)
	@echo "Staff admin: create a login with '$(PY) manage.py createsuperuser', then open http://127.0.0.1:$(PORT)/admin/"
	PORT=$(PORT) scripts/run_local.sh

# Local settings every command of this checkout reads (config/local_env.py), written once, never committed.
.env:
	@umask 077 && printf '%s\n' \
	  "# Local settings of this checkout, read by config/settings.py; variables set in the environment win." \
	  "DEBUG=1" \
	  "SECRET_KEY=$$(LC_ALL=C tr -dc 'A-Za-z0-9' </dev/urandom | head -c 50)" >$@
	@echo "Wrote $@: DEBUG=1 and a random SECRET_KEY, for this checkout only."

test: setup
	@scripts/install_chromium.sh
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy .
	$(VENV)/bin/lint-imports
	scripts/run_pytest.sh

lint: setup
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

docs: setup
	$(PY) manage.py generate_tool_docs

clean:
	rm -rf $(VENV) db.sqlite3 var
