"""Rank uncertainty of the deployment-aware leaderboard (issue #11; ML Compass §4.3-4.6).

The leaderboard of §4.6 ranks models by Score_s(m) = Agg_z Û(x(m); z) - lam c(m), where every
ingredient is estimated: the missing benchmark cells (imputed, `imputation`), the measures x(m)
(factor model on a finite set of models, §4.3) and the utilities Û_g (fitted on sampled prompts,
§4.5). The paper reports point estimates only; this module bootstraps all three together
(`bootstrap_replicates`, per case) and summarizes the ranks each replicate implies
(`rank_intervals`, per scenario): probability of rank 1 and of the top 5, and an equal-tailed
rank interval. Costs, budgets and raw-benchmark screens are data, not estimates: they stay fixed.

One replicate b:
  (i) multiple imputation: every missing cell of x_raw is redrawn as its low-rank imputation
      plus Gaussian noise of the imputation's predictive size (`imputation_noise`);
 (ii) factor model: the measures are refitted (`extract_measures`, the case's settings, factors
      aligned to the reference loadings so C1, C2 keep their meaning) on a bootstrap resample of
      models, and every model is scored with the refitted map (`_refit_measures`);
(iii) utilities: prompts are resampled with replacement within each context (cluster bootstrap:
      a prompt's rows stay together, so within-prompt labels and correlation survive) and, crossed with
      them, the models that have outcome data (a model's rows stay together, in every context): a
      utility learned from 9 models is as uncertain as those 9 models are a sample. One utility per
      context is refitted at the replicate's measures, with no repeated-split AUC.
      Every row of a context that comes from one model has the same features, so the fit only
      sees, per (context, model, label), how many resampled rows fall there: it is run on those
      cells with the counts as sample weights (`_OutcomeCells`): the same likelihood as the
      resampled rows (identical fits for linear and logistic utilities; LightGBM computes gradients
      in float32, so a weight of 2 and two rows can flip a near-tied split, ~1e-3 in Û), and on
      open_mmlu_pro 644 cells instead of 347,215 rows (0.4 s per replicate instead of ~2 s).
 (iv) model effects: a model's actual utility is not a function of its measures alone. Each model m
      has its own effect e_m on the link scale of Û (logit for a success probability, the outcome
      for a linear utility), shared by its contexts: U_g(m) = link^-1(link Û_g(x(m)) + e_m). Its
      variance tau^2 is estimated from the outcome models (`model_effect_variance`: their label
      rates' residuals around the point fit, less binomial noise, on the fit's residual degrees of
      freedom), and replicate b draws tau_b^2 = SS / chi^2_df (the variance's sampling uncertainty
      from few models) and e_bm ~ N(0, tau_b^2) for every model. So the interval is one for the rank
      of the model's actual utility, not of the utility its measures predict. Beyond the outcome models'
      range, tau is estimated from none of the models ranked there: a model's effect sd is widened by
      1 + REACH x its distance beyond that range over the range's diagonal (`_reach`; issue 42's worlds).
Structural cases (given weights, no outcome rows) vary through (i) and (ii) only.

With fewer than `MIN_OUTCOME_MODELS` outcome models the model bootstrap and tau^2 have too little to
stand on: the intervals are computed but flagged `interval_supported = False`, and the leaderboard says
so instead of printing them. The coverage simulation (tests, scripts/mlcompass_rank_coverage.py) is the
evidence for the threshold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit, logit
from sklearn.base import clone

from compass.mlcompass.case_study import CaseStudy, UtilitySpec
from compass.mlcompass.case_utilities import beyond_outcome_range, labelled_rows, structural_weights, utility_groups
from compass.mlcompass.imputation import impute_low_rank, predictive_sd
from compass.mlcompass.measures import extract_measures, standardize
from compass.mlcompass.recommend import TIE_DECIMALS, aggregate_utility, expand_floors
from compass.mlcompass.scenarios import Scenario
from compass.mlcompass.utilities import fit_model, utility_scores

__all__ = ["RANK_COLUMNS", "Replicates", "bootstrap_replicates", "imputation_noise", "rank_intervals", "replicate_scores",
           "top_gap"]

RANK_COLUMNS = ["model_id", "p_rank1", "p_top5", "rank_lo", "rank_hi", "p_feasible", "n_boot", "p_ge_leader",
                "near_leader", "interval_supported", "n_outcome_models", "model_effect_sd"]
TOP = 5
# Fewer outcome models than this: no interval is claimed (module docstring). Measures k plus intercept use
# k + 1 of them; tau^2 needs residual degrees of freedom beyond those (coverage study, docs/results/mlcompass.md).
MIN_OUTCOME_MODELS = 6
# Model effects beyond the outcome models' range are widened by 1 + REACH x (distance beyond / range diagonal),
# step (iv): the coverage of the true top 5 in the worlds of issue 42 (docs/results/mlcompass.md).
REACH = 1.0
# Share of label rates clipped away from 0 and 1 on the logit scale (half a row's worth, as a continuity correction).
_HALF = 0.5


@dataclass(frozen=True)
class Replicates:
    """Bootstrap replicates of one case: measures (B, n, k) and utilities (B, n, G) of every model.

    utilities[b, :, g] is Û_g of replicate b at replicate b's measures (Û = βᵀx for a structural case,
    group "all"). `measure_rows` / `utility_rows` give the long frames.
    """

    model_ids: pd.Index
    factors: tuple[str, ...]
    groups: tuple[str, ...]
    measures: np.ndarray
    utilities: np.ndarray
    n_outcome_models: int = 0  # models with outcome data the utility was learned from; 0 for a structural case
    model_effect_sd: float = 0.0  # tau, the point estimate of the model-effect sd (link scale)

    @property
    def interval_supported(self) -> bool:
        """Whether the data support a rank interval: a structural case, or >= MIN_OUTCOME_MODELS outcome models."""
        learned = self.groups != ("all",) or self.n_outcome_models > 0
        return not learned or self.n_outcome_models >= MIN_OUTCOME_MODELS

    @property
    def n_boot(self) -> int:
        return self.measures.shape[0]

    def measure_rows(self) -> pd.DataFrame:
        """Long [replicate, model_id, factor, value]."""
        return _long(self.measures, self.model_ids, self.factors, "factor", "value")

    def utility_rows(self) -> pd.DataFrame:
        """Long [replicate, model_id, context_group, utility, n_outcome_models, model_effect_sd]."""
        return _long(self.utilities, self.model_ids, self.groups, "context_group", "utility").assign(
            n_outcome_models=self.n_outcome_models, model_effect_sd=self.model_effect_sd)


def _long(values: np.ndarray, ids: pd.Index, names: Sequence[str], key: str, value: str) -> pd.DataFrame:
    b, n, k = values.shape
    return pd.DataFrame({
        "replicate": np.repeat(np.arange(b), n * k),
        "model_id": np.tile(np.repeat(ids.to_numpy(), k), b),
        key: np.tile(np.asarray(names, dtype=object), b * n),
        value: values.reshape(-1),
    })


def imputation_noise(x_raw: pd.DataFrame, seed: int = 0, scale: pd.Series | None = None,
                     rank: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The low-rank completion of x_raw (`impute_low_rank`, its rank cross-validated unless given) and the
    predictive sd of each imputed cell.

    The sd is the rank-r PCA model's (`predictive_sd`: per-benchmark noise, prediction variance from the
    model's observed cells, loadings treated as known), 0 on observed cells. An MI draw is
    completed + sd * N(0, 1) (`bootstrap_replicates`).

    That sd ignores the error of the loadings and of the map between blocks of benchmarks that few models
    share, so it is too small where the board's rows are imputed (leave-pattern-out, `imputation_validation`):
    `scale` (per benchmark, default 1) multiplies it, the calibration `noise_scales` publishes.
    """
    imputation = impute_low_rank(x_raw, rank=rank, seed=seed)
    sd = predictive_sd(x_raw, imputation.completed, imputation.rank)
    if scale is not None:
        sd = sd * scale.reindex(sd.columns).fillna(1.0).to_numpy(dtype=float)[None, :]
    return imputation.completed, sd


