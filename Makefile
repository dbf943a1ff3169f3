# Lakelet developer commands:
#   make run    build .venv with Python 3.12 and what the stack needs at run time (pip install -e '.[local]'), then
#               run the embedded local stack (`lakelet up --sample-data`) on 127.0.0.1:8000. No Spark: the first
#               `lakelet gc run` installs it (the [gc] extra, requirements-gc.txt)
#   make test   add Spark and the test and lint tools to .venv (pip install -e '.[dev]'), then run pytest (all but
#               the compat tier) on one pytest-xdist worker per core (TEST_WORKERS=0: one process)
#   make test-compat  run lakefs-spec's own suite, downloaded at test time, against `lakelet up` on port 8000
#   make test-fast  the edit loop: unit tests, the in-memory side of the contract suites and the API tests; its
#               first run installs the [test] extra only (no Spark: pip install -e '.[test]')
#   make check  ruff format --check, ruff check and mypy (strict on chalicelib/, lakelet/ and emr/); part of .ci/run
#   make package  build the CloudFormation template and the Lambda bundle for STAGE (offline) in build/STAGE/
#   make deploy   deploy build/STAGE/ to the AWS account of your credentials with the AWS CLI (README: Deploy)
#   make deploy-rehearsal  create build/STAGE/ as a stack in moto's CloudFormation, offline, and check that what
#               the code reads resolves (infra/rehearsal.py, docs/deploy.md); run make package first
#   make smoke  ENDPOINT=... ACCESS_KEY_ID=... SECRET_ACCESS_KEY=... [S3_ENDPOINT=...] [SMOKE_ARGS="--workflow-objects N"]:
#               a bounded, self-cleaning pass of the everyday flows against any endpoint (bench/smoke.py, docs/deploy.md)
#   make webui    build the web UI (webui/, Node 20) into chalicelib/webui_dist/; test, run and package do it first
#   make bench-lakefs  LAKEFS_BIN=... the local stack beside the real lakeFS, same client, p50 per operation and
#               bulk rows (bench/side_by_side.py); skipped without LAKEFS_BIN
#   make bench    every figure of the performance table with its goal (bench/run.py), into bench/results.json
#               and the table of docs/performance.md; BENCH_ARGS="--quick" for a small run, --help for sizes and ports
# Pass extra arguments with PYTEST_ARGS="-k e2e -x" or RUN_ARGS="--api-port 9000".

SHELL := /bin/bash
VENV ?= .venv
PYTHON_VERSION ?= 3.12.1
# Rewritten whenever an install runs, so a change to any file below triggers a re-install. Three levels in one
# venv: what `make run` needs (the [local] extra), the test and lint tools on top for `make test-fast` ([test]: no
# Spark, whose pyspark sdist takes most of a fresh install's time), and Spark ([gc]) on top of both for
# `make test` ([dev]).
RUN_STAMP := $(VENV)/.lakelet-run-installed
TEST_STAMP := $(VENV)/.lakelet-test-installed
DEV_STAMP := $(VENV)/.lakelet-dev-installed
RUN_REQUIREMENTS := requirements.txt requirements-cli.txt requirements-local.txt pyproject.toml
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

.PHONY: test test-compat test-fast check run venv clean-venv package deploy deploy-rehearsal webui bench bench-lakefs spark-jars smoke

# The compat tier needs the network and port 8000, so it is a target of its own (.ci/run calls both). A -m in
# PYTEST_ARGS replaces this one: add "and not compat" to it.
test: $(DEV_STAMP)
	$(VENV)/bin/python -m pytest -n $(TEST_WORKERS) --dist loadfile -m "not compat" $(PYTEST_ARGS)

# lakefs-spec's tests, unchanged, against a fresh stack (tests/compat/).
test-compat: $(DEV_STAMP)
	$(VENV)/bin/python -m pytest -m compat tests/compat $(PYTEST_ARGS)

# Every tier that needs moto, Spark, chalice package, Chromium or a running stack is left out (markers in
# pyproject.toml, set by tests/conftest.py); what is left runs in under a minute on two idle cores: one pytest-xdist
# worker per core (TEST_WORKERS=0 runs in one process), and bytecode written even where PYTHONDONTWRITEBYTECODE is
# set, so that a second run neither compiles the code again nor rewrites the tests' asserts (half of collecting).
SLOW_TIERS := aws or spark or package or browser or e2e or compat
TEST_WORKERS ?= auto
test-fast: $(TEST_STAMP)
	PYTHONDONTWRITEBYTECODE= $(VENV)/bin/python -m pytest -n $(TEST_WORKERS) -m "not ($(SLOW_TIERS))" \
		tests/unit tests/contract tests/api $(PYTEST_ARGS)

