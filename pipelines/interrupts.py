"""Ctrl-C and SIGTERM during `compass run` (issue 43): the refresh stops within seconds, its workers with it.

A signal cannot be told by the exception it becomes. While Dagster executes a run in this process it takes SIGINT
and SIGTERM over (dagster._utils.interrupts): the step fails, the run is marked failed and, without
`raise_on_error`, execution returns as if nothing happened; DuckDB turns a signal that arrives inside a query into a
RuntimeError. So `watching` notes every SIGINT and SIGTERM at the C level, whichever Python handler is installed
(`signal.set_wakeup_fd` writes each one to a pipe), and `check` raises KeyboardInterrupt once one arrived. A thread
reads the pipe: a second signal, or a refresh still running GRACE_S after the first, ends the process at once
(os._exit; the workers die with it through PR_SET_PDEATHSIG, and the next refresh re-runs what was unfinished).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
import time
from collections.abc import Iterator

GRACE_S = 5.0  # the refresh's own unwinding (kill the workers, mark the runs failed) takes well under a second
SIGNALS = (signal.SIGINT, signal.SIGTERM)

_state = {"received": False}  # a plain flag: a forked child must not inherit a lock the watcher held
_fds: dict[str, int] = {}  # the pipe and the console while `watching`


def received() -> bool:
    """Whether a SIGINT or SIGTERM arrived while `watching`."""
    return _state["received"]


def check() -> None:
    """KeyboardInterrupt if a SIGINT or SIGTERM arrived, whatever became of it where it landed."""
    if _state["received"]:
        raise KeyboardInterrupt("interrupted")


def caused(exc: BaseException) -> bool:
    """Whether `exc` ends the block because of Ctrl-C or SIGTERM."""
    from dagster._core.errors import DagsterExecutionInterruptedError

    return _state["received"] or isinstance(exc, (KeyboardInterrupt, DagsterExecutionInterruptedError))


@contextlib.contextmanager
def watching(line: str, grace_s: float = GRACE_S) -> Iterator[None]:
    """Within the block SIGINT and SIGTERM raise KeyboardInterrupt in the main thread and are noted (`received`); a
    second one, or a process still alive GRACE_S after the first (in the block or after it), prints `line` on the
    console and exits with 130. Outside the main thread (no signal reaches it) the block runs unwatched."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _state["received"] = False
    read, write = os.pipe()
    os.set_blocking(write, False)
    _fds.update(read=read, write=write, console=os.dup(2))  # the console, before a log takes descriptor 2

    def interrupt(signum, frame):
        _state["received"] = True
        raise KeyboardInterrupt(f"signal {signum}")

    previous = {sig: signal.signal(sig, interrupt) for sig in SIGNALS}
    previous_fd = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    threading.Thread(target=_watch, args=(read, _fds["console"], line, grace_s), daemon=True,
                     name="compass-interrupts").start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous_fd)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if not _state["received"]:
            os.close(_fds["write"])  # the watcher reads the end of the pipe, closes its side and stops
        # else it goes on counting: the process's own exit (threads, exit handlers) gets no more than the grace
        _fds.clear()


def _watch(read: int, console: int, line: str, grace_s: float) -> None:
    deadline = None
    try:
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([read], [], [], wait)[0]:
                _force(console, line)  # the grace period is over
            data = os.read(read, 64)
            if not data:
                return
            arrived = sum(byte in SIGNALS for byte in data)
            if arrived:
                _state["received"] = True
                if deadline is not None or arrived > 1:
                    _force(console, line)
                deadline = time.monotonic() + grace_s
    finally:
        os.close(read)
        os.close(console)


def _force(console: int, line: str) -> None:
    os.write(console, f"{line} (forced)\n".encode())
    os._exit(130)


def _forget() -> None:
    """In a forked child (a refresh worker): its signals are its own, not the refresh's."""
    if _fds:
        with contextlib.suppress(ValueError):  # not forked from the main thread: no wakeup descriptor to drop
            signal.set_wakeup_fd(-1)
        for fd in _fds.values():
            os.close(fd)
        _fds.clear()
    _state["received"] = False


os.register_at_fork(after_in_child=_forget)
