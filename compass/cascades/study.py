"""The Chapter 2-4 study design on real records (Zellinger thesis, seed 001): what the `cascade/*` assets publish.

Preparation (`prepare_records` of a long frame; the warehouse's records are
prepared as (query x model) matrices, `compass.cascades.wide`, with the same
rules): a dataset whose records carry no confidence at all (livecodebench,
mmlu_pro) gives None, so its assets skip explicitly. Any other problem (one
model, NaN or constant confidences, a model without train rows) is a
`ValueError` naming the dataset. Calibration (Table 2.2), the marginals
(Tables 2.5-2.6), the copulas (Tables 2.3-2.4), the curves and the protocol
study (Tables 2.7-2.8) take either form; economics, the two-model cascades
and Fail Fast take the long frame (`WideRecords.long`).

Chains (`chains_for`): the thesis' two chains (Llama 1B < 3B < 8B < 70B < 405B;
the mixed chain gpt-4o-mini < qwen2.5-coder-32b < qwen2.5-72b < gpt-4o)
restricted to the models present; models in neither chain form one chain
ordered by mean train cost.

Study size (`StudySettings`): LIGHT evaluates the prefix chains k = 2..5 of the
Llama chain plus the full mixed chain, at the full n_train and at n <= 30 (one
seed), grid resolution 1/20 and a short BO. HEAVY: every size-ordered subset
(k >= 2) of every chain (26 Llama cascades, Table 2.7), resolution 1/40,
thesis-like BO, five low-sample seeds, more bootstrap draws, all model
pairs in the copula table (Table 2.4), and Tables 2.7 / 2.8 under every protocol
variant (`compass.cascades.protocols`; light: the authors' protocol only).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from compass.cascades.baselines import bayes_opt_curve, default_lambdas, grid_search_curve, threshold_columns
from compass.cascades.calibration import calibrate, task_kind_for
from compass.cascades.copulas import copula_table, markov_test
from compass.cascades.curves import auc_comparisons, k_group_summary, pareto_mask, size_ordered_subcascades
from compass.cascades.data import model_ids, pivot, validate_records, validate_wide
from compass.cascades.economics import (
    cer_curve,
    critical_price_of_error,
    optimal_model_map,
    reward_grid,
    summarize_systems,
    tuned_cascade_rewards,
)
from compass.cascades.evaluate import evaluate_thresholds, low_sample_train_indices
from compass.cascades.failfast import failfast_table, join_failfast_records
from compass.cascades.failfast_synthetic import TABLE_4_1, FailFastSyntheticConfig, generate_failfast_synthetic
from compass.cascades.marginals import MixedBetaMarginal, marginals_from_params, split_values
from compass.cascades.markov_model import CascadeModel, fit_cascade_model
from compass.cascades.rational_tuning import rational_tuning
from compass.cascades.wide import WideRecords

CHAINS: dict[str, tuple[str, ...]] = {
    "llama": ("llama-3.2-1b-instruct", "llama-3.2-3b-instruct", "llama-3.1-8b-instruct",
              "llama-3.1-70b-instruct", "llama-3.1-405b-instruct"),
    "mixed": ("gpt-4o-mini", "qwen2.5-coder-32b-instruct", "qwen2.5-72b-instruct", "gpt-4o"),
}
PRIMARY_CHAIN = "llama"  # the chain whose subsets form the Table 2.7 study
LOW_SAMPLE_N = 30  # Table 2.8: n <= 30 training examples
# Chapter 3 price grid (thesis §3.3, Fig. 3.4): lambda_E one value per decade $1e-4..$1e4; lambda_L in $/min -> $/s.
LAMBDA_ERRORS = np.logspace(-4, 4, 9)
LAMBDA_LATENCIES = np.array([0.0, 0.1, 0.5, 1.0, 5.0, 10.0]) / 60.0
FAILFAST_UTILIZATIONS = (0.5, 0.6, 0.75)


@dataclass(frozen=True)
class StudySettings:
    """Size of the Chapter 2 study (module docstring): LIGHT or HEAVY."""

    name: str
    all_subsets: bool  # every size-ordered subset of a chain (Table 2.7), else prefix chains + full chains
    resolution: float  # grid-search probability-mass step
    bo_lambdas: int
    bo_min_iter: int
    bo_max_iter: int
    bo_n_random: int
    bo_n_smart: int
    low_sample_seeds: tuple[int, ...]
    gof_boot: int  # marginal sqrt(CvM) bootstrap draws (Table 2.5)
    copula_boot: int  # copula Kendall-CvM bootstrap draws (Table 2.4)
    copula_all_pairs: bool  # all i < j pairs of a chain (thesis: 10 Llama, 6 mixed), else consecutive
    protocols: tuple[str, ...]  # Table 2.7 protocol variants (`compass.cascades.protocols.protocols_named`)


# Light: copula CvM statistic without bootstrap p-values (copula_boot=0 -> p NaN) and 5 marginal
# bootstrap draws keep the default run inside its budget; docs/results.md uses larger draws. The protocol
# study runs the authors' protocol only (26 Llama cascades at 1/40, full set + one n <= 30 seed: ~6 s CPU per
# dataset); heavy runs all 8 variants.
LIGHT = StudySettings("light", False, 1 / 20, 4, 2, 2, 100, 1, (0,), 5, 0, False, ("authors",))
HEAVY = StudySettings("heavy", True, 1 / 40, 16, 10, 30, 2000, 2, (0, 1, 2, 3, 4), 100, 200, True, ("all",))
STUDIES = {s.name: s for s in (LIGHT, HEAVY)}


# ---------------------------------------------------------------- preparation


def prepare_records(records: pd.DataFrame, dataset: str) -> pd.DataFrame | None:
    """Canonical cascade records of one dataset, or None when no record carries a confidence.

    Keeps generation 0 (the cascade data are single-sample) and validates with
    `compass.cascades.data.validate_records`; every error names the dataset.
    """
    if records.empty:
        raise ValueError(f"dataset {dataset!r}: no rows in raw.query_records")
    if "confidence" not in records.columns or records["confidence"].isna().all():
        return None
    if "generation" in records.columns:
        generation = records["generation"].fillna(0)
        first = (generation == generation.min()).to_numpy()
        records = records if first.all() else records[first]
    # Columns replaced on a shallow copy and a fresh index: no copy of the other columns (10 M rows: ~0.9 GB each).
    records = records.copy(deep=False)
    records["split"] = records["split"].fillna("train")
    records["query_id"] = records["query_id"].astype(str)
    records["correct"] = records["correct"].astype(float)
    records.index = pd.RangeIndex(len(records))
    try:
        validate_records(records)
    except ValueError as exc:
        raise ValueError(f"dataset {dataset!r}: {exc}") from None
    return records


def lacks(records: pd.DataFrame | WideRecords, columns: list[str]) -> bool:
    """Some record has no value in one of `columns` (an absent column counts as empty)."""
    if isinstance(records, WideRecords):
        return any(c not in records.values or bool((np.isnan(records.values[c]) & records.present).any())
                   for c in columns)
    return any(c not in records.columns or records[c].isna().any() for c in columns)


def distinct_values(records: pd.DataFrame | WideRecords, model: str, column: str) -> int:
    """How many distinct values of `column` `model`'s records hold (NaN aside)."""
    if isinstance(records, WideRecords):
        return int(pd.Series(records.model_values(column)[model]).nunique())
    return int(records.loc[records["model_id"] == model, column].nunique())


