"""Rank uncertainty of the leaderboard (issue #11): bootstrap replicates and rank intervals on known truth."""

import numpy as np
import pandas as pd
import pytest

from compass.mlcompass.measures import extract_measures
from compass.mlcompass.rank_coverage import REFERENCE, coverage, simulated_catalog, synthetic_case
from compass.mlcompass.rank_uncertainty import (
    RANK_COLUMNS,
    Replicates,
    _cell_estimator,
    _fit_cells,
    _OutcomeCells,
    _refit_measures,
    MIN_OUTCOME_MODELS,
    bootstrap_replicates,
    imputation_noise,
    rank_intervals,
)
from compass.mlcompass.scenarios import Scenario
from compass.mlcompass.utilities import fit_model, utility_scores


def _case(source="query_records", estimator="logistic", **utility):
    return synthetic_case(source, estimator, **utility)


STRUCTURAL = _case(source="weights", weights={"C1": 0.5, "C2": 0.5})


def _world(seed, **kwargs):
    """`simulated_catalog` (synthetic, known truth) as (x_raw, outcome rows, costs, actual rank, lam)."""
    w = simulated_catalog(seed, **kwargs)
    return w.x_raw, w.rows, w.cost, w.true_rank, w.lam


def _replicates(utilities: np.ndarray, measures: np.ndarray | None = None, groups=("a",)) -> Replicates:
    """Hand-made replicates: utilities (B, n, G); measures default 0.5 everywhere."""
    b, n, _ = utilities.shape
    measures = np.full((b, n, 2), 0.5) if measures is None else measures
    return Replicates(pd.Index([f"m{i}" for i in range(n)], name="model_id"), ("C1", "C2"), tuple(groups),
                      measures, utilities)


# ---------------------------------------------------------------- rank_intervals: closed forms


def test_rank_shares_and_interval_from_known_replicates():
    # 20 replicates; m0 beats m1 in 15 of them (u 0.9 vs 0.8) and loses in 5; m2 is always last.
    u = np.empty((20, 3, 1))
    u[:, :, 0] = [0.9, 0.8, 0.1]
    u[15:, :, 0] = [0.7, 0.8, 0.1]
    out = rank_intervals(_replicates(u), pd.Series(0.1, index=["m0", "m1", "m2"]), Scenario("s", lam=0.0))
    assert list(out.columns) == RANK_COLUMNS
    row = out.set_index("model_id")
    np.testing.assert_allclose(row["p_rank1"], [0.75, 0.25, 0.0])
    assert row["p_rank1"].sum() == pytest.approx(1.0)
    np.testing.assert_allclose(row["p_top5"], 1.0)
    # m0: rank 1 in 75 % (inside the 5-95 % range on both sides), rank 2 in 25 %: interval [1, 2].
    assert row.loc["m0", ["rank_lo", "rank_hi"]].tolist() == [1, 2]
    assert row.loc["m2", ["rank_lo", "rank_hi"]].tolist() == [3, 3]
    assert (row["n_boot"] == 20).all()
    # level 0.4: quantiles 0.3 and 0.7 of m0's ranks (75 % ones) are both 1.
    narrow = rank_intervals(_replicates(u), pd.Series(0.1, index=["m0", "m1", "m2"]), Scenario("s", lam=0.0), level=0.4)
    assert narrow.set_index("model_id").loc["m0", ["rank_lo", "rank_hi"]].tolist() == [1, 1]


def test_cost_enters_with_lam_and_ties_go_to_the_lower_cost():
    u = np.full((4, 3, 1), 0.5)
    u[:, 2, 0] = 0.6  # m2 has the best utility but costs 1.0
    costs = pd.Series([0.3, 0.2, 1.0], index=["m0", "m1", "m2"])
    free = rank_intervals(_replicates(u), costs, Scenario("s", lam=0.0)).set_index("model_id")
    assert free["p_rank1"].tolist() == [0.0, 0.0, 1.0]
    assert free.loc["m1", "rank_lo"] == 2  # m0 and m1 tie on score: the cheaper m1 ranks first
    priced = rank_intervals(_replicates(u), costs, Scenario("s", lam=0.5)).set_index("model_id")
    # scores 0.35, 0.40, 0.10
    assert priced["p_rank1"].tolist() == [0.0, 1.0, 0.0]
    assert priced["rank_hi"].tolist() == [2, 1, 3]