# All three run even when one fails, so one pass shows every finding; the exit status is non-zero if any did.
# Settings in pyproject.toml ([tool.ruff], [tool.mypy]). `ruff format .` and `ruff check --fix .` repair most.
check: $(DEV_STAMP)
	@status=0; \
	echo "ruff format --check"; $(VENV)/bin/ruff format --check . || status=1; \
	echo "ruff check"; $(VENV)/bin/ruff check . || status=1; \
	echo "mypy"; $(VENV)/bin/mypy || status=1; \
	exit $$status

# The quickstart repository is created once per data directory (lakelet/stack/samples.py). The venv's install and the
# web UI's (npm ci, esbuild) wait mostly on the network, each on its own: a sub-make runs them side by side, which
# takes a first run's npm ci off its critical path (docs/local-stack.md, "Installing").
run:
	@$(MAKE) --no-print-directory -j2 $(RUN_STAMP) webui
	$(VENV)/bin/lakelet up --sample-data $(RUN_ARGS)

venv: $(DEV_STAMP)

$(VENV)/bin/python:
	@if [ -z "$(PYTHON312)" ]; then \
		echo "error: Python 3.12 not found. Install it (e.g. 'pyenv install $(PYTHON_VERSION)')" \
		     "or run make with PYTHON312=/path/to/python3.12." >&2; \
		exit 1; \
	fi
	$(PYTHON312) -m venv --without-pip $(VENV)
	$(PYTHON312) -m pip --python $(VENV)/bin/python install $(PIP_QUIET) --no-compile $(VENV_TOOLS) || { \
		rm -rf $(VENV) && $(PYTHON312) -m venv $(VENV); }

# chalice 1.34.0 does not install with pip 26.3 or later, hence the pip pin. Its lower bound upgrades the pip that
# `python -m venv` bundles (23.2 with Python 3.12.1), whose resolver takes about twice as long to fetch and resolve
# the stack's ~50 packages with an empty cache; a venv already on 26.x is left alone, without a network call.
# setuptools (pyproject.toml's build backend, and a dependency of chalice's anyway) goes in the venv, so the
# editable install builds with --no-build-isolation instead of filling a throwaway build environment first.
# A new venv gets them straight from the interpreter's own pip (--python, pip 22.3+), which skips installing and
# byte-compiling the bundled pip only to replace it; without such a pip, the venv is made the usual way.
VENV_TOOLS := 'pip>=26,<26.3' 'setuptools>=69'
PIP_QUIET := --quiet --disable-pip-version-check
define check_venv
	@$(VENV)/bin/python -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' || { \
		echo "error: $(VENV) is not a Python 3.12 venv (Chalice takes the Lambda runtime from it);" \
		     "remove it with 'make clean-venv' and run make again." >&2; \
		exit 1; }
	$(VENV)/bin/python -m pip install $(PIP_QUIET) --no-compile $(VENV_TOOLS)
endef

# --no-compile: pip would byte-compile every module of every package (botocore's thousands of service files
# among them), ~10 s of CPU on a first run; Python compiles the few hundred the stack imports when it first starts.
$(RUN_STAMP): $(VENV)/bin/python $(RUN_REQUIREMENTS)
	$(check_venv)
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-compile --no-build-isolation -e '.[local]'
	touch $@

# [test] includes [local]; installing it also brings the run level up to date.
$(TEST_STAMP): $(VENV)/bin/python $(RUN_REQUIREMENTS) requirements-dev.txt
	$(check_venv)
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-build-isolation -e '.[test]'
	touch $(RUN_STAMP) $@

# [dev] includes [local], [test] and [gc]; installing it also brings the other two levels up to date.
$(DEV_STAMP): $(VENV)/bin/python $(RUN_REQUIREMENTS) requirements-gc.txt requirements-dev.txt
	$(check_venv)
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-build-isolation -e '.[dev]'
	touch $(RUN_STAMP) $(TEST_STAMP) $@

clean-venv:
	rm -rf $(VENV)

