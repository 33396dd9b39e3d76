"""A person's weights as a scenario (utility: {weights: ...}), the leaderboard's `binding` at scale, refusals."""

import numpy as np
import pandas as pd
import pytest

from compass.ingest.errors import IngestError
from compass.mlcompass import decisions as dec
from compass.mlcompass.case_study import BenchmarkSpec, CaseStudy, CostSpec, UtilitySpec
from compass.mlcompass.frontier import CESFrontier
from compass.mlcompass.scenarios import Scenario, _binding


def _case(utility: UtilitySpec | None = None) -> CaseStudy:
    return CaseStudy("c", "test", BenchmarkSpec(), CostSpec(), utility or UtilitySpec(weights={"C1": 1.0, "C2": 1.0}))


def _inputs(scenario: Scenario, utilities=None, seed=0) -> dec.DecisionInputs:
    rng = np.random.default_rng(seed)
    ids = [f"m{i}" for i in range(30)]
    measures = pd.DataFrame(rng.uniform(size=(30, 2)), index=ids, columns=["C1", "C2"])
    costs = pd.Series(rng.uniform(0, 0.1, 30), index=ids)
    utilities = utilities or {"math": pd.Series({"C1": 0.1, "C2": 0.9}), "law": pd.Series({"C1": 0.2, "C2": 0.8})}
    frontier = CESFrontier(np.array([0.5, 0.5]), 2.0, 1.0, 0.5, np.array([0.2, 0.5, 0.8]))
    return dec.DecisionInputs(_case(), scenario, measures, costs, frontier, utilities, pd.DataFrame(index=ids),
                              pd.DataFrame(columns=["context_group", "model_id", "n", "outcome"]))


@pytest.mark.parametrize("utilities", [None, {"all": lambda x: np.asarray(x)[:, 1] ** 2}])
def test_person_weights_replace_the_case_utility_and_rank_as_they_say(utilities):
    """With lam = 0 and all weight on C1, the leaderboard is the models sorted by C1, whatever the case learned."""
    scenario = Scenario.from_dict({"name": "mine", "lam": 0, "utility": {"weights": {"C1": 0.7}}})
    inputs = dec.with_person_weights(_inputs(scenario, utilities))
    board = dec.leaderboard_frame(inputs)
    assert list(board["model_id"]) == list(inputs.measures["C1"].sort_values(ascending=False).index)
    assert board["utility_source"].iloc[0] == "scenario weights C1=0.7"
    pd.testing.assert_series_equal(inputs.utilities["all"], pd.Series({"C1": 1.0, "C2": 0.0}))


def test_without_person_weights_the_case_utility_stays():
    inputs = _inputs(Scenario("plain", lam=0.0))
    assert dec.with_person_weights(inputs) is inputs
    assert dec.leaderboard_frame(inputs)["utility_source"].iloc[0] == "case utility (weights, 2 context group(s))"


def test_weights_on_a_measure_the_case_lacks_skip_the_case():
    scenario = Scenario.from_dict({"name": "three", "utility": {"weights": {"C1": 1, "C3": 1}}})
    with pytest.raises(dec.NotApplicable, match=r"name \['C3'\], which case c lacks \(its measures: C1, C2\)"):
        dec.with_person_weights(_inputs(scenario))


@pytest.mark.parametrize("utility, key, message", [
    ({"weights": {"C0": 1.0}}, "utility.weights.C0", "unknown measure name 'C0'"),
    ({"weights": {"C1": -0.5}}, "utility.weights.C1", "finite number >= 0, got -0.5"),
    ({"weights": {"C1": float("inf")}}, "utility.weights.C1", "finite number >= 0, got inf"),
    ({"weights": {"C1": "high"}}, "utility.weights.C1", "finite number >= 0, got 'high'"),
    ({"weights": {"C1": 0, "C2": 0.0}}, "utility.weights", "weights are all zero"),
    ({"weights": {}}, "utility.weights", "expected a mapping measure -> weight"),
    ({"betas": {"C1": 1}}, "utility", "expected `utility: {weights:"),
])
def test_bad_person_weights_name_file_key_and_value(tmp_path, utility, key, message):
    assert_scenario_rejected(tmp_path, f"utility: {utility!r}".replace("inf", ".inf"), key, message)


