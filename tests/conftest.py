"""Suite-wide settings: single-threaded BLAS (2-core machines; threads only contend)."""

import os
import time

import pytest

for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
# Tests drop a file and read the inbox at once; the settle time itself is tested in tests/pipelines/ops/test_units.py.
os.environ.setdefault("COMPASS_INBOX_SETTLE_S", "0")

# The shipped cluster archetypes (one clusters/benchmark partition each, ~15 s of light benchmark) stay out
# of the pipeline tests' refreshes; tests/assets/clusters points COMPASS_ARCHETYPES at its own files.
os.environ.setdefault("COMPASS_ARCHETYPES", os.path.join(os.path.dirname(__file__), "fixtures", "no_archetypes"))

# The data-independent synthetic studies (oracle, router, clusters segmentation) at smoke size in every refresh
# of the pipeline tests, whose subject is the orchestration; tests/assets and tests/compass test the studies.
os.environ.setdefault("COMPASS_SMOKE", "1")

# The shipped matchmaking users (one matching/* partition each) likewise stay out of the pipeline tests;
# tests/assets/matching points COMPASS_USERS at its own files.
os.environ.setdefault("COMPASS_USERS", os.path.join(os.path.dirname(__file__), "fixtures", "no_users"))

# The longest modules (make test --durations, 2026-11-29), longest first: with --dist loadfile pytest-xdist hands out
# whole files in collection order (once its own reordering by test count is off, `pytest_configure`), so these start
# at once and the quick unit tests fill in at the end, instead of one worker finishing a long module alone.
SLOW_FIRST = [
    "tests/pipelines/test_interrupts.py",
    "tests/pipelines/test_price_refresh.py",
    "tests/pipelines/test_crash_recovery.py",
    "tests/pipelines/test_parallel_refresh.py",
    "tests/live/test_release_lands.py",  # 196 s until its imputation validation was batched; CPU 236 s -> 103 s
    "tests/live/test_live_price_refresh.py",  # starts from test_price_refresh's cold refresh (built_once), queued after it
    "tests/live/test_live_refresh.py",
    "tests/pipelines/test_compass_pipeline.py",
    "tests/pipelines/ops/test_inbox_refresh.py",
    "tests/compass/mlcompass/decisions/test_outcome_reach.py",
    "tests/pipelines/test_refusals.py",
    "tests/pipelines/ops/test_next_evaluations_loop.py",
    "tests/pipelines/test_foundation.py",
    "tests/badinput/test_corpus.py",
    "tests/compass/router/test_router.py",
    "tests/assets/router/test_router_assets.py",
    "tests/compass/mlcompass/decisions/test_rank_uncertainty.py",
    "tests/pipelines/test_backfill.py",
    "tests/assets/cascade/test_bad_input.py",
    "tests/assets/oracle/test_bad_input.py",
    "tests/pipelines/test_outside_readers.py",
]


def pytest_configure(config):
    """pytest-xdist's --dist loadfile queues the files by their number of tests, most first, unless told not to
    (--no-loadscope-reorder): that put the one-test modules of ~70-80 s (test_multiprocess, test_live_price_refresh)
    and test_release_lands (4 tests, then ~190 s) at the end of the queue, where one worker may run them while the other
    idles, and undid SLOW_FIRST."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


# COMPASS_SUITE_TIMELINE=<file>: each pytest-xdist worker appends "worker<TAB>test id<TAB>start<TAB>end" (epoch seconds)
# per test, for scripts/suite_schedule.py to show how the workers' loads balanced and to replay other orders.
# resolved once here: a test that changes the working directory must not move it
_TIMELINE = os.path.abspath(os.environ["COMPASS_SUITE_TIMELINE"]) if os.environ.get("COMPASS_SUITE_TIMELINE") else None
_STARTED: dict[str, float] = {}


def pytest_runtest_logstart(nodeid, location):
    if _TIMELINE and os.environ.get("PYTEST_XDIST_WORKER"):
        _STARTED[nodeid] = time.time()


def pytest_runtest_logfinish(nodeid, location):
    if _TIMELINE and nodeid in _STARTED:
        with open(_TIMELINE, "a") as log:  # one short O_APPEND write per line: the workers' lines never interleave
            log.write(f"{os.environ['PYTEST_XDIST_WORKER']}\t{nodeid}\t{_STARTED.pop(nodeid):.3f}\t{time.time():.3f}\n")


def pytest_collection_modifyitems(items):
    missing = [path for path in SLOW_FIRST if not os.path.exists(os.path.join(os.path.dirname(__file__), "..", path))]
    if missing:
        raise pytest.UsageError(f"tests/conftest.py SLOW_FIRST names modules that do not exist: {missing}")
    rank = {path: i for i, path in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.partition("::")[0], len(rank)))  # stable: the rest keep order
