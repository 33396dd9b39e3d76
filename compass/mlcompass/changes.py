"""What changed on a scenario leaderboard since its previous version, and why (ML Compass §4.6, seed 000).

For one case x scenario the published leaderboard (compass.leaderboards) is
compared with the version it replaced in history.compass_leaderboards (the one
live before the refresh that produced it began, so intermediate versions written
while that refresh's upstream assets were still updating are skipped): models
that entered or left, rank moves (old rank -> new rank), and a changed
mean-aggregate recommendation (compass.recommendations, policy mlc_mean). Each
row says why, from the inputs of the models involved: raw and normalized cost
(compass.costs), measures (compass.measures), and feasibility with the binding
constraint (`compass.mlcompass.recommend.screen_models` under the current scenario).

Old inputs are the versions that were live when the previous leaderboard was
published: the version written by the same run, else the latest one published
no later than it (history rows carry `run_id` and `refreshed_at`). Reading
the snapshots from the warehouse is `resources.readers.leaderboard_snapshots`.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from compass.mlcompass.decisions import DecisionInputs, scenario_floors, unmeasured
from compass.mlcompass.recommend import screen_models

CHANGE_COLUMNS = ["change", "model_id", "old_rank", "new_rank", "detail"]
CHANGES = ("new_model", "dropped_model", "rank_move", "recommendation", "none")
# Differences below these are float noise, not input changes.
COST_TOL = 1e-9
MEASURE_TOL = 1e-6
# A rank move with no own input change names at most this many models that caused it.
MAX_CAUSES = 5


@dataclasses.dataclass(frozen=True)
class Snapshot:
    """One side of a comparison: leaderboard, mlc_mean pick and the inputs of every model."""

    board: pd.DataFrame  # rank, model_id, ...
    pick: str | None  # mlc_mean recommendation
    raw_cost: pd.Series  # model_id -> raw cost (USD/Mtok or the case's cost column)
    cost: pd.Series  # model_id -> normalized cost
    measures: pd.DataFrame  # model_id x factor


def published_versions(history: pd.DataFrame) -> pd.DataFrame:
    """One row per data_version: its first publication time and run, oldest first (ties: insertion order)."""
    h = history.reset_index(drop=True).assign(_pos=lambda f: np.arange(len(f)))
    first = h.sort_values(["refreshed_at", "_pos"]).drop_duplicates("data_version")
    return first[["data_version", "refreshed_at", "run_id", "_pos"]].reset_index(drop=True)


def previous_version(history: pd.DataFrame, live_version: str, before: pd.Timestamp | None = None) -> str | None:
    """The data_version the live one replaced (None when there is none).

    With `before` (when the refresh that produced the live version started), the
    latest version first published before then, so versions published in the
    middle of that refresh (while its upstream assets were still updating) are
    skipped; otherwise the most recently published version other than the live one.
    """
    if history.empty:
        return None
    versions = published_versions(history)
    others = versions[versions["data_version"] != live_version]
    if before is not None:
        others = others[others["refreshed_at"] < before]
    return None if others.empty else str(others["data_version"].iloc[-1])


def version_live_at(history: pd.DataFrame, run_id: str, when: pd.Timestamp) -> pd.DataFrame:
    """Rows of the version a run wrote, else of the latest version published no later than `when`."""
    if history.empty:
        return history
    versions = published_versions(history)
    same_run = versions[versions["run_id"] == run_id]
    chosen = same_run if len(same_run) else versions[versions["refreshed_at"] <= when]
    if chosen.empty:
        return history.iloc[0:0]
    return history[history["data_version"] == chosen["data_version"].iloc[-1]]


def _pick(recs: pd.DataFrame) -> str | None:
    row = recs[(recs["policy"] == "mlc_mean")] if len(recs) else recs
    if row.empty or pd.isna(row["model_id"].iloc[0]):
        return None
    return str(row["model_id"].iloc[0])


def snapshot(board: pd.DataFrame, recs: pd.DataFrame, costs: pd.DataFrame, measures: pd.DataFrame) -> Snapshot:
    wide = (measures.pivot(index="model_id", columns="factor", values="value") if len(measures)
            else pd.DataFrame(index=pd.Index([], name="model_id")))
    by_model = costs.set_index("model_id") if len(costs) else pd.DataFrame(columns=["raw_cost", "cost"])
    return Snapshot(board.sort_values("rank").reset_index(drop=True) if len(board) else board, _pick(recs),
                    by_model["raw_cost"].astype(float), by_model["cost"].astype(float), wide)


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def input_changes(model: str, old: Snapshot, new: Snapshot) -> list[str]:
    """Why a model's standing may have changed: its own cost and measures, old vs new."""
    if model not in old.measures.index and model in new.measures.index:
        return ["new model"]
    if model in old.measures.index and model not in new.measures.index:
        return ["no longer measured in this case"]
    reasons = []
    if model in new.raw_cost.index and model not in old.raw_cost.index:
        reasons.append(f"newly priced at {_fmt(new.raw_cost[model])}")
    elif model in old.raw_cost.index and model not in new.raw_cost.index:
        reasons.append("price withdrawn")
    elif model in new.raw_cost.index and abs(new.raw_cost[model] - old.raw_cost[model]) > COST_TOL:
        reasons.append(f"cost changed {_fmt(old.raw_cost[model])} -> {_fmt(new.raw_cost[model])} "
                       f"(normalized {old.cost[model]:.3f} -> {new.cost[model]:.3f})")
    if model in new.measures.index and model in old.measures.index:
        both = [f for f in new.measures.columns if f in old.measures.columns]
        moved = [f"{f} {old.measures.at[model, f]:.3f} -> {new.measures.at[model, f]:.3f}" for f in both
                 if abs(new.measures.at[model, f] - old.measures.at[model, f]) > MEASURE_TOL]
        if moved:
            reasons.append("measures changed: " + ", ".join(moved))
    return reasons