def has_test(records: pd.DataFrame | WideRecords) -> bool:
    if isinstance(records, WideRecords):
        return records.has_split("test")
    return bool((records["split"] == "test").any())


def calibrated_records(records: pd.DataFrame | WideRecords, dataset: str
                       ) -> tuple[pd.DataFrame | WideRecords, pd.DataFrame]:
    """`calibrate` (eqs. 2.16-2.17 + logistic) with the dataset's task kind; errors name the dataset."""
    try:
        return calibrate(records, task_kind_for(dataset))
    except ValueError as exc:
        raise ValueError(f"dataset {dataset!r}: {exc}") from None


def chains_for(records: pd.DataFrame | WideRecords) -> dict[str, list[str]]:
    """The thesis chains restricted to the present models (>= 2 each); the rest ordered by mean train cost."""
    present = set(model_ids(records))
    chains = {name: [m for m in chain if m in present] for name, chain in CHAINS.items()}
    chains = {name: chain for name, chain in chains.items() if len(chain) >= 2}
    rest = present - {m for c in chains.values() for m in c}
    if len(rest) >= 2:
        if "cost_usd" not in records.columns:
            cost = pd.Series(dtype=float)
        elif isinstance(records, WideRecords):
            cost = records.model_means("cost_usd", "train")
        else:
            cost = records[records["split"] == "train"].groupby("model_id")["cost_usd"].mean()
        chains["by_cost"] = sorted(rest, key=lambda m: (cost.get(m, np.inf), m))
    return chains


