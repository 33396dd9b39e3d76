"""Utility robustness (EC Tables 11-16) and held-out-model validation on outcome rows with a known truth."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import roc_auc_score

from compass.mlcompass.case_study import UtilitySpec
from compass.mlcompass.case_utilities import outcome_labels
from compass.mlcompass.utility_robustness import leave_models_out, mean_rows, model_folds, robustness_table

THRESHOLD = UtilitySpec(source="query_records", label="threshold", threshold=0.5, n_repeats=3, test_size=0.3,
                        min_rows_per_group=100)


def outcome_data(logit, n_models=30, rows_per_model=60, groups=("a", "b"), seed=0):
    """Outcome rows [model_id, group, context_group, outcome] with P(success) = sigmoid(logit(x, group)) and
    the true probability of every row (column p); measures of every model in [0, 1]^2."""
    rng = np.random.default_rng(seed)
    ids = [f"m{i:02d}" for i in range(n_models)]
    measures = pd.DataFrame(rng.uniform(size=(n_models, 2)), index=pd.Index(ids, name="model_id"), columns=["C1", "C2"])
    frames = []
    for g in groups:
        model = np.repeat(ids, rows_per_model)
        x = measures.loc[model].to_numpy()
        p = 1 / (1 + np.exp(-logit(x, g)))
        frames.append(pd.DataFrame({"model_id": model, "group": np.tile(np.arange(rows_per_model), n_models),
                                    "context_group": g, "outcome": (rng.random(len(p)) < p).astype(float), "p": p}))
    return pd.concat(frames, ignore_index=True), measures


def test_context_columns_recover_a_group_intercept_that_pooling_misses():
    # same slope, group-specific intercept: pooled_context is the true model, pooled is not
    rows, measures = outcome_data(lambda x, g: 4 * x[:, 0] - 2 + (2.0 if g == "a" else -2.0), rows_per_model=80)
    table = robustness_table(rows, measures, THRESHOLD, estimators=["logistic"]).set_index(["variant", "context_group"])
    bayes = roc_auc_score(rows["outcome"], rows["p"])
    assert table.loc[("pooled_context", "all"), "test_auc"] == pytest.approx(bayes, abs=0.02)
    assert table.loc[("pooled", "all"), "test_auc"] < bayes - 0.05
    for g in ("a", "b"):
        part = rows[rows["context_group"] == g]
        assert table.loc[("grouped", g), "test_auc"] == pytest.approx(roc_auc_score(part["outcome"], part["p"]), abs=0.03)
        assert table.loc[("grouped", g), "n_train"] + table.loc[("grouped", g), "n_test"] == len(part)
    assert table.loc[("pooled", "all"), "n_train"] + table.loc[("pooled", "all"), "n_test"] == len(rows)
    assert table.loc[("pooled_context", "all"), "beta_C1"] == pytest.approx(1.0, abs=0.1)  # weights over measures only


def test_grouped_weights_per_estimator_and_mean_rows():
    # group a values C1, group b values C2 (Table 16's per-group weights)
    rows, measures = outcome_data(lambda x, g: 5 * x[:, 0 if g == "a" else 1] - 2.5, seed=1)
    table = robustness_table(rows, measures, THRESHOLD)
    assert table[["variant", "estimator"]].drop_duplicates().values.tolist() == [
        [v, e] for e in ("logistic", "lightgbm") for v in ("pooled", "pooled_context", "grouped")]
    grouped = table[table["variant"] == "grouped"].set_index(["estimator", "context_group"])
    for estimator in ("logistic", "lightgbm"):
        assert grouped.loc[(estimator, "a"), "beta_C1"] > 0.8 and grouped.loc[(estimator, "b"), "beta_C2"] > 0.8
    single = robustness_table(rows[rows["context_group"] == "a"], measures, THRESHOLD, estimators=["logistic"], n_repeats=1)
    assert single["variant"].tolist() == ["pooled", "grouped"]  # no context columns to add for a single group


def test_mean_rows_against_hand_computed_means_and_the_papers_population_sd():
    # EC Tables 13-16's MEAN row: the mean over context groups, and the sd across them with ddof 0 (the paper's)
    table = pd.DataFrame({"variant": "grouped", "estimator": ["logistic"] * 3 + ["lightgbm"] * 2,
                          "context_group": ["a", "b", "c", "a", "b"], "n_train": [100, 200, 300, 10, 30],
                          "n_test": [40, 50, 60, 4, 6], "train_auc": [0.7, 0.8, 0.9, 0.6, 0.8],
                          "test_auc": [0.60, 0.66, 0.72, 0.50, 0.70]})
    means = mean_rows(table).set_index("estimator")
    assert means.loc["logistic", ["n_groups", "n_train", "n_test"]].tolist() == [3, 200, 50]
    assert means.loc["logistic", "test_auc"] == pytest.approx(0.66)
    assert means.loc["logistic", "test_auc_sd"] == pytest.approx(np.sqrt(0.0024))  # ddof 1 would give 0.06
    assert means.loc["lightgbm", "train_auc"] == pytest.approx(0.7) and means.loc["lightgbm", "test_auc_sd"] == pytest.approx(0.1)
    assert (means["context_group"] == "MEAN").all()


def test_model_folds_partition_the_models():
    models = [f"m{i}" for i in range(7)]
    assert model_folds(models[::-1], None) == [[m] for m in models]
    folds = model_folds(models, 3, seed=1)
    assert sorted(m for f in folds for m in f) == models and sorted(len(f) for f in folds) == [2, 2, 3]
    assert folds == model_folds(models, 3, seed=1) and folds != model_folds(models, 3, seed=2)
    with pytest.raises(ValueError, match="n_folds must be in 2..7"):
        model_folds(models, 8)


def test_held_out_models_score_like_the_truth_when_the_utility_transfers():
    rows, measures = outcome_data(lambda x, g: 3 * x[:, 0] + 2 * x[:, 1] - 2.5, n_models=20, rows_per_model=150,
                                  groups=("a",), seed=2)
    result = leave_models_out(rows, measures, THRESHOLD)
    summary = result.summary.set_index("context_group").loc["a"]
    assert summary["n_models"] == summary["n_folds"] == 20 and summary["n_rows"] == len(rows)
    assert summary["held_out_auc"] == pytest.approx(roc_auc_score(rows["outcome"], rows["p"]), abs=0.01)
    # the held-out utility orders the models it never saw as their observed rates do
    rates = rows.groupby("model_id")["p"].mean()
    assert summary["held_out_spearman"] > 0.85 and summary["held_out_spearman"] == pytest.approx(
        spearmanr(rates, rows.groupby("model_id")["outcome"].mean())[0], abs=0.1)
    folds = result.folds
    assert folds["auc"].isna().all()  # one held-out model, one x, one score
    np.testing.assert_allclose(folds["positive_rate"], rows.groupby("model_id")["outcome"].mean().to_numpy())
    k = leave_models_out(rows, measures, THRESHOLD, n_folds=4).folds
    assert (k["n_models"] == 5).all() and k["auc"].notna().all() and (k["n_rows"] + k["n_train_rows"] == len(rows)).all()


def test_a_memorizing_utility_passes_a_row_split_but_not_held_out_models():
    # success rates per model unrelated to x: nothing transfers to a new model
    rng = np.random.default_rng(3)
    rate = dict(zip([f"m{i:02d}" for i in range(40)], rng.uniform(0.1, 0.9, 40), strict=True))
    rows, measures = outcome_data(lambda x, g: np.zeros(len(x)), n_models=40, rows_per_model=100, groups=("a",), seed=3)
    rows["outcome"] = (rng.random(len(rows)) < rows["model_id"].map(rate)).astype(float)
    spec = UtilitySpec(**{**THRESHOLD.__dict__, "estimator": "lightgbm", "monotone": False})
    row_split = robustness_table(rows, measures, spec, estimators=["lightgbm"]).set_index("variant")
    held_out = leave_models_out(rows, measures, spec).summary.iloc[0]
    assert row_split.loc["grouped", "test_auc"] > 0.7
    assert row_split.loc["grouped", "test_auc"] == pytest.approx(held_out["model_rate_auc"], abs=0.03)
    assert held_out["held_out_auc"] < 0.6
    assert abs(held_out["held_out_spearman"]) < 0.4  # it cannot order models it never saw


def test_within_prompt_labels_are_fixed_on_all_models_before_holding_any_out():
    rows, measures = outcome_data(lambda x, g: 3 * x[:, 0] - 1.5, n_models=6, rows_per_model=200, groups=("a",), seed=4)
    rows["outcome"] = rows["p"] + np.random.default_rng(4).normal(0, 0.2, len(rows))  # a rating, as PRISM's
    spec = UtilitySpec(**{**THRESHOLD.__dict__, "label": "within_group_mean"})
    folds = leave_models_out(rows, measures, spec).folds.set_index("held_out")
    labels = rows.assign(y=outcome_labels(rows, spec))
    on_all = labels.groupby("model_id")["y"].mean()
    np.testing.assert_allclose(folds["positive_rate"], on_all.loc[folds.index])
    # y > mean(all models) iff y > mean(other models): the held-out rows' labels are the same either way ...
    held = on_all.index[0]
    others = rows[rows["model_id"] != held]
    relabelled = rows["outcome"] > rows["group"].map(others.groupby("group")["outcome"].mean())
    assert relabelled[rows["model_id"] == held].mean() == on_all.loc[held]
    # ... while the training models' labels, fixed on all models, also compare them with the held-out model
    retrained = outcome_labels(others, spec)
    assert (retrained != labels.loc[others.index, "y"]).mean() > 0.02
