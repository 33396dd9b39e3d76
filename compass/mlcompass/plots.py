"""Figures of ML Compass (seed 000): loadings heatmap, tiered frontier and cost curve, targets vs selections."""

import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from compass.mlcompass.frontier import ces_score, cost_frontier_curve  # noqa: E402


def loadings_heatmap(loadings: pd.DataFrame, title: str):
    """Sparsified factor loadings, benchmarks x factors (§8.3)."""
    wide = loadings.pivot(index="benchmark", columns="factor", values="loading").fillna(0.0)
    fig, ax = plt.subplots(figsize=(2 + 0.9 * wide.shape[1], 1.5 + 0.22 * wide.shape[0]))
    im = ax.imshow(wide.to_numpy(), cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
    ax.set_xticks(range(wide.shape[1]), wide.columns)
    ax.set_yticks(range(wide.shape[0]), wide.index, fontsize=7)
    ax.set_title(f"{title}: promax loadings")
    fig.colorbar(im, ax=ax, shrink=0.6)
    return fig


def tiered_frontier_plot(measures: pd.DataFrame, tiers: pd.DataFrame, costs: pd.DataFrame, ces, cost_fit, title: str):
    """2-D projections: each measure pair coloured by tier, and CES score against normalized cost with the tier
    points (λ_t, c_t) and c0 c^d fitted through them, drawn over the models' costs up to the most capable point."""
    factors = list(measures.columns)
    pairs = [(factors[i], factors[j]) for i in range(len(factors)) for j in range(i + 1, len(factors))][:3]
    fig, axes = plt.subplots(1, len(pairs) + 1, figsize=(4.2 * (len(pairs) + 1), 3.8))
    axes = np.atleast_1d(axes)
    tier_of = tiers.set_index("model_id")["tier"].reindex(measures.index)
    for ax, (fx, fy) in zip(axes, pairs):
        ax.scatter(measures[fx], measures[fy], c=tier_of, cmap="viridis", s=14)
        eff = tiers.loc[tiers["pareto_efficient"], "model_id"]
        ax.scatter(measures.loc[eff, fx], measures.loc[eff, fy], facecolors="none", edgecolors="red", s=40, lw=0.8)
        ax.set(xlabel=fx, ylabel=fy, title=f"{fx} vs {fy} (red: efficient)")
    ax = axes[-1]
    priced = costs.set_index("model_id")
    score = ces_score(measures.loc[priced.index].to_numpy(), ces.a, ces.b)
    ax.scatter(priced["cost"], score, c=priced["tier"], cmap="viridis", s=14)
    points = cost_fit.tier_costs
    ax.scatter(points["cost"], points["level"], marker="D", c="red", edgecolors="black", s=45, zorder=3,
               label="tier points λ_t at c_t (what c0 c^d is fitted on)")
    positive = priced["cost"][priced["cost"] > 0]
    cost, level, fitted = cost_frontier_curve(cost_fit.c0, cost_fit.d, points["cost"].to_numpy(float),
                                              (positive.min(), positive.max()), max(score.max(), points["level"].max()))
    ax.plot(np.where(fitted, cost, np.nan), level, "r-",
            label=f"c0 c^d through the tier points (c0={cost_fit.c0:.2f}, d={cost_fit.d:.2f}; dashed: beyond them)")
    ax.plot(np.where(fitted, np.nan, cost), level, "r--")
    ax.set(xlabel="normalized cost (log)", ylabel="CES capability", title=title, xscale="log")
    ax.legend(fontsize=6, loc="lower right")
    fig.tight_layout()
    return fig


def targets_plot(measures: pd.DataFrame, costs: pd.Series, targets: pd.DataFrame, selected: list[str], title: str):
    """Targets x* (per context and aggregate) against the selected models, in the first two measures."""
    factors = list(measures.columns)
    fx, fy = factors[0], factors[1] if len(factors) > 1 else factors[0]
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.scatter(measures[fx], measures[fy], c="lightgray", s=10, label="models")
    sel = [m for m in selected if m in measures.index]
    ax.scatter(measures.loc[sel, fx], measures.loc[sel, fy], c="tab:blue", s=40, label="selected")
    for m in sel:
        ax.annotate(m, (measures.loc[m, fx], measures.loc[m, fy]), fontsize=6)
    ok = targets[targets["feasible"]]
    ax.scatter(ok[f"x_{fx}"], ok[f"x_{fy}"], marker="*", c="tab:red", s=90, label="targets x*")
    ax.set(xlabel=fx, ylabel=fy, title=title)
    ax.legend(fontsize=7)
    return fig


def sensitivity_plot(summary: pd.DataFrame, title: str, empty_reason: str = ""):
    """EC Figures 9-10: mean ± sd of b and d over the grid cells sharing one value of each design variable; where
    no cell fitted (an empty `summary`), a figure that states `empty_reason` instead."""
    variables = list(dict.fromkeys(summary["variable"]))
    if not variables:
        fig, ax = plt.subplots(figsize=(6.4, 1.6))
        ax.axis("off")
        ax.text(0, 0.5, textwrap.fill(empty_reason or "no cell of the grid could be fitted", 90), fontsize=8,
                va="center")
        fig.suptitle(f"{title}: frontier sensitivity (no fitted cell)")
        return fig
    fig, axes = plt.subplots(2, len(variables), figsize=(3.2 * len(variables), 5.2), squeeze=False)
    for col, variable in enumerate(variables):
        part = summary[summary["variable"] == variable]
        for row, outcome in enumerate(("b", "d")):
            ax = axes[row, col]
            ax.errorbar(range(len(part)), part[f"{outcome}_mean"], yerr=part[f"{outcome}_sd"].fillna(0.0),
                        fmt="o-", capsize=3)
            ax.set_xticks(range(len(part)), part["value"], fontsize=7)
            ax.set(xlabel=variable, ylabel=outcome)
    fig.suptitle(f"{title}: frontier sensitivity (mean ± sd over grid cells)")
    fig.tight_layout()
    return fig