def test_top5_robust_aggregation_and_context_weights():
    n = 7
    u = np.zeros((2, n, 2))
    u[:, :, 0] = np.arange(n)[::-1] / 10  # context a: m0 best ... m6 worst
    u[:, :, 1] = np.arange(n) / 10  # context b: the reverse
    costs = pd.Series(0.0, index=[f"m{i}" for i in range(n)])
    reps = _replicates(u, groups=("a", "b"))
    weighted = rank_intervals(reps, costs, Scenario("s", context_weights={"a": 0.9, "b": 0.1})).set_index("model_id")
    assert weighted["rank_lo"].tolist() == list(range(1, n + 1))
    assert weighted["p_top5"].tolist() == [1.0] * 5 + [0.0] * 2
    robust = rank_intervals(reps, costs, Scenario("s", aggregation="robust")).set_index("model_id")
    # min over contexts: min(6-i, i)/10 is largest for m3
    assert robust.loc["m3", "p_rank1"] == 1.0
    with pytest.raises(ValueError, match="context weights"):
        rank_intervals(reps, costs, Scenario("s", context_weights={"a": 1.0}))


def test_person_weights_rank_by_replicate_measures_and_floors_give_p_feasible():
    x = np.zeros((10, 3, 2))
    x[:, 0] = [0.9, 0.1]  # strong on C1
    x[:, 1] = [0.1, 0.9]  # strong on C2
    x[:, 2] = [0.5, 0.5]
    x[:4, 2, 1] = 0.2  # m2 falls below a C2 floor of 0.3 in 4 of 10 replicates
    reps = _replicates(np.zeros((10, 3, 1)), measures=x)
    costs = pd.Series(0.0, index=["m0", "m1", "m2"])
    c1 = rank_intervals(reps, costs, Scenario("s", utility_weights={"C1": 1.0})).set_index("model_id")
    assert c1["p_rank1"].tolist() == [1.0, 0.0, 0.0]
    c2 = rank_intervals(reps, costs, Scenario("s", utility_weights={"C2": 3.0}, floors={"C2": 0.3}))
    c2 = c2.set_index("model_id")
    assert c2["p_rank1"].tolist() == [0.0, 1.0, 0.0]
    np.testing.assert_allclose(c2["p_feasible"], [0.0, 1.0, 0.6])
    with pytest.raises(ValueError, match="C3"):
        rank_intervals(reps, costs, Scenario("s", utility_weights={"C3": 1.0}))


def test_the_ranked_set_is_the_given_models():
    u = np.random.default_rng(0).random((30, 5, 1))
    costs = pd.Series(0.0, index=[f"m{i}" for i in range(5)])
    out = rank_intervals(_replicates(u), costs, Scenario("s"), models=["m4", "m1"])
    assert out["model_id"].tolist() == ["m4", "m1"]
    assert out["p_rank1"].sum() == pytest.approx(1.0)
    assert out["rank_hi"].max() <= 2
    assert rank_intervals(_replicates(u), costs, Scenario("s"), models=[]).empty


def test_bad_rank_inputs_raise():
    reps = _replicates(np.zeros((3, 2, 1)))
    costs = pd.Series(0.0, index=["m0", "m1"])
    with pytest.raises(ValueError, match="level"):
        rank_intervals(reps, costs, Scenario("s"), level=1.0)
    with pytest.raises(ValueError, match="dataset"):  # a lam rule must be resolved with the case first
        rank_intervals(reps, costs, Scenario("s", lam="low"))
    with pytest.raises(ValueError, match="m9"):
        rank_intervals(reps, costs, Scenario("s"), models=["m0", "m9"])
    with pytest.raises(ValueError, match="m1"):
        rank_intervals(reps, costs.drop("m1"), Scenario("s"), models=["m0", "m1"])


# ---------------------------------------------------------------- the pieces of a replicate


