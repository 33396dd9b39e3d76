"""Marginal distribution of a model's calibrated confidence (thesis seed 001, Ch. 2, eqs. 2.7-2.8).

F(phi) = w_min 1[phi >= phi_min] + w_max 1[phi >= phi_max] + (1 - w_min - w_max) F_mix(phi),
F_mix(phi) = pi F_beta(x | a1, b1) + (1 - pi) F_beta(x | a2, b2),  x = (phi - phi_min)/(phi_max - phi_min).

phi_min / phi_max are the train extremes and w_min / w_max the fractions of train rows equal
to them (counting). The two-component beta mixture is the paper's own EM on the strictly
interior points (the thesis names only EM, Sec. 2.3 "Parameter Inference"; the details
follow the authors' code): init
pi = 0.5, (2, 5), (5, 2); E-step density floored at 1e-6; M-step = weighted beta MLE by
L-BFGS-B (here damped Newton on the sufficient statistics, same convex optimum);
stop at |dLL| < tol. Guards (ours): fewer than ``MIN_EM_POINTS`` interior points or a
degenerate EM fall back to a single beta; fewer than 2 distinct interior points to uniform.

Goodness of fit (eq. 2.20): sqrt(CvM) = sqrt( integral (F_n - F)^2 dF ), parametric bootstrap p.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from functools import cached_property

import numpy as np
import pandas as pd
from scipy import special, stats

MIN_EM_POINTS = 10


@dataclass(frozen=True)
class MixedBetaMarginal:
    """Discrete-continuous mixture of eq. 2.7 (point masses at the extremes + scaled beta mixture)."""

    phi_min: float
    phi_max: float
    w_min: float
    w_max: float
    pi: float
    a1: float
    b1: float
    a2: float
    b2: float

    @property
    def w_smooth(self) -> float:
        return 1.0 - self.w_min - self.w_max

    def _x(self, phi: np.ndarray) -> np.ndarray:
        return np.clip((np.asarray(phi, dtype=float) - self.phi_min) / (self.phi_max - self.phi_min), 0.0, 1.0)

    def smooth_cdf(self, phi: np.ndarray) -> np.ndarray:
        """CDF of the continuous part alone (eq. 2.8); 0 below phi_min, 1 above phi_max."""
        x = self._x(phi)
        return self.pi * special.betainc(self.a1, self.b1, x) + (1 - self.pi) * special.betainc(self.a2, self.b2, x)

    def smooth_pdf(self, phi: np.ndarray) -> np.ndarray:
        """Density of the continuous part w.r.t. phi (zero outside (phi_min, phi_max))."""
        phi = np.asarray(phi, dtype=float)
        x = (phi - self.phi_min) / (self.phi_max - self.phi_min)
        inside = (x > 0) & (x < 1)
        xs = np.where(inside, x, 0.5)
        dens = self.pi * stats.beta.pdf(xs, self.a1, self.b1) + (1 - self.pi) * stats.beta.pdf(xs, self.a2, self.b2)
        return np.where(inside, dens / (self.phi_max - self.phi_min), 0.0)

    def cdf(self, phi: np.ndarray) -> np.ndarray:
        """Full right-continuous CDF of eq. 2.7."""
        phi = np.asarray(phi, dtype=float)
        return (self.w_min * (phi >= self.phi_min) + self.w_max * (phi >= self.phi_max)
                + self.w_smooth * self.smooth_cdf(phi))

    @cached_property
    def _cdf_table(self) -> tuple[np.ndarray, np.ndarray]:
        x = np.linspace(0.0, 1.0, 4097)
        return x, (self.pi * special.betainc(self.a1, self.b1, x)
                   + (1 - self.pi) * special.betainc(self.a2, self.b2, x))

    def smooth_quantile(self, u: np.ndarray) -> np.ndarray:
        """Inverse of ``smooth_cdf``: bracket from a 4097-node CDF table, then 26 vectorised
        bisection steps (bracket width < 1e-11 in x)."""
        u = np.asarray(u, dtype=float)
        grid, table = self._cdf_table
        hi_idx = np.clip(np.searchsorted(table, u, side="left"), 1, grid.size - 1)
        lo, hi = grid[hi_idx - 1], grid[hi_idx]
        for _ in range(26):
            mid = 0.5 * (lo + hi)
            below = (self.pi * special.betainc(self.a1, self.b1, mid)
                     + (1 - self.pi) * special.betainc(self.a2, self.b2, mid)) < u
            lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
        return self.phi_min + 0.5 * (lo + hi) * (self.phi_max - self.phi_min)

    def quantile(self, u: np.ndarray) -> np.ndarray:
        """Generalised inverse F^-(u) = inf{phi : F(phi) >= u} of the full mixture."""
        u = np.asarray(u, dtype=float)
        if self.w_smooth <= 0:
            return np.where(u <= self.w_min, self.phi_min, self.phi_max)
        inner = np.clip((u - self.w_min) / self.w_smooth, 0.0, 1.0)
        return np.where(u <= self.w_min, self.phi_min,
                        np.where(u > 1 - self.w_max, self.phi_max, self.smooth_quantile(inner)))

    def sample_smooth(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Exact draws from the continuous part (component label, then a beta draw)."""
        first = rng.random(n) < self.pi
        x = np.where(first, rng.beta(self.a1, self.b1, n), rng.beta(self.a2, self.b2, n))
        return self.phi_min + x * (self.phi_max - self.phi_min)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Exact draws from the full mixture of eq. 2.7."""
        case = rng.choice(3, size=n, p=[self.w_min, self.w_smooth, self.w_max])
        return np.where(case == 0, self.phi_min, np.where(case == 2, self.phi_max, self.sample_smooth(n, rng)))


def _weighted_beta_mle(logx: np.ndarray, log1mx: np.ndarray, r: np.ndarray,
                       start: tuple[float, float]) -> tuple[float, float]:
    """argmin_{a,b} -sum r log Beta(x | a, b) over a, b in [1e-5, 1e5] (EM M-step for eq. 2.8).

    The beta family is exponential, so this negative log-likelihood is convex in (a, b); the
    authors' code uses L-BFGS-B, we use damped Newton steps on the sufficient statistics
    (same optimum, ~100x less overhead per EM iteration).
    """
    s1, s2, total = float(r @ logx), float(r @ log1mx), float(r.sum())
    if total <= 0:
        return start

    def nll(a: float, b: float) -> float:
        return -(a - 1) * s1 - (b - 1) * s2 + total * float(special.betaln(a, b))

    a, b = (float(np.clip(v, 1e-5, 1e5)) for v in start)
    f = nll(a, b)
    for _ in range(100):
        dab, tab = special.digamma(a + b), special.polygamma(1, a + b)
        g = np.array([-s1 + total * (special.digamma(a) - dab), -s2 + total * (special.digamma(b) - dab)])
        h = total * np.array([[special.polygamma(1, a) - tab, -tab], [-tab, special.polygamma(1, b) - tab]])
        step = np.linalg.solve(h, g)
        t = 1.0
        while t > 1e-10:
            na, nb = np.clip(a - t * step[0], 1e-5, 1e5), np.clip(b - t * step[1], 1e-5, 1e5)
            nf = nll(na, nb)
            if nf <= f:
                break
            t *= 0.5
        else:
            break
        done = abs(f - nf) < 1e-12 * max(1.0, abs(f))
        a, b, f = float(na), float(nb), nf
        if done:
            break
    return a, b


def _mixture_loglik(x: np.ndarray, pi: float, p1: tuple[float, float],
                    p2: tuple[float, float]) -> tuple[float, np.ndarray]:
    """Log-likelihood (density floored at 1e-6) and component-1 responsibilities."""
    logx, log1mx = np.log(x), np.log1p(-x)
    d1 = pi * np.exp((p1[0] - 1) * logx + (p1[1] - 1) * log1mx - special.betaln(*p1))
    d2 = (1 - pi) * np.exp((p2[0] - 1) * logx + (p2[1] - 1) * log1mx - special.betaln(*p2))
    dens = np.maximum(d1 + d2, 1e-6)
    return float(np.log(dens).sum()), d1 / dens


def fit_beta_mixture(x: np.ndarray, *, max_iter: int = 2000, tol: float = 1e-6
                     ) -> tuple[float, float, float, float, float]:
    """EM for a two-component beta mixture on points in (0, 1); returns (pi, a1, b1, a2, b2).

    The paper's own procedure (thesis Sec. 2.3, "EM"; init and stopping from the authors' code).
    Components are ordered so that component 1 has the smaller mean.
    """
    x = np.asarray(x, dtype=float)
    if x.size < 2 or np.any((x <= 0) | (x >= 1)):
        raise ValueError("beta-mixture EM needs >= 2 points strictly inside (0, 1)")
    logx, log1mx = np.log(x), np.log1p(-x)
    pi, p1, p2 = 0.5, (2.0, 5.0), (5.0, 2.0)
    ll_old, r1 = _mixture_loglik(x, pi, p1, p2)
    for _ in range(max_iter):
        pi = float(r1.mean())
        p1 = _weighted_beta_mle(logx, log1mx, r1, p1)
        p2 = _weighted_beta_mle(logx, log1mx, 1 - r1, p2)
        ll, r1 = _mixture_loglik(x, pi, p1, p2)
        if abs(ll - ll_old) < tol:
            break
        ll_old = ll
    if p1[0] / (p1[0] + p1[1]) > p2[0] / (p2[0] + p2[1]):
        pi, p1, p2 = 1 - pi, p2, p1
    return pi, p1[0], p1[1], p2[0], p2[1]


def fit_marginal(phi: np.ndarray, *, max_iter: int = 2000, tol: float = 1e-6,
                 name: str = "model") -> MixedBetaMarginal:
    """Fit eq. 2.7 to calibrated train confidences ``phi`` (``name`` only labels errors)."""
    phi = np.asarray(phi, dtype=float)
    if phi.size == 0:
        raise ValueError(f"{name}: no confidences to fit a marginal to")
    if np.isnan(phi).any():
        raise ValueError(f"{name}: NaN calibrated confidences")
    lo, hi = float(phi.min()), float(phi.max())
    if not hi > lo:
        raise ValueError(f"{name}: all calibrated confidences are identical ({lo}); cannot fit a marginal")
    w_min, w_max = float(np.mean(phi == lo)), float(np.mean(phi == hi))
    x = (phi[(phi > lo) & (phi < hi)] - lo) / (hi - lo)
    if np.unique(x).size < 2:
        return MixedBetaMarginal(lo, hi, w_min, w_max, 1.0, 1.0, 1.0, 1.0, 1.0)
    single = _weighted_beta_mle(np.log(x), np.log1p(-x), np.ones_like(x), (1.0, 1.0))
    params = None
    if x.size >= MIN_EM_POINTS:
        try:
            params = fit_beta_mixture(x, max_iter=max_iter, tol=tol)
        except (FloatingPointError, ValueError, RuntimeError):
            params = None
        if params is not None and not (np.all(np.isfinite(params)) and 1e-3 < params[0] < 1 - 1e-3):
            params = None
    if params is None:
        params = (1.0, *single, *single)
    return MixedBetaMarginal(lo, hi, w_min, w_max, *(float(v) for v in params))


def fit_marginals(calibrated: pd.DataFrame, *, split: str = "train", **em) -> dict[str, MixedBetaMarginal]:
    """Fit one marginal per model to column ``p_correct`` of ``split`` rows."""
    if "p_correct" not in calibrated.columns:
        raise ValueError("calibrated records need a 'p_correct' column (run calibrate first)")
    rows = calibrated[calibrated["split"] == split]
    if rows.empty:
        raise ValueError(f"no {split!r} rows to fit marginals on")
    return {str(m): fit_marginal(g["p_correct"].to_numpy(), name=str(m), **em)
            for m, g in rows.groupby("model_id", sort=True)}


def marginal_params_frame(marginals: dict[str, MixedBetaMarginal]) -> pd.DataFrame:
    """Long table ``model_id, parameter, value`` of fitted marginal parameters."""
    return pd.DataFrame([{"model_id": m, "parameter": k, "value": float(v)}
                         for m, marg in marginals.items() for k, v in asdict(marg).items()])


def marginals_from_params(params: pd.DataFrame) -> dict[str, MixedBetaMarginal]:
    """Inverse of ``marginal_params_frame``: one marginal per ``model_id`` (sorted) from the long
    ``model_id, parameter, value`` table. Row order and extra columns (e.g. the warehouse's
    ``dataset``, ``run_id``) are ignored. Values are used as stored: a float64 round trip (DuckDB
    DOUBLE) gives back the fitted marginals exactly. ``ValueError`` unless every model has each
    parameter of ``MixedBetaMarginal`` exactly once."""
    names = sorted(f.name for f in fields(MixedBetaMarginal))
    if params.empty:
        raise ValueError("no marginal parameters")
    repeated = params.duplicated(["model_id", "parameter"])
    wide = params[~repeated].pivot(index="model_id", columns="parameter", values="value")
    if repeated.any() or sorted(wide.columns) != names or wide.isna().any(axis=None):
        raise ValueError(f"marginal parameters must hold each of {names} exactly once per model; got "
                         f"{params.groupby(['model_id', 'parameter']).size().unstack().to_dict('index')}")
    return {str(m): MixedBetaMarginal(**{k: float(v) for k, v in row.items()}) for m, row in wide.iterrows()}


def sqrt_cvm(marginal: MixedBetaMarginal, values: np.ndarray, n_grid: int = 1000) -> float:
    """sqrt( integral (F_n - F)^2 dF ) of eq. 2.20, atoms included exactly, smooth part by midpoints."""
    v = np.sort(np.asarray(values, dtype=float))
    if v.size == 0:
        raise ValueError("sqrt_cvm needs at least one value")
    ecdf = lambda t: np.searchsorted(v, t, side="right") / v.size  # noqa: E731
    total = marginal.w_min * (ecdf(marginal.phi_min) - marginal.w_min) ** 2
    total += marginal.w_max * (ecdf(marginal.phi_max) - 1.0) ** 2
    if marginal.w_smooth > 0:
        u = (np.arange(n_grid) + 0.5) / n_grid
        q = marginal.smooth_quantile(u)
        # at an interior point, F(q) = w_min + w_smooth * u; F_n counts values <= q
        total += marginal.w_smooth * float(np.mean((ecdf(q) - marginal.w_min - marginal.w_smooth * u) ** 2))
    return float(np.sqrt(total))


def marginal_gof(marginal: MixedBetaMarginal, values: np.ndarray, *, n_boot: int = 100, refit: bool = False,
                 bootstrap_refit: bool = False, rng: np.random.Generator | None = None
                 ) -> tuple[float, float, MixedBetaMarginal]:
    """sqrt(CvM) of ``values`` against ``marginal`` with a parametric-bootstrap p-value (Tables 2.5/2.6).

    ``refit=False``: the train-fitted marginal is tested on (test) ``values``. ``refit=True``: the
    marginal is first refitted to ``values`` (sqrt(CvM)_r, Table 2.6). Bootstrap samples of size n
    are drawn from the tested marginal and scored against it; ``bootstrap_refit=True`` refits every
    bootstrap sample (the textbook correction for estimated parameters; slower and more
    conservative than the thesis' reported p-values). Returns (stat, p, marginal tested).
    """
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    rng = np.random.default_rng() if rng is None else rng
    values = np.asarray(values, dtype=float)
    if refit:
        marginal = fit_marginal(values, max_iter=300, tol=1e-5)
    stat = sqrt_cvm(marginal, values)
    boot = np.empty(n_boot)
    for b in range(n_boot):
        draw = marginal.sample(values.size, rng)
        boot[b] = sqrt_cvm(fit_marginal(draw, max_iter=300, tol=1e-5) if bootstrap_refit else marginal, draw)
    return stat, float(np.mean(boot >= stat)), marginal


def marginal_gof_table(calibrated: pd.DataFrame, marginals: dict[str, MixedBetaMarginal], *,
                       n_boot: int = 100, split: str = "test", bootstrap_refit: bool = False,
                       seed: int = 0) -> pd.DataFrame:
    """Table 2.5 / 2.6 shape: ``model_id, split, refit, sqrt_cvm, p_value, n``."""
    rng = np.random.default_rng(seed)
    rows = []
    data = calibrated[calibrated["split"] == split]
    if data.empty:
        raise ValueError(f"no {split!r} rows for the marginal goodness-of-fit test")
    for model, marg in marginals.items():
        vals = data.loc[data["model_id"] == model, "p_correct"].to_numpy(dtype=float)
        if vals.size == 0:
            raise ValueError(f"model {model!r} has no {split!r} rows")
        for refit in (False, True):
            stat, p, _ = marginal_gof(marg, vals, n_boot=n_boot, refit=refit,
                                      bootstrap_refit=bootstrap_refit, rng=rng)
            rows.append({"model_id": model, "split": split, "refit": refit, "sqrt_cvm": stat,
                         "p_value": p, "n": int(vals.size)})
    return pd.DataFrame(rows)
