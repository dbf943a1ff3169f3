# Lakelet developer commands:
#   make test   build .venv with Python 3.12 when missing (or when the requirements change), then run pytest
#   make run    run the embedded local stack (`lakelet local`) on 127.0.0.1:8000
# Pass extra arguments with PYTEST_ARGS="-k e2e -x" or RUN_ARGS="--api-port 9000".

SHELL := /bin/bash
VENV ?= .venv
PYTHON_VERSION ?= 3.12.1
# Rewritten whenever the install runs, so a change to any file below triggers a re-install.
STAMP := $(VENV)/.lakelet-installed
PYTEST_ARGS ?=
RUN_ARGS ?=

# pyenv's python3.12 shim refuses to run unless 3.12.1 is selected, so prefer pyenv's interpreter itself,
# then a python3.12 on PATH that actually runs. Override with PYTHON312=/path/to/python3.12.
PYTHON312 ?= $(shell \
	if command -v pyenv >/dev/null 2>&1 \
	   && [ -x "$$(pyenv root)/versions/$(PYTHON_VERSION)/bin/python3.12" ]; then \
		echo "$$(pyenv root)/versions/$(PYTHON_VERSION)/bin/python3.12"; \
	elif command -v python3.12 >/dev/null 2>&1 && python3.12 -c 'pass' >/dev/null 2>&1; then \
		command -v python3.12; \
	fi)

.PHONY: test run venv clean-venv

test: $(STAMP)
	$(VENV)/bin/python -m pytest $(PYTEST_ARGS)

run: $(STAMP)
	$(VENV)/bin/lakelet local $(RUN_ARGS)

venv: $(STAMP)

$(VENV)/bin/python:
	@if [ -z "$(PYTHON312)" ]; then \
		echo "error: Python 3.12 not found. Install it (e.g. 'pyenv install $(PYTHON_VERSION)')" \
		     "or run make with PYTHON312=/path/to/python3.12." >&2; \
		exit 1; \
	fi
	$(PYTHON312) -m venv $(VENV)

# chalice 1.34.0 does not install with pip 26.3 or later, hence the pip pin.
$(STAMP): $(VENV)/bin/python requirements.txt requirements-dev.txt pyproject.toml
	@$(VENV)/bin/python -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' || { \
		echo "error: $(VENV) is not a Python 3.12 venv (Chalice takes the Lambda runtime from it);" \
		     "remove it with 'make clean-venv' and run make again." >&2; \
		exit 1; }
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check 'pip<26.3'
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

clean-venv:
	rm -rf $(VENV)
