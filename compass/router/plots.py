"""Figures of the meta-router study: efficiency gain against primary-model usage (the curves of the paper's
Figs. 1-4) and the positivity diagnostic (propensity histogram per label kind)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd


def gain_curves(evaluation: pd.DataFrame, title: str):
    """One panel per gold size: EG(PMUR) per router with ±1 standard-error bands."""
    sizes = sorted(evaluation["n_gold"].unique())
    fig, axes = plt.subplots(1, len(sizes), figsize=(4.2 * len(sizes), 3.6), squeeze=False, sharey=True)
    for ax, n in zip(axes[0], sizes):
        for name, rows in evaluation[evaluation["n_gold"] == n].groupby("router", sort=True):
            rows = rows.sort_values("pmur")
            line, = ax.plot(rows["pmur"], rows["expected_gain"], label=name, lw=1.6 if name.startswith("meta") else 1)
            ax.fill_between(rows["pmur"], rows["expected_gain"] - rows["se"].fillna(0),
                            rows["expected_gain"] + rows["se"].fillna(0), color=line.get_color(), alpha=0.12)
        ax.axhline(0, color="grey", lw=0.6)
        ax.set_title(f"n_gold = {n}", fontsize=9)
        ax.set_xlabel("primary-model usage ratio")
    axes[0][0].set_ylabel("efficiency gain over random (gold units / query)")
    axes[0][-1].legend(fontsize=7, loc="lower center")
    fig.suptitle(title, fontsize=10)
    return fig


def overlap_histogram(overlap: pd.DataFrame, title: str):
    """Histogram of p̂(s) = Pr(gold | s) for gold and preference queries, with the overlap region shaded."""
    fig, ax = plt.subplots(figsize=(5, 3.2))
    for kind, rows in overlap.groupby("label_kind", sort=True):
        share = rows["count"] / rows["count"].sum()
        ax.bar(rows["bin_lo"], share, width=rows["bin_hi"] - rows["bin_lo"], align="edge", alpha=0.5,
               label=f"{kind} ({rows['share_inside'].iloc[0]:.0%} inside)")
    ax.axvspan(overlap["overlap_lo"].iloc[0], overlap["overlap_hi"].iloc[0], color="grey", alpha=0.08)
    ax.set_xlabel("p̂(gold | query)")
    ax.set_ylabel("share of rows")
    ax.set_title(f"{title}: AUC gold vs preference {overlap['auc'].iloc[0]:.2f}", fontsize=9)
    ax.legend(fontsize=7)
    return fig
