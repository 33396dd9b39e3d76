"""Oracle tables materialized from the fixture, checked against numbers computed here from the CSV.

livecodebench fixture: 40 problems; gpt-4-turbo, claude-3-opus, gpt-4 (priced, G = 10),
wizardcoder-33b-v1.1 (G = 10, no price anywhere), gemini-1.5-pro (priced, G = 1 -> dropped).
gsm8k fixture: 30 queries x 3 models, G = 1, real per-call cost_usd.
"""

import dagster as dg
import numpy as np
import pandas as pd
import pytest

from resources.warehouse import Warehouse
from tests.assets.oracle.conftest import records

LCB_PRICED = {"gpt-4-turbo-2024-04-09": 15.0, "claude-3-opus": 30.0, "gpt-4": 37.5}  # min blended (3 in + out)/4
LCB_G10 = [*LCB_PRICED, "wizardcoder-33b-v1.1"]


def p_hat(dataset: str, models: list[str]) -> pd.DataFrame:
    """Prompt x model success rates from the fixture CSV."""
    r = records()
    r = r[(r["dataset"] == dataset) & r["model_id"].isin(models)]
    return r.pivot_table(index=["split", "query_id"], columns="model_id", values="correct", aggfunc="mean")[models]


def table(db, name: str, dataset: str, model_set: str | None = None) -> pd.DataFrame:
    out = Warehouse(db).read(name, {"dataset": dataset})
    return out if model_set is None else out[out["model_set"] == model_set].reset_index(drop=True)


def latest_metadata(instance, key: list[str], partition: str) -> dict:
    records_ = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(key), asset_partitions=[partition]), limit=1
    ).records
    return {k: v.value for k, v in records_[0].asset_materialization.metadata.items()}


def test_curve_matches_subset_formulas(materialized):
    _, db, _ = materialized
    p = p_hat("livecodebench", LCB_G10)
    curve = table(db, "oracle.curve", "livecodebench", "all").set_index("generations")
    assert list(curve.index) == list(range(1, 11))
    # G' = 1: one random generation per model, so E max = 1 - prod_l (1 - p_nl).
    assert curve.loc[1, "quality"] == pytest.approx((1 - (1 - p).prod(axis=1)).mean(), abs=1e-12)
    # G' = G: the plain naive oracle of eq. 5.
    assert curve.loc[10, "quality"] == pytest.approx(p.max(axis=1).mean(), abs=1e-12)
    assert curve["quality"].is_monotonic_decreasing and curve["cost"].isna().all()  # unpriced model in `all`
    assert set(curve["cost_basis"]) == {"none"}


def test_priced_set_cost_routes_to_cheapest_tied_model(materialized):
    _, db, _ = materialized
    p = p_hat("livecodebench", list(LCB_PRICED))
    price = pd.Series(LCB_PRICED)
    top = p.eq(p.max(axis=1), axis=0)
    expected_cost = top.mul(price).where(top).min(axis=1).mean()
    curve = table(db, "oracle.curve", "livecodebench", "priced").set_index("generations")
    assert curve.loc[10, "quality"] == pytest.approx(p.max(axis=1).mean(), abs=1e-12)
    assert curve.loc[10, "cost"] == pytest.approx(expected_cost, rel=1e-12)
    assert set(curve["cost_basis"]) == {"blended_price_usd_per_mtok"}

    r = records()
    g = r[r["dataset"] == "gsm8k"].pivot_table(index="query_id", columns="model_id", values=["correct", "cost_usd"])
    correct, cost = g["correct"], g["cost_usd"]
    best = correct.eq(correct.max(axis=1), axis=0)
    gsm = table(db, "oracle.curve", "gsm8k", "all")
    assert len(gsm) == 1 and gsm["cost_basis"].iloc[0] == "per_query_usd"
    assert gsm["quality"].iloc[0] == pytest.approx(correct.max(axis=1).mean(), abs=1e-12)
    assert gsm["cost"].iloc[0] == pytest.approx(cost.where(best).min(axis=1).mean(), rel=1e-12)


def test_single_models_costs_and_flags(materialized):
    _, db, _ = materialized
    single = table(db, "oracle.single_models", "livecodebench").set_index("model_id")
    r = records()
    acc = r[r["dataset"] == "livecodebench"].groupby("model_id")["correct"].mean()
    assert len(single) == 5
    np.testing.assert_allclose(single["quality"], acc.reindex(single.index), atol=1e-12)
    for model, price in {**LCB_PRICED, "gemini-1.5-pro": 4.375}.items():
        assert single.loc[model, "cost"] == pytest.approx(price)
        assert single.loc[model, "cost_basis"] == "blended_price_usd_per_mtok"
    assert np.isnan(single.loc["wizardcoder-33b-v1.1", "cost"])
    assert single.loc["wizardcoder-33b-v1.1", "cost_basis"] == "none"
    assert single.loc["gemini-1.5-pro", "generations"] == 1
    gsm = table(db, "oracle.single_models", "gsm8k").set_index("model_id")
    mean_cost = r[r["dataset"] == "gsm8k"].groupby("model_id")["cost_usd"].mean()
    np.testing.assert_allclose(gsm["cost"], mean_cost.reindex(gsm.index), rtol=1e-12)


