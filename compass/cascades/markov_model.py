"""Markov-copula model of a cascade's P(correct) and E[cost] (thesis seed 001, Ch. 2, eqs. 2.5-2.6,
Proposition 2 / eqs. 2.14-2.15, Appendix 2B Algorithm 1).

M_i answers when Phi_i > t_i and defers when Phi_i <= t_i; the last model always answers
(t_k := -inf). With D_1 = P(Phi_1 <= t_1), D_i = P(Phi_i <= t_i | Phi_{i-1} <= t_{i-1}) and
I_i = int_{Phi_i > t_i} Phi_i dP(. | Phi_{i-1} <= t_{i-1}):

    P(correct) = sum_i (prod_{j<i} D_j) I_i,   E[cost] = sum_i (prod_{j<i} D_j)(1 - D_i) sum_{j<=i} E[C_j].

Numerics (our own, replacing the look-up tables of I_i that the thesis pre-computes, Appendix 2B;
the authors' code uses 20x20 / 100-point tables):
the Stieltjes integrals are rewritten by parts, int_{(t, phi_max]} phi dJ = phi_max J(phi_max) -
t J(t) - int_t^{phi_max} J, and every term is closed form in u = F^s(t) (the smooth-part CDF),
except two fixed-grid quadratures tabulated once per model / pair on a grid uniform in u:
A(u) = int_{Q(u)}^{phi_max} F^s and B(u_a, u) = int_{Q(u)}^{phi_max} C(u_a, F^s). Evaluation is
then vectorised over a batch of threshold vectors (no Monte Carlo), with the per-stage terms kept
(``StageTerms``) so that a line search over one threshold re-evaluates only the two stages it enters
(``CascadeModel.line_terms``). Thresholds are clipped to
the interior [phi_min + eps, phi_max - eps] where the objective is smooth (thesis Sec. 2.3,
"Smoothness of the objective"); boundary choices are subcascades.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from compass.cascades.copulas import THESIS_FAMILY, PairJoint, fit_pair, gumbel_cdf_unchecked
from compass.cascades.data import check_cascade, mean_costs, model_ids, pivot
from compass.cascades.marginals import MixedBetaMarginal, fit_marginal_batch
from compass.cascades.wide import WideRecords

INTERIOR_EPS = 1e-3  # fraction of (phi_max - phi_min) kept clear of the point masses
_COPULA_ALIASES = {"gumbel": THESIS_FAMILY}


def _cell(u: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Cell index i0 in [0, n - 2] and fraction in it of u in [0, 1] (clipped) on n uniform nodes."""
    pos = np.minimum(np.maximum(u, 0.0), 1.0) * (n - 1)
    i0 = np.minimum(np.floor(pos), n - 2)  # in floats: no mixed integer / float arithmetic
    return i0.astype(np.intp), pos - i0


