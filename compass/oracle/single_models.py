"""Per-model quality, cost and reliability; the SOTA reference model.

Seed paper 002: quality is accuracy (§5 "Metrics"), cost is API cost per query,
reliability is eq. 24, reliability(l) = 2 · (1/N) Σ_n |φ̄_nl − 0.5| (§6.4,
Table 3), and the SOTA model is the one with the highest mean quality (§6.1).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from compass.oracle.records import OracleArrays


def single_models(arrays: OracleArrays) -> pd.DataFrame:
    """DataFrame[model_id, quality, cost, reliability], one row per model."""
    p = arrays.p_hat
    quality = p.mean(axis=0)
    p -= 0.5  # in place (p_hat is a fresh array): at 10^8 cells each (N, L) temporary is 0.8 GB
    np.abs(p, out=p)
    return pd.DataFrame(
        {
            "model_id": arrays.model_ids,
            "quality": quality,
            "cost": arrays.cell_cost.mean(axis=0),
            "reliability": 2.0 * p.mean(axis=0),
        }
    )


def sota(single: pd.DataFrame) -> pd.Series:
    """The row of the highest-quality model (ties go to the cheaper one)."""
    if single.empty:
        raise ValueError("no models to pick a SOTA model from")
    ranked = single.sort_values(["quality", "cost"], ascending=[False, True], kind="stable")
    return ranked.iloc[0]
