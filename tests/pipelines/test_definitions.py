"""`dagster definitions validate` passes from the repository root (pyproject's [tool.dagster])."""

import subprocess
import sys
from pathlib import Path
from tests.paths import ROOT



def test_dagster_definitions_validate(tmp_path):
    dagster = Path(sys.executable).with_name("dagster")
    done = subprocess.run([str(dagster), "definitions", "validate"], cwd=ROOT, capture_output=True, text=True,
                          env={"PATH": str(dagster.parent), "DAGSTER_HOME": str(tmp_path), "HOME": str(tmp_path)},
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation successful" in done.stdout + done.stderr