def test_imputation_noise_matches_the_actual_imputation_error():
    # frontier_api's shape: 249 models x 31 benchmarks, 20 % hidden; rank-2 signal, noise sd 0.1 to 0.5 by benchmark
    rng = np.random.default_rng(3)
    n, p = 249, 31
    noise = np.linspace(0.1, 0.5, p)
    full = pd.DataFrame(rng.standard_normal((n, 2)) @ rng.standard_normal((2, p)) + noise * rng.standard_normal((n, p)))
    hidden = rng.random((n, p)) < 0.2
    completed, sd = imputation_noise(full.mask(hidden))
    assert (sd.to_numpy()[~hidden] == 0).all()
    error, predicted = (completed - full).to_numpy(), sd.to_numpy()
    # the predicted sd is the size of the actual error, for the quiet and the noisy benchmarks alike
    # (RMS ratio 0.98-1.05 across seeds; one global sd would be off by ~2x in opposite directions)
    for cols in (slice(0, 10), slice(21, 31)):
        h = hidden[:, cols]
        ratio = np.sqrt(np.mean(error[:, cols][h] ** 2) / np.mean(predicted[:, cols][h] ** 2))
        assert ratio == pytest.approx(1.0, abs=0.08)
    # a complete matrix has nothing to redraw
    assert (imputation_noise(full)[1].to_numpy() == 0).all()


def test_refit_on_every_model_once_reproduces_extract_measures():
    x_raw = _world(0, n=60, missing=0.0)[0]
    point = extract_measures(x_raw, n_factors=2, previous_loadings=REFERENCE, pa_iterations=1)
    refit = _refit_measures(x_raw, np.arange(len(x_raw)), _case(), 2, REFERENCE, 0)
    np.testing.assert_allclose(refit, point.measures.to_numpy(), atol=1e-9)
    # a resample scores every model, min-max scaled across all of them
    resampled = _refit_measures(x_raw, np.random.default_rng(1).integers(0, 60, 60), _case(), 2, REFERENCE, 0)
    np.testing.assert_allclose(resampled.min(axis=0), 0.0)
    np.testing.assert_allclose(resampled.max(axis=0), 1.0)
    assert np.corrcoef(resampled[:, 0], refit[:, 0])[0, 1] > 0.95  # C1 keeps its meaning


@pytest.mark.parametrize("estimator,atol", [("logistic", 1e-5), ("lightgbm", 1e-2), ("linear", 1e-9)])
@pytest.mark.parametrize("bootstrap", [False, True])
def test_weighted_cells_fit_what_the_resampled_rows_fit(estimator, atol, bootstrap):
    """Same likelihood, same fit. LightGBM computes gradients in float32, so a weight of 2 and two rows differ
    by rounding, which can flip a near-tied split: up to 0.002 here; with unit weights it is exact."""
    x_raw, rows, _, _, _ = _world(1, n_prompts=60)
    spec = _case(estimator=estimator).utility
    measures = pd.DataFrame(np.random.default_rng(2).random((len(x_raw), 2)), columns=["C1", "C2"])
    cells = _OutcomeCells.build(rows, x_raw.index, spec)
    # a bootstrap draw of the prompts: each (context, prompt) cluster drawn 0, 1 or 2 times
    draws = np.random.default_rng(4).integers(0, 3, cells.cluster.max() + 1)[cells.cluster] if bootstrap else \
        np.ones(len(rows), dtype=int)
    weight, target = cells.weigh(draws.astype(float))
    from_cells = _fit_cells(cells, weight, target, measures, _cell_estimator(measures, cells, spec, 0), spec)
    resampled = rows.loc[rows.index.repeat(draws)]  # the same sample as rows (all rows kept, in order)
    for g, group in enumerate(cells.groups):
        part = resampled[resampled["context_group"] == group]
        x = measures.iloc[x_raw.index.get_indexer(part["model_id"])]
        model = fit_model(x, part["outcome"], estimator, monotone=spec.monotone)
        np.testing.assert_allclose(from_cells[:, g], utility_scores(model, estimator, measures),
                                   atol=atol if bootstrap else min(atol, 1e-5))


# ---------------------------------------------------------------- bootstrap_replicates


def test_a_dominant_model_is_first_in_every_replicate():
    x_raw, _, cost, _, _ = _world(5, n=30)
    x_raw.iloc[0] = x_raw.max() + 30  # far above every other model on every benchmark
    cost.iloc[0] = 0.0
    reps = bootstrap_replicates(x_raw, None, STRUCTURAL, 25, seed=1, reference_loadings=REFERENCE)
    out = rank_intervals(reps, cost, Scenario("s", lam=0.2)).set_index("model_id")
    assert out.loc["m000", ["p_rank1", "rank_lo", "rank_hi"]].tolist() == [1.0, 1, 1]
    assert out["p_rank1"].sum() == pytest.approx(1.0)
    assert out.drop("m000")["rank_lo"].min() >= 2