def train_queries(records: pd.DataFrame | WideRecords, models: list[str]) -> int:
    """The number of train queries some model of `models` answers (a training set's n)."""
    if isinstance(records, WideRecords):
        cols = [records.models.index(m) for m in models if m in records.models]
        return int(records.present[records.split_rows("train")][:, cols].any(axis=1).sum())
    train = records[records["split"] == "train"]
    return int(train[train["model_id"].isin(models)]["query_id"].nunique())


def study_cascades(chains: dict[str, list[str]], settings: StudySettings) -> list[tuple[str, tuple[str, ...]]]:
    """(chain name, cascade) pairs: Table 2.7 subsets (heavy) or prefix chains + full chains (light)."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for name, chain in chains.items():
        if settings.all_subsets:
            out += [(name, c) for c in size_ordered_subcascades(chain)]
        elif name == PRIMARY_CHAIN:
            out += [(name, tuple(chain[:k])) for k in range(2, len(chain) + 1)]
        else:
            out.append((name, tuple(chain)))
    return out


# ---------------------------------------------------------------- calibration (Table 2.2)


def calibration_table(records: pd.DataFrame | WideRecords, dataset: str) -> pd.DataFrame:
    """cascade.calibration rows: model_id, a, b, ece, ece_no_transform, ece_split, n_train, accuracy, ..."""
    cal, params = calibrated_records(records, dataset)
    correct = split_values(cal, "correct", params["ece_split"].iloc[0])  # 0/1: exact sums, any order
    params["accuracy"] = params["model_id"].map({m: v.mean() for m, v in correct.items() if v.size})
    params["task_kind"] = task_kind_for(dataset)
    return params


# ---------------------------------------------------------------- marginals (eq. 2.7, Table 2.5)


def checked_marginals(params: pd.DataFrame, dataset: str, models: list[str]) -> dict[str, MixedBetaMarginal]:
    """The fitted marginals rebuilt from their published parameters (no EM refit); a clear error when
    `params` holds no rows, or other models than `models`, for the dataset."""
    if params.empty:
        raise ValueError(f"dataset {dataset!r}: no rows in cascade.marginals; materialize cascade/marginals first")
    marginals = marginals_from_params(params)
    if sorted(marginals) != sorted(models):
        raise ValueError(f"dataset {dataset!r}: cascade.marginals holds models {sorted(marginals)}, the records "
                         f"{sorted(models)}; re-materialize cascade/marginals")
    return marginals


# ---------------------------------------------------------------- copulas (eqs. 2.9-2.10, Tables 2.3, 2.4)


def tau_table(cal: pd.DataFrame | WideRecords, split: str) -> pd.DataFrame:
    """Kendall tau of calibrated confidences for every model pair on `split` (the tau heatmap)."""
    phi = pivot(cal, "p_correct", split=split)
    models = list(phi.columns)
    rows = [{"model_a": a, "model_b": b, "split": split,
             "tau": float(stats.kendalltau(phi[a], phi[b]).statistic) if a != b else 1.0}
            for a in models for b in models]
    return pd.DataFrame(rows)


def copula_pairs(chains: dict[str, list[str]], all_pairs: bool) -> list[tuple[str, str, str]]:
    """(chain, a, b): consecutive pairs of each chain, or all i < j pairs (thesis Table 2.4)."""
    out = []
    for name, chain in chains.items():
        pairs = [(chain[i], chain[j]) for i in range(len(chain)) for j in range(i + 1, len(chain))] if all_pairs \
            else list(zip(chain[:-1], chain[1:]))
        out += [(name, a, b) for a, b in pairs]
    return out


MARKOV_TEST_COLUMNS = ["model_id", "parent", "ancestor", "coef_parent", "coef_ancestor", "p_parent", "p_ancestor",
                       "log10_p_parent", "log10_p_ancestor", "chain", "split"]


def copula_tables(records: pd.DataFrame | WideRecords, cal: pd.DataFrame | WideRecords,
                  marginals: dict[str, MixedBetaMarginal], settings: StudySettings) -> dict[str, pd.DataFrame]:
    """What cascade/copulas publishes: per chain pair (`copula_pairs`) the copula fits on train tested on test when
    there is one (Table 2.4, `copula_table`), the Markov test of each chain of >= 3 models (Table 2.3) on test (else
    train) and the Kendall tau of every train pair (`tau_table`). `cal` is `calibrated_records(records)[0]`."""
    chains = chains_for(records)
    phi = pivot(cal, "p_correct", split="train")
    phi_test = pivot(cal, "p_correct", split="test") if has_test(records) else None
    copulas = pd.concat([copula_table(phi, marginals, [(a, b)], n_boot=settings.copula_boot, phi_test=phi_test)
                         .assign(chain=chain) for chain, a, b in copula_pairs(chains, settings.copula_all_pairs)],
                        ignore_index=True)
    split = "test" if has_test(records) else "train"
    phi_m, corr_m = pivot(cal, "p_correct", split=split), pivot(cal, "correct", split=split)
    markov = [markov_test(phi_m, corr_m, chain).assign(chain=name, split=split)
              for name, chain in chains.items() if len(chain) >= 3]
    markov_frame = pd.concat(markov, ignore_index=True) if markov else pd.DataFrame(columns=MARKOV_TEST_COLUMNS)
    return {"cascade.copulas": copulas, "cascade.markov_test": markov_frame, "cascade.tau": tau_table(cal, "train")}


# ---------------------------------------------------------------- curves (Sec. 2.4, Tables 2.7-2.8)

RT_COPULAS = {"rt": "gumbel", "rt_aic": "aic"}  # Rational Tuning with the thesis' Gumbel / the AIC-best family


@dataclass(frozen=True)
class CascadeData:
    """Aligned (query x model) arrays of one cascade: calibrated P(correct), labels, per-query cost."""

    p: np.ndarray
    y: np.ndarray
    c: np.ndarray

    @classmethod
    def of(cls, cal: pd.DataFrame | WideRecords, cascade: tuple[str, ...], split: str) -> "CascadeData":
        p = pivot(cal, "p_correct", split=split, models=cascade)
        frames = [pivot(cal, col, split=split, models=cascade).loc[p.index] for col in ("correct", "cost_usd")]
        return cls(p.to_numpy(float), frames[0].to_numpy(float), frames[1].to_numpy(float))

    def rows(self, idx: np.ndarray) -> "CascadeData":
        return CascadeData(self.p[idx], self.y[idx], self.c[idx])


def method_thresholds(models: dict[str, CascadeModel], cascade: tuple[str, ...], train: CascadeData,
                      settings: StudySettings, seed: int = 0) -> dict[str, pd.DataFrame]:
    """Tuned thresholds per method (columns phi_1..phi_{k-1}; RT frames also lambda, infill):
    rt / rt_aic = Rational Tuning of each fitted model in `models` (method -> Markov-copula model
    covering the cascade), grid = grid search at `settings.resolution`, bo = Bayesian optimization."""
    out = {method: rational_tuning(model, cascade=cascade) for method, model in models.items()}
    out["grid"] = grid_search_curve(train.p, train.y, train.c, settings.resolution)
    out["bo"] = bayes_opt_curve(train.p, train.y, train.c, lambdas=default_lambdas(train.c, settings.bo_lambdas),
                                min_iter=settings.bo_min_iter, max_iter=settings.bo_max_iter,
                                n_random=settings.bo_n_random, n_smart=settings.bo_n_smart, random_state=seed)
    return out


def copula_choice_change(gumbel: pd.DataFrame, aic: pd.DataFrame, k: int) -> float:
    """Largest |threshold change| between RT with the Gumbel and with the AIC-selected copula, over the
    cost sensitivities both sweeps solved (non-infill points; 0.0 means identical thresholds)."""
    cols = threshold_columns(k)
    a, b = (f.loc[~f["infill"], ["lambda", *cols]] for f in (gumbel, aic))
    both = a.merge(b, on="lambda", suffixes=("_g", "_a"))
    return float(np.max(np.abs(both[[c + "_g" for c in cols]].to_numpy() - both[[c + "_a" for c in cols]].to_numpy())))


def test_curve(test: CascadeData, thresholds: np.ndarray, mean_cost: bool = False) -> pd.DataFrame:
    """Realized test (error, cost) of each threshold vector (eq. 2.1), Pareto flag on test, sorted by cost.
    ``mean_cost``: charge each model its mean test cost instead of each query's own (the authors' protocol)."""
    error, cost = evaluate_thresholds(test.p, test.y, test.c, thresholds, mean_cost=mean_cost)
    frame = pd.DataFrame({"cost": cost, "error": error,
                          "thresholds": [",".join(f"{v:.6g}" for v in t) for t in thresholds]})
    frame["pareto"] = pareto_mask(cost, error)
    return frame.sort_values(["cost", "error"], ignore_index=True).rename_axis("point").reset_index()


def low_sample_ids(cal: pd.DataFrame | WideRecords, models: list[str], seed: int) -> pd.Index:
    """One n <= 30 training subsample per benchmark and seed (Sec. 2.4 "Performance in the Low-Sample Limit"):
    the balanced draw of `low_sample_train_indices` over `models` (the study passes its longest chain, the
    five Llama models of Table 2.8: 3 rounds, 20-30 rows after collisions), shared by all the dataset's cascades."""
    train_y = pivot(cal, "correct", split="train", models=models)
    return train_y.index[low_sample_train_indices(train_y.to_numpy(float), LOW_SAMPLE_N, seed=seed)]


