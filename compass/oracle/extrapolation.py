"""Debiasing by extrapolating the naive-oracle curve to G → ∞.

Seed paper 002, §4.3.1: the naive oracle's bias decays as O(G^−λ), so fit
    eq. 11   O_biased(G) = α + β G^−λ
    eq. 12   O_biased(G) = α + β [1 + ((G − γ)/δ)^2]^(−λ/2)   (smooth transition)
to the curve O_biased(G′), G′ = 1..G (`compass.oracle.naive.naive_curve`), with
scipy.optimize.curve_fit, and report α as the debiased value.

Identification rules (ours; the paper fits G = 10 points): eq. 11 has three
parameters, so with fewer than 4 curve points λ is fixed at 0.5 (the Gaussian
rate of eq. 8); eq. 12 has five, so with fewer than 6 points it falls back to
eq. 11. With a single point nothing can be extrapolated and α is NaN. The
quality asymptote is bounded to [0, min curve] since the bias is non-negative
and decreasing (§4.1); a cost asymptote is bounded to [0, ∞) with β of either sign.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.optimize import OptimizeWarning, curve_fit

POWER, SMOOTH = "power", "smooth"


def power_law(g: np.ndarray, alpha: float, beta: float, lam: float) -> np.ndarray:
    """Eq. 11."""
    return alpha + beta * np.power(g, -lam)


def smooth_transition(g: np.ndarray, alpha: float, beta: float, gamma: float, delta: float, lam: float) -> np.ndarray:
    """Eq. 12."""
    return alpha + beta * np.power(1.0 + ((g - gamma) / delta) ** 2, -lam / 2.0)


def fit_curve(generations: np.ndarray, values: np.ndarray, form: str = SMOOTH, quality: bool = True) -> dict[str, float]:
    """Fit eq. 11 (`form="power"`) or eq. 12 (`"smooth"`); returns the parameters and `form` used.

    `quality=True` constrains the asymptote to [0, min(values)] and β ≥ 0; for a
    cost curve pass `quality=False`.
    """
    g = np.asarray(generations, dtype=float)
    y = np.asarray(values, dtype=float)
    if g.shape != y.shape or g.ndim != 1:
        raise ValueError("generations and values must be 1-D arrays of equal length")
    if form not in (POWER, SMOOTH):
        raise ValueError(f"unknown extrapolation form {form!r}; use 'power' or 'smooth'")
    nan = {"alpha": np.nan, "beta": np.nan, "lam": np.nan, "gamma": np.nan, "delta": np.nan}
    if g.size < 2:
        return {**nan, "form": form}
    if np.ptp(y) <= 1e-12 * max(1.0, abs(y).max()):
        return {**nan, "alpha": float(y[-1]), "beta": 0.0, "form": form}
    if form == SMOOTH and g.size < 6:
        form = POWER
    a_hi = y.min() if quality else np.inf
    b_lo = 0.0 if quality else -np.inf
    span = max(y.max() - y.min(), 1e-9)
    a0 = max(0.0, y.min() - 0.5 * span) if quality else y[-1]
    b0 = max(y[0] - a0, 1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimizeWarning)
        try:
            if form == POWER and g.size < 4:
                popt, _ = curve_fit(lambda x, a, b: power_law(x, a, b, 0.5), g, y, p0=[a0, b0],
                                    bounds=([0.0, b_lo], [a_hi, np.inf]), maxfev=20000)
                return {**nan, "alpha": popt[0], "beta": popt[1], "lam": 0.5, "form": form}
            if form == POWER:
                popt, _ = curve_fit(power_law, g, y, p0=[a0, b0, 0.5],
                                    bounds=([0.0, b_lo, 0.01], [a_hi, np.inf, 5.0]), maxfev=20000)
                return {**nan, "alpha": popt[0], "beta": popt[1], "lam": popt[2], "form": form}
            popt, _ = curve_fit(smooth_transition, g, y, p0=[a0, b0, 0.0, 1.0, 0.5],
                                bounds=([0.0, b_lo, -g.max(), 0.05, 0.01], [a_hi, np.inf, g.max(), 100.0, 5.0]),
                                maxfev=20000)
        except RuntimeError:
            return {**nan, "form": form}
    return {"alpha": popt[0], "beta": popt[1], "gamma": popt[2], "delta": popt[3], "lam": popt[4], "form": form}


def extrapolated_oracle(curve, form: str = SMOOTH) -> tuple[float, float]:
    """Asymptotes (quality, cost) of a naive curve DataFrame[generations, quality, cost]."""
    g = curve["generations"].to_numpy()
    q = fit_curve(g, curve["quality"].to_numpy(), form, quality=True)["alpha"]
    c = fit_curve(g, curve["cost"].to_numpy(), form, quality=False)["alpha"]
    return float(q), float(c)
