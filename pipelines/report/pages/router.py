"""The meta-router page (seed 003): which router to deploy per dataset, then the gain curves with their intervals,
then the tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

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
INFORMATIVE_WIDTH = 1.5  # an interval up to this many times its unlimited-rounds width counts as informative
INFORMATIVE_ROUNDS = 10  # the rounds of the paired table in docs/results/router.md
X_TITLE = "share of queries sent to the primary model"
Y_TITLE = "gain over random routing (gold units per query)"


def largest_n(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows at each dataset's largest gold sample."""
    if frame.empty:  # a warehouse from before the paired comparisons
        return frame
    return frame[frame["n_gold"] == frame.groupby("dataset")["n_gold"].transform("max")]


def dataset_verdict(dataset: str, comparisons: pd.DataFrame) -> str:
    """One sentence from the paired comparisons at the largest gold size: the learned router with the largest mean
    gain over random routing whose interval excludes 0, and whether it beats gold-only; or that none does."""
    vs_random = comparisons[(comparisons["baseline"] == "random") & ~comparisons["router"].isin(REFERENCE_ROUTERS)]
    vs_random = vs_random.sort_values("mean_difference", ascending=False)
    top = vs_random.iloc[0]
    rounds, n_gold, level = int(top.mc_rounds), int(top.n_gold), pct(top.level, default_decimals=0)
    gain = f"{number(top.mean_difference, 2)} ({number(top.lo, 2)} to {number(top.hi, 2)})"
    if not (top.distinguishable and top.mean_difference > 0):
        return (f"On {dataset}, no learned router's gain over random routing is distinguishable from zero "
                f"(best: {top.router}, {gain} gold units per query averaged over the usage grid; {level} paired "
                f"intervals, {rounds} rounds, n_gold = {n_gold}).")
    vs_gold = comparisons[(comparisons["router"] == top.router) & (comparisons["baseline"] == "gold_only")]
    beyond = ""
    if top.router != "gold_only" and len(vs_gold):
        g = vs_gold.iloc[0]
        beyond = (f"; against gold-only {number(g.mean_difference, 2)} ({number(g.lo, 2)} to {number(g.hi, 2)}), "
                  + ("distinguishable" if g.distinguishable else "not distinguishable"))
    return (f"On {dataset}, {top.router} gains {gain} gold units per query over random routing, averaged over the "
            f"usage grid ({level} paired intervals, {rounds} rounds, n_gold = {n_gold}){beyond}; it is the best of "
            f"{len(vs_random)} learned routers, and its interval is not widened for having been picked as the best.")


def interval_inflation(rounds: int, correction: float, level: float = 0.95) -> float:
    """How many times wider a paired interval over `rounds` re-splits of one data set is than unlimited rounds would
    make it (the corrected resampled-t of compass.router.evaluation.paired_comparisons): t_{k−1}·√(1/k + c) / (z·√c),
    c = n_test/(N − n_test); the data, not the rounds, bound the width at z·s·√c."""
    t = stats.t.ppf(0.5 + level / 2, rounds - 1)
    return float(t * np.sqrt(1 / rounds + correction) / (stats.norm.ppf(0.5 + level / 2) * np.sqrt(correction)))


def gain_bands(curves: pd.DataFrame, correction: float) -> pd.DataFrame:
    """90 % bands (lo, hi) around each router's mean gain per share: ± 1.645 standard errors over the rounds, the
    standard error widened by Nadeau & Bengio's √(1 + k·c) when the k rounds re-split one data set (c =
    n_test/(N − n_test), router.comparisons' resample_correction; 0 for fresh data): re-splits share test queries,
    so the plain s/√k is too narrow, as it is for the paired differences."""
    half = Z90 * curves["se"] * np.sqrt(1 + curves["mc_rounds"] * correction)
    return curves.assign(lo=curves["expected_gain"] - half, hi=curves["expected_gain"] + half)