def training_samples(records: pd.DataFrame | WideRecords, cal: pd.DataFrame | WideRecords, dataset: str,
                     models: list[str], seeds: tuple[int, ...]
                     ) -> tuple[list[tuple[str, pd.DataFrame | WideRecords, int]], dict[str, str]]:
    """The training sets of Tables 2.7 and 2.8: ("full", `cal`, 0), then per seed ("low_seed<s>", the records
    recalibrated on that seed's n <= 30 subsample of `models` (`low_sample_ids`) with test rows unchanged, s).
    Everything learned from data is refitted on the subsample alone, so the calibrators never see the full
    training set (the leak of issue 12). A seed whose subsample cannot be calibrated is left out and listed in
    the second value, sample -> reason."""
    samples: list[tuple[str, pd.DataFrame | WideRecords, int]] = [("full", cal, 0)]
    skipped = {}
    for seed in seeds:
        ids = low_sample_ids(cal, models, seed)
        try:
            if isinstance(records, WideRecords):  # what `calibrate` checks of a long frame (`validate_records`)
                sub = records.keep_rows(~records.split_rows("train") | np.isin(records.query_ids, ids.to_numpy(str)))
                validate_wide(sub, dataset)
            else:
                sub = records[(records["split"] != "train") | records["query_id"].isin(ids)]
            samples.append((f"low_seed{seed}", calibrated_records(sub, dataset)[0], seed))
        except ValueError as exc:
            skipped[f"low_seed{seed}"] = str(exc)
    return samples, skipped


