"""Issue 17, defect 2: outside readers open the read replica at any moment of a refresh and see the last
completed one; a second `compass run` during a refresh refuses with a clear message and changes nothing.
The refresh runs with the network disabled (subprocess_hooks/sitecustomize.py): it needs none."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb

from pipelines.cli import main
from resources.warehouse import Warehouse
from tests.paths import ROOT
from tests.pipelines.conftest import TINY_CONFIG
from tests.pipelines.helpers import config_with_extra, use_folder


def _models_in_replica(path) -> int:
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute("select count(*) from raw.models").fetchone()[0]


def test_replica_readable_throughout_a_refresh_and_second_run_refused(tiny_refreshed, tmp_path, capsys):
    _, db, _ = tiny_refreshed
    wh = Warehouse(db)
    replica = wh.replica_path
    assert replica.name == "warehouse.read.duckdb" and _models_in_replica(replica) == 3

    config = config_with_extra(TINY_CONFIG, tmp_path, [("models", "model_id,display_name\npa-model-y,PA Y\n")])
    attempts = tmp_path / "network_attempts.txt"
    # Slow commits keep the subprocess's refresh (a second or two of work) long enough to be watched.
    env = {**os.environ, "COMPASS_CONFIG": str(config), "COMPASS_NO_NETWORK": str(attempts),
           "COMPASS_SLOW_COMMIT_S": "0.5",
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent / "subprocess_hooks"), str(ROOT)])}
    proc = subprocess.Popen([sys.executable, "-m", "pipelines.cli", "run"], env=env, cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seen, refused, cli_reads = [], None, []
    try:
        while proc.poll() is None:
            seen.append(_models_in_replica(replica))  # must never raise, whatever the writer is doing
            log = db.parent / "logs" / "run.log"  # beside the warehouse, wherever the command runs
            if refused is None and log.exists() and log.stat().st_size and \
                    wh.refresh_status().startswith("refresh in progress"):
                capsys.readouterr()
                running_log = log.read_bytes()
                refused = main(["run"]), capsys.readouterr().err
                # the refused run touched nothing of the running one's, its log included (issue 43)
                assert log.read_bytes().startswith(running_log) and b"\0" not in log.read_bytes()
            elif len(seen) % 10 == 0:  # a CLI reader during the refresh answers too
                capsys.readouterr()
                cli_reads.append((main(["status"]), capsys.readouterr().out))
            time.sleep(0.05)
        assert proc.wait() == 0, proc.stderr.read()
    finally:
        proc.kill()
    assert refused is not None and refused[0] == 3 and "another refresh of" in refused[1]
    assert (db.parent / "logs" / "run.log").stat().st_size > 0 and not (tmp_path / "var").exists()
    assert len(seen) > 10 and set(seen) <= {3, 4}  # the previous refresh, then the new one once complete
    assert cli_reads and all(code == 0 and "raw.models" in out for code, out in cli_reads), cli_reads[:1]
    assert _models_in_replica(replica) == 4 and wh.refresh_status() == "idle"
    assert not attempts.exists(), attempts.read_text()  # no connection left the machine


def test_a_homes_first_refresh_gives_outside_readers_a_replica_from_its_start(tmp_path, monkeypatch):
    """Issue 43: a home that never finished a refresh had no replica, so an outside reader failed for the whole
    first refresh. Once the refresh's first step has started, the replica opens (no tables until it completes)."""
    work = tmp_path / "work"
    use_folder(monkeypatch, work, TINY_CONFIG, {})
    replica, log = Warehouse(work / "warehouse.duckdb").replica_path, work / "logs" / "run.log"
    proc = subprocess.Popen([sys.executable, "-m", "pipelines.cli", "run"], cwd=work, start_new_session=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        while proc.poll() is None and not (log.exists() and b"STEP_START" in log.read_bytes()):
            time.sleep(0.05)
        assert proc.poll() is None
        with duckdb.connect(str(replica), read_only=True) as con:
            assert con.execute("select count(*) from information_schema.tables").fetchone()[0] == 0
    finally:
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the refresh and its workers end at once
        proc.wait(timeout=600)