def test_metadata_lists_dropped_and_unpriced_models(materialized):
    instance, _, _ = materialized
    meta = latest_metadata(instance, ["oracle", "summary"], "livecodebench")
    assert meta["unpriced_models"] == ["wizardcoder-33b-v1.1"]
    assert meta["short_g_models_dropped"] == ["gemini-1.5-pro"]
    assert meta["cost_basis"] == "blended_price_usd_per_mtok"
    assert meta["model_sets"] == {"all": 4, "priced": 3}
    assert meta["n_boot"] == 10


def test_summary_and_estimates_are_consistent(materialized):
    _, db, _ = materialized
    summary = table(db, "oracle.summary", "livecodebench").set_index("model_set")
    estimates = table(db, "oracle.estimates", "livecodebench")
    assert list(summary.index) == ["all", "priced"]
    for model_set, models in (("all", LCB_G10), ("priced", list(LCB_PRICED))):
        p = p_hat("livecodebench", models)
        row = summary.loc[model_set]
        est = estimates[estimates["model_set"] == model_set].set_index("estimator")
        assert est["recommended"].sum() == 1 and est.loc["bias_corrected", "recommended"]
        assert row["recommended_estimator"] == "bias_corrected"
        assert row["sota_model"] == p.mean().idxmax()
        assert row["sota_quality"] == pytest.approx(p.mean().max(), abs=1e-12)
        assert row["naive_quality"] == pytest.approx(p.max(axis=1).mean(), abs=1e-12)
        assert est.loc["naive", "quality"] == pytest.approx(row["naive_quality"], abs=1e-12)
        assert row["naive_quality"] >= row["sota_quality"]
        assert row["oracle_quality"] == pytest.approx(est.loc["bias_corrected", "quality"], abs=1e-12)
        err = 1 - row["sota_quality"]
        assert row["error_rate_reduction"] == pytest.approx((err - (1 - row["oracle_quality"])) / err, abs=1e-12)
        booted = ["naive", "bias_corrected"] if model_set == "all" else []  # intervals on the widest set only
        for name in booted:  # 10 draws: the interval brackets the estimate loosely
            assert est.loc[name, "quality_lo"] <= est.loc[name, "quality_hi"]
            assert est.loc[name, "quality_lo"] - 0.1 < est.loc[name, "quality"] < est.loc[name, "quality_hi"] + 0.1
        assert est.drop(index=booted)["quality_lo"].isna().all()
    assert np.isnan(summary.loc["all", "sota_cost"]) and summary.loc["priced", "sota_cost"] == pytest.approx(
        LCB_PRICED[summary.loc["priced", "sota_model"]])
    frontier = table(db, "oracle.frontier", "livecodebench")
    assert set(frontier["model_set"]) == {"priced"}  # cost-based outputs only for priced models
    front = frontier[frontier["estimator"] == "naive"].sort_values("cost")
    assert front["quality"].is_monotonic_increasing and front["quality"].max() == pytest.approx(summary.loc["priced", "naive_quality"])


def test_posthoc_any_of_all_generations(materialized):
    _, db, _ = materialized
    r = records()
    lcb = r[(r["dataset"] == "livecodebench") & r["model_id"].isin(LCB_G10)]
    solved = lcb.groupby("query_id")["correct"].max().mean()
    posthoc = table(db, "oracle.posthoc", "livecodebench", "all").set_index("k")
    curve = table(db, "oracle.curve", "livecodebench", "all").set_index("generations")
    assert posthoc.loc[10, "quality"] == pytest.approx(solved, abs=1e-12)
    assert posthoc.loc[1, "quality"] == pytest.approx(curve.loc[1, "quality"], abs=1e-12)
    priced = table(db, "oracle.posthoc", "livecodebench", "priced").set_index("k")
    assert priced.loc[3, "cost"] == pytest.approx(3 * sum(LCB_PRICED.values()))


def test_cli_prints_summary_and_estimators(materialized, monkeypatch, capsys):
    from pipelines.cli import main

    _, db, _ = materialized
    monkeypatch.setenv("COMPASS_DB", str(db))
    assert main(["oracle", "--dataset", "livecodebench"]) == 0
    out = capsys.readouterr().out
    summary = Warehouse(db).read("oracle.summary", {"dataset": "livecodebench"})
    assert f"{summary['oracle_quality'].iloc[0]:.6f}"[:6] in out and "blended_price_usd_per_mtok" in out
    rows = [line.split() for line in out.splitlines()]
    assert any(r[:2] == ["all", "bias_corrected"] and "True" in r for r in rows)  # recommended flag shown
    assert any(r[:2] == ["all", "naive"] and "False" in r for r in rows)
    for row in summary.itertuples():  # one line per model set: the oracle, cost saving and AIQ with their flags
        line = next(ln for ln in out.splitlines() if ln.startswith(f"{row.model_set}: oracle "))
        assert line.count(f"[{row.headline_flag}]") == (3 if row.headline_flag else 0)
    assert main(["oracle", "--dataset", "nope"]) == 2
    assert "no oracle results for dataset 'nope'" in capsys.readouterr().err


