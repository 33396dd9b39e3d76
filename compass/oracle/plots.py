"""Figures of the oracle assets (seed 002): frontier with single models, bias decay, entropy uplift."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from compass.oracle.report import OracleReport  # noqa: E402


def frontier_plot(report: OracleReport, title: str):
    """Capability Frontier (§4.4, Figs. 6–11): Pareto points per estimator over the single models."""
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    single = report.single_models
    ax.scatter(single["cost"], single["quality"], s=18, c="0.55", label="single models", zorder=3)
    best = single.sort_values(["quality", "cost"], ascending=[False, True]).iloc[0]
    ax.annotate(str(best["model_id"]), (best["cost"], best["quality"]), fontsize=7, xytext=(4, -10),
                textcoords="offset points")
    for name, pts in report.frontier.groupby("estimator", sort=False):
        pts = pts.sort_values("cost")
        ax.step(pts["cost"], pts["quality"], where="post", marker=".", ms=3, lw=1.2, label=name)
    positive = single["cost"] > 0
    if positive.all() and single["cost"].max() / single["cost"].min() > 20:
        ax.set_xscale("log")
    ax.set_xlabel("cost per query")
    ax.set_ylabel("quality (accuracy)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    return fig


def bias_decay_plot(decay: pd.DataFrame, g_max: int = 500):
    """Fig. 2: the fitted bias(G) = a G^−λ per (L, p), with λ in the legend (synthetic)."""
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    g = np.arange(1, g_max + 1)
    for row in decay.itertuples():
        ax.plot(g, row.a * g ** (-row.lam), lw=1, label=f"L={row.n_models}, p={row.p}: λ={row.lam:.2f}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("generations G")
    ax.set_ylabel("oracle bias (fit a·G^−λ)")
    ax.set_title("Bias decay of the naive oracle (synthetic, eq. 10)", fontsize=9)
    ax.legend(fontsize=6, ncol=2)
    return fig


def entropy_uplift_plot(uplift: pd.DataFrame):
    """Fig. 5 / App. G: oracle uplift (eq. 26) against topic entropy (eq. 27), synthetic."""
    fig, ax = plt.subplots(figsize=(5.6, 4.0))
    ax.plot(uplift["entropy"], uplift["uplift"], marker="o")
    ax.set_xlabel("topic entropy H (eq. 27)")
    ax.set_ylabel("oracle uplift (eq. 26)")
    ax.set_title("Uplift grows with topic diversity (synthetic)", fontsize=9)
    return fig
