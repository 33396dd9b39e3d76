import numpy as np
import pytest

from compass.oracle.extrapolation import fit_curve, power_law, smooth_transition


def test_power_law_recovers_asymptote():
    g = np.arange(1, 11, dtype=float)
    fit = fit_curve(g, power_law(g, 0.62, 0.25, 0.5), "power")
    assert fit["alpha"] == pytest.approx(0.62, abs=1e-4)
    assert fit["lam"] == pytest.approx(0.5, abs=1e-3)


def test_smooth_transition_recovers_asymptote():
    g = np.arange(1, 11, dtype=float)
    y = smooth_transition(g, 0.55, 0.3, 1.5, 2.0, 0.8)
    fit = fit_curve(g, y, "smooth")
    assert fit["form"] == "smooth"
    assert fit["alpha"] == pytest.approx(0.55, abs=5e-3)
    np.testing.assert_allclose(smooth_transition(g, *[fit[k] for k in ("alpha", "beta", "gamma", "delta", "lam")]), y, atol=1e-5)


def test_identification_rules():
    g = np.array([1.0, 2.0])
    fit = fit_curve(g, power_law(g, 0.4, 0.2, 0.5), "smooth")  # too few points: eq. 11 with λ = 0.5
    assert fit["form"] == "power" and fit["lam"] == 0.5
    assert fit["alpha"] == pytest.approx(0.4, abs=1e-6)
    assert np.isnan(fit_curve(np.array([1.0]), np.array([0.7]))["alpha"])
    with pytest.raises(ValueError, match="unknown extrapolation form"):
        fit_curve(g, g, "cubic")