def smoke_note(comparisons: pd.DataFrame) -> str:
    """When the run's rounds leave the paired intervals much wider than the data allow (the light `make run`), say
    that this page is a smoke run, by how much, and where the informative numbers are; else nothing."""
    if "resample_correction" not in comparisons or not (comparisons["resample_correction"] > 0).any():
        return ""  # a warehouse from before the corrected intervals
    real = comparisons[comparisons["resample_correction"] > 0]
    rounds, correction = int(real["mc_rounds"].min()), float(real["resample_correction"].max())
    width = interval_inflation(rounds, correction) if rounds > 1 else np.inf
    if width <= INFORMATIVE_WIDTH:
        return ""
    wide = f"each interval is {number(width, 2)}× as wide" if rounds > 1 else "there are no intervals, none as narrow"
    return (f'<p class="note"><strong>Smoke run.</strong> These comparisons come from {rounds} Monte Carlo round(s), '
            f"so {wide} as unlimited rounds on the same data would make them "
            f"(at {INFORMATIVE_ROUNDS} rounds {number(interval_inflation(INFORMATIVE_ROUNDS, correction), 2)}×): "
            "read the verdict as a check that the pipeline runs, not as evidence. The informative numbers are in "
            f"docs/results/router.md (“Paired comparisons”, {INFORMATIVE_ROUNDS} rounds; the synthetic headline at "
            "the paper's sizes) and in a <code>COMPASS_HEAVY=1 compass run</code> (50 rounds, 500-tree forests).</p>")


def router_verdict(comparisons: pd.DataFrame) -> str:
    return " ".join(dataset_verdict(d, part) for d, part in largest_n(comparisons).groupby("dataset", sort=True))


def charted_routers(part: pd.DataFrame, comparisons: pd.DataFrame) -> list[str]:
    """The oracle bound, gold-only and the two learned routers with the largest mean gain, CHARTED lines at most."""
    ranked = comparisons[comparisons["baseline"] == "random"].sort_values("mean_difference", ascending=False) \
        if len(comparisons) else pd.DataFrame({"router": sorted(set(part["router"]))})
    learned = [r for r in ranked["router"] if r not in ("gold_only",) + REFERENCE_ROUTERS]
    wanted = [r for r in ("oracle", "gold_only") if r in set(part["router"])] + learned
    return wanted[:CHARTED]


def router_body(wh: Warehouse) -> str:
    """Seed 003: the verdict per dataset from the paired comparisons, the gain curves of a few routers with 90 % bands,
    the mean gain per router and gold size, the overlap diagnostic, the dollar budgets and the synthetic headline."""
    evaluation = readers.published(wh, "router.evaluation")
    comparisons = largest_n(readers.published(wh, "router.comparisons"))
    parts = [verdict(router_verdict(comparisons)) if len(comparisons) else "", smoke_note(comparisons),
             '<p class="note">Gain: the expected gold-label improvement over a random router that sends the same share '
             "of queries to the primary model (0 = random), averaged over the usage grid for the comparisons. "
             "Intervals are paired across Monte Carlo re-splits (same split, same test queries); the bands in the "
             "charts are ± 1.645 standard errors per share, both with Nadeau & Bengio's correction for re-splits of "
             "one data set. The oracle uses the test labels: an upper bound.</p>"]
    for i, (dataset, part) in enumerate(evaluation.groupby("dataset", sort=True)):
        part = part[part["n_gold"] == part["n_gold"].max()]
        mine = comparisons[comparisons["dataset"] == dataset] if len(comparisons) else comparisons
        shown = charted_routers(part, mine)
        correction = float(mine["resample_correction"].max()) if "resample_correction" in mine and len(mine) else 0.0
        part = gain_bands(part[part["router"].isin(shown)], correction)
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
    calibration = readers.published(wh, "router.calibration")
    synthetic = readers.published(wh, "router.synthetic_comparisons")
    return ("".join(parts)
            + section("Paired comparisons at the largest gold size (gain averaged over the usage grid)",
                      comparisons.drop(columns=["level"], errors="ignore"))
            + (section("Is ψ̂ calibrated? Held-out queries in quantile bins of ψ̂: the realized gold gain "
                       "(last round; Spearman's ρ per router)", calibration) if len(calibration) else "")
            + "<details><summary>Full tables</summary>"
            + section("Mean gain over the share grid (gold units per query; 0 = random routing)", mean)
            + (section("Overlap of gold and preference queries (AUC 0.5: same distribution)", overlap)
               if len(overlap) else "")
            + (section("Budgets: threshold w per share of queries to the primary model, in dollars and normalized",
                       policies.head(500)) if len(policies) else "")
            + "</details>"
            + (section("SYNTHETIC, known truth: the paper's headline (Fig. 1) cell by cell, every router against "
                       "gold-only and preference-only paired across rounds (spec §4 generator; the paper-size run is "
                       "in docs/results/router.md)", synthetic[synthetic["baseline"] != "random"].drop(
                           columns=["level"], errors="ignore")) if len(synthetic) else ""))


SLICE = Slice("router", "Router", "router.evaluation", router_body,
              ("router.evaluation", "router.comparisons", "router.calibration", "router.overlap", "router.policies",
               "router.synthetic_comparisons"))
