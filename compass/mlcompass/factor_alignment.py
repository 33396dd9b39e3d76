"""Stable factor identity across refreshes (ML Compass §4.3 internal measures C1..Ck).

Factor models are identified only up to rotation, order and sign, so a refit on a refreshed
catalog can return "C1" as the old "C2", flipped, or rotated into a different mix. This is an
engineering step of ours; the paper fits once per snapshot (EC §8.3).

* With a previous solution of the same size, the refit is rotated *toward* it (`target_rotation`):
  an oblique least-squares Procrustes rotation of the unrotated minres loadings onto the previous
  sparsified pattern over the shared benchmarks (Hurley & Cattell 1962). It is the regression step
  of promax itself (Hendrickson & White 1964, EC §8.3) with the previous pattern as the target in
  place of the powered varimax loadings, so the measures stay oblique promax-style factors; an
  orthogonal Procrustes (scipy.linalg.orthogonal_procrustes) would hold the factors at 90 degrees
  and could not reproduce the previous oblique pattern even on unchanged data.
* Otherwise (first fit, or a refit with another number of factors) new promax factors are matched
  to the previous ones by Tucker's congruence coefficient

      phi(x, y) = sum_j x_j y_j / sqrt(sum_j x_j^2 * sum_j y_j^2)

  with the Hungarian algorithm (scipy.optimize.linear_sum_assignment), as before (`align_loadings`).
* Signs are fixed by the case's named anchor benchmarks (`anchor_signs`), so a flipped factor
  cannot pass for its namesake.
* Whether a rotated factor still *is* its namesake is judged out of sample (`held_out_rotation`): phi over the
  shared benchmarks is what the target rotation maximizes, so in sample it is biased upward (k^2 free parameters
  fitted to make exactly it large); each benchmark's loadings are instead predicted by a rotation fitted
  without that benchmark.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment


#: Tucker's phi at or above which a refitted factor is taken to be its namesake: Lorenzo-Seva & ten Berge
#: (2006) find phi >= 0.95 to mean that two factors can be considered equal (0.85-0.94: "fair similarity").
MIN_CONGRUENCE = 0.95


def factor_names(k: int) -> list[str]:
    """Canonical names C1..Ck (paper Figure 2)."""
    return [f"C{i + 1}" for i in range(k)]


def factor_number(name: str) -> int:
    """The k of a factor id "Ck" (raises ValueError on anything else)."""
    if not (isinstance(name, str) and name[:1] == "C" and name[1:].isdigit()):
        raise ValueError(f"factor ids look like C1, C2, ...; got {name!r}")
    return int(name[1:])


def tucker_congruence(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Matrix of Tucker congruences between columns of `a` (p, k1) and `b` (p, k2)."""
    num = a.T @ b
    den = np.sqrt(np.outer((a ** 2).sum(axis=0), (b ** 2).sum(axis=0)))
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def congruence_with(new: pd.DataFrame, previous: pd.DataFrame) -> pd.Series:
    """Signed Tucker phi of each column of `new` with the `previous` column of the same name, over the
    benchmarks both share (NaN for a column `previous` lacks). Both wide: index benchmark, columns factor."""
    shared = new.index.intersection(previous.index)
    out = pd.Series(np.nan, index=new.columns, name="congruence")
    for name in new.columns.intersection(previous.columns):
        out[name] = tucker_congruence(new.loc[shared, [name]].to_numpy(float),
                                      previous.loc[shared, [name]].to_numpy(float))[0, 0]
    return out


def target_rotation(unrotated: pd.DataFrame, target: pd.DataFrame) -> pd.DataFrame:
    """Oblique Procrustes rotation of `unrotated` (p x k minres loadings, index benchmark) toward `target`
    (the previous pattern, same k, index benchmark), named like `target`'s columns.

    T = argmin ||A_s T - P_s||_F over the shared benchmarks s (least squares, column by column), then each
    column of T is rescaled so the rotated factors have unit variance, diag((T'T)^-1) = 1: the promax
    regression step with the previous pattern as target. The pattern is A T on every benchmark of `unrotated`.
    """
    shared = unrotated.index.intersection(target.index)
    k = unrotated.shape[1]
    if target.shape[1] != k:
        raise ValueError(f"target rotation needs the same number of factors, got {k} and {target.shape[1]}")
    if len(shared) < k:
        raise ValueError(f"cannot rotate {k} factors toward the previous loadings: {len(shared)} shared benchmark(s)")
    t = _rotation(unrotated.loc[shared].to_numpy(float), target.loc[shared].to_numpy(float))
    return pd.DataFrame(unrotated.to_numpy(float) @ t, index=unrotated.index, columns=target.columns)


def _rotation(a: np.ndarray, target: np.ndarray) -> np.ndarray:
    """T of `target_rotation` from the shared rows' arrays: least squares, then unit factor variances."""
    t, *_ = np.linalg.lstsq(a, target, rcond=None)
    return t @ np.diag(np.sqrt(np.diag(np.linalg.pinv(t.T @ t))))


