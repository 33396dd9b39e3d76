"""Marginal distribution of a model's calibrated confidence (thesis seed 001, Ch. 2, eqs. 2.7-2.8).

F(phi) = w_min 1[phi >= phi_min] + w_max 1[phi >= phi_max] + (1 - w_min - w_max) F_mix(phi),
F_mix(phi) = pi F_beta(x | a1, b1) + (1 - pi) F_beta(x | a2, b2),  x = (phi - phi_min)/(phi_max - phi_min).

phi_min / phi_max are the train extremes and w_min / w_max the fractions of train rows equal
to them (counting). The two-component beta mixture is the paper's own EM on the strictly
interior points (the thesis names only EM, Sec. 2.3 "Parameter Inference"; the details
follow the authors' code): init
pi = 0.5, (2, 5), (5, 2); E-step density floored at 1e-6; M-step = weighted beta MLE by
L-BFGS-B (here damped Newton on the sufficient statistics, same convex optimum);
stop at |dLL| < tol. Ours, for speed: all models of a fit in one padded batch, and SQUAREM
acceleration (``fit_beta_mixtures``). Guards (ours): fewer than ``MIN_EM_POINTS`` interior points or a
degenerate EM fall back to a single beta; fewer than 2 distinct interior points to uniform.

Goodness of fit (eq. 2.20): sqrt(CvM) = sqrt( integral (F_n - F)^2 dF ), parametric bootstrap p.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from functools import cached_property

import numpy as np
import pandas as pd
from scipy import special

from compass.cascades.calibration import fit_rows
from compass.cascades.wide import WideRecords

MIN_EM_POINTS = 10
# Samples (issue 45: a platform's logs hold ~10^5-10^6 rows per model; every dataset embedded today has <= 1,816 rows
# per model, so none is sampled). Drawn without replacement with a fixed seed (`calibration.fit_rows`).
# The mixture's EM (eq. 2.7) runs on at most MARGINAL_SAMPLE interior points per model (the atoms w_min, w_max and
# phi_min, phi_max still count every row); stated error: the fitted CDF moves by at most MARGINAL_SAMPLE_ERROR
# (sup over phi) against the fit on every point, tested on a world with 3x as many points
# (tests/compass/cascades/model/test_marginal_sample.py). The error holds when the two-beta mixture fits the data: on a
# misspecified world the sample's EM and the all-row EM can stop at different local optima (review of issue 45:
# sup-CDF gap 0.019 at 60k rows, 3.8x the stated error).
MARGINAL_SAMPLE = 20_000
MARGINAL_SAMPLE_ERROR = 0.005  # measured <= 0.0037 over 4 worlds; RMS 0.010 at a tenth of the sample
# The goodness of fit (eq. 2.20, Tables 2.5/2.6) tests at most GOF_SAMPLE values per model (`n_fit`; `n` counts them
# all): sqrt(CvM) and its bootstrap p are the statistic at that size (its null level ~ sqrt(1/(6 n_fit)) = 0.004).
# Stated error of sqrt(CvM) against the statistic on every value: GOF_SAMPLE_ERROR, tested as the EM's sample is.
GOF_SAMPLE = 10_000
GOF_SAMPLE_ERROR = 0.01  # measured <= 0.0047 over 12 worlds; RMS 0.012 at a tenth of the sample


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
        return np.where(inside, self.smooth_pdf_x(np.where(inside, x, 0.5)) / (self.phi_max - self.phi_min), 0.0)

    def cdf(self, phi: np.ndarray) -> np.ndarray:
        """Full right-continuous CDF of eq. 2.7."""
        phi = np.asarray(phi, dtype=float)
        return (self.w_min * (phi >= self.phi_min) + self.w_max * (phi >= self.phi_max)
                + self.w_smooth * self.smooth_cdf(phi))

    @cached_property
    def _cdf_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(x nodes, F^s at them, dx/dF^s = 1 / density at them: NaN where the density is 0 or infinite)."""
        x = np.linspace(0.0, 1.0, 1025)
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = 1.0 / self.smooth_pdf_x(x)
        return x, (self.pi * special.betainc(self.a1, self.b1, x)
                   + (1 - self.pi) * special.betainc(self.a2, self.b2, x)), np.where(np.isfinite(slope), slope, np.nan)

    def smooth_pdf_x(self, x: np.ndarray) -> np.ndarray:
        """Density of the scaled beta mixture of eq. 2.8 in x = (phi - phi_min)/(phi_max - phi_min), x in (0, 1)."""
        x = np.asarray(x, dtype=float)
        return sum(w * np.exp(special.xlogy(a - 1, x) + special.xlog1py(b - 1, -x) - special.betaln(a, b))
                   for w, a, b in ((self.pi, self.a1, self.b1), (1 - self.pi, self.a2, self.b2)))

    def smooth_quantile(self, u: np.ndarray) -> np.ndarray:
        """Inverse of ``smooth_cdf``: bracket and cubic Hermite start (inverse slopes from the density; linear
        where it is 0 or infinite) from a 1025-node CDF table, then safeguarded Newton steps (a step leaving the
        bracket bisects it) on the points not yet converged, until |F^s(x) - u| < 1e-13 before the last step, or
        < 1e-9 before a last Newton step (quadratic convergence: it leaves a residual of order 1e-18 |F''| / F'^2;
        on the 45 real marginals the 1023 interior table nodes then move by at most 2.5e-15 relative against the
        1e-13 rule alone), or the bracket is narrower than 1e-12 in x (at most 50 steps)."""
        u = np.asarray(u, dtype=float)
        shape, u = u.shape, u.ravel()
        grid, table, slope = self._cdf_table
        hi_idx = np.clip(np.searchsorted(table, u, side="left"), 1, grid.size - 1)
        lo, hi = grid[hi_idx - 1], grid[hi_idx]
        rise = table[hi_idx] - table[hi_idx - 1]
        s = np.clip(np.divide(u - table[hi_idx - 1], rise, out=np.full_like(lo, 0.5), where=rise > 0), 0.0, 1.0)
        m0, m1 = slope[hi_idx - 1] * rise, slope[hi_idx] * rise
        cubic = ((2 * s**3 - 3 * s**2 + 1) * lo + (s**3 - 2 * s**2 + s) * m0 + (3 * s**2 - 2 * s**3) * hi
                 + (s**3 - s**2) * m1)
        x = np.where(np.isfinite(cubic), np.clip(cubic, lo, hi), lo + s * (hi - lo))
        todo = np.arange(u.size)
        with np.errstate(divide="ignore", invalid="ignore"):
            for _ in range(50):
                xt, lt, ht = x[todo], lo[todo], hi[todo]
                resid = (self.pi * special.betainc(self.a1, self.b1, xt)
                         + (1 - self.pi) * special.betainc(self.a2, self.b2, xt)) - u[todo]
                lt, ht = np.where(resid < 0, xt, lt), np.where(resid > 0, xt, ht)
                step = resid / self.smooth_pdf_x(xt)
                newton = (step != 0) & (xt - step >= lt) & (xt - step <= ht)  # 0: infinite density, bisect
                x[todo] = np.where(resid == 0, xt, np.where(newton, xt - step, 0.5 * (lt + ht)))
                lo[todo], hi[todo] = lt, ht
                # done: the Newton step taken from there only refines, or (quadratic convergence) leaves a residual
                # of order 1e-18 times |F''| / F'^2
                done = (np.abs(resid) < np.where(newton, 1e-9, 1e-13)) | (ht - lt < 1e-12)
                todo = todo[~done]
                if todo.size == 0:
                    break
        return (self.phi_min + x * (self.phi_max - self.phi_min)).reshape(shape)

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


