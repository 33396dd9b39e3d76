"""Issue 42's must-hold numbers for `frontier_api`, before and after, from two materialized warehouses
(docs/results/mlcompass.md, "Measured ground: the issue's numbers before and after").

    python scripts/mlcompass_measured_ground_summary.py --before OLD.duckdb --after var/warehouse.duckdb

Per warehouse: the top-10 rows' median imputed share per scenario; the share of top-10 rows inside the outcome
models' range on every measure; the governance attributes known for the case's models (open weights, context
window, release date); the leave-pattern-out imputation check where the warehouse has it
(compass.imputation_validation); P(rank 1) leaders outside the 10 rows. The name-pair precision and recall come
from the labelled fixture (`compass.ingest.name_pairs`), the rank-interval coverage of the true top 5 from
`compass.mlcompass.rank_coverage.MEASURED_TOP5` (scripts/mlcompass_rank_coverage.py).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import duckdb
import pandas as pd

from compass.ingest.name_pairs import read_pairs, score
from compass.mlcompass.rank_coverage import MEASURED_TOP5

CASE = "frontier_api"
ATTRIBUTES = ("open_weights", "context_window", "release_date")
PAIRS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "names" / "cross_source_pairs.csv"


def _query(con: duckdb.DuckDBPyConnection, sql: str) -> pd.DataFrame:
    return con.sql(sql).df()


def _has(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    schema, name = table.split(".")
    return bool(_query(con, f"select count(*) n from information_schema.tables where table_schema = '{schema}' "
                            f"and table_name = '{name}'")["n"].iloc[0])


def board_numbers(db: str) -> dict[str, str]:
    """The warehouse's numbers, formatted for the table."""
    con = duckdb.connect(db, read_only=True)
    top = _query(con, f"select * from compass.leaderboards where case_id = '{CASE}' and rank <= 10")
    imputed = top.groupby("scenario")["imputed_share"].median()
    inside = (top["measures_outside"].fillna(0) == 0).mean()
    models = _query(con, f"select distinct model_id from compass.measures where case_id = '{CASE}'")["model_id"]
    attributes = _query(con, "select * from raw.models").set_index("model_id").reindex(models)
    ranks = _query(con, f"select scenario, model_id, p_rank1 from compass.rank_uncertainty where case_id = '{CASE}'")
    leaders = ranks.loc[ranks.groupby("scenario")["p_rank1"].idxmax()]
    hidden = leaders.merge(top[["scenario", "model_id"]], how="left", indicator=True)
    board = _query(con, f"select scenario, count(*) n from compass.leaderboards where case_id = '{CASE}' group by 1")
    point = _query(con, f"select u.scenario, u.rank_lo, u.rank_hi from compass.rank_uncertainty u where "
                        f"u.case_id = '{CASE}' and u.rank = 1 order by u.scenario")
    out = {
        "models × benchmarks in x_raw": f"{len(models)} × "
        f"{_query(con, f'select count(distinct benchmark) n from compass.loadings where case_id = {CASE!r}')['n'].iloc[0]}",
        "models ranked on the boards (min–max over scenarios)": f"{board['n'].min()}–{board['n'].max()}",
        "point leader's 90 % rank interval, per scenario (" + ", ".join(point["scenario"]) + ")":
            " / ".join(f"[{lo}–{hi}]" for lo, hi in zip(point["rank_lo"], point["rank_hi"])),
        "top-10 median imputed share (min–max over scenarios)": f"{imputed.min():.2f}–{imputed.max():.2f}",
        "top-10 rows inside the outcome models' range": f"{inside:.0%}",
        "P(rank 1) leaders not in the top 10 (scenarios)": f"{int((hidden['_merge'] == 'left_only').sum())} of "
                                                            f"{len(leaders)}",
    }
    for a in ATTRIBUTES:
        out[f"{a} known"] = f"{attributes[a].notna().mean():.1%} of {len(models)}"
    if _has(con, "compass.imputation_validation"):
        v = _query(con, f"select * from compass.imputation_validation where case_id = '{CASE}' and n_cells > 0")
        w = v["n_cells"]
        rmse = lambda c: (((v[c] ** 2) * w).sum() / w.sum()) ** 0.5  # noqa: E731 - cell-weighted pooled RMSE
        out["leave-pattern-out RMSE: imputed / column mean / one factor (SD units)"] = (
            f"{rmse('rmse_imputed'):.2f} / {rmse('rmse_mean'):.2f} / {rmse('rmse_one_factor'):.2f} ({int(w.sum())} cells)")
        cov = lambda c: (v[c] * w).sum() / w.sum()  # noqa: E731
        out["nominal-90 % coverage: model sd / calibrated / calibrated, donor held out"] = (
            f"{cov('coverage90'):.2f} / {cov('coverage90_calibrated'):.2f} / {cov('coverage90_calibrated_cv'):.2f}")
        if "noise_correlation" in v:
            out["within-model correlation of imputation errors (drawn by the bootstrap)"] = (
                f"{v['noise_correlation'].iloc[0]:.2f}")
    con.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="warehouse of the code before the change")
    parser.add_argument("--after", required=True, help="warehouse of the code after the change")
    args = parser.parse_args()
    before, after = board_numbers(args.before), board_numbers(args.after)
    rows = [(k, before.get(k, "not measured"), after[k]) for k in after]
    pairs = score(read_pairs(PAIRS.read_text(), str(PAIRS)))
    rows.append(("name pairs: precision / recall (fixture of real upstream names)", "see the join section",
                 f"{pairs.precision:.3f} / {pairs.recall:.3f} ({pairs.n_pairs} pairs)"))
    rows.append(("90 % rank interval, coverage of the true top 5 (worlds: " + ", ".join(MEASURED_TOP5) + ")",
                 "0.840 / 0.925 / 0.835 / 0.910 (issue 29's intervals)",
                 " / ".join(f"{v:.3f}" for v in MEASURED_TOP5.values())))
    print(pd.DataFrame(rows, columns=["frontier_api", "before", "after"]).to_markdown(index=False))


if __name__ == "__main__":
    main()
