"""Loaded by the `compass run` subprocesses of tests/pipelines/test_crash_recovery.py only (on their PYTHONPATH):
SIGKILL the process at the N-th warehouse commit (COMPASS_KILL_AT_COMMIT=N), after the transaction's
statements ran and before `commit` reaches DuckDB, i.e. inside a warehouse write. Test scaffolding, not product code."""

import os
import signal

_AT = int(os.environ.get("COMPASS_KILL_AT_COMMIT", "0"))
if _AT:
    import contextlib

    from resources import warehouse

    _commits = 0
    _connect = warehouse.Warehouse.connect

    class _Killing:
        def __init__(self, con):
            self._con = con
            self._last = ""

        def execute(self, sql, *args, **kwargs):
            global _commits
            if sql.strip().lower() == "commit":
                _commits += 1
                if os.environ.get("COMPASS_KILL_TRACE"):
                    with open(os.environ["COMPASS_KILL_TRACE"], "a") as trace:
                        trace.write(f"{_commits} {self._last}\n")
                if _commits == _AT:
                    os.kill(os.getpid(), signal.SIGKILL)
            self._last = sql.strip().split("\n")[0][:80]
            return self._con.execute(sql, *args, **kwargs)

        def __getattr__(self, name):
            return getattr(self._con, name)

    @contextlib.contextmanager
    def _connect_killing(self, read_only=False):
        with _connect(self, read_only) as con:
            yield _Killing(con)

    warehouse.Warehouse.connect = _connect_killing
