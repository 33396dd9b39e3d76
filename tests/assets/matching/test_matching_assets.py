"""matching/runs and matching/summary on small user files: tables, Table 1 shape, bad and infeasible users."""

import dagster as dg
import pytest

from assets.matching import matching_runs, matching_summary
from resources.warehouse import Warehouse, WarehouseResource

GOOD = """name: anything  # the file stem names the user
pool: openai_zoo
constraints:
  output_price: {max: 0.4}
  rl_t5: {min: 150000000}
  function_calling: true
  batch_ep: true
  text_in: true
budget_usd: 0.05
rounds: 6
seeds: [42, 43]
"""
METHODS = ["cupid", "rucb", "eps_greedy"]


@pytest.fixture
def env(tmp_path, monkeypatch):
    folder = tmp_path / "users"
    folder.mkdir()
    (folder / "good.yaml").write_text(GOOD)
    (folder / "typo.yaml").write_text(GOOD.replace("rl_t5:", "rl_tier5:"))
    (folder / "wrongtype.yaml").write_text(GOOD.replace("function_calling: true", "function_calling: {max: yes}"))
    (folder / "nobody.yaml").write_text(GOOD.replace("output_price: {max: 0.4}", "output_price: {max: 0.01}"))
    db = tmp_path / "w.duckdb"
    monkeypatch.setenv("COMPASS_USERS", str(folder))
    monkeypatch.setenv("COMPASS_DB", str(db))
    monkeypatch.chdir(tmp_path)
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("user", ["good", "typo", "wrongtype", "nobody"])
    return instance, Warehouse(db)


def run(instance, key):
    config = {"ops": {"matching__runs": {"config": {"methods": METHODS}}}}
    return dg.materialize([matching_runs, matching_summary], instance=instance, partition_key=key, run_config=config,
                          resources={"warehouse": WarehouseResource()}, raise_on_error=False)


def failure_message(result) -> str:
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    error = failure.event_specific_data.error
    return error.message + "".join(c.message for c in [error.cause] if c is not None)


def test_runs_and_summary_tables(env, tmp_path):
    instance, wh = env
    assert run(instance, "good").success
    runs = wh.read("matching.runs")
    assert set(runs["user"]) == {"good"} and set(runs["method"]) == set(METHODS) and set(runs["seed"]) == {42, 43}
    assert runs.groupby(["method", "seed"])["round"].max().max() <= 6
    summary = wh.read("matching.summary").set_index("method")
    assert list(summary.columns[:6]) == ["user", "cost_mean", "cost_sd", "rounds_to_converge", "converged_pct", "n_runs"]
    assert summary.loc["cupid", "converged_pct"] == 100 and summary.loc["cupid", "over_budget_pct"] == 0
    cupid = runs[runs["method"] == "cupid"]
    last = cupid.sort_values("round").groupby("seed")["cumulative_cost_usd"].last()
    assert (last <= 0.05).all() and summary.loc["cupid", "n_runs"] == 2
    assert (tmp_path / "reports" / "matching" / "good.png").exists()  # beside the warehouse (settings.figures_dir)


@pytest.mark.parametrize("key,words", [("typo", ["typo.yaml", "constraints.rl_tier5", "unknown column"]),
                                       ("wrongtype", ["wrongtype.yaml", "constraints.function_calling", "expected true/false"])])
def test_bad_user_file_fails_naming_file_and_key_and_changes_nothing(env, key, words):
    instance, wh = env
    assert run(instance, "good").success
    before = wh.read("matching.runs")
    result = run(instance, key)
    assert not result.success
    message = failure_message(result)
    assert all(w in message for w in words), message
    assert wh.read("matching.runs").equals(before)


def test_a_user_no_model_satisfies_warns_and_never_converges(env):
    instance, wh = env
    with pytest.warns(UserWarning, match="nobody.yaml: no model of pool 'openai_zoo' meets every constraint"):
        assert run(instance, "nobody").success
    summary = wh.read("matching.summary", {"user": "nobody"})
    assert len(summary) == len(METHODS) and (summary["converged_pct"] == 0).all()
    assert summary["rounds_to_converge"].isna().all()
