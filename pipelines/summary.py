"""Human summaries of the warehouse for the CLI."""

from __future__ import annotations

import dagster as dg
import pandas as pd

from compass.mlcompass.decision_rule import plain
from pipelines.formatting import usd
from resources.readers import one_connection, table_counts
from resources.settings import site_dir
from resources.warehouse import Warehouse


@one_connection
def status_table(wh: Warehouse, instance: dg.DagsterInstance) -> pd.DataFrame:
    """One row per warehouse table: rows, last materialization time and data version of its asset."""
    out = table_counts(wh)
    last, version = [], []
    for table in out["table"]:
        event = instance.get_latest_materialization_event(dg.AssetKey(table.split(".")))
        mat = event.asset_materialization if event else None
        last.append(pd.Timestamp(event.timestamp, unit="s").strftime("%Y-%m-%d %H:%M:%S") if event else "-")
        version.append(mat.tags.get("dagster/data_version", "-") if mat and mat.tags else "-")
    return out.assign(last_materialized=last, data_version=version)


@one_connection
def print_summary(wh: Warehouse) -> None:
    counts = table_counts(wh)
    raw = counts[counts["table"].str.startswith("raw.")]
    print("\nLoaded:")
    for row in raw.itertuples():
        print(f"  {row.table:<24} {row.rows:>9,d} rows")
    if wh.table_exists("raw.models"):
        n = wh.query(
            "select count(distinct model_id) from raw.benchmark_scores b where model_id in "
            "(select model_id from raw.model_costs)"
        ).iloc[0, 0]
        print(f"  models with benchmark scores and a price: {n}")
    if wh.table_exists("compass.leaderboards"):
        print_recommendations(wh)
    site = site_dir() / "index.html"
    if site.exists():
        print(f"\nReport: {site} (opens from disk; `compass report` rewrites it)")


COST_UNITS = {"blended_usd_per_mtok": "$/Mtok", "input_usd_per_mtok": "$/Mtok in", "output_usd_per_mtok": "$/Mtok out",
              "params_b": "B params"}


def price_text(row) -> str:
    """'$4.5/Mtok ($0.000474/query), normalized 0.048': the cost in dollars where it is a price (else in the case's
    own unit), per query where the case has a workload (per request and per month under a scenario's workload,
    '$0.48/Mtok ($0.000412/request, $824.00/month)'), next to the normalized cost. `row` has raw_cost, cost_column,
    cost and optionally usd_per_interaction / usd_query or usd_per_request and usd_per_month."""
    unit = COST_UNITS.get(row.cost_column, row.cost_column)
    price = f"${row.raw_cost:g}/Mtok" if unit == "$/Mtok" else f"{row.raw_cost:g} {unit}"
    query = getattr(row, "usd_query", getattr(row, "usd_per_interaction", float("nan")))
    per_query = f" (${query:.6f}/query)" if query == query else ""
    request, month = getattr(row, "usd_per_request", float("nan")), getattr(row, "usd_per_month", float("nan"))
    if request == request:
        per_query = f" ({usd(request)}/request" + (f", {usd(month)}/month)" if month == month else ")")
    return f"{price}{per_query}, normalized {row.cost:.3f}"


def _same_board(top: pd.DataFrame, table: pd.DataFrame, columns: list[str], on: tuple[str, ...] = ()) -> pd.DataFrame:
    """`top` (rank-1 leaderboard rows) with `columns` of `table` (compass.rank_uncertainty or compass.decisions rows)
    joined only where `table` was computed on exactly that leaderboard (its board_version is the board's data
    version) and on the measures that board was ranked on: picks of one run are never printed next to numbers of
    another."""
    keys = ["case_id", "scenario", *on]
    if "board_version" in table:
        table = table.drop(columns=["data_version"], errors="ignore").rename(columns={"board_version": "data_version"})
        keys.append("data_version")
    if "measures_version" in table and "measures_version" in top:  # and on the same measures (the replicates' fit)
        keys.append("measures_version")
    return top.merge(table[keys + columns], on=keys, how="left")


# compass.decisions as one row per leaderboard: rule -> (column -> name in the summary).
PICKS = {"p_rank1_leader": {"model_id": "p_rank1_leader", "p_rank1": "p_rank1_leader_p"},
         "tolerance_pick": {"model_id": "tolerance_pick", "cost": "tolerance_pick_cost", "tolerance": "tolerance"}}