# --- Deployment (README, "Deploy to AWS") -------------------------------------------------------------------
STAGE ?= dev
PACKAGE_DIR ?= build/$(STAGE)
# chalice package resolves nothing remotely, but botocore insists on a region; deploy uses your own.
PACKAGE_REGION ?= us-east-1
AWS ?= $(VENV)/bin/aws
STACK_NAME ?= lakelet-$(STAGE)
# Where deploy uploads the Lambda bundle and the GC job; created when missing. Default: one per account/region.
ARTIFACT_BUCKET ?=
# More stack parameters, e.g. DEPLOY_PARAMETERS="BucketName=my-lake GCMode=mark LogRetentionDays=90".
DEPLOY_PARAMETERS ?=

# Writes $(PACKAGE_DIR)/package/sam.json (the one deployable template) and deployment.zip beside it, compiled
# for the functions' Python (infra/bytecode.py), and the GC job's package as $(PACKAGE_DIR)/emr/lakelet_gc.zip
# (infra/gc_bundle.py), which EMR Serverless puts on the path of the entry point emr/gc_job.py.
package: $(DEV_STAMP)
	rm -rf $(PACKAGE_DIR)
	$(VENV)/bin/python -m infra.gc_bundle $(PACKAGE_DIR)/emr/lakelet_gc.zip
	$(VENV)/bin/python -m infra.build --stage $(STAGE) --out $(PACKAGE_DIR)/merge.json
	AWS_DEFAULT_REGION=$(PACKAGE_REGION) $(VENV)/bin/chalice package --pkg-format cloudformation \
		--stage $(STAGE) --merge-template $(PACKAGE_DIR)/merge.json $(PACKAGE_DIR)/package
	$(VENV)/bin/python -m infra.bytecode $(PACKAGE_DIR)/package
	$(VENV)/bin/python -m infra.policy_check $(PACKAGE_DIR)/package/sam.json
	$(VENV)/bin/cfn-lint $(PACKAGE_DIR)/package/sam.json

deploy: $(DEV_STAMP)
	@test -f $(PACKAGE_DIR)/package/sam.json -a -f $(PACKAGE_DIR)/emr/lakelet_gc.zip || { \
		echo "error: run 'make package STAGE=$(STAGE)' first" >&2; exit 1; }
	@set -euo pipefail; \
	region=$${AWS_REGION:-$${AWS_DEFAULT_REGION:-$$($(AWS) configure get region || true)}}; \
	[ -n "$$region" ] || { echo "error: no AWS region: set AWS_REGION or run 'aws configure'" >&2; exit 1; }; \
	export AWS_DEFAULT_REGION="$$region"; \
	bucket="$(ARTIFACT_BUCKET)"; \
	if [ -z "$$bucket" ]; then \
		account=$$($(AWS) sts get-caller-identity --query Account --output text); \
		bucket="lakelet-artifacts-$$account-$$region"; \
	fi; \
	echo "Deploying stack $(STACK_NAME) to $$region, artifacts in s3://$$bucket/lakelet/$(STAGE)/"; \
	if ! $(AWS) s3api head-bucket --bucket "$$bucket" 2>/dev/null; then \
		$(AWS) s3 mb "s3://$$bucket"; \
		$(AWS) s3api put-public-access-block --bucket "$$bucket" --public-access-block-configuration \
			BlockPublicAcls=true,IgnorePublicAcls=true,BlockPublicPolicy=true,RestrictPublicBuckets=true; \
	fi; \
	$(AWS) s3 cp emr/gc_job.py "s3://$$bucket/lakelet/$(STAGE)/emr/gc_job.py"; \
	$(AWS) s3 cp $(PACKAGE_DIR)/emr/lakelet_gc.zip "s3://$$bucket/lakelet/$(STAGE)/emr/lakelet_gc.zip"; \
	$(AWS) cloudformation package --template-file $(PACKAGE_DIR)/package/sam.json --s3-bucket "$$bucket" \
		--s3-prefix lakelet/$(STAGE)/lambda --output-template-file $(PACKAGE_DIR)/packaged.json; \
	$(AWS) cloudformation deploy --template-file $(PACKAGE_DIR)/packaged.json --stack-name $(STACK_NAME) \
		--s3-bucket "$$bucket" --s3-prefix lakelet/$(STAGE)/templates \
		--capabilities CAPABILITY_IAM CAPABILITY_AUTO_EXPAND \
		--parameter-overrides ArtifactBucket="$$bucket" $(DEPLOY_PARAMETERS); \
	$(AWS) cloudformation describe-stacks --stack-name $(STACK_NAME) --query "Stacks[0].Outputs" --output table