def imputation_draw(sd: pd.DataFrame, correlation: float, rng: np.random.Generator) -> pd.DataFrame:
    """One multiple-imputation error of step (i): sd * (sqrt(rho) u_m + sqrt(1 - rho) e_mj), u_m ~ N(0, 1) per model
    and e_mj ~ N(0, 1) per cell, so every cell keeps its calibrated variance sd^2 and two imputed cells of one model
    are correlated rho (`imputation_validation.error_correlation`: leave-pattern-out errors of one row move
    together)."""
    own = rng.standard_normal(sd.shape)
    if correlation <= 0.0:  # the independent draw, stream for stream
        return sd * own
    shared = rng.standard_normal((sd.shape[0], 1))
    return sd * (np.sqrt(correlation) * shared + np.sqrt(1.0 - correlation) * own)


def _refit_measures(
    completed: pd.DataFrame, rows: np.ndarray, case: CaseStudy, n_factors: int, reference: pd.DataFrame, seed: int
) -> np.ndarray:
    """Measures of every model from a factor model fitted on the models `rows` (with repeats) of `completed`.

    `extract_measures` fits and scores the resample; its map from a model's standardized raw row to
    its measures is affine (standardize, Bartlett weights, min-max scaling), so it is recovered
    exactly by least squares on the resampled rows and applied to every model, whose scores are then
    min-max scaled across all models as in the point fit (§4.3, footnote 5).
    """
    z = standardize(completed).to_numpy(dtype=float)
    resample = completed.iloc[rows].set_axis(pd.RangeIndex(len(rows)), axis=0)
    fit = extract_measures(resample, n_factors=n_factors, loading_threshold=case.loading_threshold,
                           max_factors_per_variable=case.max_factors_per_variable, previous_loadings=reference,
                           anchors=case.anchors, pa_iterations=1, seed=seed)
    design = np.column_stack([np.ones(len(rows)), z[rows]])
    coef, _, rank, _ = np.linalg.lstsq(design, fit.measures.to_numpy(dtype=float), rcond=None)
    if rank < design.shape[1]:
        raise ValueError(f"a bootstrap resample holds {len(np.unique(rows))} distinct models, too few to score "
                         f"{z.shape[1]} benchmarks; the model bootstrap needs more models than benchmarks")
    scores = coef[0] + z @ coef[1:]
    return (scores - scores.min(axis=0)) / (scores.max(axis=0) - scores.min(axis=0))