def cascade_curves(records: pd.DataFrame | WideRecords, cal: pd.DataFrame | WideRecords, dataset: str, chains: dict[str, list[str]],
                   chain_cascades: list[tuple[str, tuple[str, ...]]],
                   settings: StudySettings) -> tuple[pd.DataFrame, dict[str, object]]:
    """cascade.curves rows for every cascade, method and training size (full train and n <= 30 seeds).

    Columns: cascade, chain, k, method, n_train, sample (full | low_seed<s>), point, cost, error,
    thresholds, pareto. Thresholds are tuned on train and evaluated on test. In the low-sample limit
    (Table 2.8) everything learned from data is refitted on the subsample alone: the calibrators
    (eqs. 2.16-2.17 + logistic), the marginals and the copulas; test confidences are recalibrated with
    the subsample's calibrators. A seed whose subsample cannot be calibrated is skipped and listed.
    `cal` is `calibrated_records(records, dataset)[0]` (the caller reuses it).
    """
    samples, skipped = training_samples(records, cal, dataset, max(chains.values(), key=len),
                                        settings.low_sample_seeds)
    parts, changed = [], {}
    # A chain's model covers every cascade of its models (marginals and pairs are fitted pairwise); the copula
    # families share the chain's marginals (one EM per model).
    chain_models = {}
    for chain in {c for c, _ in chain_cascades}:
        marginals = None
        for method, copula in RT_COPULAS.items():
            chain_models[(chain, method)] = fit_cascade_model(cal, chains[chain], copula=copula,
                                                              marginals=marginals)
            marginals = chain_models[(chain, method)].marginals
    for chain, cascade in chain_cascades:
        for sample, sample_cal, seed in samples:
            train, test = CascadeData.of(sample_cal, cascade, "train"), CascadeData.of(sample_cal, cascade, "test")
            if sample == "full":
                models = {method: chain_models[(chain, method)] for method in RT_COPULAS}
            else:  # low-sample limit: the thesis' Gumbel model on the subsample's own calibration
                models = {"rt": fit_cascade_model(sample_cal, cascade, copula=RT_COPULAS["rt"])}
            tuned = method_thresholds(models, cascade, train, settings, seed)
            if "rt_aic" in tuned:
                changed[">".join(cascade)] = copula_choice_change(tuned["rt"], tuned["rt_aic"], len(cascade))
            for method, frame in tuned.items():
                t = frame[threshold_columns(len(cascade))].to_numpy(float)
                parts.append(test_curve(test, t).assign(cascade=">".join(cascade), chain=chain, k=len(cascade),
                                                        method=method, n_train=len(train.y), sample=sample))
    curves = pd.concat(parts, ignore_index=True)
    cols = ["cascade", "chain", "k", "method", "n_train", "sample", "point", "cost", "error", "thresholds", "pareto"]
    return curves[cols], {"rt_aic_max_abs_threshold_change": changed, "low_sample_skipped": skipped}


