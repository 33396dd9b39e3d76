"""The meta-router page (seed 003): which router to deploy per dataset, then the gain curves with their intervals,
then the tables."""

from __future__ import annotations

import pandas as pd

from pipelines.formatting import number, pct
from pipelines.report import charts
from pipelines.report.html import verdict
from pipelines.report.sections import section
from pipelines.report.slice import Slice
from resources import readers
from resources.warehouse import Warehouse

Z90 = 1.645  # two-sided 90 % normal interval
REFERENCE_ROUTERS = ("oracle",)  # uses the held-out gold labels: an upper bound, never deployable
CHARTED = 4  # routers drawn per dataset: the oracle bound, gold-only and the two best learned ones
X_TITLE = "share of queries sent to the primary model"
Y_TITLE = "gain over random routing (gold units per query)"


def best_points(evaluation: pd.DataFrame) -> pd.DataFrame:
    """Per dataset (its largest gold sample) and learned router: the share of primary-model queries with the
    largest lower 90 % bound of the gain over random routing (0 and 1 excluded: every router equals random there)."""
    largest = evaluation.groupby("dataset")["n_gold"].transform("max")
    inner = evaluation[(evaluation["n_gold"] == largest) & evaluation["pmur"].between(0, 1, inclusive="neither")
                       & ~evaluation["router"].isin(REFERENCE_ROUTERS)]
    inner = inner.assign(lo=inner["expected_gain"] - Z90 * inner["se"], hi=inner["expected_gain"] + Z90 * inner["se"])
    return inner.loc[inner.groupby(["dataset", "router"])["lo"].idxmax()].sort_values(["dataset", "lo"],
                                                                                      ascending=[True, False])


def dataset_verdict(dataset: str, best: pd.DataFrame) -> str:
    """One sentence: the learned router whose gain over random routing is surely positive at some share, or none."""
    top = best.iloc[0]
    gain = f"{number(top.expected_gain, 2)} ± {number(Z90 * top.se, 1)}"
    if top.lo > 0:
        return (f"On {dataset}, deploy {top.router}: it gains {gain} gold units per query over random routing when "
                f"{pct(top.pmur, default_decimals=0)} of queries go to the primary model (90 % interval, n_gold = "
                f"{int(top.n_gold)}, {int(top.mc_rounds)} rounds).")
    return (f"On {dataset}, no learned router beats random routing beyond its 90 % interval at any share "
            f"(best: {top.router}, {gain} at {pct(top.pmur, default_decimals=0)} to the primary model; "
            f"n_gold = {int(top.n_gold)}, {int(top.mc_rounds)} rounds): route at random or send everything to one model.")


def router_verdict(evaluation: pd.DataFrame) -> str:
    best = best_points(evaluation)
    return " ".join(dataset_verdict(d, part) for d, part in best.groupby("dataset", sort=True))


def charted_routers(part: pd.DataFrame, best: pd.DataFrame) -> list[str]:
    """The oracle bound, gold-only and the best learned routers, at most CHARTED lines (no spaghetti)."""
    learned = [r for r in best["router"] if r != "gold_only"]
    wanted = [r for r in ("oracle", "gold_only") if r in set(part["router"])] + learned
    return wanted[:CHARTED]


def router_body(wh: Warehouse) -> str:
    """Seed 003: the verdict per dataset, the gain curves of a few routers with 90 % bands (largest gold size),
    the mean gain per router and gold size, the overlap diagnostic and the dollar budgets."""
    evaluation = readers.published(wh, "router.evaluation")
    best = best_points(evaluation)
    parts = [verdict(router_verdict(evaluation)),
             '<p class="note">Gain: the expected gold-label improvement over a random router that sends the same share '
             "of queries to the primary model (0 = random). Bands: ± 1.645 standard errors across Monte Carlo "
             "re-splits, per share (not paired between routers). The oracle uses the test labels: an upper bound.</p>"]
    for i, (dataset, part) in enumerate(evaluation.groupby("dataset", sort=True)):
        part = part[part["n_gold"] == part["n_gold"].max()]
        shown = charted_routers(part, best[best["dataset"] == dataset])
        part = part[part["router"].isin(shown)].assign(lo=lambda f: f["expected_gain"] - Z90 * f["se"],
                                                       hi=lambda f: f["expected_gain"] + Z90 * f["se"])
        part = part.assign(router=pd.Categorical(part["router"], shown, ordered=True)).sort_values("router")
        fig = charts.curves_with_bands(part, "pmur", "expected_gain", "lo", "hi", "router",
                                       f"{dataset} (n_gold = {part['n_gold'].iloc[0]})", X_TITLE, Y_TITLE,
                                       reference=0.0)
        parts.append(charts.figure_div(fig, f"chart-router-{i}"))
    mean = (evaluation.groupby(["dataset", "n_gold", "router"], as_index=False)
            .agg(mean_gain=("expected_gain", "mean"), mean_se=("se", "mean"), mc_rounds=("mc_rounds", "first")))
    overlap = readers.published(wh, "router.overlap")
    if len(overlap):
        overlap = overlap.groupby(["dataset", "label_kind"], as_index=False).agg(
            n=("n", "first"), share_inside=("share_inside", "first"), auc=("auc", "first"))
    policies = readers.published(wh, "router.policies")
    table = best[["dataset", "router", "n_gold", "pmur", "expected_gain", "lo", "hi", "mc_rounds"]].rename(
        columns={"pmur": "share_to_primary", "lo": "gain_lo_90", "hi": "gain_hi_90"})
    return ("".join(parts)
            + section("Each learned router at its best share (largest lower 90 % bound)", table)
            + "<details><summary>Full tables</summary>"
            + section("Mean gain over the share grid (gold units per query; 0 = random routing)", mean)
            + (section("Overlap of gold and preference queries (AUC 0.5: same distribution)", overlap)
               if len(overlap) else "")
            + (section("Budgets: threshold w per share of queries to the primary model, in dollars and normalized",
                       policies.head(500)) if len(policies) else "")
            + "</details>")


SLICE = Slice("router", "Router", "router.evaluation", router_body,
              ("router.evaluation", "router.overlap", "router.policies"))
