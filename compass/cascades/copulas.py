"""Pairwise dependence between calibrated confidences (thesis seed 001, Ch. 2, eqs. 2.4, 2.9, 2.10).

* Thesis model: Gumbel copula C_theta(u, v) = exp(-[(-log u)^theta + (-log v)^theta]^(1/theta))
  (eq. 2.9), fitted by Kendall-tau inversion theta = 1/(1 - tau) (eq. 2.10) on the rows where
  both confidences are interior (the copula lives on the smooth part, thesis Sec. 2.4
  "Goodness of fit of copulas"); independence when tau <= 0.
* Beyond the thesis: Gumbel, Clayton, Frank, Gaussian and Student-t (with rotations) fitted by
  maximum likelihood with pyvinecopulib and ranked by AIC.
* Point masses at phi_min / phi_max: the pair is a mixture over the 3 x 3 "cases"
  (min / smooth / max) of the two coordinates with empirical case frequencies (authors' code;
  the thesis does not say how its copulas meet the point masses). Deviation from that code: in
  the mixed cases the smooth coordinate follows the fitted smooth marginal F^s (eq. 2.8) instead
  of a separately fitted single beta, so the pair's margins equal the marginals of eq. 2.7 exactly.
* Goodness of fit: Cramer-von Mises on Kendall's transform (Genest, Remillard & Beaudoin 2009)
  with a parametric bootstrap (Table 2.4), statistic sqrt(n) * integral (K_n - K)^2 dK.
* Markov test (Table 2.3): logistic regression of correct_i on (phi_{i-1}, phi_j), j < i - 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyvinecopulib as pv
from scipy import stats

from compass.cascades.calibration import fit_rows, logistic_fit
from compass.cascades.marginals import MixedBetaMarginal

THESIS_FAMILY = "gumbel_tau"
PV_FAMILIES: dict[str, pv.BicopFamily] = {
    "gumbel": pv.BicopFamily.gumbel, "clayton": pv.BicopFamily.clayton, "frank": pv.BicopFamily.frank,
    "gaussian": pv.BicopFamily.gaussian, "student": pv.BicopFamily.student,
}
MIN_COPULA_ROWS = 5
# Table 2.4 fits and tests each pair on at most this many interior rows (issue 45: the Kendall CvM compares every
# pair of points, n^2 memory: 70,000 train queries would take 10 GB), drawn without replacement with a fixed seed
# (`calibration.fit_rows`), their pseudo-observations ranked within the sample; `n_fit` says how many. The cvm and p
# are the statistic at that size. Stated error of the fitted Kendall tau against the fit on every interior row:
# COPULA_SAMPLE_ERROR (3 standard errors at this size), tested on a Gumbel world with 3x as many rows
# (tests/compass/cascades/model/test_copula_sample.py). The thesis' datasets (<= 2,700 train queries) use every row.
COPULA_SAMPLE = 5_000
COPULA_SAMPLE_ERROR = 0.03
_K_GRID = np.linspace(0.0, 1.0, 1001)


def gumbel_cdf(u: np.ndarray, v: np.ndarray, theta: float | np.ndarray) -> np.ndarray:
    """Gumbel copula CDF, thesis eq. 2.9 (theta >= 1; theta = 1 is independence); an array ``theta``
    broadcasts against ``u`` and ``v`` (one copula per column)."""
    if np.any(np.asarray(theta) < 1):
        raise ValueError(f"Gumbel theta must be >= 1, got {theta}")
    return gumbel_cdf_unchecked(u, v, theta)


def gumbel_cdf_unchecked(u: np.ndarray, v: np.ndarray, theta: float | np.ndarray) -> np.ndarray:
    """``gumbel_cdf`` without the check theta >= 1 (for thetas checked when fitted: the tuning's hot path)."""
    u, v = np.minimum(np.maximum(u, 1e-300), 1.0), np.minimum(np.maximum(v, 1e-300), 1.0)
    s = np.asarray((-np.log(u)) ** theta + (-np.log(v)) ** theta)  # the one array of the broadcast shape
    np.power(s, 1.0 / theta, out=s)  # exp(-s^(1/theta)) in place
    np.negative(s, out=s)
    np.exp(s, out=s)
    return s[()]  # a scalar for scalar input


def gumbel_theta_from_tau(tau: float) -> float:
    """theta = 1 / (1 - tau) (thesis eq. 2.10); tau <= 0 maps to independence (theta = 1)."""
    if not -1 <= tau < 1:
        raise ValueError(f"Kendall tau must be in [-1, 1), got {tau}")
    return 1.0 / (1.0 - tau) if tau > 0 else 1.0


def pseudo_observations(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Rank-based pseudo-observations rank/(n+1), shape (n, 2)."""
    n = len(x)
    return np.column_stack([stats.rankdata(x) / (n + 1), stats.rankdata(y) / (n + 1)])


@dataclass(frozen=True)
class PairCopula:
    """A fitted bivariate copula; ``family`` is 'gumbel_tau' (thesis), 'indep', or '<pv family>_r<rot>'."""

    family: str
    parameters: tuple[float, ...]
    bicop: pv.Bicop = field(repr=False, compare=False)

    @property
    def is_thesis_gumbel(self) -> bool:
        return self.family == THESIS_FAMILY

    def cdf(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """C(u, v), broadcasting ``u`` against ``v``."""
        if self.is_thesis_gumbel:  # before broadcasting: the logs and powers of u and v once per value
            return gumbel_cdf(np.asarray(u, dtype=float), np.asarray(v, dtype=float), self.parameters[0])
        u, v = np.broadcast_arrays(np.asarray(u, dtype=float), np.asarray(v, dtype=float))
        if self.family == "indep":
            return u * v
        uv = np.clip(np.column_stack([u.ravel(), v.ravel()]), 0.0, 1.0)
        return np.asarray(self.bicop.cdf(uv)).reshape(u.shape)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n draws (n, 2) from the copula."""
        if self.family == "indep":
            return rng.random((n, 2))
        return np.asarray(self.bicop.sample(n, seeds=[int(s) for s in rng.integers(0, 2**31 - 1, 4)]))

    def loglik(self, uv: np.ndarray) -> float:
        return float(self.bicop.loglik(uv))

    def aic(self, uv: np.ndarray) -> float:
        """AIC = -2 loglik + 2 * (number of parameters; 0 for independence)."""
        npar = 0 if self.family == "indep" else len(self.parameters)
        return -2.0 * self.loglik(uv) + 2.0 * npar


def _independence() -> PairCopula:
    return PairCopula("indep", (), pv.Bicop())


def fit_gumbel_tau(uv: np.ndarray) -> PairCopula:
    """Thesis copula: Gumbel by Kendall-tau inversion (eq. 2.10), independence if tau <= 0."""
    tau = float(stats.kendalltau(uv[:, 0], uv[:, 1]).statistic)
    if not np.isfinite(tau) or tau <= 0:
        return _independence()
    theta = gumbel_theta_from_tau(tau)
    bicop = pv.Bicop(family=pv.BicopFamily.gumbel, rotation=0, parameters=np.array([[theta]]))
    return PairCopula(THESIS_FAMILY, (theta,), bicop)


def fit_pv_family(uv: np.ndarray, family: str) -> PairCopula:
    """Maximum-likelihood fit of one pyvinecopulib family (best rotation by AIC)."""
    if family not in PV_FAMILIES:
        raise ValueError(f"unknown copula family {family!r}; choose from {sorted(PV_FAMILIES)}")
    controls = pv.FitControlsBicop(family_set=[PV_FAMILIES[family]], selection_criterion="aic",
                                   preselect_families=False)
    bicop = pv.Bicop.from_data(uv, controls=controls)
    if bicop.family == pv.BicopFamily.indep:
        return _independence()
    return PairCopula(f"{family}_r{bicop.rotation}", tuple(np.asarray(bicop.parameters).ravel()), bicop)


def fit_copula(uv: np.ndarray, family: str = THESIS_FAMILY) -> PairCopula:
    """Fit ``family`` ('gumbel_tau', a pv family name, or 'aic' = best AIC over all) to (n, 2) uv."""
    if len(uv) < MIN_COPULA_ROWS:
        return _independence()
    if family == THESIS_FAMILY:
        return fit_gumbel_tau(uv)
    if family == "aic":
        fits = [fit_gumbel_tau(uv)] + [fit_pv_family(uv, f) for f in PV_FAMILIES]
        return min(fits, key=lambda c: c.aic(uv))
    return fit_pv_family(uv, family)


def _cases(phi: np.ndarray, marg: MixedBetaMarginal) -> np.ndarray:
    """0 = at phi_min, 1 = interior (smooth), 2 = at phi_max (thresholds of the fitted marginal)."""
    return np.where(phi <= marg.phi_min, 0, np.where(phi >= marg.phi_max, 2, 1))


@dataclass(frozen=True)
class PairJoint:
    """Joint law of (Phi_a, Phi_b): 3x3 case mixture, copula on the smooth-smooth case (eq. 2.4)."""

    marg_a: MixedBetaMarginal
    marg_b: MixedBetaMarginal
    case_probs: np.ndarray  # (3, 3): rows = case of a, cols = case of b
    copula: PairCopula

    def _h(self, marg: MixedBetaMarginal, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return (x >= marg.phi_min).astype(float), marg.smooth_cdf(x), (x >= marg.phi_max).astype(float)

    def cdf(self, s: np.ndarray, t: np.ndarray) -> np.ndarray:
        """P(Phi_a <= s, Phi_b <= t), broadcasting."""
        s, t = np.broadcast_arrays(np.asarray(s, dtype=float), np.asarray(t, dtype=float))
        ha, hb = self._h(self.marg_a, s), self._h(self.marg_b, t)
        p = self.case_probs
        out = p[1, 1] * self.copula.cdf(ha[1], hb[1])
        for i in range(3):
            for j in range(3):
                if (i, j) != (1, 1):
                    out = out + p[i, j] * ha[i] * hb[j]
        return out

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n exact draws (n, 2) of (Phi_a, Phi_b)."""
        case = rng.choice(9, size=n, p=self.case_probs.ravel())
        ca, cb = case // 3, case % 3
        uv = self.copula.sample(n, rng)
        out = np.empty((n, 2))
        both_smooth = (ca == 1) & (cb == 1)
        for col, (marg, c, u) in enumerate(((self.marg_a, ca, uv[:, 0]), (self.marg_b, cb, uv[:, 1]))):
            out[:, col] = np.where(c == 0, marg.phi_min, marg.phi_max)
            smooth = c == 1
            # copula coordinate in the smooth-smooth case, an independent uniform otherwise
            u = np.where(both_smooth, u, rng.random(n))[smooth]
            out[smooth, col] = marg.smooth_quantile(u)
        return out


def fit_pair(phi_a: np.ndarray, phi_b: np.ndarray, marg_a: MixedBetaMarginal, marg_b: MixedBetaMarginal,
             family: str = THESIS_FAMILY, sample: int = COPULA_SAMPLE) -> PairJoint:
    """Fit the case mixture (every row) and the smooth-case copula (at most `sample` interior rows, the sample of
    Table 2.4: `COPULA_SAMPLE`, its error `COPULA_SAMPLE_ERROR`) from aligned train confidences."""
    phi_a, phi_b = np.asarray(phi_a, dtype=float), np.asarray(phi_b, dtype=float)
    if phi_a.shape != phi_b.shape or phi_a.size == 0:
        raise ValueError(f"pair fit needs aligned non-empty arrays, got {phi_a.shape} and {phi_b.shape}")
    ca, cb = _cases(phi_a, marg_a), _cases(phi_b, marg_b)
    probs = np.bincount(3 * ca + cb, minlength=9).reshape(3, 3) / phi_a.size
    inner = np.flatnonzero((ca == 1) & (cb == 1))
    inner = inner[fit_rows(inner.size, sample)]
    if inner.size < MIN_COPULA_ROWS:
        uv = np.empty((0, 2))
    elif family == THESIS_FAMILY:  # Kendall's tau (eq. 2.10) is rank-invariant: no pseudo-observations needed
        uv = np.column_stack([phi_a[inner], phi_b[inner]])
    else:
        uv = pseudo_observations(phi_a[inner], phi_b[inner])
    return PairJoint(marg_a, marg_b, probs, fit_copula(uv, family))


def _empirical_copula_at_points(uv: np.ndarray) -> np.ndarray:
    """W_i = #{j : U_j < U_i, V_j < V_i} / (n - 1)  (Genest et al. 2009, Kendall process)."""
    less_u = uv[:, 0][None, :] < uv[:, 0][:, None]
    less_v = uv[:, 1][None, :] < uv[:, 1][:, None]
    return (less_u & less_v).sum(axis=1) / (len(uv) - 1)


def kendall_distribution(copula: PairCopula, w: np.ndarray, rng: np.random.Generator, n_mc: int = 10000
                         ) -> np.ndarray:
    """K_C(w) = P(C(U, V) <= w). Closed form for the Gumbel copula, K(w) = w - w log(w) / theta
    (theta = 1: independence); otherwise the ECDF of C at ``n_mc`` draws of the copula."""
    w = np.asarray(w, dtype=float)
    if copula.is_thesis_gumbel or copula.family == "indep":
        theta = copula.parameters[0] if copula.parameters else 1.0
        ws = np.clip(w, 1e-300, 1.0)
        return np.where(w <= 0, 0.0, np.minimum(ws - ws * np.log(ws) / theta, 1.0))
    sim = copula.sample(n_mc, rng)
    return np.searchsorted(np.sort(copula.cdf(sim[:, 0], sim[:, 1])), w, side="right") / n_mc


def kendall_cvm(uv: np.ndarray, copula: PairCopula, rng: np.random.Generator) -> float:
    """sqrt(n) * integral (K_n - K_C)^2 dK_C on a 1001-point grid (trapezoid), thesis Sec. 2.4,
    Table 2.4.

    K_n is the ECDF of the pseudo-observations' empirical-copula values W_i (Kendall's transform);
    K_C the fitted copula's Kendall distribution (Genest, Remillard & Beaudoin 2009). The
    authors' code instead compares with the ECDF of C(U_i, V_i) at the data points.
    """
    n = len(uv)
    if n < MIN_COPULA_ROWS:
        raise ValueError(f"Kendall CvM needs at least {MIN_COPULA_ROWS} rows, got {n}")
    w_emp = np.sort(_empirical_copula_at_points(uv))
    k_n = np.searchsorted(w_emp, _K_GRID, side="right") / n
    k_c = kendall_distribution(copula, _K_GRID, rng)
    sq = (k_n - k_c) ** 2
    return float(np.sqrt(n) * np.sum(0.5 * (sq[1:] + sq[:-1]) * np.diff(k_c)))


def copula_gof(uv: np.ndarray, family: str, *, n_boot: int = 50, rng: np.random.Generator | None = None,
               uv_test: np.ndarray | None = None) -> tuple[PairCopula, float, float]:
    """Fit ``family`` to uv, then Kendall-transform CvM with a parametric-bootstrap p (refit per draw).

    With ``uv_test`` (Table 2.4 as the thesis runs it: fit on train, test on test) the statistic is
    that of the test pairs under the train fit, and each bootstrap draw repeats the whole design: a
    train-sized sample to refit on, a test-sized sample to test.
    """
    rng = np.random.default_rng() if rng is None else rng
    cop = fit_copula(uv, family)
    tested = uv if uv_test is None else uv_test
    stat = kendall_cvm(tested, cop, rng)
    boot = np.empty(n_boot)
    for b in range(n_boot):
        draw = cop.sample(len(uv), rng)
        refit = fit_copula(pseudo_observations(draw[:, 0], draw[:, 1]), family)
        if uv_test is not None:
            draw = cop.sample(len(uv_test), rng)
        boot[b] = kendall_cvm(pseudo_observations(draw[:, 0], draw[:, 1]), refit, rng)
    return cop, stat, float(np.mean(boot >= stat)) if n_boot else float("nan")


def copula_table(phi: pd.DataFrame, marginals: dict[str, MixedBetaMarginal], pairs: Sequence[tuple[str, str]], *,
                 n_boot: int = 50, seed: int = 0, phi_test: pd.DataFrame | None = None,
                 sample: int = COPULA_SAMPLE) -> pd.DataFrame:
    """Table 2.4 shape, one row per fitted family per pair.

    ``phi``: wide (query x model) calibrated confidences the copulas are fitted on (train);
    ``phi_test``: those the goodness of fit is tested on (the thesis' test split; None tests on ``phi``).
    Columns: ``model_a, model_b, family, parameter, tau, aic, cvm, p_value, selected, n_interior, n_fit, gof_split``
    (AIC and the fit on ``phi``; cvm and p_value on ``gof_split``; all on at most ``sample`` interior rows of each
    split, ``n_fit`` of them, see COPULA_SAMPLE);
    ``parameter`` is the first copula parameter (theta / rho / ...), NaN for independence;
    ``tau`` the fitted copula's Kendall tau (empirical tau for the thesis row); ``selected`` marks
    the lowest AIC of the pair.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for a, b in pairs:
        for m in (a, b):
            if m not in phi.columns or m not in marginals:
                raise ValueError(f"unknown model {m!r} in copula pair ({a}, {b})")
        uv, n_interior = _interior_uv(phi, a, b, marginals, sample=sample)
        uv_test = None if phi_test is None else _interior_uv(phi_test, a, b, marginals, "test ", sample)[0]
        tau_emp = float(stats.kendalltau(uv[:, 0], uv[:, 1]).statistic)
        pair_rows = []
        for fam in (THESIS_FAMILY, *PV_FAMILIES):
            cop, stat, p = copula_gof(uv, fam, n_boot=n_boot, rng=rng, uv_test=uv_test)
            pair_rows.append({
                "model_a": a, "model_b": b, "family": cop.family if fam != THESIS_FAMILY else fam,
                "parameter": cop.parameters[0] if cop.parameters else np.nan,
                "tau": tau_emp if fam == THESIS_FAMILY else float(cop.bicop.parameters_to_tau(cop.bicop.parameters))
                if cop.family != "indep" else 0.0,
                "aic": cop.aic(uv), "cvm": stat, "p_value": p, "n_interior": n_interior, "n_fit": len(uv),
                "gof_split": "train" if uv_test is None else "test",
            })
        best = int(np.argmin([r["aic"] for r in pair_rows]))
        for i, r in enumerate(pair_rows):
            r["selected"] = i == best
        rows.extend(pair_rows)
    return pd.DataFrame(rows)


def _interior_uv(phi: pd.DataFrame, a: str, b: str, marginals: dict[str, MixedBetaMarginal],
                 label: str = "", sample: int = COPULA_SAMPLE) -> tuple[np.ndarray, int]:
    """Pseudo-observations of (at most `sample` of) the pair's rows that are interior for both marginals, and the
    number of interior rows."""
    x, y = phi[a].to_numpy(dtype=float), phi[b].to_numpy(dtype=float)
    inner = np.flatnonzero((_cases(x, marginals[a]) == 1) & (_cases(y, marginals[b]) == 1))
    if inner.size < MIN_COPULA_ROWS:
        raise ValueError(f"pair ({a}, {b}) has {int(inner.size)} interior {label}rows; need {MIN_COPULA_ROWS}")
    rows = inner[fit_rows(inner.size, sample)]
    return pseudo_observations(x[rows], y[rows]), int(inner.size)


def markov_test(phi: pd.DataFrame, correct: pd.DataFrame, chain: Sequence[str]) -> pd.DataFrame:
    """Table 2.3: for each model i >= 3 of ``chain`` and each earlier ancestor j < i - 1, regress
    correct_i on (phi_{i-1}, phi_j) by logistic regression.

    ``phi``/``correct``: wide (query x model) tables of one split. Columns of the result:
    ``model_id, parent, ancestor, coef_parent, coef_ancestor, p_parent, p_ancestor,
    log10_p_parent, log10_p_ancestor``.
    """
    for m in chain:
        if m not in phi.columns or m not in correct.columns:
            raise ValueError(f"unknown model {m!r} in Markov test chain")
    if len(chain) < 3:
        raise ValueError(f"the Markov test needs a chain of >= 3 models, got {list(chain)}")
    rows = []
    for i in range(2, len(chain)):
        target, parent = chain[i], chain[i - 1]
        y = correct[target].to_numpy(dtype=float)
        for ancestor in chain[: i - 1]:
            X = np.column_stack([phi[parent].to_numpy(dtype=float), phi[ancestor].to_numpy(dtype=float)])
            coef, pvals = logistic_fit(X, y)
            rows.append({
                "model_id": target, "parent": parent, "ancestor": ancestor,
                "coef_parent": coef[1], "coef_ancestor": coef[2], "p_parent": pvals[1], "p_ancestor": pvals[2],
                "log10_p_parent": np.log10(max(pvals[1], 1e-300)),
                "log10_p_ancestor": np.log10(max(pvals[2], 1e-300)),
            })
    return pd.DataFrame(rows)
