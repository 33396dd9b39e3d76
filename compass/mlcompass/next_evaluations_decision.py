"""What to measure next on one published decision (case x scenario): the leaderboard's own posterior turned into
the inputs of `next_evaluations` and its ranking into one table (issue 49 items 1-3).

Posterior: the rank bootstrap's score draws S_b(m) of the board's models (`rank_uncertainty.replicate_scores`).
Cell spread: the imputation's calibrated predictive sd (`rank_uncertainty.imputation_noise`, step (i) of the
bootstrap), 0 on measured cells.

Gradient g_mj of eq. (2) of `next_evaluations`, by the chain rule through the measures with the factor loadings
fixed (`score_gradient`):

    dScore(m)/dx_mj = sum_f a_mf C_jf / sd_j                                                (G)

C: the affine map from the standardized benchmark row to the published measures, recovered by least squares on the
point fit (as `rank_uncertainty._refit_measures` does per replicate); it includes the min-max rescaling of the
measures at the point fit, held fixed (approximate: a measured cell that moves a model past the current extreme
would rescale everyone). a_mf = dScore(m)/dmeasure_f, per model, the least-squares slope of its replicate scores on
its replicate measures over the B replicates (exact for person weights; for a learned utility the local slope of
the utility as the bootstrap sees it around the model). The product (G) is taken by `finite_difference_gradient`
of the linearized score.

"If it came back high or low" (`what_if`): the cell at its predictive 90th / 10th percentile, x^ +- 1.2816 s_c,
moves model m's posterior mean by +- 1.2816 tau_c (eq. (2), sign of g); the pick is re-taken on the shifted means.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from compass.mlcompass.next_evaluations import cell_values, finite_difference_gradient, greedy_batch
from compass.mlcompass.next_evaluations_outcome import OUTCOME_BENCHMARK, OUTCOME_QUERIES

Z90 = 1.2815515655446004  # Phi^-1(0.9): "high" and "low" are the predictive 90th and 10th percentiles
K_MAX = 20  # greedy batches are stored up to this many cells (the command's --k takes a prefix)
TABLE_COLUMNS = ["model_id", "benchmark", "predicted", "cell_sd", "gradient", "expected_reduction", "cost_usd",
                 "value_per_usd", "rank", "rank_per_usd", "greedy_step", "greedy_step_per_usd", "p_wrong_after",
                 "p_wrong_after_per_usd", "p_wrong_now", "pick_now", "pick_if_high", "pick_if_low", "p_wrong_now_se",
                 "p_wrong_after_se", "p_wrong_after_per_usd_se", "noise_correlation", "kind", "n_queries",
                 "outcome_sd", "outcome_value_se", "rank_all", "rank_all_per_usd"]
# kind: 'cell' | 'outcome' (`next_evaluations_outcome`; n_queries, outcome_sd and outcome_value_se, the jackknife Monte
# Carlo error of its value, its own); rank / rank_per_usd among the rows of its kind, rank_all(_per_usd) among all
ANSWERED_COLUMNS = ["model_id", "benchmark", "predicted", "measured"]
_TEXT = {"kind", "model_id", "benchmark", "pick_now", "pick_if_high", "pick_if_low", "pick", "pick_before",
         "pick_after"}
_WHOLE = {"rank", "rank_per_usd", "greedy_step", "greedy_step_per_usd", "rank_all", "rank_all_per_usd"}


def empty_table(columns: list[str]) -> pd.DataFrame:
    """A frame with no rows whose columns carry their types (text, whole numbers, floats), so the first write of an
    empty result does not type the warehouse table's columns as text."""
    return pd.DataFrame({c: pd.Series(dtype="string" if c in _TEXT else "int64" if c in _WHOLE else "float64")
                         for c in columns})


