"""The deploy profile's Postgres storage on kept connections, in the processes that query it most: the refresh
driver and the step workers (issue 44, item 3).

dagster-postgres opens a new connection for every query and closes it after (a NullPool, so an idle instance holds
none). A process that makes hundreds of queries pays a connection for each: one automation tick of the check's
graph made 367 of them, 4.5 s of its 12 s at load 10 (cProfile, `psycopg2.connect`), and every step task opens a
new instance (three table inspections) before its first event. Here those processes keep a small pool per storage
(Dagster's own `optimize_for_webserver`, which the webserver uses for the same reason), each connection pinged
before use, so a Postgres restart costs one reconnect rather than a failed step. Measured on the live stack at load
10-15: a tick took 3.3-4.1 s pooled against 10.5-13.4 s.

Dagster is pinned (==1.13.27 in pyproject.toml); the storages' `_engine` is private, checked by
tests/deploy/test_deploy_profile.py.
"""

from __future__ import annotations

import os
import time

import dagster as dg
from dagster._serdes import serialize_value
from sqlalchemy import event, exc
from sqlalchemy.pool import Pool

POOL_RECYCLE_S = 3600  # below Postgres' and most proxies' idle timeouts
_CHECKED_IN = "compass_checked_in"  # a pooled connection's record: when it was last returned to the pool
MAX_OVERFLOW = 4  # connections above the pool's one while threads (the daemon-less driver has few) query at once


def keep_connections(instance: dg.DagsterInstance, ping_after_idle_s: float | None = None) -> dg.DagsterInstance:
    """`instance` with its Postgres storages on pooled, pre-pinged connections (no statement timeout); others as
    they are. `ping_after_idle_s`: ping only a connection that sat in the pool longer than that (`ping_when_idle`),
    for a process whose queries come in bursts (the refresh driver's ticks)."""
    instance.optimize_for_webserver(statement_timeout=0, pool_recycle=POOL_RECYCLE_S, max_overflow=MAX_OVERFLOW)
    for storage in (instance.run_storage, instance.event_log_storage, instance.schedule_storage):
        engine = getattr(storage, "_engine", None)
        if engine is not None and engine.dialect.name == "postgresql":
            if ping_after_idle_s is None:
                engine.pool._pre_ping = True  # create_engine(pool_pre_ping=True): optimize_for_webserver does not pass it
            else:
                ping_when_idle(engine.pool, ping_after_idle_s)
    return instance


def ping_when_idle(pool: Pool, idle_s: float) -> None:
    """Ping a connection at checkout only when it was checked in more than `idle_s` ago (SQLAlchemy's pre-ping, which
    pings at every checkout, with a threshold); a failed ping reconnects, as pre-ping does. An automation tick checks
    out a connection a few hundred times, back to back: with a ping each, that was 2,300 extra round trips in six
    ticks, 5.6 s of 39 s (cProfile, load 10). What a ping guards against, a Postgres restart, then fails a query that
    comes within `idle_s` of its connection's previous use (a restart mid-query fails it either way): outside
    dagster-postgres' retry, which covers only opening a connection. The refresh driver ticks again after such a
    failure (pipelines.queue_refresh.tick_riding_out_restarts); the pool has dropped its older connections by then."""
    pool._pre_ping = False

    def checked_in(dbapi_connection, record) -> None:
        record.info[_CHECKED_IN] = time.monotonic()

    def checked_out(dbapi_connection, record, proxy) -> None:
        since = record.info.get(_CHECKED_IN)
        if since is not None and time.monotonic() - since > idle_s \
                and not pool._dialect._do_ping_w_event(dbapi_connection):
            raise exc.InvalidatePoolError()  # the pool reconnects this checkout and drops its older connections

    event.listen(pool, "checkin", checked_in)
    event.listen(pool, "checkout", checked_out)


def close_pools(instance: dg.DagsterInstance) -> None:
    """Close the pooled connections of `instance`'s Postgres storages. Dagster's `dispose` leaves their engines open
    (dagster-postgres disposes none), so a run worker's instance per run kept its connections until the garbage
    collector found it: on the default graph through the stack (67 runs a refresh), the second refresh ran Postgres
    out of its 100 connections ("too many clients"), and a step failed."""
    for storage in (instance.run_storage, instance.event_log_storage, instance.schedule_storage):
        engine = getattr(storage, "_engine", None)
        if engine is not None:
            engine.dispose()


class WarmInstances:
    """The `DagsterInstance` of dagster_celery's tasks. `from_ref` (a step task) gives one pooled instance per worker
    process and instance ref instead of a new one per step (dagster_celery never disposes those); `get` (a run
    worker's task, which disposes its instance when the run ends) a pooled one per run, its connections closed with
    it (`close_pools`)."""

    _kept: dict[tuple[int, str], dg.DagsterInstance] = {}

    @staticmethod
    def get() -> dg.DagsterInstance:
        instance = keep_connections(dg.DagsterInstance.get())
        dispose = instance.dispose

        def dispose_and_close() -> None:  # what `with ... as instance` calls when the run ends
            try:
                dispose()
            finally:
                close_pools(instance)

        instance.dispose = dispose_and_close
        return instance

    @classmethod
    def from_ref(cls, ref) -> dg.DagsterInstance:
        key = (os.getpid(), serialize_value(ref))  # a forked pool process builds its own
        if key not in cls._kept:
            cls._kept[key] = keep_connections(dg.DagsterInstance.from_ref(ref))
        return cls._kept[key]
