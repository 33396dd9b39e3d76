"""The light `make run` synthetic study (the paper's headline in miniature, SYNTHETIC): its rounds are enough for paired
intervals that separate what its generator makes clearly different."""

from assets.router import SYNTHETIC_SIZES
from compass.router.learners import LearnerSpec
from compass.router.study import evaluate_synthetic, synthetic_comparisons


def test_light_rounds_separate_preference_only_from_gold_only_in_preset_b():
    """Preset B's preferences carry half of η and none of the heterogeneous bias Δ, so preference-only routing is
    worse than gold-only at every gold size; the light study's paired 95 % intervals must say so, and be narrower
    than ±0.06. Mutation applied: the light size back at 2 rounds (the old value): red (t with 1 degree of freedom
    is 12.7, the intervals span ±0.3)."""
    size = SYNTHETIC_SIZES["light"]
    result = evaluate_synthetic(("B",), tuple(size["n_gold"]), size["mc_rounds"],
                                LearnerSpec(n_estimators=size["n_estimators"]), N=size["n_queries"], D=size["dim"],
                                routers=("gold_only", "preference_only"))
    table = synthetic_comparisons(result.rounds)
    pref = table[(table["router"] == "preference_only") & (table["baseline"] == "gold_only")]
    assert len(pref) == len(size["n_gold"])
    assert (pref["hi"] < 0).all() and pref["distinguishable"].all()
    assert ((pref["hi"] - pref["lo"]) / 2 < 0.06).all()
    assert (table["resample_correction"] == 0).all()  # fresh data each round: no resampling correction