# Takes DEPLOY_PARAMETERS as deploy does (Key=Value ...); moto's Python, no account, no network.
deploy-rehearsal: $(DEV_STAMP)
	@test -f $(PACKAGE_DIR)/package/sam.json || { echo "error: run 'make package STAGE=$(STAGE)' first" >&2; exit 1; }
	$(VENV)/bin/python -m infra.rehearsal $(PACKAGE_DIR)/package --stage $(STAGE) $(DEPLOY_PARAMETERS)

# The official lakefs client and boto3 against a deployment (or `lakelet up`); exits non-zero if a step failed.
ENDPOINT ?=
ACCESS_KEY_ID ?=
SECRET_ACCESS_KEY ?=
S3_ENDPOINT ?=
SMOKE_ARGS ?=
smoke: $(RUN_STAMP)
	@test -n "$(ENDPOINT)" -a -n "$(ACCESS_KEY_ID)" -a -n "$(SECRET_ACCESS_KEY)" || { \
		echo "error: make smoke ENDPOINT=https://... ACCESS_KEY_ID=... SECRET_ACCESS_KEY=... [S3_ENDPOINT=...]" >&2; exit 1; }
	$(VENV)/bin/python bench/smoke.py --endpoint "$(ENDPOINT)" --access-key-id "$(ACCESS_KEY_ID)" \
		--secret-access-key "$(SECRET_ACCESS_KEY)" $(if $(S3_ENDPOINT),--s3-endpoint "$(S3_ENDPOINT)") $(SMOKE_ARGS)

# --- Web UI (webui/, README "Web UI") ------------------------------------------------------------------------
# Rebuilt only when its sources change; node_modules only when the lockfile does (npm ci, from the cache first).
WEBUI_OUT := chalicelib/webui_dist/index.html
WEBUI_MODULES := webui/node_modules/.package-lock.json
WEBUI_SOURCES := $(shell find webui/src webui/build.mjs -type f 2>/dev/null)

test package: webui

webui: $(WEBUI_OUT)

$(WEBUI_MODULES): webui/package.json webui/package-lock.json
	cd webui && npm ci --prefer-offline --no-audit --no-fund
	touch $@

$(WEBUI_OUT): $(WEBUI_MODULES) $(WEBUI_SOURCES)
	cd webui && node build.mjs

# --- Spark's jars (docs/spark.md) ----------------------------------------------------------------------------
# hadoop-aws with its AWS SDK, Delta and Iceberg, pinned in tests/spark/pom.xml to the pyspark of requirements-gc.txt,
# copied by Maven (checksums strict) into the git-ignored tests/spark/jars/; the tests and the bench put them on
# spark.jars, so nothing downloads a jar at test time. The stamp (and Maven's local repository) makes a second run
# download nothing; a change to the pom copies them again into an emptied folder.
SPARK_JARS := tests/spark/jars/.fetched
MVN ?= mvn

spark-jars: $(SPARK_JARS)

$(SPARK_JARS): tests/spark/pom.xml
	rm -rf tests/spark/jars
	$(MVN) -B -q --strict-checksums -f tests/spark/pom.xml dependency:copy-dependencies -DexcludeTransitive=true \
		-DoutputDirectory=jars
	touch $@

test bench: spark-jars

# --- Benchmarks (docs/performance.md) -----------------------------------------------------------------------
BENCH_ARGS ?=
BENCH_OUT ?= bench/results.json

bench: $(DEV_STAMP)
	$(VENV)/bin/python bench/run.py --out $(BENCH_OUT) $(BENCH_ARGS)
	$(VENV)/bin/python bench/readme_table.py $(BENCH_OUT)

# `lakelet up` beside the real lakeFS (issue 43): LAKEFS_BIN=/path/to/lakefs, a server built from lakeFS's source
# beside the project; without it the bench says it was skipped. BENCH_ARGS="--quick" for a small run.
bench-lakefs: $(TEST_STAMP)
	$(VENV)/bin/python bench/side_by_side.py $(BENCH_ARGS)
