"""Loaded only by the `compass run` subprocesses of the tests in tests/pipelines (on their PYTHONPATH). Test
scaffolding, not product code:

* COMPASS_NO_NETWORK=<file>: every socket connection to a non-loopback address fails, and is recorded in
  <file> (the pipeline must need no network at run time).
* COMPASS_KILL_AT_COMMIT=N: SIGKILL the process at the N-th warehouse commit, after the transaction's
  statements ran and before `commit` reaches DuckDB, i.e. inside a warehouse write.
* COMPASS_SLOW_COMMIT_S=S: wait S seconds before each warehouse commit (a refresh long enough to be watched), saying
  so on standard error (the refresh's log).
* COMPASS_KILL_REFRESH_AT_WORKER_COMMIT=<file>: at the first warehouse commit of a worker process of the refresh
  (pipelines/run_pool.py), before it reaches DuckDB, SIGKILL the refresh process (not the worker), after writing
  the worker's pid to <file>; COMPASS_REFRESH_SIGNAL=INT or TERM sends that signal instead (Ctrl-C, `kill`).
* COMPASS_SIGNAL_AT_WRITE=<table>:<file>: at the commit of the refresh process's own first transaction that wrote
  <table> (a run it executes itself, not a worker's), write the time to <file> and send COMPASS_REFRESH_SIGNAL
  (default INT) to its process group when it leads one (as a terminal's Ctrl-C does), else to itself; the commit
  then goes on.
"""

import os
import signal

_NO_NETWORK = os.environ.get("COMPASS_NO_NETWORK")
if _NO_NETWORK:
    import ipaddress
    import socket

    _connect = socket.socket.connect

    def _guarded_connect(self, address):
        host = address[0] if isinstance(address, tuple) else None
        if host is not None:
            try:
                local = ipaddress.ip_address(socket.gethostbyname(host) if host != "localhost" else "127.0.0.1")
                local = local.is_loopback
            except (OSError, ValueError):
                local = False
            if not local:
                with open(_NO_NETWORK, "a") as log:
                    log.write(f"{address}\n")
                raise OSError(f"network disabled by the test: {address}")
        return _connect(self, address)

    socket.socket.connect = _guarded_connect

_AT = int(os.environ.get("COMPASS_KILL_AT_COMMIT", "0"))
_SLOW = float(os.environ.get("COMPASS_SLOW_COMMIT_S", "0"))
_KILL_REFRESH = os.environ.get("COMPASS_KILL_REFRESH_AT_WORKER_COMMIT")
_SIGNAL_AT_WRITE, _, _SIGNAL_STAMP = os.environ.get("COMPASS_SIGNAL_AT_WRITE", "").partition(":")
_REFRESH_PID = os.getpid()  # the `compass run` process; its forked workers inherit the value
if _AT or _SLOW or _KILL_REFRESH or _SIGNAL_AT_WRITE:
    import contextlib
    import time

    from resources import warehouse

    _commits = 0
    _wrote, _signalled = False, False
    _warehouse_connect = warehouse.Warehouse.connect

    def _signal_refresh():
        sig = getattr(signal, "SIG" + os.environ.get("COMPASS_REFRESH_SIGNAL", "INT"))
        with open(_SIGNAL_STAMP, "w") as out:
            out.write(repr(time.time()))
        if os.getpgid(0) == os.getpid():
            os.killpg(os.getpid(), sig)
        else:
            os.kill(os.getpid(), sig)

    class _Hooked:
        def __init__(self, con):
            self._con = con

        def execute(self, sql, *args, **kwargs):
            global _commits, _wrote, _signalled
            _wrote = _wrote or bool(_SIGNAL_AT_WRITE and f" {_SIGNAL_AT_WRITE} " in f" {sql} ")
            if sql.strip().lower() == "commit":
                if _wrote and not _signalled and os.getpid() == _REFRESH_PID:
                    _signalled = True
                    _signal_refresh()
                _wrote = False
                _commits += 1
                if _commits == _AT:
                    os.kill(os.getpid(), signal.SIGKILL)
                if _KILL_REFRESH and os.getpid() != _REFRESH_PID:
                    with open(_KILL_REFRESH, "w") as out:
                        out.write(str(os.getpid()))
                    os.kill(_REFRESH_PID, getattr(signal, "SIG" + os.environ.get("COMPASS_REFRESH_SIGNAL", "KILL")))
                    time.sleep(60)  # the worker must die with the refresh, not carry on
                if _SLOW:
                    os.write(2, b"slow commit\n")
                time.sleep(_SLOW)
            return self._con.execute(sql, *args, **kwargs)

        def __getattr__(self, name):
            return getattr(self._con, name)

    @contextlib.contextmanager
    def _connect_hooked(self, read_only=False):
        with _warehouse_connect(self, read_only) as con:
            yield _Hooked(con)

    warehouse.Warehouse.connect = _connect_hooked