def assert_scenario_rejected(tmp_path, line: str, key: str, message: str) -> None:
    """A scenario file with `line` is rejected with an IngestError naming the file, `key` and `message`."""
    path = tmp_path / "scenario.yaml"
    path.write_text(f"name: scenario\nlam: low\n{line}\n")
    with pytest.raises(IngestError) as err:
        Scenario.from_yaml(path)
    assert err.value.file == str(path) and err.value.column == key and message in err.value.reason


def _binding_by_pairs(table: pd.DataFrame) -> pd.Series:
    """The definition: per feasible row, the reasons of every infeasible row with a higher score, or the same
    score and a lower cost (the O(n^2) form the leaderboard used before)."""
    s = table["score"].round(12)
    out = {}
    for i, row in table[table["feasible"]].iterrows():
        r = round(float(row["score"]), 12)
        before = table[(~table["feasible"]) & ((s > r) | ((s == r) & (table["cost"] < row["cost"])))]
        causes = sorted({c for reason in before["reason"] for c in reason.split(";")})
        out[i] = ";".join(causes) if causes else "none"
    return pd.Series(out, dtype=object)


@pytest.mark.parametrize("seed", range(20))
def test_binding_matches_its_definition_with_ties(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    feasible = rng.uniform(size=n) < 0.6
    reasons = np.where(feasible, "", rng.choice(["budget", "floor:C2", "floor:C1;budget", "raw_floor:gpqa"], n))
    table = pd.DataFrame({"model_id": [f"m{i}" for i in range(n)], "score": rng.integers(0, 5, n) / 4,
                          "cost": rng.integers(0, 3, n) / 2, "feasible": feasible, "reason": reasons})
    pd.testing.assert_series_equal(_binding(table).sort_index(), _binding_by_pairs(table).sort_index())


def test_refusal_without_utility_names_the_case_both_fixes_and_the_measures():
    measures = pd.DataFrame({"C1": [0.1, 0.9], "C2": [0.5, 0.5]}, index=["a", "b"])
    case = _case(UtilitySpec())
    with pytest.raises(ValueError) as err:
        dec.case_utility_tables(case, measures, pd.DataFrame(), pd.DataFrame())
    text = str(err.value)
    assert text.startswith("case c: cannot rank models without a utility")
    assert "no utility weights" in text and "`utility: {source: weights, weights: {C1: 0.5, C2: 0.5}}`" in text
    assert "at least 200 outcome rows" in text and "(this case's measures: C1, C2)" in text


def test_refusal_with_too_few_outcome_rows_counts_them_per_group():
    measures = pd.DataFrame({"C1": [0.1, 0.9, 0.4], "C2": [0.5, 0.5, 0.2]}, index=["a", "b", "c"])
    records = pd.DataFrame({"dataset": "d", "split": "test", "query_id": [str(i) for i in range(30)],
                            "model_id": ["a", "b", "c"] * 10, "correct": [1.0, 0.0] * 15,
                            "category": ["math"] * 20 + ["law"] * 10})
    case = _case(UtilitySpec(source="query_records", datasets=("d",), context="category", min_rows_per_group=50))
    with pytest.raises(ValueError) as err:
        dec.case_utility_tables(case, measures, records, pd.DataFrame())
    text = str(err.value)
    assert "query_records of dataset(s) ['d']) has 30 rows for models with measures, by context group math: 20, law: 10" in text
    assert "no group reaches the 50 rows" in text and "`utility: {source: weights" in text


def test_per_type_recommendations_carry_their_own_context_utility():
    """A per-type row's utility is Û_g of its own context g, not the mean over all contexts."""
    inputs = _inputs(Scenario("plain", lam=0.1))
    recs = dec.recommendations_frame(inputs, dec.targets_frame(inputs)[0])
    per_type = recs[recs["policy"] == "mlc_per_type"]
    assert set(per_type["context_group"]) == {"math", "law"}
    for row in per_type.itertuples():
        beta = inputs.utilities[row.context_group]
        assert row.utility == pytest.approx(float(inputs.measures.loc[row.model_id] @ beta))
        assert row.deployment_value == pytest.approx(row.utility - 0.1 * inputs.costs[row.model_id])
    mean = recs[recs["policy"] == "mlc_mean"].iloc[0]
    x = inputs.measures.loc[mean["model_id"]]
    assert mean["utility"] == pytest.approx(np.mean([float(x @ b) for b in inputs.utilities.values()]))