def markov_error(model: CascadeModel, cascade: tuple[str, ...], data: CascadeData,
                 thresholds: np.ndarray) -> pd.DataFrame:
    """The Markov-copula model's own error (Sec. 2.2's Markov assumption, Table 2.3): at each threshold
    vector, the model's P(correct) and E[cost] (Algorithm 1) next to the plug-in values, the cascade run
    on `data` itself. Columns: point, pred_accuracy, plugin_accuracy, accuracy_gap_points, pred_cost,
    plugin_cost, cost_gap_pct (model minus plug-in; + over-predicts), plugin_confidence (the mean calibrated
    confidence of the answering models on `data`) and calibration_gap_points = 100 (plugin_confidence -
    plugin_accuracy): the part of accuracy_gap_points a perfect model of the confidences would still make
    because the calibrators miss on `data` (zero in expectation on the rows they were fitted on)."""
    pred_acc, pred_cost = model.evaluate(cascade, thresholds)
    error, cost = evaluate_thresholds(data.p, data.y, data.c, thresholds)
    confidence = 1 - evaluate_thresholds(data.p, data.p, data.c, thresholds)[0]
    return pd.DataFrame({"point": np.arange(len(thresholds)), "pred_accuracy": pred_acc, "plugin_accuracy": 1 - error,
                         "accuracy_gap_points": 100 * (pred_acc - (1 - error)), "pred_cost": pred_cost,
                         "plugin_cost": cost, "cost_gap_pct": 100 * (pred_cost / cost - 1),
                         "plugin_confidence": confidence,
                         "calibration_gap_points": 100 * (confidence - (1 - error))})


def markov_error_table(cal: pd.DataFrame | WideRecords, chain: tuple[str, ...]) -> pd.DataFrame:
    """`markov_error` at Rational Tuning's thresholds for every prefix k = 2..K of `chain`, with `split`:
    'test' (out of sample: the model and the thresholds are fitted on train, the cascade runs on test; first
    when there is a test split) and 'train' (the rows the model was fitted on, so the gap there is the model's
    structure, not sampling). Per point, with k and split."""
    model = fit_cascade_model(cal, list(chain), copula=RT_COPULAS["rt"])
    splits = ["test", "train"] if has_test(cal) else ["train"]
    parts = []
    for k in range(2, len(chain) + 1):
        cascade = tuple(chain[:k])
        tuned = rational_tuning(model, cascade=cascade)
        thresholds = tuned[threshold_columns(k)].to_numpy(float)
        for split in splits:
            parts.append(markov_error(model, cascade, CascadeData.of(cal, cascade, split), thresholds)
                         .assign(cascade=">".join(cascade), k=k, split=split))
    return pd.concat(parts, ignore_index=True)


