"""CUPID's Table 1 as printed (§4.1; transcribed in spec-004 §4.1): cost mean ± sd (USD), rounds to converge
(CR, None = N/A) and % converged (CP) per method and user A1-A4, for comparison with ours."""

from __future__ import annotations

import pandas as pd

_ROWS = {  # method: [(cost, sd, CR, CP) for A1, A2, A3, A4]
    "latent_dueling": [(0.108, 0.016, None, 0), (0.049, 0.002, 1, 100), (0.125, 0.006, None, 0), (0.122, 0.018, 6.75, 80)],
    "rucb": [(0.161, 0.034, None, 0), (0.116, 0.033, 1, 33.3), (0.117, 0.036, 1, 33.3), (0.118, 0.038, 1, 33.3)],
    "lma": [(0.115, 0.057, 5, 60), (0.046, 0.026, 2.6, 100), (0.125, 0.066, 1, 20), (0.073, 0.061, 3.5, 80)],
    "cost_lma": [(0.091, 0.055, 5.75, 80), (0.042, 0.022, 2.6, 100), (0.097, 0.062, 1, 20), (0.052, 0.044, 3, 80)],
    "eps_greedy": [(0.055, 0.062, 2.5, 80), (0.053, 0.058, 1.8, 100), (0.058, 0.063, 2.5, 80), (0.075, 0.079, 2, 80)],
    "cupid_no_cost": [(0.081, 0.033, 4.2, 100), (0.037, 0.014, 1, 100), (0.066, 0.050, 2, 100), (0.091, 0.027, 3, 100)],
    "cupid_no_language": [(0.060, 0.005, 4.2, 100), (0.040, 0.020, 1.6, 100), (0.022, 0.027, 2, 100), (0.058, 0.013, 3.4, 100)],
    "cupid": [(0.056, 0.016, 2.2, 100), (0.035, 0.014, 1, 100), (0.070, 0.003, 2, 100), (0.063, 0.012, 2.4, 100)],
}


def table_1() -> pd.DataFrame:
    """One row per (user, method): cost_mean, cost_sd, rounds_to_converge (NaN = N/A), converged_pct."""
    rows = [(f"a{k + 1}", method, *cell) for method, cells in _ROWS.items() for k, cell in enumerate(cells)]
    return pd.DataFrame(rows, columns=["user", "method", "cost_mean", "cost_sd", "rounds_to_converge", "converged_pct"])