def test_replicates_are_deterministic_given_the_seed_and_b1_is_a_single_ranking():
    x_raw, rows, cost, _, lam = _world(6, n=25, n_prompts=30)
    case = _case()
    one = bootstrap_replicates(x_raw, rows, case, 3, seed=7, reference_loadings=REFERENCE)
    two = bootstrap_replicates(x_raw, rows, case, 3, seed=7, reference_loadings=REFERENCE)
    other = bootstrap_replicates(x_raw, rows, case, 3, seed=8, reference_loadings=REFERENCE)
    np.testing.assert_array_equal(one.utilities, two.utilities)
    np.testing.assert_array_equal(one.measures, two.measures)
    assert not np.allclose(one.utilities, other.utilities)
    assert one.groups == ("ctx0", "ctx1") and one.factors == ("C1", "C2")
    long = one.utility_rows()
    assert list(long.columns) == ["replicate", "model_id", "context_group", "utility", "n_outcome_models",
                                  "model_effect_sd"] and len(long) == 3 * 25 * 2
    assert (long["n_outcome_models"] == 8).all() and one.interval_supported
    assert one.measure_rows().set_index(["replicate", "model_id", "factor"]).loc[(2, "m004", "C2"), "value"] == \
        one.measures[2, 4, 1]
    single = rank_intervals(bootstrap_replicates(x_raw, rows, case, 1, seed=7, reference_loadings=REFERENCE),
                            cost, Scenario("s", lam=lam))
    assert (single["rank_lo"] == single["rank_hi"]).all()
    assert sorted(single["rank_lo"]) == list(range(1, 26))
    assert set(single["p_rank1"]) == {0.0, 1.0} and (single["n_boot"] == 1).all()


def test_bad_bootstrap_inputs_raise():
    x_raw, rows, _, _, _ = _world(0, n=20, n_prompts=30)
    with pytest.raises(ValueError, match="n_boot"):
        bootstrap_replicates(x_raw, rows, _case(), 0, reference_loadings=REFERENCE)
    with pytest.raises(ValueError, match="outcome rows are needed"):
        bootstrap_replicates(x_raw, None, _case(), 2, reference_loadings=REFERENCE)
    with pytest.raises(ValueError, match="group"):
        bootstrap_replicates(x_raw, rows.drop(columns="group"), _case(), 2, reference_loadings=REFERENCE)
    with pytest.raises(ValueError, match="min_rows|no context group"):
        bootstrap_replicates(x_raw, rows, _case(min_rows_per_group=10_000), 2, reference_loadings=REFERENCE)
    with pytest.raises(ValueError, match="benchmark, factor, loading"):
        bootstrap_replicates(x_raw, rows, _case(), 2, reference_loadings=REFERENCE.drop(columns="loading"))


def test_intervals_cover_the_actual_rank_when_models_have_their_own_effects():
    """Simulated catalogs (`simulated_catalog`, synthetic): 40 models, 8 with outcome data, each model with its own
    logit-scale effect (sd 0.5, inside the 0.17-0.53 of frontier_api's per-model residuals): coverage of every
    model's actual rank by the 90 % interval over 8 catalogs x 40 models.

    Measured (docs/results/mlcompass.md, 10 catalogs, B = 60): issue 11's bootstrap (prompts, imputation, factor
    model) covers 0.56 at sd 0.5; resampling the outcome models and drawing the model effects (tau^2 from the
    outcome models' residuals) 0.91 (0.87 on catalogs 0-5 at B = 40). Catalogs differ with sd ~0.12, so a mean
    over 8 has sd ~0.04: the bound 0.80 is ~2.5 sd below, and 0.65 above the old bootstrap's. Without model
    effects in the world, coverage is 0.985."""
    new = coverage(range(8), 40, model_sd=0.5)
    assert new["supported"].all()
    assert new["coverage"].mean() >= 0.80, new
    assert new["width"].mean() < 0.8 * 40  # not bought with intervals that span the whole catalog
    old = coverage(range(8), 40, model_sd=0.5, resample_models=False, model_effects=False)
    assert old["coverage"].mean() < 0.65, old
    assert (new["tau_hat"] > 0).mean() >= 0.75 and (old["tau_hat"] == 0).all()