def auc_tables(curves: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """cascade.auc (one row per cascade, sample and baseline method vs RT) and cascade.auc_summary.

    AUC = mean test error over the cost interval shared with RT (`curve_auc`, Sec. 2.4 protocol) of the
    curve through every train-tuned threshold vector's test (cost, error). The test-side `pareto` flag is
    not used: selecting the best points on test would favour the method with the most candidates.
    %Delta = 100 (AUC_RT - AUC_method) / AUC_method (negative: RT better).
    Summary rows (Tables 2.7 / 2.8 shape): per setting (full | low) and k group (each k, 'k>=3', 'all').
    """
    parts = []
    for (sample, n_train), g in curves.groupby(["sample", "n_train"], sort=True):
        comp = auc_comparisons(g.rename(columns={"chain": "benchmark"}), reference="rt")
        parts.append(comp.rename(columns={"benchmark": "chain"}).assign(sample=sample, n_train=n_train))
    auc = pd.concat(parts, ignore_index=True)
    auc["setting"] = np.where(auc["sample"] == "full", "full", "low")
    summary = [k_group_summary(g).assign(setting=setting) for setting, g in auc.groupby("setting")]
    return auc, pd.concat(summary, ignore_index=True)


# ---------------------------------------------------------------- economics (Ch. 3)


def economics_tables(records: pd.DataFrame | WideRecords) -> dict[str, pd.DataFrame]:
    """Expected reward of each single model on the price grid (eqs. 3.10-3.13), the argmax map and the
    critical prices of error between consecutive winners at lambda_L = 0 (test split when present)."""
    split = "test" if has_test(records) else "train"
    rows = (records.long(["correct", "cost_usd", "latency_ms"], split=split) if isinstance(records, WideRecords)
            else records[records["split"] == split]).rename(columns={"model_id": "system"})
    summary = summarize_systems(rows)
    grid = reward_grid(summary, LAMBDA_ERRORS, LAMBDA_LATENCIES)
    best = optimal_model_map(summary, LAMBDA_ERRORS, LAMBDA_LATENCIES)
    dense = optimal_model_map(summary, np.geomspace(1e-6, 1e6, 481), [0.0])
    winners = dense["best_system"].loc[dense["best_system"].ne(dense["best_system"].shift())].tolist()
    by_system = summary.set_index("system")
    critical = pd.DataFrame([
        {"system_a": a, "system_b": b, "lambda_latency": 0.0,
         "critical_lambda_error": critical_price_of_error(by_system.loc[a], by_system.loc[b])}
        for a, b in zip(winners[:-1], winners[1:])
    ], columns=["system_a", "system_b", "lambda_latency", "critical_lambda_error"])
    return {"cascade.economics": grid.assign(split=split), "cascade.optimal_model_map": best.assign(split=split),
            "cascade.critical_prices": critical.assign(split=split), "cascade.system_summary": summary.assign(split=split)}


def _pair_frame(cal: pd.DataFrame | WideRecords, model: str, split: str) -> pd.DataFrame:
    """One model's rows of a split, indexed by query id, in the shape `economics.cascade_records` reads:
    correct, cost_usd, latency_s and p_true (the calibrated P(correct) of Ch. 2 as the P(True) of Ch. 3)."""
    rows = (cal.long(["correct", "cost_usd", "latency_ms", "p_correct"], split=split, models=[model])
            if isinstance(cal, WideRecords) else cal[(cal["model_id"] == model) & (cal["split"] == split)])
    rows = rows.set_index("query_id").sort_index()
    return pd.DataFrame({"correct": rows["correct"].astype(float), "cost_usd": rows["cost_usd"].astype(float),
                         "latency_s": rows["latency_ms"].astype(float) / 1000.0, "p_true": rows["p_correct"]})


def big_alone_reward(big: pd.DataFrame, lambda_error: np.ndarray, lambda_latency: np.ndarray) -> np.ndarray:
    """Expected reward of sending every query straight to M_big (eq. 3.10, Fig. 3.5's comparison), on its rows."""
    return -(big["cost_usd"].mean() + lambda_latency * big["latency_s"].mean()
             + lambda_error * (1 - big["correct"].mean()))


def two_model_cascade_tables(records: pd.DataFrame | WideRecords, dataset: str) -> dict[str, pd.DataFrame]:
    """Ch. 3's cascade findings on every consecutive pair M_small -> M_big of the primary (Llama) chain:
    the test reward of the threshold re-tuned on train for each price of error and of latency (App. 3D, Fig. 3.5),
    beside the test reward of M_big alone (`big_alone_reward`, `cascade_beats_big`), and the cascade error rate's
    decomposition across deferral thresholds on test (CER of eq. 3.25, Fig. 3.6)."""
    cal, _ = calibrated_records(records, dataset)
    chain = [m for m in CHAINS[PRIMARY_CHAIN] if m in set(model_ids(cal))]
    rewards, cer = [], []
    for small, big in zip(chain[:-1], chain[1:]):
        s_tr, b_tr, s_te, b_te = (_pair_frame(cal, m, split) for split in ("train", "test") for m in (small, big))
        pair = {"small": small, "big": big}
        tuned = tuned_cascade_rewards(s_tr, b_tr, s_te, b_te, LAMBDA_ERRORS, LAMBDA_LATENCIES)
        alone = big_alone_reward(b_te, tuned["lambda_error"].to_numpy(), tuned["lambda_latency"].to_numpy())
        rewards.append(tuned.assign(big_alone_reward=alone, cascade_beats_big=tuned["reward"] > alone, **pair))
        cer.append(cer_curve(s_te, b_te).assign(**pair))
    return {"cascade.tuned_rewards": pd.concat(rewards, ignore_index=True),
            "cascade.cer_curve": pd.concat(cer, ignore_index=True)}


# ---------------------------------------------------------------- Fail Fast, or Ask (Ch. 4)


def failfast_pair(records: pd.DataFrame | WideRecords) -> tuple[str, str]:
    """(M_r, M_nr) on real records: the most accurate train model answers, the cheapest one fronts it."""
    if isinstance(records, WideRecords):
        acc, cost = records.model_means("correct", "train"), records.model_means("cost_usd", "train")
    else:
        train = records[records["split"] == "train"]
        acc = train.groupby("model_id")["correct"].mean()
        cost = train.groupby("model_id")["cost_usd"].mean()
    strong = str(acc.sort_values(ascending=False, kind="stable").index[0])
    weak = str(cost.drop(strong).sort_values(kind="stable").index[0])
    return strong, weak


def real_failfast(cal: pd.DataFrame | WideRecords) -> pd.DataFrame:
    """Table 4.2 shape on REAL records: M_r's output tokens as its uncertainty, M_nr's calibrated P(correct).

    The cascade datasets hold no reasoning models; whether output tokens carry signal is reported as
    the Spearman correlation of M_r's tokens with its correctness (`tokens_signal_rho`, `_p`).
    """
    split = "test" if has_test(cal) else "train"
    strong, weak = failfast_pair(cal)
    rows = cal.long(split=split, models=[strong, weak]) if isinstance(cal, WideRecords) else cal[cal["split"] == split]
    joined = join_failfast_records(rows, strong, weak, confidence_col="p_correct")
    table = failfast_table(joined, FAILFAST_UTILIZATIONS, rng=0)
    rho = stats.spearmanr(joined["tokens_r"], joined["correct_r"])
    return table.assign(data="real", reasoning_model=strong, nonreasoning_model=weak, split=split, n=len(joined),
                        tokens_signal_rho=float(rho.statistic), tokens_signal_p=float(rho.pvalue))


def synthetic_failfast(n: int, seed: int = 0) -> pd.DataFrame:
    """Table 4.2 on the SYNTHETIC generator (means from Table 4.1), one block per reasoning model."""
    parts = []
    for model, spec in TABLE_4_1.items():
        if spec["role"] != "reasoning":
            continue
        data = generate_failfast_synthetic(FailFastSyntheticConfig(reasoning_model=model, n=n), seed=seed)
        parts.append(failfast_table(data, FAILFAST_UTILIZATIONS, rng=seed).assign(
            data="synthetic", reasoning_model=model, nonreasoning_model=FailFastSyntheticConfig.nonreasoning_model, n=n))
    return pd.concat(parts, ignore_index=True)