def _beta_nll(a: np.ndarray, b: np.ndarray, s1: np.ndarray, s2: np.ndarray, total: np.ndarray) -> np.ndarray:
    """-sum_i r_i log Beta(x_i | a, b) from the sufficient statistics (s1, s2, total) = sum r (log x, log(1-x), 1)."""
    return (1 - a) * s1 - (b - 1) * s2 + total * special.betaln(a, b)  # (1 - a) = -(a - 1) exactly


def _box(v: np.ndarray) -> np.ndarray:
    """Clip beta parameters to [1e-5, 1e5] (np.clip's wrapper costs more than the two ufuncs on small arrays)."""
    return np.minimum(np.maximum(v, 1e-5), 1e5)


def _weighted_beta_mles(s1: np.ndarray, s2: np.ndarray, total: np.ndarray, a: np.ndarray, b: np.ndarray,
                        max_newton: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """argmin_{a,b} of ``_beta_nll`` over a, b in [1e-5, 1e5], for a batch of problems at once (EM M-step of eq. 2.8).

    The beta family is exponential, so each negative log-likelihood is convex in (a, b); the authors' code uses
    L-BFGS-B, we use damped Newton steps on the sufficient statistics (same optimum), all problems of the batch
    in one array: the closed-form 2x2 solve, backtracking (step halved until the objective does not increase) and
    the stopping rule (relative change or Newton decrement < 1e-12, or no descent step longer than 1e-10) act per
    problem.
    ``a``, ``b``: starting points. A problem with ``total <= 0`` keeps its start.
    """
    a, b = _box(a), _box(b)
    f = _beta_nll(a, b, s1, s2, total)
    active = total > 0
    neg_s1, neg_s2, neg_total, n = -s1, -s2, -total, len(a)
    for _ in range(max_newton):
        n_active = np.count_nonzero(active)  # (cheaper than .any() on a small array)
        if not n_active:
            break
        args = np.concatenate([a, b, a + b])  # one digamma and one trigamma call for a, b, a + b
        di, tr = special.digamma(args), special.zeta(2, args)
        dia, dib, dab, tra, trb, tab = di[:n], di[n:2 * n], di[2 * n:], tr[:n], tr[n:2 * n], tr[2 * n:]
        g1, g2 = neg_s1 + total * (dia - dab), neg_s2 + total * (dib - dab)  # zeta(2, x) = trigamma(x)
        h11, h22, h12 = total * (tra - tab), total * (trb - tab), neg_total * tab
        det = h11 * h22 - h12 * h12
        if n_active < n:  # a stopped problem's step is discarded: keep its division finite
            det = np.where(active, det, 1.0)
        da, db = (h22 * g1 - h12 * g2) / det, (h11 * g2 - h12 * g1) / det
        # Newton decrement g' H^-1 g / 2 (the predicted decrease): below the tolerance, one last full step
        # without backtracking (a decrease at rounding level is not worth 30 halvings)
        small = 1e-12 * np.maximum(1.0, np.abs(f))
        last = 0.5 * (g1 * da + g2 * db) < small
        na, nb = _box(a - da), _box(b - db)  # the full step; halved only where it does not decrease f
        nf = _beta_nll(na, nb, s1, s2, total)
        moved = active & (nf <= f)
        retry = active & ~(moved | last)
        t = 0.5  # step fraction (only that of the retried problems is used)
        while np.count_nonzero(retry):  # rare: halve the step until f does not increase or t <= 1e-10
            ta, tb = _box(a - t * da), _box(b - t * db)
            tf = _beta_nll(ta, tb, s1, s2, total)
            accept = retry & (tf <= f)
            na, nb, nf = np.where(accept, ta, na), np.where(accept, tb, nb), np.where(accept, tf, nf)
            moved |= accept
            t = np.where(retry & ~accept, 0.5 * t, t)
            retry &= ~accept & (t > 1e-10)
        if np.count_nonzero(moved) < n:  # a problem that did not move keeps its point
            na, nb, nf = np.where(moved, na, a), np.where(moved, nb, b), np.where(moved, nf, f)
        done = last | (np.abs(f - nf) < small)
        a, b, f = na, nb, nf
        active &= moved & ~done
    return a, b


@dataclass(frozen=True)
class _PaddedBatch:
    """Arrays of points in (0, 1) padded into one (rows, max size) batch; the padding has weight 0 and is never
    summed (``sums``), so a fit does not depend on the width of the batch it runs in."""

    logx: np.ndarray
    log1mx: np.ndarray
    w: np.ndarray
    sizes: np.ndarray  # each row's number of points

    @classmethod
    def of(cls, xs: list[np.ndarray]) -> "_PaddedBatch":
        padded = np.full((len(xs), max(x.size for x in xs)), 0.5)
        w = np.zeros_like(padded)
        for i, x in enumerate(xs):
            padded[i, : x.size], w[i, : x.size] = x, 1.0
        return cls(np.log(padded), np.log1p(-padded), w, np.array([x.size for x in xs]))

    def sums(self, a: np.ndarray) -> np.ndarray:
        """Each row's sum over its own points only (last axis), as a fit of that row alone sums them. Summing the
        padding too would change numpy's pairwise-summation blocks with the batch's width, moving the log-likelihood
        at rounding level, which the |dLL| < tol stopping rule turns into parameter changes of ~1e-4."""
        return np.stack([np.add.reduce(a[i, ..., :n], axis=-1) for i, n in enumerate(self.sizes)])

    def densities(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Component-1 density term pi Beta(x | a1, b1) and the mixture density of theta = (pi, a1, b1, a2, b2)
        at every point (floored at 1e-6, as in the authors' code)."""
        weights = np.empty((len(theta), 2, 1))  # (pi, 1 - pi); components along axis 1
        weights[:, 0, 0] = theta[:, 0]
        np.subtract(1, theta[:, 0], out=weights[:, 1, 0])
        a, b = theta[:, 1::2, None], theta[:, 2::2, None]
        d = weights * np.exp((a - 1) * self.logx[:, None] + (b - 1) * self.log1mx[:, None] - special.betaln(a, b))
        return d[:, 0], np.maximum(d[:, 0] + d[:, 1], 1e-6)

    def responsibilities(self, theta: np.ndarray) -> np.ndarray:
        """E-step alone: the component-1 responsibilities of theta."""
        d1, dens = self.densities(theta)
        return d1 / dens

    def loglik(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """E-step: per row, the log-likelihood of theta and the component-1 responsibilities."""
        d1, dens = self.densities(theta)
        return self.sums(np.log(dens)), d1 / dens

    def rows(self, keep: np.ndarray) -> "_PaddedBatch":
        """The rows ``keep`` (same padding: every row's sums stay those of the full batch)."""
        return _PaddedBatch(self.logx[keep], self.log1mx[keep], self.w[keep], self.sizes[keep])

    def m_step(self, theta: np.ndarray, r1: np.ndarray) -> np.ndarray:
        """M-step from responsibilities ``r1``: pi = mean r1 and the weighted beta MLE of each component
        (``_weighted_beta_mles``, warm-started at ``theta``)."""
        resp = np.empty((len(r1), 2, r1.shape[1]))  # (rows, component, size)
        np.multiply(self.w, r1, out=resp[:, 0])
        np.multiply(self.w, np.subtract(1, r1, out=resp[:, 1]), out=resp[:, 1])
        total = self.sums(resp)
        a, b = _weighted_beta_mles(self.sums(resp * self.logx[:, None]).ravel(),
                                   self.sums(resp * self.log1mx[:, None]).ravel(), total.ravel(),
                                   theta[:, 1::2].ravel(), theta[:, 2::2].ravel())  # (a1, a2), (b1, b2)
        out = np.empty_like(theta)
        out[:, 0] = total[:, 0] / self.sizes
        out[:, 1::2], out[:, 2::2] = a.reshape(-1, 2), b.reshape(-1, 2)
        return out


def _unconstrained(theta: np.ndarray) -> np.ndarray:
    """(logit pi, log a1, log b1, log a2, log b2): the coordinates the SQUAREM extrapolation moves in."""
    pi = np.minimum(np.maximum(theta[:, 0], 1e-12), 1 - 1e-12)
    z = np.empty_like(theta)
    np.log(theta[:, 1:], out=z[:, 1:])
    z[:, 0] = np.log(pi) - np.log1p(-pi)
    return z


def _constrained(z: np.ndarray) -> np.ndarray:
    theta = np.empty_like(z)
    theta[:, 0], theta[:, 1:] = special.expit(z[:, 0]), _box(np.exp(z[:, 1:]))
    return theta


def _row_norms(v: np.ndarray) -> np.ndarray:
    """Euclidean norm of each row (``np.linalg.norm(v, axis=1)`` without its wrapper)."""
    return np.sqrt(np.add.reduce(v * v, axis=1))


def fit_beta_mixtures(xs: Sequence[np.ndarray], *, max_iter: int = 2000, tol: float = 1e-6
                      ) -> list[tuple[float, float, float, float, float]]:
    """EM for two-component beta mixtures, one per array of points in (0, 1), run as one batch;
    returns (pi, a1, b1, a2, b2) per array.

    The paper's own procedure (thesis Sec. 2.3, "EM"; init pi = 0.5, (2, 5), (5, 2) and the stopping rule
    |dLL| < ``tol`` from the authors' code), accelerated by SQUAREM (Varadhan & Roland 2008, scheme S3):
    each cycle takes two EM steps, extrapolates along them (in logit / log coordinates, step length
    |r| / |v| clipped to [1, an adaptive bound]), falls back to the second EM step if the extrapolated point
    lowers the likelihood, and ends with one EM step from there. An array stops when that last plain EM
    step changes its log-likelihood by less than ``tol`` (the authors' rule, applied at a point closer to
    the fixed point);
    ``max_iter`` bounds the EM steps (3 per cycle). All arrays run as one padded batch, each stopping
    on its own (a stopped array leaves the batch, so that the last cycles of a slow array cost one row).
    Components are ordered so that component 1 has the smaller mean.
    """
    xs = [np.asarray(x, dtype=float) for x in xs]
    for x in xs:
        if x.ndim != 1 or x.size < 2 or np.any((x <= 0) | (x >= 1)):
            raise ValueError("beta-mixture EM needs >= 2 points strictly inside (0, 1)")
    batch = _PaddedBatch.of(xs)
    theta = np.tile([0.5, 2.0, 5.0, 5.0, 2.0], (len(xs), 1))
    ll, r1 = batch.loglik(theta)
    fitted, live = theta.copy(), np.arange(len(xs))  # batch, theta, ll, r1, step_max: the rows `live` only
    step_max = np.ones(len(xs))
    for _ in range(0, max_iter, 3):
        t1 = batch.m_step(theta, r1)
        t2 = batch.m_step(t1, batch.responsibilities(t1))
        z0, z1, z2 = _unconstrained(theta), _unconstrained(t1), _unconstrained(t2)
        r, v = z1 - z0, z2 - 2 * z1 + z0
        nv = _row_norms(v)
        length = np.minimum(np.maximum(_row_norms(r) / np.where(nv > 0, nv, 1.0), 1.0), step_max)
        jump = _constrained(z0 + 2 * length[:, None] * r + length[:, None] ** 2 * v)
        ll_jump, r_jump = batch.loglik(jump)
        keep = (np.isfinite(ll_jump) & (ll_jump >= ll))[:, None]
        # adaptive bound on the step length (as in the SQUAREM package): x4 when reached, /4 on a failed jump
        step_max = np.where(keep[:, 0], np.where(length >= step_max, 4 * step_max, step_max), np.maximum(1.0, step_max / 4))
        if not keep.all():
            ll_t2, r_t2 = batch.loglik(t2)
            jump, ll_jump, r_jump = np.where(keep, jump, t2), np.where(keep[:, 0], ll_jump, ll_t2), np.where(keep, r_jump, r_t2)
        theta = batch.m_step(jump, r_jump)
        ll, r1 = batch.loglik(theta)
        fitted[live] = theta
        going = ~(np.abs(ll - ll_jump) < tol)
        if not going.all():
            live, batch, theta, ll, r1, step_max = (live[going], batch.rows(going), theta[going], ll[going],
                                                    r1[going], step_max[going])
            if not live.size:
                break
    out = []
    for p, a1, b1, a2, b2 in fitted:
        if a1 / (a1 + b1) > a2 / (a2 + b2):
            p, a1, b1, a2, b2 = 1 - p, a2, b2, a1, b1
        out.append(tuple(float(v) for v in (p, a1, b1, a2, b2)))
    return out


def fit_beta_mixture(x: np.ndarray, *, max_iter: int = 2000, tol: float = 1e-6
                     ) -> tuple[float, float, float, float, float]:
    """``fit_beta_mixtures`` of one array of points in (0, 1): (pi, a1, b1, a2, b2)."""
    return fit_beta_mixtures([x], max_iter=max_iter, tol=tol)[0]


def _extremes(phi: np.ndarray, name: str) -> tuple[float, float, float, float, np.ndarray]:
    """(phi_min, phi_max, w_min, w_max, interior points scaled to (0, 1)) of eq. 2.7; errors name the model."""
    phi = np.asarray(phi, dtype=float)
    if phi.size == 0:
        raise ValueError(f"{name}: no confidences to fit a marginal to")
    if np.isnan(phi).any():
        raise ValueError(f"{name}: NaN calibrated confidences")
    lo, hi = float(phi.min()), float(phi.max())
    if not hi > lo:
        raise ValueError(f"{name}: all calibrated confidences are identical ({lo}); cannot fit a marginal")
    return lo, hi, float(np.mean(phi == lo)), float(np.mean(phi == hi)), (phi[(phi > lo) & (phi < hi)] - lo) / (hi - lo)


def _sampled_interior(part: tuple[float, float, float, float, np.ndarray], sample: int
                      ) -> tuple[float, float, float, float, np.ndarray]:
    """`_extremes`' part with its interior points cut to `sample` (`calibration.fit_rows`)."""
    return (*part[:4], part[4][fit_rows(part[4].size, sample)])


def fit_marginal_batch(phis: Mapping[str, np.ndarray], *, max_iter: int = 2000, tol: float = 1e-6,
                       sample: int = MARGINAL_SAMPLE) -> dict[str, MixedBetaMarginal]:
    """Fit eq. 2.7 to each model's calibrated train confidences (``phis``: model -> values), the beta-mixture
    EMs of all models in one batch (``fit_beta_mixtures``) on at most ``sample`` interior points each."""
    parts = {name: _sampled_interior(_extremes(phi, name), sample) for name, phi in phis.items()}
    spread = [name for name, part in parts.items() if np.unique(part[4]).size >= 2]
    em = [name for name in spread if parts[name][4].size >= MIN_EM_POINTS]
    mixtures = dict(zip(em, fit_beta_mixtures([parts[name][4] for name in em], max_iter=max_iter, tol=tol) if em else []))
    failed = [name for name in spread
              if name not in mixtures or not (np.all(np.isfinite(mixtures[name])) and 1e-3 < mixtures[name][0] < 1 - 1e-3)]
    if failed:  # fewer than MIN_EM_POINTS interior points, or a degenerate EM: a single beta
        xs = [parts[m][4] for m in failed]
        ones = np.ones(len(failed))
        a, b = _weighted_beta_mles(np.array([np.log(x).sum() for x in xs]), np.array([np.log1p(-x).sum() for x in xs]),
                                   np.array([float(x.size) for x in xs]), ones, ones)
        mixtures.update({m: (1.0, a[i], b[i], a[i], b[i]) for i, m in enumerate(failed)})
    return {name: MixedBetaMarginal(*parts[name][:4], *(float(v) for v in mixtures.get(name, (1.0, 1.0, 1.0, 1.0, 1.0))))
            for name in phis}


def fit_marginal(phi: np.ndarray, *, max_iter: int = 2000, tol: float = 1e-6,
                 name: str = "model") -> MixedBetaMarginal:
    """Fit eq. 2.7 to calibrated train confidences ``phi`` (``name`` only labels errors)."""
    return fit_marginal_batch({name: phi}, max_iter=max_iter, tol=tol)[name]


def fit_marginals(calibrated: pd.DataFrame | WideRecords, *, split: str = "train", **em
                  ) -> dict[str, MixedBetaMarginal]:
    """Fit one marginal per model to column ``p_correct`` of ``split`` rows (a long frame or `WideRecords`)."""
    if "p_correct" not in calibrated.columns:
        raise ValueError("calibrated records need a 'p_correct' column (run calibrate first)")
    values = split_values(calibrated, "p_correct", split)
    if not any(v.size for v in values.values()):
        raise ValueError(f"no {split!r} rows to fit marginals on")
    return fit_marginal_batch({m: v for m, v in values.items() if v.size}, **em)


def split_values(records: pd.DataFrame | WideRecords, column: str, split: str) -> dict[str, np.ndarray]:
    """Each model's float values of `column` on `split`, in row order, models sorted (`WideRecords.model_values` of a
    long frame: the split's values only, not a copy of its rows (10 M rows))."""
    if isinstance(records, WideRecords):
        return {m: v.astype(float, copy=False) for m, v in records.model_values(column, split).items()}
    keep = (records["split"] == split).to_numpy()
    values = records[column].to_numpy(dtype=float)[keep]
    models = pd.Series(records["model_id"].to_numpy()[keep])
    return {str(m): values[at] for m, at in models.groupby(models, sort=True).indices.items()}


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


def marginal_gof_table(calibrated: pd.DataFrame | WideRecords, marginals: dict[str, MixedBetaMarginal], *,
                       n_boot: int = 100, split: str = "test", bootstrap_refit: bool = False,
                       seed: int = 0, sample: int = GOF_SAMPLE) -> pd.DataFrame:
    """Table 2.5 / 2.6 shape: ``model_id, split, refit, sqrt_cvm, p_value, n, n_fit`` (tested on at most ``sample``
    of a model's ``n`` values: ``n_fit``)."""
    rng = np.random.default_rng(seed)
    rows = []
    data = split_values(calibrated, "p_correct", split)
    if not any(v.size for v in data.values()):
        raise ValueError(f"no {split!r} rows for the marginal goodness-of-fit test")
    for model, marg in marginals.items():
        vals = data.get(model, np.empty(0))
        if vals.size == 0:
            raise ValueError(f"model {model!r} has no {split!r} rows")
        tested = vals[fit_rows(vals.size, sample)]
        for refit in (False, True):
            stat, p, _ = marginal_gof(marg, tested, n_boot=n_boot, refit=refit,
                                      bootstrap_refit=bootstrap_refit, rng=rng)
            rows.append({"model_id": model, "split": split, "refit": refit, "sqrt_cvm": stat,
                         "p_value": p, "n": int(vals.size), "n_fit": int(tested.size)})
    return pd.DataFrame(rows)
