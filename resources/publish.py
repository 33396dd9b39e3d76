"""Publishing: how an asset writes its tables to the warehouse and reports what it wrote to Dagster.

`publish_many` replaces the asset's own rows, keeps history and returns the
materialization with a content-hash data version (`publish_assets`: several assets of one step, one
transaction); `save_figure` writes a figure
under reports/ beside the warehouse and returns it as inline metadata for the Dagster UI.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Mapping

import dagster as dg
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import duckdb  # noqa: E402
import pandas as pd  # noqa: E402

from resources.query_ingest import configure
from resources.settings import figures_dir
from resources.warehouse import Warehouse, frame_version, relation_version


def publish_many(
    context: dg.AssetExecutionContext,
    wh: Warehouse,
    tables: Mapping[str, pd.DataFrame],
    where: Mapping[str, object] | None = None,
    metadata: Mapping[str, object] | None = None,
    asset_key: dg.AssetKey | None = None,
    history: bool = True,
) -> dg.MaterializeResult:
    """Replace the asset's own rows (selected by `where`) of each table, keep history, report a data version.

    `asset_key` names which asset of a multi-asset this result belongs to. `history=False` keeps no
    history (intermediate tables such as bootstrap replicates, re-derivable and large).

    The data version hashes the content only, so a re-run that reproduces the
    same rows leaves every child fresh. Each row written also carries the
    refresh's `run_id` and `refreshed_at`; `history.<schema>_<table>` keeps every
    distinct version ever published (for `--as-of` and `compass diff`).
    """
    return publish_assets(context, wh, {asset_key: (tables, metadata)}, where, history)[0]


def publish_assets(
    context: dg.AssetExecutionContext,
    wh: Warehouse,
    outputs: Mapping[dg.AssetKey | None, tuple[Mapping[str, pd.DataFrame], Mapping[str, object] | None]],
    where: Mapping[str, object] | None = None,
    history: bool = True,
) -> list[dg.MaterializeResult]:
    """`publish_many` for several assets of one multi-asset step ({asset key: (tables, metadata)}): every changed
    table is written in one transaction, and one result per asset is returned (each with its own data version)."""
    refreshed_at = pd.Timestamp.now(tz="UTC").floor("s").tz_localize(None)
    versions = {key: frame_version(pd.concat([f.assign(_table=t) for t, f in tables.items()], ignore_index=True))
                for key, (tables, _) in outputs.items()}
    with wh.reading():
        unchanged = {key: all(wh.holds_version(t, where, versions[key]) for t in tables)
                     for key, (tables, _) in outputs.items()}
    writes, results = [], []
    for key, (tables, metadata) in outputs.items():
        stamp = {"data_version": versions[key], "run_id": context.run.run_id, "refreshed_at": refreshed_at}
        meta: dict[str, object] = {**(metadata or {})}
        for table, frame in tables.items():
            meta[f"rows:{table}"] = len(frame)
            if not unchanged[key]:
                rows = frame.assign(**{k: v for k, v in (where or {}).items() if k not in frame.columns}, **stamp)
                writes.append((table, rows, where, versions[key] if history else None))
        meta["unchanged"] = unchanged[key]
        first = next(iter(tables.values()))
        meta["dagster/row_count"] = len(first)
        if len(first):
            meta["preview"] = dg.MetadataValue.md(first.head(10).to_markdown(index=False))
        results.append(dg.MaterializeResult(asset_key=key, metadata=meta, data_version=dg.DataVersion(versions[key])))
    if writes:
        wh.replace_many(writes)
        context.log.info("wrote " + ", ".join(f"{table} ({len(rows)} rows)" for table, rows, _, _ in writes))
    return results


def publish(
    context: dg.AssetExecutionContext,
    wh: Warehouse,
    table: str,
    frame: pd.DataFrame,
    where: Mapping[str, object] | None = None,
    metadata: Mapping[str, object] | None = None,
) -> dg.MaterializeResult:
    """`publish_many` for one table."""
    return publish_many(context, wh, {table: frame}, where, metadata)


#: The column in which a stateful asset records the fingerprint of the inputs it was fitted on (`inputs_fingerprint`).
FITTED_ON = "fitted_on"


def inputs_fingerprint(*inputs: object) -> str:
    """A content hash of an asset's inputs (DataFrames by `frame_version`, anything else by its repr)."""
    h = hashlib.sha256()
    for part in inputs:
        h.update((frame_version(part) if isinstance(part, pd.DataFrame) else repr(part)).encode() + b"\0")
    return h.hexdigest()[:16]