def held_out_rotation(unrotated: pd.DataFrame, target: pd.DataFrame) -> pd.DataFrame | None:
    """Leave-one-benchmark-out target rotation: the rotated loadings of each shared benchmark predicted by a
    rotation that did not see it. Index the shared benchmarks S (p of them), columns `target`'s.

    With A the unrotated loadings (rows a_j, 1 x k) and P the target pattern over S, for each j in S

        T_(-j) = argmin_T || A_(S-j) T - P_(S-j) ||_F      (least squares, (p - 1) x k; `target_rotation`)
        T_(-j) <- T_(-j) D_(-j),  D_(-j) = diag(diag((T_(-j)' T_(-j))^-1))^(1/2)   (unit factor variances)
        l_j    = a_j T_(-j)                                 (row j of the held-out pattern)

    so p small least-squares solves. Tucker's phi of factor f over these rows,

        phi_f = sum_j l_jf p_jf / sqrt(sum_j l_jf^2 * sum_j p_jf^2),

    (after the same sparsification and signs as the published pattern: `measures.rotate_toward`) is the
    rotation's congruence out of sample. In sample, l_j = a_j T with T fitted on all of S, including p_j: the k^2
    entries of T are chosen to make exactly that phi large, an optimistic estimate (by how much, and what the
    held-out phi costs: docs/results/mlcompass.md, "Congruence out of sample"). None when at most k benchmarks are
    shared (a rotation fitted on k - 1 rows is not determined)."""
    shared = unrotated.index.intersection(target.index)
    if len(shared) <= unrotated.shape[1]:
        return None
    a, p = unrotated.loc[shared].to_numpy(float), target.loc[shared].to_numpy(float)
    rows = [(a @ _rotation(np.delete(a, j, axis=0), np.delete(p, j, axis=0)))[j] for j in range(len(shared))]
    return pd.DataFrame(np.vstack(rows), index=shared, columns=target.columns)


def parse_anchors(spec: object) -> dict[str, int]:
    """A case's `anchors` key, `{benchmark: "+" | "-"}` (YAML `{gpqa_diamond: +}`), as benchmark -> +1/-1.
    ValueError naming the key when it is not such a mapping."""
    if spec is None:
        return {}
    if not isinstance(spec, Mapping) or not spec:
        raise ValueError(f"anchors: expected a mapping benchmark -> + or -, got {spec!r}")
    out = {}
    for bench, sign in spec.items():
        if sign not in ("+", "-"):
            raise ValueError(f"anchors.{bench}: expected + or -, got {sign!r}")
        out[str(bench)] = 1 if sign == "+" else -1
    return out


def anchor_signs(pattern: pd.DataFrame, anchors: Mapping[str, int] | None) -> np.ndarray:
    """Per factor (column of `pattern`, index benchmark) the sign (+1/-1) that orients it.

    `anchors`: benchmark -> +1 or -1, the sign a benchmark must load with on the factors it defines. Each
    factor is oriented by the anchor among its benchmarks with the largest |loading|; a factor on which no
    anchor loads (or a case without anchors) keeps the classical rule, a positive loading sum.
    """
    signs = np.where(pattern.to_numpy(float).sum(axis=0) < 0, -1.0, 1.0)
    present = [b for b in (anchors or {}) if b in pattern.index]
    if not present:
        return signs
    sub = pattern.loc[present]
    for j, column in enumerate(pattern.columns):
        top = sub[column].abs().idxmax()
        if sub.at[top, column] != 0:
            signs[j] = float(np.sign(sub.at[top, column]) * np.sign(anchors[top]))
    return signs


@dataclass(frozen=True)
class FactorAlignment:
    """Mapping of new factor columns to stable names and signs."""

    new_columns: list[str]
    names: list[str]
    signs: np.ndarray
    congruence: np.ndarray  # |phi| with the matched previous factor (nan when unmatched)

    def apply(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Sign-flip and rename factor columns of `frame` (loadings or scores), sorted C1..Ck."""
        out = frame[self.new_columns] * self.signs
        out.columns = self.names
        return out[sorted(self.names, key=factor_number)]


def align_loadings(new: pd.DataFrame, previous: pd.DataFrame) -> FactorAlignment:
    """Match factors of `new` to those of `previous` (both wide: index benchmark, columns factor).

    Previous names must be C1..; unmatched new factors (when the new fit has more) get the
    next free names in order of the new fit. Raises ValueError if no benchmark is shared.
    """
    shared = new.index.intersection(previous.index)
    if shared.empty:
        raise ValueError("cannot align factors: no benchmark shared with the previous loadings")
    next_id = max(factor_number(c) for c in previous.columns) + 1  # raises on a name that is not C1, C2, ...
    phi = tucker_congruence(
        new.loc[shared].to_numpy(dtype=float), previous.loc[shared].to_numpy(dtype=float)
    )
    rows, cols = linear_sum_assignment(-np.abs(phi))
    names: list[str | None] = [None] * new.shape[1]
    signs = np.ones(new.shape[1])
    congruence = np.full(new.shape[1], np.nan)
    for r, c in zip(rows, cols):
        names[r] = str(previous.columns[c])
        signs[r] = 1.0 if phi[r, c] >= 0 else -1.0
        congruence[r] = abs(phi[r, c])
    for r in range(new.shape[1]):
        if names[r] is None:
            names[r] = f"C{next_id}"
            next_id += 1
    return FactorAlignment(list(new.columns), [str(n) for n in names], signs, congruence)
