"""Parity of the cascade preparation as (query x model) matrices with the long-frame path on the embedded data
(issue 45).

For every dataset of data/query_records.parquet (as the extract datasets.query_records holds it): the long-frame
path (`query_frames.coded_records` of every row, then `compass.cascades.study.prepare_records`) against
`resources.cascade_matrix` (the matrices, `WideRecords`). Checked, exactly (no tolerance): None for the same
datasets; the matrices' long frame equals the old records (every row, its position, value and dtype; the old frame's
`generation` and `category` columns are read by no cascade table); the tables of every cascade asset
built from the matrices (cascade.calibration, cascade.marginals, cascade.marginal_gof, cascade.copulas,
cascade.markov_test, cascade.tau, cascade.curves with its low-sample skips, cascade.markov_error, the protocol
study's cascade.protocol_curves, cascade.protocol_auc, cascade.protocol_summary at the light study; cascade.economics,
cascade.optimal_model_map, cascade.critical_prices, cascade.system_summary, cascade.tuned_rewards, cascade.cer_curve,
cascade.failfast and the failfast asset's skip test) equal those built from the old records.

Run: PYTHONPATH=. .venv/bin/python scripts/cascade_matrix_parity.py
"""

import sys
import time
from pathlib import Path

import duckdb
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compass.cascades import protocols as cp  # noqa: E402
from compass.cascades import study as cs  # noqa: E402
from compass.cascades.marginals import fit_marginals, marginal_gof_table, marginal_params_frame  # noqa: E402
from resources.cascade_matrix import cascade_matrix  # noqa: E402
from resources.query_frames import coded_records  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OLD_COLUMNS = ("split", "query_id", "model_id", "generation", "correct", "confidence", "cost_usd", "latency_ms",
               "tokens_in", "tokens_out", "category")


def cascade_tables(records, dataset: str) -> dict[str, pd.DataFrame]:
    """What the cascade assets publish (calibration, marginals, copulas, curves, protocols at the light study,
    economics, two-model cascades, Fail Fast), from `records` (either form)."""
    cal, _ = cs.calibrated_records(records, dataset)
    marginals = fit_marginals(cal)
    split = "test" if cs.has_test(records) else "train"
    out = {"calibration": cs.calibration_table(records, dataset), "marginals": marginal_params_frame(marginals),
           "marginal_gof": marginal_gof_table(cal, marginals, n_boot=cs.LIGHT.gof_boot, split=split),
           **cs.copula_tables(records, cal, marginals, cs.LIGHT)}
    if cs.has_test(records):
        chains = cs.chains_for(records)
        out["cascade.curves"], extra = cs.cascade_curves(records, cal, dataset, chains,
                                                         cs.study_cascades(chains, cs.LIGHT), cs.LIGHT)
        out["cascade.markov_error"] = cs.markov_error_table(cal, tuple(max(chains.values(), key=len)))
        out["low_sample_skipped"] = pd.DataFrame([extra["low_sample_skipped"]], dtype=object)
        samples, _ = cs.training_samples(records, cal, dataset, max(chains.values(), key=len), cs.LIGHT.low_sample_seeds)
        curves, auc, summary = cp.protocol_study(samples, chains, cp.protocols_named(list(cs.LIGHT.protocols)))
        out.update({"cascade.protocol_curves": curves, "cascade.protocol_auc": auc,
                    "cascade.protocol_summary": summary})
    if not cs.lacks(records, ["cost_usd", "latency_ms"]):
        out.update(cs.economics_tables(records))
        if cs.has_test(records):
            out.update(cs.two_model_cascade_tables(records, dataset))
    if not cs.lacks(records, ["cost_usd", "latency_ms", "tokens_out"]):
        strong, _ = cs.failfast_pair(cal)
        out["failfast_tokens"] = pd.DataFrame({"distinct": [cs.distinct_values(cal, strong, "tokens_out")]})
        out["failfast"] = cs.real_failfast(cal)
    return out


def same(a: dict[str, pd.DataFrame], b: dict[str, pd.DataFrame]) -> list[str]:
    """Names of the tables that differ (or are missing on one side)."""
    bad = sorted(set(a) ^ set(b))
    for name in sorted(set(a) & set(b)):
        try:
            pd.testing.assert_frame_equal(a[name], b[name], check_exact=True)
        except AssertionError:
            bad.append(name)
    return bad


def main() -> int:
    con = duckdb.connect()
    con.execute("create schema datasets")
    con.execute(f"create table datasets.query_records as select * from '{ROOT / 'data' / 'query_records.parquet'}'")
    failures = 0
    print("| dataset | rows | old s | matrices s | records | tables |")
    print("|---|---|---|---|---|---|")
    for (dataset,) in con.execute("select distinct dataset from datasets.query_records order by 1").fetchall():
        t = time.perf_counter()
        old = cs.prepare_records(coded_records(con, dataset, OLD_COLUMNS), dataset)
        t_old, t = time.perf_counter() - t, time.perf_counter()
        wide = cascade_matrix(con, dataset)
        t_new = time.perf_counter() - t
        n = con.execute("select count(*) from datasets.query_records where dataset = ?", [dataset]).fetchone()[0]
        if old is None or wide is None:
            ok = old is None and wide is None
            failures += not ok
            print(f"| {dataset} | {n:,} | {t_old:.2f} | {t_new:.2f} | {'both None' if ok else 'DIFFER'} | – |")
            continue
        long = wide.long()
        try:
            pd.testing.assert_frame_equal(long, old[list(long.columns)], check_exact=True)
            records = "identical"
        except AssertionError:
            records = "DIFFER"
        n_old = cascade_tables(old, dataset)
        bad = same(cascade_tables(wide, dataset), n_old)
        failures += records != "identical" or bool(bad)
        print(f"| {dataset} | {n:,} | {t_old:.2f} | {t_new:.2f} | {records} | "
              f"{f'{len(n_old)} identical' if not bad else 'DIFFER: ' + ', '.join(bad)} |", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