def diff_leaderboards(old: Snapshot, new: Snapshot, screen: pd.DataFrame | None = None) -> pd.DataFrame:
    """Rows [change, model_id, old_rank, new_rank, detail] between two leaderboard snapshots.

    `screen` (model_id, feasible, reason) is the current feasibility screen; it
    names the binding constraint of a model that became infeasible.
    """
    old_rank = dict(zip(old.board["model_id"], old.board["rank"])) if len(old.board) else {}
    new_rank = dict(zip(new.board["model_id"], new.board["rank"])) if len(new.board) else {}
    blocked = {} if screen is None else dict(zip(screen.loc[~screen["feasible"], "model_id"],
                                                 screen.loc[~screen["feasible"], "reason"]))
    everyone = sorted(set(old_rank) | set(new_rank) | set(old.measures.index) | set(new.measures.index))
    why = {m: input_changes(m, old, new) for m in everyone}
    changed = [m for m in everyone if why[m]]

    def explain(model: str) -> str:
        own = list(why[model])
        if model in new_rank and model not in old_rank and model in old.measures.index:
            own.insert(0, "newly feasible")
        if model in old_rank and model not in new_rank and model in new.measures.index:
            own.insert(0, f"newly infeasible (binding: {blocked.get(model, 'unknown')})")
        if own:
            return "; ".join(own)
        others = [f"{m} ({why[m][0]})" for m in changed if m != model][:MAX_CAUSES]
        return "no own input changed; moved by " + (", ".join(others) if others else "the refit frontier")

    rows = []
    for m in sorted(set(new_rank) - set(old_rank), key=new_rank.get):
        rows.append(("new_model", m, None, new_rank[m], explain(m)))
    for m in sorted(set(old_rank) - set(new_rank), key=old_rank.get):
        rows.append(("dropped_model", m, old_rank[m], None, explain(m)))
    for m in sorted(set(old_rank) & set(new_rank), key=new_rank.get):
        if old_rank[m] != new_rank[m]:
            detail = f"rank {old_rank[m]} -> {new_rank[m]}; {explain(m)}"
            rows.append(("rank_move", m, old_rank[m], new_rank[m], detail))
    if old.pick != new.pick:
        detail = f"mlc_mean {old.pick or 'none'} -> {new.pick or 'none'}"
        for m in (new.pick, old.pick):
            if m is not None:
                detail += f"; {m}: {explain(m)}"
        rows.append(("recommendation", new.pick, old_rank.get(new.pick), new_rank.get(new.pick), detail))
    return _typed(rows)


def _typed(rows: list[tuple]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=CHANGE_COLUMNS)
    return frame.astype({"change": "string", "model_id": "string", "old_rank": "Int64", "new_rank": "Int64",
                         "detail": "string"})


def screen(inputs: DecisionInputs) -> pd.DataFrame:
    """Feasibility of every model under the scenario (model_id, feasible, reason): names what binds, the case's
    measurement screen included ("min_benchmarks_to_rank (observed on 2)")."""
    s = inputs.scenario
    short = unmeasured(inputs)
    need = inputs.case.benchmarks.min_benchmarks_to_rank
    return pd.concat([screen_models(inputs.measures, inputs.costs, s.budget, scenario_floors(inputs), inputs.raw_scores,
                                    s.raw_floors),
                      pd.DataFrame({"model_id": short.index, "feasible": False,
                                    "reason": [f"min_benchmarks_to_rank {need} (observed on {k})" for k in short]})],
                     ignore_index=True)


def leaderboard_changes(inputs: DecisionInputs, pair: tuple[Snapshot, Snapshot] | None, board_empty: bool,
                        n_versions: int) -> pd.DataFrame:
    """The changes of one case x scenario leaderboard since its previous version (`pair` = previous, current).

    Never empty: with nothing to report, one row with change "none" says why (no
    earlier version, or no change), so every partition shows its diff ran.
    `board_empty` and `n_versions` (distinct published versions) explain a missing pair.
    """
    if pair is None:
        if board_empty:
            return no_change("no feasible model: the leaderboard is empty")
        return no_change("no change since the previous refresh" if n_versions > 1 else "no earlier version of this leaderboard")
    table = diff_leaderboards(*pair, screen(inputs))
    return table if len(table) else no_change("no change since the previous version")


def no_change(why: str) -> pd.DataFrame:
    """The one row that says why a leaderboard has nothing to report."""
    return _typed([("none", None, None, None, why)])
