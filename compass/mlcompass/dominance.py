"""Dominance on observed benchmarks, and the leaderboard's dominance repair (ML Compass §4.6; issue 42 item 1).

Model a *dominates* model b when b was observed on some benchmark, a on every benchmark b was observed on, scores at least as high
as b on each of them, and costs no more; *strictly* when b does not also dominate a (equal rows and cost). A
leaderboard on which b ranks above a model that strictly dominates it contradicts the only thing the data say
for certain about the two, yet the score Û(x(m)) - lam c(m) of §4.6 cannot rule it out:

  * imputation (compass.mlcompass.imputation) fills b's missing cells from the low-rank fit, and they can exceed
    what a actually scored there;
  * Bartlett weights W = Psi^-1 L (L' Psi^-1 L)^-1 (compass.mlcompass.measures.bartlett_scores) have negative
    entries when a benchmark loads on two factors, so a measure can fall when a benchmark score rises;
  * a learned utility can decrease in a measure (a negative coefficient, a non-monotone tree model).

Constraining each of these would change the paper's estimators; the leaderboard instead applies a stated
repair (`repair`): a model's ranking score is lifted to the best score among the models it strictly dominates,
so it ranks just above the best of them (ties go to the lower cost, then to the model with fewer dominators,
which a dominating model always is). Strict dominance is transitive, so the lifted order is a linear extension of
it: no model ranks below one it strictly dominates. Only dominating models move up; the score order of all others
is unchanged. Cost O(n^2 p) comparisons for n models and p benchmarks (vectorized per model).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Scores equal to this many decimals are ties (broken by cost, then id) on every board and in every replicate.
TIE_DECIMALS = 12


def strict_dominators(observed: pd.DataFrame, cost: pd.Series) -> dict[str, list[str]]:
    """Per model of `observed` (index model_id, columns benchmarks, NaN = not observed) the models that strictly
    dominate it, given each model's `cost`; models dominated by none are absent."""
    x = observed.to_numpy(float)
    c = cost.reindex(observed.index).to_numpy(float)
    ids = observed.index.to_numpy()
    seen = ~np.isnan(x)
    out: dict[str, list[str]] = {}
    for b in range(len(x)):
        cols = seen[b]
        if not cols.any():  # nothing observed: nothing to dominate on
            continue
        with np.errstate(invalid="ignore"):  # NaN >= v is False: a must be observed where b was
            dom = (x[:, cols] >= x[b, cols]).all(axis=1) & (c <= c[b])
        dom[b] = False
        for a in np.flatnonzero(dom):
            mutual = (seen[a] == cols).all() and (x[a, cols] == x[b, cols]).all() and c[a] == c[b]
            if not mutual:
                out.setdefault(str(ids[b]), []).append(str(ids[a]))
    return out


def repair(board: pd.DataFrame, observed: pd.DataFrame, price_col: str = "cost") -> pd.DataFrame:
    """Re-rank `board` (rows with model_id, score and `price_col`; any order) so that no model ranks below a model it
    strictly dominates on `observed` at no higher `price_col` (module docstring): `score` becomes the lifted ranking
    score, `dominates` names the model whose score a lifted row took (None elsewhere), rows sorted best first with a
    fresh index. Ties go to the lower `price_col`, then to fewer dominators. `price_col` is the actual price: where a
    board is scored on a selection cost (a tier's shared cost, Table 5's protocol), dominance and ties still compare
    what the models cost, or a cheaper dominator in a dearer tier would never be lifted."""
    dominators = strict_dominators(observed.reindex(board["model_id"]), board.set_index("model_id")[price_col])
    score = board.set_index("model_id")["score"].astype(float)
    lifted, source = score.copy(), pd.Series(None, index=score.index, dtype=object)
    for b in score.index:
        for a in dominators.get(b, []):
            if score[b] > lifted[a]:
                lifted[a], source[a] = score[b], b
    n_dom = pd.Series({m: len(dominators.get(m, [])) for m in score.index})
    out = board.assign(score=board["model_id"].map(lifted), dominates=board["model_id"].map(source),
                       _s=-board["model_id"].map(lifted).round(TIE_DECIMALS), _d=board["model_id"].map(n_dom))
    return out.sort_values(["_s", price_col, "_d", "model_id"], kind="mergesort").drop(columns=["_s", "_d"]).reset_index(drop=True)