def version_fitted_on(published: pd.DataFrame, fingerprint: str) -> str | None:
    """The data version of an asset's published rows (as read back, with their stamp) when every row was fitted on
    inputs with `fingerprint`, else None. An asset whose fit depends on its own last publication (the measures
    rotate toward their previous loadings and keep or renew named identities) returns this version instead of
    refitting when it runs again on the same inputs (a re-executed or recovered run): a refit against itself would
    publish the same values with other registry entries, and every child would recompute and differ from a clean
    refresh."""
    if published.empty or FITTED_ON not in published.columns or not (published[FITTED_ON] == fingerprint).all():
        return None
    versions = published["data_version"].unique()
    return str(versions[0]) if len(versions) == 1 else None


def publish_staged(
    context: dg.AssetExecutionContext,
    wh: Warehouse,
    table: str,
    stage: Callable[[duckdb.DuckDBPyConnection], str],
    where: Mapping[str, object] | None = None,
    metadata: Mapping[str, object] | None = None,
    history: bool = True,
) -> dg.MaterializeResult:
    """`publish` of rows that never become a DataFrame (issue 45): `stage(con)` builds them in the writer's
    connection and returns the name of the relation holding them; its content hash (`relation_version`) is the
    data version, and an unchanged version writes nothing. The rows are stamped and written in one transaction;
    `history=False` keeps no history (a table re-derivable from another's history)."""
    refreshed_at = pd.Timestamp.now(tz="UTC").floor("s").tz_localize(None)
    clause = "".join(f" and \"{k}\" = ?" for k in (where or {}))
    with wh.connect() as con:
        configure(con, wh.path.with_name(wh.path.name + ".spill"))  # bounded memory, spilling beside the file
        relation = stage(con)
        version = relation_version(con, relation)
        rows = con.execute(f"select count(*) from {relation}").fetchone()[0]
        preview = con.execute(f"select * from {relation} limit 10").df()
        unchanged = wh._exists(con, table) and [v for (v,) in con.execute(
            f"select distinct data_version from {table} where true{clause}", list((where or {}).values())).fetchall()] \
            == [version]
        if not unchanged:
            present = set(con.execute(f"select * from {relation} limit 0").df().columns)
            scope = "".join(f", {_literal(v)} as \"{k}\"" for k, v in (where or {}).items() if k not in present)
            con.execute(f"create or replace temp view stamped as select *{scope}, {_literal(version)} as data_version, "
                        f"{_literal(context.run.run_id)} as run_id, timestamp '{refreshed_at}' as refreshed_at "
                        f"from {relation}")
            con.execute("begin transaction")
            try:
                wh.write_relation(con, table, "stamped", where, version if history else None)
                con.execute("commit")
            except Exception:
                con.execute("rollback")
                raise
            con.execute("checkpoint")
            context.log.info(f"wrote {table} ({rows} rows)")
    return published_result(table, rows, unchanged, preview, version, metadata)


def published_result(table: str, rows: int, unchanged: bool, preview: pd.DataFrame, version: str,
                     metadata: Mapping[str, object] | None = None) -> dg.MaterializeResult:
    """What a publishing step reports: its row count, whether the data version was unchanged, a preview of its rows."""
    meta: dict[str, object] = {**(metadata or {}), f"rows:{table}": rows, "unchanged": unchanged,
                               "dagster/row_count": rows}
    if rows:
        meta["preview"] = dg.MetadataValue.md(preview.to_markdown(index=False))
    return dg.MaterializeResult(metadata=meta, data_version=dg.DataVersion(version))


def _literal(value: object) -> str:
    """A string as a SQL literal (views take no parameters)."""
    return "'" + str(value).replace("'", "''") + "'"


def save_figure(fig, folder: str, name: str) -> dg.MetadataValue:
    """Write a matplotlib figure as PNG under reports/<folder>/ beside the warehouse (var/reports by default) and
    return it as metadata."""
    out = figures_dir() / folder
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    encoded = base64.b64encode(path.read_bytes()).decode()
    return dg.MetadataValue.md(f"![{name}](data:image/png;base64,{encoded})\n\n`{path}`")