def test_intervals_cover_without_model_effects_and_are_flagged_on_too_few_outcome_models():
    """Issue 11's world (no model effect): the new bootstrap still covers (>= 0.9, conservative). With 4 outcome
    models (fewer than MIN_OUTCOME_MODELS) the data cannot support an interval: flagged on every row."""
    assert coverage(range(4), 40, model_sd=0.0)["coverage"].mean() >= 0.90
    world = simulated_catalog(0, n_outcome_models=MIN_OUTCOME_MODELS - 1)
    reps = bootstrap_replicates(world.x_raw, world.rows, _case(), 5, reference_loadings=REFERENCE)
    assert reps.n_outcome_models == MIN_OUTCOME_MODELS - 1 and not reps.interval_supported
    table = rank_intervals(reps, world.cost, Scenario("s", lam=world.lam))
    assert (~table["interval_supported"]).all() and (table["n_outcome_models"] == MIN_OUTCOME_MODELS - 1).all()
    enough = simulated_catalog(0, n_outcome_models=MIN_OUTCOME_MODELS)
    assert bootstrap_replicates(enough.x_raw, enough.rows, _case(), 2, reference_loadings=REFERENCE).interval_supported
    structural = bootstrap_replicates(world.x_raw, None, STRUCTURAL, 2, reference_loadings=REFERENCE)
    assert structural.interval_supported and structural.n_outcome_models == 0


def test_model_effect_variance_recovers_the_effect_sd_with_many_outcome_models():
    for sd in (0.0, 0.5):
        world = simulated_catalog(1, n_outcome_models=30, n_prompts=200, model_sd=sd)
        tau = bootstrap_replicates(world.x_raw, world.rows, _case(), 1, reference_loadings=REFERENCE).model_effect_sd
        assert tau == pytest.approx(sd, abs=0.12), (sd, tau)


def test_near_ties_with_the_leader_are_marked():
    # m0 leads; m1 beats it in 3 of 20 replicates (15 % >= 5 %), m2 in 1 of 20 (5 %), m3 never.
    u = np.empty((20, 4, 1))
    u[:, :, 0] = [0.9, 0.8, 0.7, 0.1]
    u[:3, 1, 0] = 0.95
    u[3, 2, 0] = 0.9  # a tie with the leader counts as "at least as high"
    out = rank_intervals(_replicates(u), pd.Series(0.0, index=[f"m{i}" for i in range(4)]), Scenario("s"))
    row = out.set_index("model_id")
    np.testing.assert_allclose(row["p_ge_leader"], [1.0, 0.15, 0.05, 0.0])
    assert row["near_leader"].tolist() == [True, True, True, False]
    # the leader is the given one, not the first model
    other = rank_intervals(_replicates(u), pd.Series(0.0, index=[f"m{i}" for i in range(4)]), Scenario("s"),
                           leader="m1").set_index("model_id")
    assert other.loc["m0", "p_ge_leader"] == 0.85 and other.loc["m1", "near_leader"]


def test_no_replicate_ranks_a_model_above_one_that_strictly_dominates_it():
    """The leaderboard's dominance repair holds in every replicate, so P(rank 1) never goes to a model that another
    strictly dominates (issue 42's adversarial review: a dominated model was the P(rank 1) leader). m0 scores above
    its dominator m1 in 15 of 20 replicates at the same cost, and its id sorts first: only the repair's tie-break
    (fewer dominators) can put m1 above it."""
    u = np.empty((20, 3, 1))
    u[:, :, 0] = [0.9, 0.7, 0.1]
    u[15:, :, 0] = [0.9, 0.95, 0.1]
    costs = pd.Series(0.1, index=["m0", "m1", "m2"])
    plain = rank_intervals(_replicates(u), costs, Scenario("s", lam=0.0)).set_index("model_id")
    assert plain.loc["m0", "p_rank1"] == 0.75  # without the repair the dominated model leads
    repaired = rank_intervals(_replicates(u), costs, Scenario("s", lam=0.0),
                              dominators={"m0": ["m1"]}).set_index("model_id")
    assert repaired.loc["m1", "p_rank1"] == 1.0 and repaired.loc["m0", "p_rank1"] == 0.0
    assert repaired.loc["m0", ["rank_lo", "rank_hi"]].tolist() == [2, 2]