def _interp1(table: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Linear interpolation of ``table`` sampled on a uniform grid over [0, 1]; a stacked (c, n) table
    interpolates row j of ``u`` (c, m) in row j."""
    n = table.shape[-1]
    i0, f = _cell(u, n)
    if table.ndim == 2:
        i0 = i0 + n * np.arange(table.shape[0])[:, None]
    flat = table.ravel()
    return flat[i0] * (1 - f) + flat[i0 + 1] * f


def _interp_ab(a_table: np.ndarray, b_table: np.ndarray, ua: np.ndarray, u: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Stacked (c, n) ``a_table`` interpolated linearly at row j of ``u`` (c, m) in row j, and stacked (c, n, n_a)
    ``b_table[j, i, ia]`` bilinearly at rows j of ``u``, ``ua``, all sampled on uniform grids over [0, 1] (the cell
    of ``u`` found once for both)."""
    c, n, n_a = b_table.shape
    i0, f = _cell(u, n)
    ia, fa = _cell(ua, n_a)
    row, g = np.arange(c)[:, None], 1 - f
    flat, at = a_table.ravel(), i0 + n * row  # flat[k:][at] = flat[at + k]
    a_val = flat[at] * g + flat[1:][at] * f
    flat, at = b_table.ravel(), i0 * n_a + ia + n * n_a * row
    b_val = (flat[at] * g + flat[n_a:][at] * f) * (1 - fa) + (flat[1:][at] * g + flat[n_a + 1:][at] * f) * fa
    return a_val, b_val


def _right_cumtrapz(values: np.ndarray, q: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """int_{q_j}^{q_last} of a function sampled at nodes q (first axis), trapezoid, per node j (into ``out``
    if given; the running sums go down the first axis, all columns at once)."""
    out = np.empty(values.shape) if out is None else out
    cells = out[:-1]
    np.add(values[1:], values[:-1], out=cells)
    cells *= (0.5 * np.diff(q)).reshape((-1,) + (1,) * (values.ndim - 1))  # one pass (x 0.5 is exact either way)
    out[-1] = 0.0
    np.cumsum(cells[::-1], axis=0, out=cells[::-1])
    return out


@dataclass(frozen=True)
class _Stages:
    """Constants of stages 2..k of one cascade, one row per consecutive pair (a, b): the pair laws, their case
    probabilities (p0 = P(a at phi_min), p1 = P(a smooth), p00, p10, p01, p11), phi_max of b, phi_min of the last
    model, which stage is not the last, cumulative costs through b, the Gumbel thetas, the smooth quantiles of
    models 1..k-1 at the u nodes and the stacked A / B quadrature tables. The per-pair scalars are (k-1, 1)
    columns that broadcast against the stage-major (k-1, m) arrays of ``StageTerms``."""

    pairs: list[PairJoint]
    p0: np.ndarray
    p1: np.ndarray
    p00: np.ndarray
    p10: np.ndarray
    p01: np.ndarray
    p11: np.ndarray
    phi_max: np.ndarray
    phi_min_last: float
    not_last: np.ndarray
    cum_costs: np.ndarray
    gumbel_theta: np.ndarray | None  # theta of every non-last pair (1 = independence) when all are Gumbel
    quantile_nodes: np.ndarray  # Q^s of models 1..k-1 at the uniform u nodes
    a_tables: np.ndarray
    b_tables: np.ndarray


def _stage_inputs(st: _Stages, t: np.ndarray, u: np.ndarray, rows: slice = slice(None)
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per stage row j in ``rows`` = the pair (cascade[j], cascade[j + 1]), from stage-major ``t``, ``u``
    (k-1, m): u of model j, u and t of model j + 1 (the last model answers all: u = 0, t = phi_min)."""
    start, stop, _ = rows.indices(len(t))
    ut, tb = u[start + 1:stop + 1], t[start + 1:stop + 1]
    if stop == len(t):  # the rows include the last pair
        m = t.shape[1]
        ut, tb = np.vstack([ut, np.zeros((1, m))]), np.vstack([tb, np.full((1, m), st.phi_min_last)])
    return u[rows], ut, tb


def _stage_terms(st: _Stages, rows: slice, ua: np.ndarray, ut: np.ndarray, tb: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stages 2..k of Algorithm 1 for the stage rows ``rows`` (inputs (len(rows), m) from ``_stage_inputs``):
    the unnormalised P(correct) term ~I = phi_max F_a - t J - I (by parts), 1 / F_a and D_next = J / F_a, where
    F_a = P(Phi_a <= t_a) and J = P(Phi_a <= t_a, Phi_b <= t_b)."""
    start, stop, _ = rows.indices(len(st.pairs))
    inner = min(stop, len(st.pairs) - 1) - start  # rows that are not the last pair
    f_a = st.p0[rows] + st.p1[rows] * ua
    alpha = st.p00[rows] + st.p10[rows] * ua
    copula = np.zeros_like(ua)  # C(u_a, 0) = 0 in the last row
    if st.gumbel_theta is not None and inner > 0:  # the thesis' Gumbel (or independence) on every pair: one call
        copula[:inner] = gumbel_cdf_unchecked(ua[:inner], ut[:inner], st.gumbel_theta[start:start + inner])
    for j, pair in enumerate(st.pairs[start:start + inner] if st.gumbel_theta is None else []):
        copula[j] = pair.copula.cdf(ua[j], ut[j])
    joint = (alpha + st.p01[rows] * ut + st.p11[rows] * copula) * st.not_last[rows]
    a_int, b_int = _interp_ab(st.a_tables[rows], st.b_tables[rows], ua, ut)
    integral = alpha * (st.phi_max[rows] - tb) + st.p01[rows] * a_int + st.p11[rows] * b_int
    tilde = st.phi_max[rows] * f_a - tb * joint - integral
    inv = np.divide(1.0, f_a, out=np.zeros_like(f_a), where=f_a > 1e-12)
    return tilde, inv, np.minimum(np.maximum(joint * inv, 0.0), 1.0)


class StageTerms:
    """The terms of Algorithm 1 at m threshold vectors, stage-major: smooth-CDF values ``u`` and thresholds ``t``
    (k-1, m), stage 1's D_1 ``d`` and its P(correct) / E[cost] terms ``p_first``, ``e_first`` (m,), and per stage
    ``tilde`` = ~I, ``inv`` = 1 / F_a and ``d_next`` = D_next (k-1, m; ``_stage_terms``). All are row views of one
    (5(k-1) + 3, m) array, so that picking, repeating or overwriting threshold vectors is one operation."""

    def __init__(self, data: np.ndarray) -> None:
        self.data = data
        d = (len(data) - 3) // 5
        self.u, self.t, self.tilde, self.inv, self.d_next = (data[i * d:(i + 1) * d] for i in range(5))
        self.d, self.p_first, self.e_first = data[5 * d:]

    @classmethod
    def of(cls, u: np.ndarray, t: np.ndarray, d: np.ndarray, p_first: np.ndarray, e_first: np.ndarray,
           tilde: np.ndarray, inv: np.ndarray, d_next: np.ndarray) -> StageTerms:
        return cls(np.vstack([u, t, tilde, inv, d_next, d, p_first, e_first]))

    def repeat(self, n: int) -> StageTerms:
        """Every threshold vector n times in a row (a copy)."""
        return StageTerms(np.repeat(self.data, n, axis=1))

    def rows(self, idx: np.ndarray) -> StageTerms:
        """The threshold vectors ``idx`` (a copy)."""
        return StageTerms(self.data[:, idx])

    def put(self, idx: np.ndarray, other: StageTerms) -> None:
        """Overwrite threshold vectors ``idx`` with those of ``other``."""
        self.data[:, idx] = other.data


class PairLaws(Mapping):
    """Pair laws (eq. 2.4) of every ordered pair i < j of a chain, each fitted on first access: a cascade
    evaluates only its consecutive pairs, so tuning one k-model cascade fits k - 1 of the k(k-1)/2 pairs."""

    def __init__(self, phi: pd.DataFrame, marginals: dict[str, MixedBetaMarginal], family: str) -> None:
        self._phi, self._marginals, self._family = phi, marginals, family
        self._keys = list(combinations(phi.columns, 2))
        self._fitted: dict[tuple[str, str], PairJoint] = {}

    def __getitem__(self, key: tuple[str, str]) -> PairJoint:
        if key not in self._fitted:
            if key not in self._keys:
                raise KeyError(key)
            a, b = key
            self._fitted[key] = fit_pair(self._phi[a].to_numpy(), self._phi[b].to_numpy(), self._marginals[a],
                                         self._marginals[b], self._family)
        return self._fitted[key]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


@dataclass
class CascadeModel:
    """Fitted Markov-copula model over an ordered chain of models (marginals, all pairs i < j, costs)."""

    models: tuple[str, ...]
    marginals: dict[str, MixedBetaMarginal]
    pairs: Mapping[tuple[str, str], PairJoint]
    costs: dict[str, float]
    copula: str
    n_u: int = 1025
    n_ua: int = 129
    _u_nodes: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)
    _a_tables: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    _b_tables: dict[tuple[str, str], np.ndarray] = field(default_factory=dict, repr=False)
    _stage_cache: dict[tuple[str, ...], _Stages] = field(default_factory=dict, repr=False)

    def _nodes(self, m: str) -> tuple[np.ndarray, np.ndarray]:
        if m not in self._u_nodes:
            u = np.linspace(0.0, 1.0, self.n_u)
            q = self.marginals[m].smooth_quantile(u)
            q[0], q[-1] = self.marginals[m].phi_min, self.marginals[m].phi_max
            self._u_nodes[m] = (u, q)
        return self._u_nodes[m]

    def _a_table(self, m: str) -> np.ndarray:
        if m not in self._a_tables:
            u, q = self._nodes(m)
            self._a_tables[m] = _right_cumtrapz(u, q)
        return self._a_tables[m]

    def _b_table(self, a: str, b: str, out: np.ndarray | None = None) -> np.ndarray:
        """B(u_a, u) of the pair (a, b) as an (n_u, n_ua) table (u down the rows), built once; ``out``: where to
        build (or copy) it."""
        if (a, b) not in self._b_tables:
            u, q = self._nodes(b)
            ua = np.linspace(0.0, 1.0, self.n_ua)
            c = self.pairs[(a, b)].copula.cdf(ua[None, :], u[:, None])
            self._b_tables[(a, b)] = _right_cumtrapz(c, q, out)
        elif out is not None:
            out[...] = self._b_tables[(a, b)]
        return self._b_tables[(a, b)] if out is None else out

    def _stages(self, cascade: tuple[str, ...]) -> _Stages:
        """The per-stage constants of ``cascade`` stacked along its consecutive pairs (built once per cascade)."""
        if cascade not in self._stage_cache:
            pairs = list(zip(cascade[:-1], cascade[1:]))
            laws = [self.pairs[ab] for ab in pairs]
            probs = np.array([law.case_probs for law in laws])[..., None]  # (pairs, 3, 3, 1): column vectors
            self._stage_cache[cascade] = _Stages(
                pairs=laws, p0=probs[:, 0].sum(axis=1), p1=probs[:, 1].sum(axis=1), p00=probs[:, 0, 0],
                p10=probs[:, 1, 0], p01=probs[:, 0, 1], p11=probs[:, 1, 1],
                phi_max=np.array([[self.marginals[b].phi_max] for _, b in pairs]),
                phi_min_last=self.marginals[cascade[-1]].phi_min,
                not_last=(np.arange(len(pairs)) < len(pairs) - 1)[:, None],
                cum_costs=np.cumsum([self.costs[m] for m in cascade])[1:, None],
                gumbel_theta=np.array([law.copula.parameters[0] if law.copula.is_thesis_gumbel else 1.0
                                       for law in laws[:-1]]).reshape(-1, 1)
                if all(law.copula.is_thesis_gumbel or law.copula.family == "indep" for law in laws[:-1]) else None,
                quantile_nodes=np.array([self._nodes(a)[1] for a, _ in pairs]),
                a_tables=np.array([self._a_table(b) for _, b in pairs]),
                b_tables=self._stacked_b_tables(pairs))
        return self._stage_cache[cascade]

    def _stacked_b_tables(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """The B tables of ``pairs`` in one (pairs, n_u, n_ua) array, each built in place."""
        tables = np.empty((len(pairs), self.n_u, self.n_ua))
        for table, (a, b) in zip(tables, pairs):
            self._b_table(a, b, out=table)
        return tables

    def precompute(self) -> CascadeModel:
        """Build the quadrature tables of every model and pair once (reused across lambdas and
        subcascades, thesis App. 2B); returns ``self``."""
        for m in self.models:
            self._a_table(m)
        for a, b in self.pairs:
            self._b_table(a, b)
        return self

    def bounds(self, cascade: Sequence[str]) -> list[tuple[float, float]]:
        """Interior box [phi_min + eps, phi_max - eps] for each of the k - 1 thresholds."""
        out = []
        for m in cascade[:-1]:
            mg = self.marginals[m]
            eps = INTERIOR_EPS * (mg.phi_max - mg.phi_min)
            out.append((mg.phi_min + eps, mg.phi_max - eps))
        return out

    def check(self, cascade: Sequence[str]) -> list[str]:
        """Validate a cascade: known models, in fitted chain order, no repeats."""
        cascade = check_cascade(cascade, self.models)
        order = [self.models.index(m) for m in cascade]
        if order != sorted(order):
            raise ValueError(f"cascade {cascade} is not in the fitted chain order {list(self.models)}")
        return cascade

    def evaluate(self, cascade: Sequence[str], thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Algorithm 1 for a batch of threshold vectors, shape (m, k-1) or (k-1,).

        Returns (P(correct), E[cost]), each of shape (m,). Thresholds are clipped to ``bounds``.
        """
        cascade = self.check(cascade)
        t = np.atleast_2d(np.asarray(thresholds, dtype=float))
        if t.shape[1] != len(cascade) - 1:
            raise ValueError(f"cascade of {len(cascade)} models needs {len(cascade) - 1} thresholds, got {t.shape[1]}")
        if np.isnan(t).any():
            raise ValueError("NaN thresholds")
        lo, hi = np.array(self.bounds(cascade)).T
        return self.evaluate_unchecked(cascade, np.minimum(np.maximum(t, lo), hi))

    def u_to_threshold(self, cascade: Sequence[str], u: np.ndarray) -> np.ndarray:
        """Thresholds t = Q^s(u) per stage by linear interpolation of the tabulated smooth quantile."""
        return _interp1(self._stages(tuple(cascade)).quantile_nodes, u.T).T  # the u nodes are uniform on [0, 1]

    def evaluate_unchecked(self, cascade: Sequence[str], t: np.ndarray,
                           u: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``evaluate`` without validation: ``t`` is (m, k-1) inside ``bounds`` (optimiser hot path).

        ``u``: the matching smooth-CDF values F^s_i(t_i) when the caller already has them.
        """
        if u is None:
            u = np.column_stack([self.marginals[m].smooth_cdf(t[:, i]) for i, m in enumerate(cascade[:-1])])
        return self.predict(cascade, self._terms(cascade, np.ascontiguousarray(t.T), np.ascontiguousarray(u.T)))

    def terms(self, cascade: Sequence[str], u: np.ndarray) -> StageTerms:
        """The terms of Algorithm 1 at smooth-CDF values ``u`` (m, k-1) inside the bounds (thresholds by
        ``u_to_threshold``); ``predict`` turns them into (P(correct), E[cost])."""
        u = np.ascontiguousarray(u.T)
        return self._terms(cascade, _interp1(self._stages(tuple(cascade)).quantile_nodes, u), u)

    def line_terms(self, cascade: Sequence[str], base: StageTerms, j: int, values: np.ndarray) -> StageTerms:
        """The terms of the n threshold vectors of ``base`` with u_j replaced by each column of ``values`` (n, P),
        as n * P vectors (vector i * P + q: base vector i, candidate q): one line search of the tuning.

        Equal to ``terms`` of the expanded vectors, but only what depends on u_j is evaluated per candidate
        (stage 1 when j = 0, the stages of the pairs j - 1 and j); the rest is repeated from ``base``.
        """
        st = self._stages(tuple(cascade))
        out = base.repeat(values.shape[1])
        out.u[j] = values.ravel()
        out.t[j] = _interp1(st.quantile_nodes[j], out.u[j])
        rows = slice(max(j - 1, 0), j + 1)
        for term, part in zip((out.tilde, out.inv, out.d_next),
                              _stage_terms(st, rows, *_stage_inputs(st, out.t, out.u, rows))):
            term[rows] = part
        if j == 0:
            out.data[-3:] = self._first_stage(cascade[0], out.t[0], out.u[0])
        return out

    def predict(self, cascade: Sequence[str], terms: StageTerms) -> tuple[np.ndarray, np.ndarray]:
        """(P(correct), E[cost]) of eqs. 2.14-2.15 from the terms of Algorithm 1 (``terms``, ``line_terms``)."""
        prefix = np.empty_like(terms.d_next)  # prod_{j<i} D_next_j row by row (np.cumprod is slow across rows)
        prefix[0] = 1.0
        for i in range(1, len(prefix)):
            np.multiply(prefix[i - 1], terms.d_next[i - 1], out=prefix[i])
        cum = terms.d * prefix
        return (terms.p_first + (cum * terms.tilde * terms.inv).sum(axis=0),
                terms.e_first + (cum * (1 - terms.d_next) * self._stages(tuple(cascade)).cum_costs).sum(axis=0))

    def _terms(self, cascade: Sequence[str], t: np.ndarray, u: np.ndarray) -> StageTerms:
        """``StageTerms`` at stage-major thresholds ``t`` and smooth-CDF values ``u`` (k-1, m)."""
        st = self._stages(tuple(cascade))
        return StageTerms.of(u, t, *self._first_stage(cascade[0], t[0], u[0]),
                             *_stage_terms(st, slice(None), *_stage_inputs(st, t, u)))

    def _first_stage(self, model: str, t: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Stage 1 of Algorithm 1 at thresholds ``t`` (smooth-CDF values ``u``): D_1, its P(correct) term
        phi_max - t D_1 - I_1 (by parts) and its E[cost] term (1 - D_1) E[C_1]."""
        first = self.marginals[model]
        d = first.w_min + first.w_smooth * u
        integral = first.w_min * (first.phi_max - t) + first.w_smooth * _interp1(self._a_table(model), u)
        return d, first.phi_max - t * d - integral, (1 - d) * self.costs[model]

    def simulate(self, cascade: Sequence[str], thresholds: Sequence[float], n: int,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Monte Carlo from the same fitted model: per simulated query, (Phi of the answering model,
        cumulative expected cost). Stage i draws (Phi_{i-1}, Phi_i) from the pair law conditioned on
        Phi_{i-1} <= t_{i-1} by rejection, i.e. exactly the Markov structure of eq. 2.5."""
        cascade = self.check(cascade)
        t = np.asarray(thresholds, dtype=float)
        if t.shape != (len(cascade) - 1,):
            raise ValueError(f"need {len(cascade) - 1} thresholds, got shape {t.shape}")
        phi_ans, cost = np.empty(n), np.empty(n)
        current = self.marginals[cascade[0]].sample(n, rng)
        alive = np.arange(n)
        cum_cost = 0.0
        for i, m in enumerate(cascade):
            cum_cost += self.costs[m]
            answer = np.ones(current.size, bool) if i == len(cascade) - 1 else current > t[i]
            phi_ans[alive[answer]], cost[alive[answer]] = current[answer], cum_cost
            alive = alive[~answer]
            if alive.size == 0:
                break
            pair, need, got = self.pairs[(m, cascade[i + 1])], alive.size, []
            accept = max(float(self.marginals[m].cdf(t[i])), 1e-3)
            while need > 0:
                draw = pair.sample(int(1.2 * need / accept) + 100, rng)
                keep = draw[draw[:, 0] <= t[i], 1][:need]
                got.append(keep)
                need -= keep.size
            current = np.concatenate(got)
        return phi_ans, cost


def fit_cascade_model(calibrated: pd.DataFrame | WideRecords, models: Sequence[str], *, copula: str = "gumbel",
                      split: str = "train", costs: dict[str, float] | None = None,
                      marginals: dict[str, MixedBetaMarginal] | None = None) -> CascadeModel:
    """Fit marginals (eq. 2.7), pair laws for every ordered pair i < j (eq. 2.4) and mean costs.

    ``models`` is the chain in cascade order (small to large). ``copula``: 'gumbel' (thesis,
    Kendall-tau inversion), 'aic' (best AIC over the pyvinecopulib families) or one family name.
    ``costs``: E[C_j] per model; default = mean ``cost_usd`` on ``split``. ``marginals``: already fitted
    marginals of these models on the same rows (e.g. from a fit with another copula family); default: the
    EMs of all models in one batch (``fit_marginal_batch``). Pair laws are fitted on first use (``PairLaws``).
    """
    models = check_cascade(models, model_ids(calibrated))
    phi = pivot(calibrated, "p_correct", split=split, models=models)
    if phi.empty:
        raise ValueError(f"no aligned {split!r} rows for models {models}")
    if marginals is None:
        marginals = fit_marginal_batch({m: phi[m].to_numpy() for m in models})
    elif missing := [m for m in models if m not in marginals]:
        raise ValueError(f"no fitted marginal for model(s) {missing}")
    marginals = {m: marginals[m] for m in models}
    family = _COPULA_ALIASES.get(copula, copula)
    costs = mean_costs(calibrated, split=split) if costs is None else dict(costs)
    missing = [m for m in models if m not in costs]
    if missing:
        raise ValueError(f"no expected cost for model(s) {missing}")
    # Quadrature tables are built on first use (`_a_table`, `_b_table`): a cascade evaluates only its consecutive
    # pairs, so a k-model chain builds k - 1 pair tables, not all k(k-1)/2 (the thesis' App. 2B tables, lazily).
    return CascadeModel(tuple(models), marginals, PairLaws(phi, marginals, family),
                        {m: float(costs[m]) for m in models}, family)