def measure_slopes(replicate_scores: np.ndarray, replicate_measures: np.ndarray) -> np.ndarray:
    """a_mf of (G): per model, the least-squares slope of its B replicate scores (B, n) on its replicate measures
    (B, n, k), shrunk toward the slope pooled over all models by empirical Bayes (per measure f: between-model
    variance tau_f^2 = max(0, var_m(a_mf) - mean_m(se_mf^2)), weight tau_f^2 / (tau_f^2 + se_mf^2)). With B = 60
    replicates a model's own slope has R^2 about 0.04 on frontier_api: unshrunk, the cells of the models with the
    noisiest slopes topped the ranking (review of issue 49). A model whose measures do not vary across replicates
    gets the pooled slope."""
    s = replicate_scores - replicate_scores.mean(axis=0)
    x = replicate_measures - replicate_measures.mean(axis=0)
    pooled = np.linalg.lstsq(x.reshape(-1, x.shape[2]), s.reshape(-1), rcond=None)[0]
    own, var = np.tile(pooled, (s.shape[1], 1)), np.full((s.shape[1], x.shape[2]), np.nan)
    dof = s.shape[0] - x.shape[2]
    for m in range(s.shape[1]):
        xm = x[:, m, :]
        if dof > 0 and np.linalg.matrix_rank(xm) == xm.shape[1]:
            own[m], residual = np.linalg.lstsq(xm, s[:, m], rcond=None)[:2]
            sigma2 = float(residual[0]) / dof if len(residual) else 0.0
            var[m] = sigma2 * np.diag(np.linalg.inv(xm.T @ xm))
    fitted = ~np.isnan(var).any(axis=1)
    if fitted.sum() < 2:
        return own
    tau2 = np.maximum(own[fitted].var(axis=0, ddof=1) - var[fitted].mean(axis=0), 0.0)
    weight = np.where(fitted[:, None], tau2 / np.maximum(tau2 + np.nan_to_num(var), 1e-300), 0.0)
    return pooled + weight * (own - pooled)


def score_gradient(completed: pd.DataFrame, point_measures: pd.DataFrame, slopes: np.ndarray) -> pd.DataFrame:
    """g_mj of (G) for the models of `completed` (rows aligned with `point_measures` and `slopes`): the score
    linearized through the fixed affine map standardized row -> measures, differentiated by finite differences."""
    mean, sd = completed.mean(axis=0), completed.std(axis=0).replace(0.0, 1.0)
    z = ((completed - mean) / sd).to_numpy(dtype=float)
    design = np.column_stack([np.ones(len(z)), z])
    coef = np.linalg.lstsq(design, point_measures.to_numpy(dtype=float), rcond=None)[0]

    def score(x: pd.DataFrame) -> np.ndarray:
        measures = coef[0] + ((x - mean) / sd).to_numpy(dtype=float) @ coef[1:]
        return (measures * slopes).sum(axis=1)

    return finite_difference_gradient(score, completed)


def what_if(mu: np.ndarray, models: pd.Index, cells: pd.DataFrame) -> pd.DataFrame:
    """pick_now, pick_if_high, pick_if_low per cell of `cells` (model_id, gradient, tau): the posterior-mean pick
    with the cell's model shifted by +-Z90 tau sign(g) (module docstring)."""
    pos = models.get_indexer(cells["model_id"])
    shift = Z90 * cells["tau"].to_numpy() * np.sign(cells["gradient"].to_numpy())
    top = np.argsort(-mu)[:2]
    best_other = np.where(pos == top[0], top[1] if mu.size > 1 else top[0], top[0])

    def pick(delta: np.ndarray) -> np.ndarray:
        moved = mu[pos] + delta
        return np.where(moved > mu[best_other], models.to_numpy()[pos], models.to_numpy()[best_other])

    return pd.DataFrame({"pick_now": models[top[0]], "pick_if_high": pick(shift), "pick_if_low": pick(-shift)},
                        index=cells.index)


