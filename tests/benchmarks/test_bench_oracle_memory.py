"""bench_oracle measures each implementation's own peak memory (issue 47): a child started from a parent that holds
a large array reports its own high-water mark, not the parent's (`ru_maxrss` carries the parent's peak across
fork + exec, which made both implementations print the data generator's 1.44 GB)."""

import subprocess
import sys

import numpy as np

from tests.paths import ROOT

CHILD = "from benchmarks.bench_oracle import peak_rss_gb; print(peak_rss_gb())"


def test_a_child_reports_its_own_peak_not_its_parents():
    held = np.ones(80_000_000)  # 0.64 GB resident in this process when the child is forked
    out = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, check=True)
    child_peak = float(out.stdout.strip().splitlines()[-1])
    assert held.sum() == held.size
    assert child_peak < 0.5, child_peak  # the imports of numpy, pandas and duckdb: ~0.1 GB
