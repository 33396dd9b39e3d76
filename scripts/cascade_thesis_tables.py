"""Tables 2.7 and 2.8 of the thesis (seed 001, Sec. 2.4) from the warehouse, beside the thesis, each cell marked.

Reads `cascade.protocol_summary` (the authors' protocol, `cascade/protocols`, materialized by default: 26 Llama
subsets at the thesis' 1/40 grid; setting full = Table 2.7, low = Table 2.8) and `cascade.auc_summary` (our
protocol, the study's cascade set: light = Llama prefixes k = 2..5 + the mixed chain; heavy = the 26 Llama subsets;
the only source of BO). Rows: all cascades (k >= 2), which is what the thesis' tables average
(`scripts/cascade_auc_gap.py`: Table 2.7's AUC levels match ours within 0.3 points over all 26 cascades and miss
them by 1-4 points over the k >= 3 ones; Table 2.8's levels fit neither set everywhere, 0.04-2.1 points off over
all 26; and the tables' "Average" %Delta_GS, -0.99 and -2.67, are not the text's k >= 3
means, -2.0 and -5.6; docs/results/cascades.md has the caveat). The script prints the count.

Tolerances (a cell is "in" when |ours - thesis| <= tolerance), each with its justification:
* %Delta vs GS, Table 2.7: 2 standard errors of our mean over cascades (no floor). Thesis and we average the same
  cascades on the same records; RT and GS are deterministic, so the cascade-to-cascade spread is the resolution at
  which a mean over cascades can be compared (the thesis' own Wilcoxon test rests on it).
* %Delta, Table 2.8 (issue 47): max(25 % of the thesis' |effect|, 1 SE of our mean over cascades). A cell is "in"
  only when our %Delta reproduces the thesis' effect size; ours at a quarter of the effect (or less) is 0.75 |effect|
  away, beyond any tolerance this rule gives, and a cell whose SE reaches 0.75 |effect| is marked "n/r" (the run
  cannot resolve the effect) and not counted. The rule it replaces, max(2 SE, 2 sqrt(2) seed SD), reached 3.6 points
  against effects of -2.1 to -5.5 and counted MedMCQA's -1.02 "in" against -4.18. The seed-to-seed SD of the mean
  %Delta (SEED_SD, five n <= 30 subsamples, `scripts/cascade_auc_gap.py`) is printed beside: a cell outside its
  tolerance by less than 2 sqrt(2) seed SD may differ from the thesis by its subsample draw alone, so it is "n/r"
  (unresolved), not OUT (review of issue 47).
* %Delta vs BO: the same rule as vs GS, against the thesis' %Delta_BO, with the SE of the GS row. Our BO's own SE
  (4-16 points in the light run) measures the failures of our budget BO, not the precision of the comparison;
  widening the tolerance by it (as this script did before issue 28) counted cells "in" that differ 3-8x from the
  thesis.
* AUC levels: 1 % of the thesis' value + 0.0005 (its rounding). The thesis calls a 1 % AUC change material ("a 1 %
  reduction in AUC means that the error rate is 1 % lower at the same inference cost"); a level within 1 % is
  indistinguishable at the precision the thesis reports effects. Table 2.8 levels are not widened for the subsample
  draw (its level SD is printed by `scripts/cascade_auc_gap.py`), so one seed may put them out.
* Rows over another cascade set than the thesis' (THESIS_CASCADES = 26 Llama subsets; e.g. our light run's 5
  cascades) are shown with every cell marked "n/c" and not counted (issue 47): their means are over other cascades.

    .venv/bin/python scripts/cascade_thesis_tables.py [warehouse.duckdb]   (default: COMPASS_DB or var/)
"""

import sys
from pathlib import Path

import duckdb
import numpy as np
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
# Seed-to-seed SD of the mean %Delta_GS over the 26 Llama cascades at n <= 30 (authors' protocol, seeds 0-4,
# `scripts/cascade_auc_gap.py`; docs/results/cascades.md).
# Measured on the embedded records, 2026-11-26 (load 8-10; CPU 186 s for all four datasets, both protocols).
SEED_SD = {"ours": {"mmlu": 1.75, "medmcqa": 1.34, "triviaqa": 1.03, "truthfulqa": 0.25},
           "authors": {"mmlu": 0.69, "medmcqa": 1.28, "triviaqa": 1.15, "truthfulqa": 0.38}}
AUC_REL_TOL, ROUNDING = 0.01, 0.0005
EFFECT_REL_TOL, UNRESOLVED = 0.25, 0.75  # Table 2.8 %Delta: tolerance share of |effect|; SE share that is "n/r"
THESIS_CASCADES = 26  # the thesis' tables average all 26 Llama subsets (scripts/cascade_auc_gap.py)
NOT_COUNTED, UNRESOLVABLE = "n/c", "n/r"
TITLE = {"full": "Table 2.7 (full train set)", "low": "Table 2.8 (n <= 30)"}
AUTHORS = "grid=authors_code,costs=model_mean,rt=lbfgsb"


def mark(ours: float, thesis: float, tol: float, fmt: str = "{:+.2f}", status: str = "") -> str:
    """`ours` with "(in)" / "(OUT)", or with `status` ("n/c", "n/r") in place of the verdict when one is given."""
    if pd.isna(ours):
        return "–"
    return f"{fmt.format(ours)} ({status or ('in' if abs(ours - thesis) <= tol else 'OUT')})"


def pct_tolerance(setting: str, thesis: float, se: float) -> float:
    """The %Delta tolerance of one cell (module docstring): 2 SE (Table 2.7); max(25 % |thesis|, SE) (Table 2.8)."""
    se = 0.0 if pd.isna(se) else float(se)
    return 2 * se if setting == "full" else max(EFFECT_REL_TOL * abs(thesis), se)