def next_evaluations_table(score_draws: np.ndarray, completed: pd.DataFrame, cell_sd: pd.DataFrame,
                           gradient: pd.DataFrame, cell_usd: pd.DataFrame, k_max: int = K_MAX,
                           n_nodes: int = 64, seed: int = 0, correlation: float = 0.0,
                           outcomes: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every unmeasured cell of the board's models: its expected regret drop (`cell_values`, eq. (3)), cost, both
    ranks, its step in the greedy batch by value and by value per USD (up to k_max cells; 0 = not in it) with
    P(pick wrong) after that step with its standard error over the nodes, and the what-if picks; correlation: the
    within-model correlation r of the cells' imputation errors (eq. (2r) of `next_evaluations`). outcomes: the
    outcome-evaluation candidates (`next_evaluations_outcome.outcome_values`), one row per model of kind
    'outcome' (benchmark OUTCOME_BENCHMARK, predicted = the model's posterior-mean score, in no greedy batch).
    rank / rank_per_usd: among the rows of the same kind (a cell's rank among the cells, as before outcome rows
    existed); rank_all / rank_all_per_usd: among all rows. TABLE_COLUMNS, in rank_all order. Empty when nothing is
    unmeasured."""
    values = cell_values(score_draws, cell_sd, gradient, cell_usd, n_nodes=n_nodes, correlation=correlation)
    if values.empty:
        return empty_table(TABLE_COLUMNS)
    values = values.assign(kind="cell", n_queries=np.nan, outcome_sd=np.nan, outcome_value_se=np.nan)
    table = values.rename(columns={"value": "expected_reduction", "rank_value": "rank"})
    reduction = table["expected_reduction"]
    table["expected_reduction"] = reduction.where(reduction > 1e-12, 0.0)  # round-off of (3) at a value of 0
    table["value_per_usd"] = table["value_per_usd"].where(table["expected_reduction"] > 0, 0.0)
    rows, cols = completed.index.get_indexer(table["model_id"]), completed.columns.get_indexer(table["benchmark"])
    table["predicted"] = completed.to_numpy(dtype=float)[rows, cols]
    key = ["model_id", "benchmark"]
    for per_dollar, step_col, wrong_col in ((False, "greedy_step", "p_wrong_after"),
                                            (True, "greedy_step_per_usd", "p_wrong_after_per_usd")):
        batch = greedy_batch(score_draws, cell_sd, gradient, cell_usd, k=k_max, per_dollar=per_dollar, seed=seed,
                             correlation=correlation)
        table["p_wrong_now"] = float(batch["p_wrong"].iloc[0])
        table["p_wrong_now_se"] = float(batch["p_wrong_se"].iloc[0])
        steps = batch.iloc[1:][[*key, "step", "p_wrong", "p_wrong_se"]].rename(
            columns={"step": step_col, "p_wrong": wrong_col, "p_wrong_se": f"{wrong_col}_se"})
        table = table.merge(steps, on=key, how="left")
        table[step_col] = table[step_col].fillna(0).astype(int)
    mu = np.asarray(score_draws, dtype=float).mean(axis=0)
    table = table.join(what_if(mu, cell_sd.index, table)).assign(noise_correlation=float(correlation))
    if outcomes is not None and len(outcomes):
        table = pd.concat([table, _outcome_rows(outcomes, table, pd.Series(mu, index=cell_sd.index))],
                          ignore_index=True)
    for column, value in (("rank", "expected_reduction"), ("rank_per_usd", "value_per_usd")):
        # a free candidate's value per USD is NaN: ranked last, as `cell_values` does
        ranked = {"ascending": False, "method": "first", "na_option": "bottom"}
        table[column.replace("rank", "rank_all")] = table[value].rank(**ranked).astype(int)
        table[column] = table.groupby("kind")[value].rank(**ranked).astype(int)
    return table.sort_values("rank_all").reset_index(drop=True)[TABLE_COLUMNS]


def _outcome_rows(outcomes: pd.DataFrame, cells: pd.DataFrame, mu: pd.Series) -> pd.DataFrame:
    """`outcome_values` rows in the table's columns (`next_evaluations_table`): no greedy step, no cell spread."""
    value = outcomes["value"].where(outcomes["value"] > 1e-12, 0.0)
    first = cells.iloc[0]
    return pd.DataFrame({
        "kind": "outcome", "model_id": outcomes["model_id"], "benchmark": OUTCOME_BENCHMARK,
        "predicted": mu.reindex(outcomes["model_id"]).to_numpy(), "cell_sd": np.nan, "gradient": np.nan,
        "expected_reduction": value, "cost_usd": outcomes["cost_usd"],
        "value_per_usd": (value / outcomes["cost_usd"].where(outcomes["cost_usd"] > 0)).fillna(0.0),
        "greedy_step": 0, "greedy_step_per_usd": 0, "pick_if_high": outcomes["pick_if_high"],
        "pick_if_low": outcomes["pick_if_low"], "n_queries": float(OUTCOME_QUERIES),
        "outcome_sd": outcomes["outcome_sd"], "outcome_value_se": outcomes["value_se"],
        **{c: first[c] for c in ("p_wrong_now", "p_wrong_now_se", "pick_now", "noise_correlation")}})


def short_list(table: pd.DataFrame, k: int, budget: float | None = None) -> tuple[pd.DataFrame, float | None]:
    """From a `next_evaluations_table`: (the cells to measure, P(wrong pick) after them, or None when that was not
    computed for this set). Without a budget: the first k of the greedy batch by value; with one: the greedy batch
    by value per USD, in order, the cells that still fit (a dearer one is skipped), at most k."""
    step, wrong = ("greedy_step_per_usd", "p_wrong_after_per_usd") if budget is not None else \
        ("greedy_step", "p_wrong_after")
    order = table[table[step] > 0].sort_values(step)
    if budget is None:
        chosen = order.head(k)
    else:
        spend, keep = 0.0, []
        for i, cost in order["cost_usd"].items():
            if len(keep) < k and spend + cost <= budget + 1e-9:
                keep.append(i)
                spend += cost
        chosen = order.loc[keep]
    prefix = len(chosen) > 0 and list(chosen[step]) == list(range(1, len(chosen) + 1))
    return chosen, float(chosen[wrong].iloc[-1]) if prefix else None


def outcome_list(table: pd.DataFrame, n: int, budget: float | None = None) -> pd.DataFrame:
    """From a `next_evaluations_table`: the n outcome evaluations worth most (by value; with a budget, by value per
    USD among those within it), positive value only; no rows for a table published before they were."""
    if "kind" not in table:
        return table.iloc[:0]
    rows = table[(table["kind"] == "outcome") & (table["expected_reduction"] > 0)]
    if budget is not None:
        rows = rows[rows["cost_usd"] <= budget + 1e-9].sort_values("rank_per_usd")
    return rows.sort_values("rank").head(n) if budget is None else rows.head(n)


def p_wrong_se(chosen: pd.DataFrame, budget: float | None) -> float:
    """The standard error (over the quantile nodes) of P(wrong pick) after `short_list`'s cells: that of its last
    greedy step (by value per USD with a budget); NaN for a table published before it was stored."""
    column = "p_wrong_after_per_usd_se" if budget is not None else "p_wrong_after_se"
    return float(chosen[column].iloc[-1]) if column in chosen and len(chosen) else float("nan")


def answered(previous: pd.DataFrame, observed: pd.DataFrame) -> pd.DataFrame:
    """The cells a previous next-evaluations table suggested that `observed` (model x benchmark, NaN = missing)
    now measures: [model_id, benchmark, predicted, measured]."""
    if previous.empty:
        return empty_table(ANSWERED_COLUMNS)
    rows = observed.index.get_indexer(previous["model_id"])
    cols = observed.columns.get_indexer(previous["benchmark"])
    ok = (rows >= 0) & (cols >= 0)
    value = np.full(len(previous), np.nan)
    value[ok] = observed.to_numpy(dtype=float)[rows[ok], cols[ok]]
    out = previous[["model_id", "benchmark", "predicted"]].assign(measured=value)
    return out[out["measured"].notna()].reset_index(drop=True)
