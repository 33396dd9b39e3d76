# Two commands: `make run` (materialize the default graph) and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
export DAGSTER_HOME ?= $(CURDIR)/var/dagster_home
# Single-threaded BLAS: on 2 cores, BLAS threads only contend with Dagster's processes.
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1

.PHONY: run test browser report ui lock bench clean deploy-services deploy-check deploy-ratio

$(STAMP): pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c requirements.lock -e ".[dev,deploy]"
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/compass run

report: $(STAMP)
	$(BIN)/compass report

# The report site's browser tests drive Debian's chromium over the DevTools protocol (no browser download):
# install it when missing (apt-get, as root on Debian); elsewhere those tests skip and say why.
browser:
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || \
	{ [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && echo "installing chromium for the browser tests" && \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
	echo "chromium is missing and cannot be installed here: the browser tests will be skipped"

# Two pytest-xdist workers, one test file per worker at a time (module fixtures stay whole).
PYTEST_WORKERS ?= 2
test: $(STAMP) browser
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile --durations=10

# The deploy profile for real (deploy/README.md): PostgreSQL and Redis from Debian's packages (installed when missing,
# as root, like chromium above), then pipelines.stack starts them, the code server, the daemon and two Celery workers
# on 127.0.0.1 under var/deploy/, runs a cold refresh through the run queue and tests/deploy/test_stack.py, and stops
# everything it started (the trap covers an interrupted check too).
deploy-services:
	@{ command -v redis-server >/dev/null && ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; } || \
	{ [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && echo "installing postgresql and redis-server for deploy-check" && \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql redis-server >/dev/null; } || \
	{ echo "postgresql and redis-server are missing and cannot be installed here (Debian, as root)"; exit 1; }

deploy-check: $(STAMP) deploy-services
	@trap '$(BIN)/python -m pipelines.stack stop' EXIT INT TERM; $(BIN)/python -m pipelines.stack check

# Issue 44's ratio on the default graph (make run's inputs and study sizes) through the same stack: a cold refresh
# with one and with two `duckdb` workers, timed in one invocation (~15 min on 2 quiet cores; not in .ci/run).
deploy-ratio: $(STAMP) deploy-services
	@trap '$(BIN)/python -m pipelines.stack stop' EXIT INT TERM; $(BIN)/python -m pipelines.stack ratio

ui: $(STAMP)
	mkdir -p $(DAGSTER_HOME) && cp -n dagster.yaml $(DAGSTER_HOME)/ || true
	$(BIN)/dagster dev -h 127.0.0.1 -p 3000

# bench_report and bench_catalog_refresh start from the materialized default: a cold run first when there is none.
# Every benchmark runs (a missed target is reported, not hidden by stopping); the exit status says if any missed.
bench: $(STAMP)
	@[ -f "$${COMPASS_DB:-var/warehouse.duckdb}" ] || $(BIN)/compass run
	rc=0; for b in benchmarks/bench_*.py; do $(BIN)/python $$b || { echo "$$b: target missed"; rc=1; }; done; exit $$rc

lock: $(STAMP)
	(echo "# Full transitive pin set (pip constraints). Regenerate: make lock"; \
	 $(BIN)/pip freeze --exclude-editable | grep -vi "^llm-compass") > requirements.lock

clean:
	rm -rf var $(VENV)
