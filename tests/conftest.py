"""Suite-wide settings: single-threaded BLAS (2-core machines; threads only contend)."""

import os

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