def test_cli_line_carries_the_headline_flag_to_cost_saving_and_aiq():
    """livecodebench's priced set (issue 28): a 95.6 % saving from an estimate below the split-sample bound must
    not print unflagged; a G = 1 range prints as a range."""
    from types import SimpleNamespace

    from pipelines.cli import oracle_headline_line

    flagged = SimpleNamespace(model_set="priced", headline_flag="below_split_sample", oracle_quality=0.61,
                              headline_lo=0.61, headline_hi=0.7, cost_saving_at_sota_quality=0.956, aiq=0.5,
                              cost_saving_flag="below_split_sample", aiq_flag="below_split_sample")
    line = oracle_headline_line(flagged)
    assert "95.6 % [below_split_sample]" in line and "AIQ 0.500 [below_split_sample]" in line
    g1 = SimpleNamespace(**{**vars(flagged), "headline_flag": "range", "oracle_quality": float("nan"),
                            "cost_saving_flag": "range", "aiq_flag": "range", "headline_ci_lo": 0.58,
                            "headline_ci_hi": 0.72})
    assert "oracle in [0.6100, 0.7000] (95 % CI [0.5800, 0.7200]) [range]" in oracle_headline_line(g1)
    perfect = SimpleNamespace(**{**vars(g1), "headline_lo": 1.0, "headline_hi": 1.0, "headline_ci_lo": 0.9877,
                                 "headline_ci_hi": 1.0, "headline_ci_flag": "all_correct"})  # issue 47
    assert "(95 % CI [0.9877, 1.000] [all_correct]) [range]" in oracle_headline_line(perfect)


def test_report_page_rows_carry_the_headline_flag_to_cost_saving_and_aiq():
    """The oracle report page's headline table: the flag stands beside the oracle, the cost saving and the AIQ
    (livecodebench's priced set, issue 28); a missing value gets no flag."""
    import pandas as pd

    from pipelines.report.pages.oracle import headline_rows

    summary = pd.DataFrame([{"dataset": "livecodebench", "model_set": "priced", "sota_model": "m",
                             "sota_quality": 0.435, "oracle_quality": 0.56, "headline_lo": 0.56, "headline_hi": 0.574,
                             "headline_ci_lo": 0.4, "headline_ci_hi": 0.6, "headline_flag": "below_split_sample",
                             "cost_saving_at_sota_quality": 0.956, "aiq": 0.5, "cost_saving_flag": "below_split_sample",
                             "aiq_flag": "below_split_sample"},
                            {"dataset": "mmlu", "model_set": "all", "sota_model": "m", "sota_quality": 0.846,
                             "oracle_quality": float("nan"), "headline_lo": 0.846, "headline_hi": 0.971,
                             "headline_ci_lo": 0.82, "headline_ci_hi": 0.98, "headline_flag": "range",
                             "cost_saving_at_sota_quality": float("nan"), "aiq": 0.4, "cost_saving_flag": "range",
                             "aiq_flag": "range"}])
    rows = headline_rows(summary).set_index("dataset")
    lcb = rows.loc["livecodebench"]
    assert lcb["oracle"].endswith("[below_split_sample]")
    assert lcb["cost saving at SOTA quality"].endswith("[below_split_sample]")
    assert lcb["AIQ"].endswith("[below_split_sample]")
    assert rows.loc["mmlu", "AIQ"].endswith("[range]") and "[" not in rows.loc["mmlu", "cost saving at SOTA quality"]


def test_headline_check_runs_on_every_partition_and_passes_on_the_published_rows(materialized):
    """The asset wires `headline_consistent` to the published summary and the split-sample estimates. Mutation:
    the check fed `summary["naive_quality"]` as the split-sample column (livecodebench's unflagged estimate is then
    below that bound, so its flag "" is inconsistent): red."""
    from assets.oracle import _ANALYSIS_KEYS, HEADLINE_CHECK

    instance, db, _ = materialized
    check = dg.AssetCheckKey(_ANALYSIS_KEYS["summary"], HEADLINE_CHECK)
    history = instance.event_log_storage.get_asset_check_execution_history(check, limit=10)
    evaluations = {r.event.dagster_event.event_specific_data.partition: r.event.dagster_event.event_specific_data
                   for r in history}
    assert {"livecodebench", "gsm8k"} <= set(evaluations)
    for evaluation in evaluations.values():
        assert evaluation.passed and evaluation.metadata["inconsistent_model_sets"].value == []
    flags = {d: set(table(db, "oracle.summary", d)["headline_flag"]) for d in ("livecodebench", "gsm8k")}
    assert flags == {"livecodebench": {""}, "gsm8k": {"range"}}  # a point headline and a G = 1 range are checked
