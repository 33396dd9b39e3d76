"""Figures of the cascade assets (seed 001): error-cost curves, tau heatmap, marginals, optimal-model map."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from compass.cascades.marginals import MixedBetaMarginal, split_values  # noqa: E402
from compass.cascades.wide import WideRecords  # noqa: E402


def curves_plot(curves: pd.DataFrame, dataset: str):
    """Test error-cost curves (Pareto points) of RT, grid search and BO, one panel per full-train cascade (Fig. 2.5)."""
    full = curves[(curves["sample"] == "full") & curves["pareto"]]
    cascades = list(dict.fromkeys(full["cascade"]))
    cols = min(3, len(cascades))
    rows = int(np.ceil(len(cascades) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False)
    for ax, cascade in zip(axes.ravel(), cascades):
        for method, g in full[full["cascade"] == cascade].groupby("method"):
            g = g.sort_values("cost")
            ax.plot(g["cost"], g["error"], marker=".", ms=3, lw=1, label=method)
        ax.set_title(" > ".join(m.replace("-instruct", "") for m in cascade.split(">")), fontsize=7)
        ax.set_xlabel("cost per query (USD)", fontsize=7)
        ax.set_ylabel("test error", fontsize=7)
        ax.tick_params(labelsize=6)
        ax.legend(fontsize=6)
    for ax in axes.ravel()[len(cascades):]:
        ax.axis("off")
    fig.suptitle(f"{dataset}: error-cost curves on test", fontsize=9)
    fig.tight_layout()
    return fig


def tau_heatmap(taus: pd.DataFrame, dataset: str):
    """Kendall tau between the models' calibrated confidences (Fig. 2.3)."""
    mat = taus.pivot(index="model_a", columns="model_b", values="tau")
    fig, ax = plt.subplots(figsize=(5.6, 4.8))
    im = ax.imshow(mat.to_numpy(), vmin=0, vmax=1, cmap="viridis")
    labels = [m.replace("-instruct", "") for m in mat.index]
    ax.set_xticks(range(len(labels)), labels, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    for (i, j), v in np.ndenumerate(mat.to_numpy()):
        ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=6, color="w" if v < 0.6 else "k")
    fig.colorbar(im, ax=ax, label="Kendall tau")
    ax.set_title(f"{dataset}: tau of calibrated confidences (train)", fontsize=9)
    return fig


def marginals_plot(cal: pd.DataFrame | WideRecords, marginals: dict[str, MixedBetaMarginal], split: str, dataset: str):
    """Fitted mixed-beta CDF (eq. 2.7) against the empirical CDF of calibrated confidences on `split` (Fig. 2.2)."""
    models = list(marginals)
    cols = min(3, len(models))
    rows = int(np.ceil(len(models) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 2.8 * rows), squeeze=False)
    for ax, m in zip(axes.ravel(), models):
        values = np.sort(split_values(cal, "p_correct", split).get(m, np.empty(0)))
        ax.step(values, np.arange(1, values.size + 1) / values.size, where="post", lw=1, label=f"empirical ({split})")
        grid = np.linspace(marginals[m].phi_min, marginals[m].phi_max, 400)
        ax.plot(grid, marginals[m].cdf(grid), lw=1.2, label="fitted (train)")
        ax.set_title(m.replace("-instruct", ""), fontsize=7)
        ax.tick_params(labelsize=6)
        ax.legend(fontsize=6)
    for ax in axes.ravel()[len(models):]:
        ax.axis("off")
    fig.suptitle(f"{dataset}: marginal CDFs of calibrated confidence", fontsize=9)
    fig.tight_layout()
    return fig


def optimal_map_plot(best: pd.DataFrame, dataset: str):
    """argmax_theta R(lambda_E, lambda_L) over single models (Fig. 3.4); lambda_L shown in $/min."""
    systems = sorted(best["best_system"].unique())
    code = best.assign(idx=best["best_system"].map({s: i for i, s in enumerate(systems)}))
    mat = code.pivot(index="lambda_latency", columns="lambda_error", values="idx")
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    cmap = plt.get_cmap("tab10", max(len(systems), 1))
    ax.imshow(mat.to_numpy(), aspect="auto", origin="lower", cmap=cmap, vmin=-0.5, vmax=len(systems) - 0.5)
    ax.set_xticks(range(mat.shape[1]), [f"{v:g}" for v in mat.columns], fontsize=7)
    ax.set_yticks(range(mat.shape[0]), [f"{60 * v:g}" for v in mat.index], fontsize=7)
    ax.set_xlabel("price of error lambda_E ($)")
    ax.set_ylabel("price of latency lambda_L ($/min)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=cmap(i)) for i in range(len(systems))]
    ax.legend(handles, systems, fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.set_title(f"{dataset}: highest expected reward", fontsize=9)
    return fig


def two_model_cascades_plot(rewards: pd.DataFrame, cer: pd.DataFrame, dataset: str):
    """Fig. 3.6a (CER = Cov(1_D, 1_err^small), eq. 3.25, vs the deferral rate on test), the cascade error rate vs
    deferral, and Fig. 3.5's comparison: the tuned cascade's test reward minus M_big alone's across the price of
    error, at the lowest and the highest price of latency (above zero: the cascade wins)."""
    fig, (cer_ax, err_ax, gain_ax) = plt.subplots(1, 3, figsize=(13.5, 3.6))
    for (small, big), g in cer.groupby(["small", "big"], sort=False):
        g = g.sort_values("defer_rate")
        label = f"{small} -> {big}"
        cer_ax.plot(g["defer_rate"], g["cer"], marker=".", lw=1, label=label)
        err_ax.plot(g["defer_rate"], g["error_rate"], marker=".", lw=1, label=label)
    cer_ax.set_xlabel("deferral rate (test)")
    cer_ax.set_ylabel("CER: Cov(deferral, small model's error)")
    cer_ax.legend(fontsize=6)
    err_ax.set_xlabel("deferral rate (test)")
    err_ax.set_ylabel("cascade error rate (test)")
    latencies = sorted(rewards["lambda_latency"].unique())
    for (small, big), g in rewards.groupby(["small", "big"], sort=False):
        for ll, style in ((latencies[0], "-"), (latencies[-1], "--")):
            h = g[g["lambda_latency"] == ll].sort_values("lambda_error")
            gain_ax.semilogx(h["lambda_error"], h["reward"] - h["big_alone_reward"], style, marker="o", ms=3, lw=1,
                             label=f"{small} -> {big}, latency ${60 * ll:g}/min")
    gain_ax.axhline(0.0, color="#777", lw=0.8)
    gain_ax.set_yscale("symlog", linthresh=1e-5)
    gain_ax.set_xlabel("price of an error (USD)")
    gain_ax.set_ylabel("cascade minus big model alone (USD per query)")
    gain_ax.legend(fontsize=5)
    fig.suptitle(f"{dataset}: two-model cascades (thesis Ch. 3, Figs. 3.5-3.6)", fontsize=9)
    fig.tight_layout()
    return fig
