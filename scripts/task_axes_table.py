"""The task axes of every case as docs/cases-and-scenarios.md shows them (issue 48 item 2): per case and axis, the
benchmarks that enter it with the number of the case's models observed on each, the models with an axis score, how
alike the benchmarks rank models (mean pairwise Spearman) and how much of the axis the case's measures carry (R²).

Reads compass.task_axes of the warehouse (COMPASS_DB); run after `compass run`:
    PYTHONPATH=. python scripts/task_axes_table.py
"""

from __future__ import annotations

import pandas as pd

from resources.warehouse import Warehouse


def markdown(table: pd.DataFrame) -> str:
    rows = []
    for (case, axis), part in table.groupby(["case_id", "axis"], sort=False):
        used = part[part["used"]]
        first = part.iloc[0]
        rows.append({"case": case, "axis": axis,
                     "benchmarks (models observed)": ", ".join(f"{b} ({n})" for b, n in
                                                               zip(used["benchmark"], used["n_models_observed"]))
                     or "none observed on enough models",
                     "models with a score": int(first["n_models_axis"]),
                     "benchmark agreement": "-" if pd.isna(first["benchmark_agreement"])
                     else f"{first['benchmark_agreement']:.2f}",
                     "R² on the measures": "-" if pd.isna(first["r2_on_measures"]) else f"{first['r2_on_measures']:.2f}"})
    return pd.DataFrame(rows).to_markdown(index=False)


if __name__ == "__main__":
    print(markdown(Warehouse().read("compass.task_axes")))
