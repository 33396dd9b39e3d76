"""Rank uncertainty of the leaderboard (issue #11): bootstrap replicates and rank intervals on known truth."""

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from scipy.stats import norm

from compass.mlcompass.case_study import CaseStudy
from compass.mlcompass.measures import extract_measures
from compass.mlcompass.rank_uncertainty import (
    RANK_COLUMNS,
    Replicates,
    _cell_estimator,
    _fit_cells,
    _OutcomeCells,
    _refit_measures,
    bootstrap_replicates,
    imputation_noise,
    rank_intervals,
)
from compass.mlcompass.scenarios import Scenario
from compass.mlcompass.utilities import fit_model, utility_scores

# Two-factor world: benchmarks b0-b2 measure factor 1, b3-b5 factor 2 (unit variance, uniqueness 1 - l^2).
LOADINGS = np.zeros((6, 2))
LOADINGS[:3, 0], LOADINGS[3:, 1] = [0.9, 0.85, 0.8], [0.9, 0.85, 0.8]
UNIQUENESS = 1 - (LOADINGS ** 2).sum(axis=1)
REFERENCE = pd.DataFrame([{"benchmark": f"b{j}", "factor": f"C{k + 1}", "loading": LOADINGS[j, k]}
                          for j in range(6) for k in range(2) if LOADINGS[j, k]])
# True utilities of two contexts: U_g(x) = sigmoid(alpha_g + beta_g' x).
ALPHA, BETA = np.array([-1.0, -1.5]), np.array([[3.0, 1.0], [1.0, 3.0]])


def _case(source="query_records", estimator="logistic", **utility) -> CaseStudy:
    spec = {"source": source, "datasets": ["synthetic"], "label": "threshold", "threshold": 0.5,
            "estimator": estimator, "min_rows_per_group": 50, **utility}
    return CaseStudy.from_dict({"case_id": "synthetic", "n_factors": 2, "benchmarks": {}, "utility": spec})


STRUCTURAL = _case(source="weights", weights={"C1": 0.5, "C2": 0.5})


def _world(seed, n=40, n_outcome_models=8, n_prompts=40, missing=0.15, rho=0.5, lam=0.2):
    """A catalog with known truth. Models are draws from the factor model above; their true measures are the
    population Bartlett scores of their (complete) benchmark rows, min-max scaled over the catalog (§4.3);
    their true utilities U_g(true measures), their costs uniform. A share `missing` of the cells is hidden.
    `n_outcome_models` models answer `n_prompts` prompts per context: y = 1 when u < U_g(m), with u uniform
    and correlated within a prompt (Gaussian copula, correlation rho^2), so P(y = 1) is exactly U_g(m).
    Returns x_raw, outcome rows, costs, the true rank (score = mean_g U_g - lam c, ties to lower cost) and lam."""
    rng = np.random.default_rng(seed)
    f = rng.multivariate_normal([0, 0], [[1, 0.3], [0.3, 1]], n)
    x = f @ LOADINGS.T + rng.standard_normal((n, 6)) * np.sqrt(UNIQUENESS)
    weights = (LOADINGS / UNIQUENESS[:, None]) @ np.linalg.inv(LOADINGS.T @ (LOADINGS / UNIQUENESS[:, None]))
    scores = x @ weights
    truth = (scores - scores.min(axis=0)) / (scores.max(axis=0) - scores.min(axis=0))
    ids = np.array([f"m{i:03d}" for i in range(n)])
    hidden = rng.random((n, 6)) < missing
    hidden[np.arange(n), rng.integers(0, 6, n)] = False  # every model keeps a benchmark
    x_raw = pd.DataFrame(np.where(hidden, np.nan, 50 + 10 * x), index=pd.Index(ids, name="model_id"),
                         columns=[f"b{j}" for j in range(6)])
    utility = expit(ALPHA + truth @ BETA.T)
    cost = pd.Series(rng.uniform(0, 1, n), index=ids)
    score = utility.mean(axis=1) - lam * cost.to_numpy()
    true_rank = pd.Series(0, index=ids)
    true_rank.iloc[np.lexsort((ids, cost.to_numpy(), -score))] = np.arange(1, n + 1)
    answering = rng.choice(n, n_outcome_models, replace=False)
    rows = []
    for g in range(2):
        u = norm.cdf(rho * rng.standard_normal((n_prompts, 1))
                     + np.sqrt(1 - rho ** 2) * rng.standard_normal((n_prompts, n_outcome_models)))
        rows.append(pd.DataFrame({
            "model_id": np.tile(ids[answering], n_prompts),
            "group": np.repeat([f"ctx{g}:q{q}" for q in range(n_prompts)], n_outcome_models),
            "context_group": f"ctx{g}",
            "outcome": (u < utility[answering, g]).astype(float).reshape(-1),
        }))
    return x_raw, pd.concat(rows, ignore_index=True), cost, true_rank, lam


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
    assert list(long.columns) == ["replicate", "model_id", "context_group", "utility"] and len(long) == 3 * 25 * 2
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


def test_intervals_cover_the_true_rank_at_close_to_the_nominal_rate():
    """Ten simulated catalogs (`_world`), 40 models each, 60 replicates: coverage of the true rank by the 90 %
    interval over the 400 (model, catalog) pairs.

    Measured: 0.94 here, 0.96 on catalogs 10-29; catalogs differ with sd ~0.04, so a mean over ten has sd
    ~0.013. Above 0.90 because ranks are discrete: the endpoints are observed ranks, both included, so each
    tail leaves out at most 5 % of the replicate ranks, and here the intervals leave out 5.2 % in all, not
    10 %; counting a replicate tie with the true rank as half (mid-p) gives 0.92-0.93. Bounds [0.90, 0.985]:
    ~3.5 sd either side. Each source of uncertainty is needed to reach them: without the prompt bootstrap
    coverage is 0.86, without the imputation draws 0.86, without the model bootstrap 0.875."""
    covered = []
    for seed in range(10):
        x_raw, rows, cost, true_rank, lam = _world(seed)
        reps = bootstrap_replicates(x_raw, rows, _case(), 60, seed=seed, reference_loadings=REFERENCE)
        out = rank_intervals(reps, cost, Scenario("s", lam=lam)).set_index("model_id")
        truth = true_rank.reindex(out.index)
        covered.append(((out["rank_lo"] <= truth) & (truth <= out["rank_hi"])).to_numpy())
    coverage = np.mean(covered)
    assert 0.90 <= coverage <= 0.985, coverage