PICK_COLUMNS = [c for names in PICKS.values() for c in names.values()]


def _picks(decisions: pd.DataFrame) -> pd.DataFrame:
    """compass.decisions rows, one row per (case_id, scenario, board_version) with the PICK_COLUMNS."""
    keys = [c for c in ("case_id", "scenario", "board_version") if c in decisions]
    parts = [decisions.loc[decisions["rule"] == rule, keys + list(names)].rename(columns=names)
             for rule, names in PICKS.items()]
    return parts[0].merge(parts[1], on=keys, how="outer")


def _stale(wh: Warehouse, top: pd.DataFrame) -> pd.Series:
    """Per rank-1 row, whether its leaderboard was ranked on measures older than the case's current ones (its
    decisions were held back by a failure since)."""
    if "measures_version" not in top:
        return pd.Series(False, index=top.index)
    current = {c: ",".join(wh.data_versions("compass.measures", {"case_id": c}) or []) for c in top["case_id"].unique()}
    return top["measures_version"].notna() & (top["measures_version"] != top["case_id"].map(current))


def _decision_text(row) -> str:
    """'; P(rank 1) leader x (37 %); cheapest within tolerance 0.004: y ($0.3/Mtok)' where they differ from rank 1."""
    parts = []
    if isinstance(row.p_rank1_leader, str) and row.p_rank1_leader != row.model_id:
        parts.append(f"P(rank 1) leader {row.p_rank1_leader} ({100 * row.p_rank1_leader_p:.0f} %)")
    if isinstance(row.tolerance_pick, str) and row.tolerance_pick != row.model_id:
        parts.append(f"cheapest within tolerance {plain(row.tolerance)}: {row.tolerance_pick} "
                     f"(normalized cost {row.tolerance_pick_cost:.3f})")
    return "".join(f"; {p}" for p in parts)


def print_recommendations(wh: Warehouse) -> None:
    """Rank 1 of every case x scenario with its cost in the case's own unit (dollars where it is a price), the
    normalized cost and the 90 % rank interval, the P(rank 1) leader and the cheapest model within the scenario's
    tolerance where they differ; intervals and picks only from the same leaderboard, and a leaderboard ranked on
    older measures than the case's current ones marked stale. Scenarios that agree share a line. Then what changed."""
    board = wh.query("select * from compass.leaderboards where rank = 1")
    units = wh.query("select distinct case_id, cost_column from compass.costs")
    top = board.merge(units, on="case_id", how="left")
    if wh.table_exists("compass.rank_uncertainty"):
        ranks = wh.read("compass.rank_uncertainty")
        top = _same_board(top, ranks, ["rank_lo", "rank_hi"], on=("model_id",))
    if wh.table_exists("compass.decisions"):
        top = _same_board(top, _picks(wh.read("compass.decisions")), list(PICK_COLUMNS))
    for col in ("usd_per_interaction", "rank_lo", "rank_hi", *PICK_COLUMNS):  # absent: no workload / no bootstrap
        if col not in top.columns:
            top[col] = float("nan")
    top = top.assign(stale=_stale(wh, top)).sort_values(["case_id", "scenario"])
    top["decision"] = [_decision_text(r) + (" (STALE: ranked on earlier measures; this case's decisions were held "
                                            "back since)" if r.stale else "") for r in top.itertuples()]
    print("\nRecommended (rank 1; 90 % rank interval from the bootstrap; cost in the case's own unit):")
    for case_id, rows in top.groupby("case_id", sort=True):
        print(f"  {case_id}")
        for _, same in rows.groupby(["model_id", "rank_lo", "rank_hi", "decision"], dropna=False, sort=False):
            r = same.iloc[0]
            interval = f", rank interval [{int(r.rank_lo)}-{int(r.rank_hi)}]" if r.rank_lo == r.rank_lo else ""
            print(f"    {', '.join(same['scenario'])}: {r.model_id}, {price_text(r)}{interval}{r.decision}")
    if wh.table_exists("compass.leaderboard_changes"):
        changed = wh.query("select count(distinct case_id || '|' || scenario) as n, count(*) as rows "
                           "from compass.leaderboard_changes where change <> 'none'").iloc[0]
        print(f"\nChanged since the previous refresh: {int(changed['n'])} leaderboard(s), {int(changed['rows'])} "
              "change(s) (`compass diff` lists them with reasons)")
