"""Regret and cost curves of a matchmaking study (CUPID §4.1): per method and round, the mean number of the
user's constraints the current recommendation misses (a simple regret; 0 = feasible) and the mean
cumulative spend, with the budget B as a line."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from compass.matching.study import METHOD_LABELS


def curves(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean missed constraints and cumulative cost per (method, round); a run that stopped early (budget
    guard) keeps its last recommendation and spend for the remaining rounds."""
    last = runs["round"].max()
    filled = []
    for _, run in runs.groupby(["method", "seed"], sort=False):
        kept = run.set_index("round")[["method", "missed_constraints", "cumulative_cost_usd"]]
        filled.append(kept.reindex(range(1, last + 1)).ffill().rename_axis("round").reset_index())
    full = pd.concat(filled, ignore_index=True)
    return full.groupby(["method", "round"], sort=False)[["missed_constraints", "cumulative_cost_usd"]].mean().reset_index()


def curves_figure(runs: pd.DataFrame, budget: float, title: str):
    """Two panels: simple regret (missed constraints) and cumulative cost against the round."""
    table = curves(runs)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    for method, rows in table.groupby("method", sort=False):
        label = METHOD_LABELS.get(method, method)
        left.plot(rows["round"], rows["missed_constraints"], marker="o", ms=3, label=label)
        right.plot(rows["round"], rows["cumulative_cost_usd"], marker="o", ms=3, label=label)
    right.axhline(budget, color="black", ls="--", lw=1, label="budget B")
    left.set(xlabel="round", ylabel="constraints missed by the current best", title="simple regret")
    right.set(xlabel="round", ylabel="cumulative cost (USD)", title="spend")
    right.legend(fontsize=7, loc="upper left")
    fig.suptitle(f"{title} (simulated user, LLM-free judge)", fontsize=10)
    return fig