@dataclass(frozen=True)
class _OutcomeCells:
    """Outcome rows of the contexts `fit_case_utilities` fits, reduced to cells (context, model, label), or
    (context, model) for a linear utility, whose OLS fit needs only each model's row count and mean outcome."""

    groups: tuple[str, ...]
    linear: bool
    cell: np.ndarray  # per row: its cell
    cluster: np.ndarray  # per row: its (context, prompt) cluster
    row_model: np.ndarray  # per row: its outcome model (0 .. n_models - 1)
    strata: tuple[np.ndarray, ...]  # per context: its clusters
    cell_group: np.ndarray
    cell_model: np.ndarray  # position in the case's model ids
    cell_label: np.ndarray
    outcome: np.ndarray  # per row

    @classmethod
    def build(cls, rows: pd.DataFrame, model_ids: pd.Index, spec: UtilitySpec) -> _OutcomeCells:
        """Rows of models with measures, labelled (`labelled_rows`) and screened (`utility_groups`) as the
        point fit does."""
        missing = {"model_id", "group", "context_group", "outcome"} - set(rows.columns)
        if missing:
            raise ValueError(f"outcome rows need columns [model_id, group, context_group, outcome]; missing {sorted(missing)}")
        data = labelled_rows(rows, pd.DataFrame(index=model_ids), spec)
        groups = tuple(group for group, _ in utility_groups(data, spec))
        if not groups:
            raise ValueError(f"no context group has {spec.min_rows_per_group} outcome rows with both labels for "
                             "models with measures: no learned utility to bootstrap")
        data = data[data["context_group"].astype(str).isin(groups)].reset_index(drop=True)
        data["g"] = pd.Categorical(data["context_group"].astype(str), categories=groups).codes
        data["m"] = model_ids.get_indexer(data["model_id"])
        linear = spec.estimator == "linear"
        cluster = data.groupby(["g", "group"], sort=True).ngroup().to_numpy()
        cell = data.groupby(["g", "m"] if linear else ["g", "m", "label"], sort=True).ngroup().to_numpy()
        per_cell = data.groupby(cell)[["g", "m", "label"]].first()
        cluster_group = np.empty(cluster.max() + 1, dtype=int)
        cluster_group[cluster] = data["g"].to_numpy()
        strata = tuple(np.flatnonzero(cluster_group == g) for g in range(len(groups)))
        row_model = pd.factorize(data["m"], sort=True)[0]
        return cls(groups, linear, cell, cluster, row_model, strata, per_cell["g"].to_numpy(), per_cell["m"].to_numpy(),
                   per_cell["label"].to_numpy(float), data["outcome"].to_numpy(float))

    @property
    def n_models(self) -> int:
        return int(self.row_model.max()) + 1

    def resample(self, rng: np.random.Generator, models: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Crossed cluster bootstrap: each context's prompts drawn with replacement (as many as it has) and,
        with `models`, the outcome models drawn with replacement (as many as there are, the same draw in every
        context); a row's weight is its prompt's count times its model's count. Then `weigh`."""
        mult = np.zeros(self.cluster.max() + 1)
        for members in self.strata:
            mult[members] = np.bincount(rng.integers(0, len(members), len(members)), minlength=len(members))
        weight = mult[self.cluster]
        if models:
            weight = weight * np.bincount(rng.integers(0, self.n_models, self.n_models), minlength=self.n_models)[self.row_model]
        return self.weigh(weight)

    def weigh(self, row_weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(weight, target) per cell: the total weight of its rows, and its label (classification) or the
        weighted mean outcome of its rows (linear)."""
        weight = np.bincount(self.cell, weights=row_weight, minlength=len(self.cell_group))
        if not self.linear:
            return weight, self.cell_label
        total = np.bincount(self.cell, weights=row_weight * self.outcome, minlength=len(self.cell_group))
        return weight, np.divide(total, weight, out=np.zeros_like(total), where=weight > 0)


def _cell_estimator(x: pd.DataFrame, cells: _OutcomeCells, spec: UtilitySpec, seed: int):
    """An unfitted estimator as the point fit builds it (`fit_model`: the case's estimator and shape
    constraints), ready for weighted cells: `fit_model` takes no sample weights, so its fit on the first
    context's cells is cloned. LightGBM's row-count limits (min_child_samples, min_data_in_bin) would count
    cells, not rows; at 1 they never bind, as on the rows whenever each (context, model) has >= 20 rows."""
    target = cells.weigh(np.ones(len(cells.cell)))[1]
    first = cells.cell_group == 0
    model = clone(fit_model(x.iloc[cells.cell_model[first]], target[first], spec.estimator, seed=seed,
                            monotone=spec.monotone, nonnegative=spec.nonnegative))
    return model.set_params(min_child_samples=1, min_data_in_bin=1) if spec.estimator == "lightgbm" else model


def _utility(model, spec: UtilitySpec, x: pd.DataFrame) -> np.ndarray:
    """Û_g at the rows of x in the case's form: `utility_scores`, or the normalized |β̂|ᵀx (linear_score, §5.6)."""
    if spec.form == "linear_score":
        beta = np.abs(np.ravel(model.coef_))
        return x.to_numpy(dtype=float) @ (beta / beta.sum())
    return utility_scores(model, spec.estimator, x)


def _fit_cells(cells: _OutcomeCells, weight: np.ndarray, target: np.ndarray, x: pd.DataFrame, estimator,
               spec: UtilitySpec) -> np.ndarray:
    """One weighted fit per context on its cells; Û_g of every model (columns = cells.groups)."""
    out = np.empty((len(x), len(cells.groups)))
    for g in range(len(cells.groups)):
        keep = (cells.cell_group == g) & (weight > 0)
        y = target[keep]
        if not cells.linear and np.unique(y).size < 2:  # a resample left one label: Û_g is that label
            out[:, g] = y[0]
            continue
        model = clone(estimator).fit(x.iloc[cells.cell_model[keep]], y, sample_weight=weight[keep])
        out[:, g] = _utility(model, spec, x)
    return out


def _link(u: np.ndarray, linear: bool) -> np.ndarray:
    return u if linear else logit(np.clip(u, 1e-9, 1 - 1e-9))


def _inverse_link(eta: np.ndarray, linear: bool) -> np.ndarray:
    return eta if linear else expit(eta)


def model_effect_variance(cells: _OutcomeCells, utility: np.ndarray, n_params: int) -> tuple[float, int]:
    """(SS, df) of the model effects e_m (module docstring, step iv) around the fitted utilities `utility`
    (n_models_total x G, Û_g at the point measures): tau^2 = SS / df.

    Per context g and outcome model m with n_gm rows, the residual r_gm = link(ȳ_gm) - link(Û_g(x_m)) of its
    mean label (or outcome) has sampling variance v_gm: 1 / (n p (1 - p)) on the logit scale (p
    continuity-corrected), s^2 / n for a linear utility. A model's effect is shared by its contexts, so its
    residuals are averaged over them first: r_m = mean_g r_gm, v_m = sum_g v_gm / G_m^2, which is also the
    effect the mean over contexts ranks on. The fits used `n_params` degrees of freedom on the same M models,
    so E sum_m r_m^2 = (M - n_params)(tau^2 + mean v): SS = sum_m r_m^2 - (M - n_params) mean_m v_m, floored
    at 0, on df = M - n_params (not G times that: the contexts share the models).
    """
    total, var, count = (np.zeros(cells.n_models) for _ in range(3))
    ones = np.ones(len(cells.cell))
    model_of_cell = np.zeros(len(cells.cell_group), dtype=int)
    model_of_cell[cells.cell] = cells.row_model
    for g in range(len(cells.groups)):
        rows = cells.cell_group[cells.cell] == g
        who = model_of_cell[cells.cell[rows]]
        n = np.bincount(who, weights=ones[rows], minlength=cells.n_models)
        y = cells.outcome[rows] if cells.linear else cells.cell_label[cells.cell[rows]]
        seen = n > 0
        mean = np.bincount(who, weights=y, minlength=cells.n_models)[seen] / n[seen]
        fitted = utility[np.unique(cells.cell_model[cells.cell[rows]]), g]  # sorted model positions = sorted `who`
        if cells.linear:
            resid = y - (np.bincount(who, weights=y, minlength=cells.n_models) / np.maximum(n, 1))[who]
            v = np.bincount(who, weights=resid ** 2, minlength=cells.n_models)[seen] / np.maximum(n[seen] - 1, 1) / n[seen]
            r = mean - fitted
        else:
            p = (mean * n[seen] + _HALF) / (n[seen] + 2 * _HALF)
            v = 1.0 / (n[seen] * p * (1 - p))
            r = logit(p) - _link(fitted, False)
        total[seen] += r
        var[seen] += v
        count[seen] += 1
    seen = count > 0
    r, v = total[seen] / count[seen], var[seen] / count[seen] ** 2
    df = max(int(seen.sum()) - n_params, 0)
    return max(float(np.sum(r ** 2) - df * np.mean(v)), 0.0), df


def _reach(point: pd.DataFrame, cells: _OutcomeCells) -> np.ndarray:
    """Per model, its distance beyond the outcome models' range (`beyond_outcome_range`) over that range's
    diagonal: 0 inside, 1 one range-width beyond."""
    trained = point.index[np.unique(cells.cell_model)]
    width = float(np.sqrt(((point.loc[trained].max() - point.loc[trained].min()) ** 2).sum()))
    return (beyond_outcome_range(point, trained) / max(width, 1e-12)).to_numpy()


def _factor_names(loadings: pd.DataFrame) -> tuple[str, ...]:
    missing = {"benchmark", "factor", "loading"} - set(loadings.columns)
    if missing:
        raise ValueError(f"reference loadings must be long [benchmark, factor, loading]; missing {sorted(missing)}")
    return tuple(sorted(loadings["factor"].astype(str).unique(), key=lambda f: int(f[1:])))


def bootstrap_replicates(
    x_raw: pd.DataFrame,
    outcome_rows: pd.DataFrame | None,
    case: CaseStudy,
    n_boot: int,
    seed: int = 0,
    reference_loadings: pd.DataFrame | None = None,
    resample_models: bool = True,
    model_effects: bool = True,
    noise_scale: pd.Series | None = None,
    reach: float = REACH,
    noise_correlation: float = 0.0,
) -> Replicates:
    """`n_boot` bootstrap replicates of a case's measures and utilities (module docstring, steps i-iv).

    x_raw: the case's model x benchmark matrix (`build_x_raw`), NaN = missing. outcome_rows: the case's
    [model_id, group, context_group, outcome] rows (`case_inputs.outcome_rows`); None for a structural case.
    reference_loadings: the published loadings [benchmark, factor, loading] the replicate factors are
    aligned to (names, signs and their number); None fits them here as the measures asset does.
    `resample_models` / `model_effects` switch steps (iii, the model part) and (iv) off: the intervals of
    issue 11, kept to show what they add (scripts/mlcompass_rank_coverage.py). noise_scale: per benchmark, the
    calibration of the imputation noise of step (i) (`imputation_noise`; compass.imputation_validation), and
    noise_correlation the share of it drawn once per model (`imputation_draw`).
    `reach` (default REACH) widens the model effects beyond the outcome models' range (step iv), 0 = issue 29's
    intervals.
    Deterministic given `seed`; replicate b uses its own stream of `SeedSequence(seed).spawn`.
    Memory O(n_boot x models x (factors + contexts)).
    """
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 1:
        raise ValueError(f"n_boot must be a whole number >= 1, got {n_boot!r}")
    if reference_loadings is None:
        reference_loadings = extract_measures(
            x_raw, n_factors=case.n_factors, loading_threshold=case.loading_threshold,
            max_factors_per_variable=case.max_factors_per_variable, seed=seed).loadings
    factors = _factor_names(reference_loadings)
    learned = case.utility.source != "weights"
    if learned and outcome_rows is None:
        raise ValueError(f"case {case.case_id} learns its utility from {case.utility.source}: outcome rows are needed")
    completed, sd = imputation_noise(x_raw, seed, noise_scale)
    cells = _OutcomeCells.build(outcome_rows, x_raw.index, case.utility) if learned else None
    beta = None if learned else structural_weights(case.utility, list(factors)).to_numpy(dtype=float)
    groups = cells.groups if learned else ("all",)
    n = len(x_raw)
    measures = np.empty((n_boot, n, len(factors)))
    utilities = np.empty((n_boot, n, len(groups)))
    ss, df, tau = 0.0, 0, 0.0
    effects = learned and model_effects and case.utility.form != "linear_score"
    if learned:
        point = pd.DataFrame(_refit_measures(completed, np.arange(n), case, len(factors), reference_loadings, seed),
                             columns=list(factors))
        estimator = _cell_estimator(point, cells, case.utility, seed)
        if effects:
            weight, target = cells.weigh(np.ones(len(cells.cell)))
            ss, df = model_effect_variance(cells, _fit_cells(cells, weight, target, point, estimator, case.utility),
                                           len(factors) + 1)
            tau = float(np.sqrt(ss / df)) if df > 0 else float("nan")
        scale = 1.0 + reach * _reach(point, cells)
    for b, stream in enumerate(np.random.SeedSequence(seed).spawn(n_boot)):
        rng = np.random.default_rng(stream)
        draw = completed + imputation_draw(sd, noise_correlation, rng)
        measures[b] = _refit_measures(draw, rng.integers(0, n, n), case, len(factors), reference_loadings, seed)
        x = pd.DataFrame(measures[b], columns=list(factors))
        if not learned:
            utilities[b, :, 0] = measures[b] @ beta
            continue
        weight, target = cells.resample(rng, models=resample_models)
        utilities[b] = _fit_cells(cells, weight, target, x, estimator, case.utility)
        if effects and ss > 0 and df > 0:  # step (iv): tau_b^2 = SS / chi^2_df, e_bm ~ N(0, tau_b^2), shared by contexts
            e = rng.standard_normal(n) * np.sqrt(ss / rng.chisquare(df)) * scale
            utilities[b] = _inverse_link(_link(utilities[b], cells.linear) + e[:, None], cells.linear)
    return Replicates(pd.Index(x_raw.index, name="model_id"), factors, groups, measures, utilities,
                      n_outcome_models=cells.n_models if learned else 0, model_effect_sd=tau)


def replicate_scores(replicates: Replicates, costs: pd.Series, scenario: Scenario, models: Sequence[str],
                     dominators: Mapping[str, Sequence[str]] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(score (B, n), cost (n)) of `models` in every replicate, as the leaderboard scores them (§4.6):
    Agg_z Û_z(x_b(m)) - lam c(m) with the scenario's aggregation, or its person weights Û = βᵀx_b(m) (β normalized
    to sum 1); rounded to TIE_DECIMALS. `scenario.lam` must be numeric (`decisions.numeric_lambda`)."""
    lam = scenario.resolve_lambda()  # a rule (zero | low | high) raises: resolve it with the case first
    ids = pd.Index(models, name="model_id")
    unknown = ids.difference(replicates.model_ids).tolist() + ids.difference(costs.index).tolist()
    if unknown or ids.has_duplicates:
        raise ValueError(f"models to rank must be unique and have replicates and a cost; "
                         f"problem with {sorted(set(unknown))[:5] or ids[ids.duplicated()].tolist()[:5]}")
    cost = costs.reindex(ids).to_numpy(dtype=float)
    if not np.isfinite(cost).all():
        raise ValueError("costs of the ranked models must be finite")
    pos = replicates.model_ids.get_indexer(ids)
    x = replicates.measures[:, pos, :]
    b, n = x.shape[:2]
    if scenario.utility_weights:
        lacking = sorted(set(scenario.utility_weights) - set(replicates.factors))
        if lacking:
            raise ValueError(f"scenario {scenario.name!r}: its utility weights name {lacking}, not measures of "
                             f"this case ({', '.join(replicates.factors)})")
        weights = pd.Series({f: float(scenario.utility_weights.get(f, 0.0)) for f in replicates.factors})
        values, names, utilities = x, list(replicates.factors), {"all": weights / weights.sum()}
    else:
        values, names = replicates.utilities[:, pos, :], list(replicates.groups)
        utilities = {g: (lambda u, j=j: u[:, j]) for j, g in enumerate(names)}
    agg = aggregate_utility(values.reshape(b * n, -1), utilities, names, scenario.aggregation,
                            scenario.context_weights).reshape(b, n)
    return lift_dominating(np.round(agg - lam * cost, TIE_DECIMALS), ids, dominators or {}), cost


def lift_dominating(score: np.ndarray, ids: pd.Index, dominators: Mapping[str, Sequence[str]]) -> np.ndarray:
    """The leaderboard's dominance repair (`compass.mlcompass.dominance.repair`) in every replicate row of `score`
    (B, n): a model's score is lifted to the best score of the models it strictly dominates (`dominators`: per
    model, the models that strictly dominate it). Dominance is transitive, so one pass over the unlifted scores
    gives every lift; ties then go to the lower cost and the model with fewer dominators (`_ranks`)."""
    lifted = score.copy()
    position = {m: i for i, m in enumerate(ids)}
    for dominated, above in dominators.items():
        if dominated in position:
            for a in above:
                if a in position:
                    lifted[:, position[a]] = np.maximum(lifted[:, position[a]], score[:, position[dominated]])
    return lifted


def top_gap(score: np.ndarray) -> float:
    """Median over replicates of the gap between the rank-1 and the rank-2 score (rows of `score`, (B, n)): how far
    apart the bootstrap's best two models typically are, the default decision tolerance (`decision_rule`). 0 with
    fewer than two models."""
    if score.ndim != 2 or score.shape[1] < 2:
        return 0.0
    top2 = -np.sort(-score, axis=1)[:, :2]
    return float(np.median(top2[:, 0] - top2[:, 1]))


def rank_intervals(
    replicates: Replicates,
    costs: pd.Series,
    scenario: Scenario,
    models: Sequence[str] | None = None,
    level: float = 0.9,
    leader: str | None = None,
    dominators: Mapping[str, Sequence[str]] | None = None,
) -> pd.DataFrame:
    """Rank uncertainty of one scenario's leaderboard: DataFrame `RANK_COLUMNS`, one row per model.

    Every replicate scores the models as the leaderboard does (§4.6): Agg_z Û_z(x_b(m)) - lam c(m) with
    the scenario's aggregation (mean with its context weights, or robust = min over contexts), or with
    the scenario's person weights Û = βᵀx_b(m) (β normalized to sum 1) when it has them; ties go to
    the lower cost, then the model id (`sort_by_score`). `scenario.lam` must be numeric
    (`decisions.numeric_lambda`); its floors as the leaderboard applies them (`decisions.scenario_floors`).

    The ranked set is fixed: `models` (the point leaderboard's models, i.e. those passing its budget,
    floors, raw floors and filters at the point estimates), default every model in `costs`. So p_rank1
    sums to 1 over the set in every case. Budget and raw floors are on data and hold in every
    replicate; floors on the measures may not: p_feasible is the share of replicates in which a model
    meets the scenario's floors at its replicate measures.

    p_rank1 / p_top5: share of replicates with rank 1 / rank <= 5. [rank_lo, rank_hi]: the equal-tailed
    `level` interval of the replicate ranks, the (1 - level)/2 and (1 + level)/2 quantiles (inverse
    empirical CDF: observed ranks, both included). Ranks are discrete, so each tail leaves out at most
    (1 - level)/2 of the replicates and usually less: the interval is conservative (on the simulations of
    the tests, a 90 % interval holds ~95 % of the replicate ranks and covers the true rank 94-96 % of the
    time).

    Near-ties: p_ge_leader is the share of replicates in which a model scores at least as high as `leader`
    (the point leaderboard's rank 1; default the first of `models`); near_leader marks the models the
    bootstrap cannot tell from the leader, p_ge_leader >= (1 - level) / 2 (a one-sided test of "the leader is
    better" at that level fails), the leader included. interval_supported, n_outcome_models and
    model_effect_sd come from the replicates (`Replicates.interval_supported`). `dominators` (per model, the models
    strictly dominating it on observed benchmarks, `dominance.strict_dominators`): every replicate applies the
    leaderboard's dominance repair (`lift_dominating`), so no replicate, and no P(rank 1), puts a model above one
    that strictly dominates it.
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    ids = pd.Index(costs.index if models is None else models, name="model_id")
    if ids.empty:
        scenario.resolve_lambda()  # a rule (zero | low | high) raises even with nothing to rank
        return pd.DataFrame(columns=RANK_COLUMNS)
    score, cost = replicate_scores(replicates, costs, scenario, ids, dominators)
    x = replicates.measures[:, replicates.model_ids.get_indexer(ids), :]
    b = score.shape[0]
    n_dom = np.array([len((dominators or {}).get(m, ())) for m in ids])
    ranks = _ranks(score, cost, ids, n_dom)
    floors = expand_floors(scenario.floors, list(replicates.factors))
    feasible = (x >= np.array([floors[f] for f in replicates.factors])).all(axis=2)
    lo, hi = np.quantile(ranks, [(1 - level) / 2, (1 + level) / 2], axis=0, method="inverted_cdf")
    lead = ids.get_loc(ids[0] if leader is None else leader)
    p_ge = (score >= score[:, [lead]]).mean(axis=0)
    return pd.DataFrame({
        "model_id": ids.to_numpy(), "p_rank1": (ranks == 1).mean(axis=0), "p_top5": (ranks <= TOP).mean(axis=0),
        "rank_lo": lo.astype(int), "rank_hi": hi.astype(int), "p_feasible": feasible.mean(axis=0), "n_boot": b,
        "p_ge_leader": p_ge, "near_leader": p_ge >= (1 - level) / 2 - 1e-12,
        "interval_supported": replicates.interval_supported, "n_outcome_models": replicates.n_outcome_models,
        "model_effect_sd": replicates.model_effect_sd,
    })


def _ranks(score: np.ndarray, cost: np.ndarray, ids: pd.Index, n_dominators: np.ndarray | None = None) -> np.ndarray:
    """Rank (1 = best) of each model in each replicate row of `score`: higher score, then lower cost, then fewer
    dominators (a strictly dominating model has fewer than the one it dominates), then id."""
    shape = score.shape
    by_id = np.broadcast_to(np.argsort(np.argsort(ids.to_numpy().astype(str))), shape)
    n_dom = np.broadcast_to(np.zeros(shape[1]) if n_dominators is None else n_dominators, shape)
    order = np.lexsort((by_id, n_dom, np.broadcast_to(cost, shape), -np.round(score, TIE_DECIMALS)), axis=-1)
    ranks = np.empty(shape, dtype=int)
    np.put_along_axis(ranks, order, np.broadcast_to(np.arange(1, shape[1] + 1), shape), axis=1)
    return ranks