def pct_mark(ours: float, thesis: float, setting: str, se: float, status: str = "", seed_sd: float = 0.0) -> str:
    """A %Delta cell: "n/r" in Table 2.8 when the SE reaches 0.75 |thesis| (a quarter of the effect would pass), or
    when a cell outside its tolerance is within 2 sqrt(2) seed SDs of the thesis (its n <= 30 subsample draw alone
    could put it there: unresolved, not a failure; review of issue 47)."""
    se = 0.0 if pd.isna(se) else float(se)
    if not status and setting == "low" and se >= UNRESOLVED * abs(thesis):
        status = UNRESOLVABLE
    if not status and setting == "low" and not pd.isna(ours) and abs(ours - thesis) > pct_tolerance(setting, thesis, se) \
            and abs(ours - thesis) < 2 * np.sqrt(2) * seed_sd:
        status = UNRESOLVABLE
    return mark(ours, thesis, pct_tolerance(setting, thesis, se), status=status)


def auc_mark(ours: float, thesis: float, status: str = "") -> str:
    return mark(ours, thesis, AUC_REL_TOL * thesis + ROUNDING, "{:.3f}", status)


def table(summary: pd.DataFrame, setting: str, protocol: str) -> pd.DataFrame:
    rows = []
    for dataset, (rt, gs, bo, d_gs, d_bo) in THESIS[setting].items():
        part = summary[(summary["dataset"] == dataset) & (summary["k_group"] == "all")].set_index("method")
        grid = part.loc["grid"] if "grid" in part.index else None
        bo_row = part.loc["bo"] if "bo" in part.index else None
        if grid is None:
            rows.append({"dataset": dataset, "protocol": protocol, "cascades": 0})
            continue
        se = grid["se_pct_delta"]
        status = NOT_COUNTED if int(grid["n_cascades"]) != THESIS_CASCADES else ""
        row = {"dataset": dataset, "protocol": protocol, "cascades": int(grid["n_cascades"]),
               "RT": auc_mark(grid["auc_reference"], rt, status), "GS": auc_mark(grid["auc"], gs, status),
               "%Δ_GS": pct_mark(grid["mean_pct_delta"], d_gs, setting, se, status,
                                 SEED_SD[protocol][dataset] if setting == "low" else 0.0),
               "tol": round(pct_tolerance(setting, d_gs, se), 2), "SE": round(float(se), 2),
               "thesis RT/GS/BO": f"{rt:.3f}/{gs:.3f}/{bo:.3f}", "thesis %Δ_GS": d_gs}
        if setting == "low":
            row["seed SD"] = SEED_SD[protocol][dataset]
        if bo_row is not None:
            row.update({"BO": auc_mark(bo_row["auc"], bo, status),
                        "%Δ_BO": pct_mark(bo_row["mean_pct_delta"], d_bo, setting, se, status),
                        "tol BO": round(pct_tolerance(setting, d_bo, se), 2), "thesis %Δ_BO": d_bo})
        rows.append(row)
    return pd.DataFrame(rows)


def main() -> int:
    db = sys.argv[1] if len(sys.argv) > 1 else settings.db_path()
    if not Path(db).is_file():
        print(f"cascade_thesis_tables: {db}: no such warehouse", file=sys.stderr)
        return 2
    with duckdb.connect(db, read_only=True) as con:
        tables = {r[0] for r in con.sql("select table_name from information_schema.tables "
                                        "where table_schema = 'cascade'").fetchall()}
        if "auc_summary" not in tables:
            print(f"cascade_thesis_tables: {db}: no table cascade.auc_summary (materialize cascade/auc)",
                  file=sys.stderr)
            return 2
        ours = con.sql("select * from cascade.auc_summary").df()
        authors = con.sql("select * from cascade.protocol_summary").df() if "protocol_summary" in tables else None
    print(f"warehouse {db}")
    for setting in ("full", "low"):
        pct_rule = "2 SE" if setting == "full" else (
            f"max({EFFECT_REL_TOL:.0%} of |thesis effect|, SE), {UNRESOLVABLE} when SE >= {UNRESOLVED:.0%} |effect|")
        print(f"\n{TITLE[setting]}: all cascades (k >= 2); tolerances: %Δ {pct_rule} (BO as GS, its own effect), "
              f"AUC levels {AUC_REL_TOL:.0%} of the thesis + {ROUNDING}; {NOT_COUNTED}: a row over another cascade "
              f"set than the thesis' {THESIS_CASCADES}, shown, not counted")
        frames = [table(ours[ours["setting"] == setting], setting, "ours")]
        if authors is not None and "setting" in authors:
            frames.append(table(authors[(authors["protocol"] == AUTHORS) & (authors["setting"] == setting)],
                                setting, "authors"))
        else:
            print("  authors' protocol: no Tables 2.7/2.8 in cascade.protocol_summary (materialize cascade/protocols)")
        out = pd.concat(frames, ignore_index=True).fillna("–")  # no BO under the authors' protocol
        with pd.option_context("display.width", 220, "display.max_columns", 20):
            print(out.to_string(index=False))
        cells = out.filter(regex="^(RT|GS|BO|%Δ_GS|%Δ_BO)$").stack()
        cells = cells[cells.str.endswith(("(in)", "(OUT)"))]  # "–" not computed, n/c and n/r not counted
        for label, pattern in (("RT / GS", "^(RT|GS|%Δ_GS)$"), ("BO", "^(BO|%Δ_BO)$")):
            part = cells[cells.index.get_level_values(1).str.match(pattern)]
            print(f"  {label} cells inside their tolerance: {int(part.str.endswith('(in)').sum())} of {len(part)}")
        print(f"  all cells: {int(cells.str.endswith('(in)').sum())} of {len(cells)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
