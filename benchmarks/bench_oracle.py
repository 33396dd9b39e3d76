"""Benchmark: oracle estimators from DuckDB, ours vs a straightforward pandas group-by version.

Synthetic data only (compass.oracle.synthetic.generate, §4.3.2 PGM): 10,000 prompts x
50 models x 10 generations = 5M observations, written to a temporary DuckDB table
with the canonical raw.query_records columns. Each implementation runs in its own
subprocess (so its peak RSS is measured alone) and goes end to end from DuckDB:

  ours      read the needed columns with ids as categorical codes (`read_coded`: numbers
            only cross from DuckDB via `fetchnumpy`), `build_arrays`, `naive_curve`
            (O_biased(G′), G′ = 1..10), the recommended debiased estimator
            (`bias_corrected_oracle`).
  pandas    the same numbers the obvious way: the subset-mean distribution of each
            cell by explicit enumeration of all C(G, G′) subsets (averaging over them),
            cells combined per prompt with group-by cumulative products (router picks
            the highest subset mean, ties to the cheaper cell), and the bias correction
            with a per-model scipy beta-binomial fit and binomial pmfs, again via group-by.

Target: ours >= 10x faster and < 4 GB peak RSS; the two must agree to 1e-9 on the
naive curve and to 1e-5 on the debiased estimator (two independent L-BFGS-B fits of
the empirical-Bayes prior agree only to optimizer tolerance; the core uses scipy's
default ftol, the baseline a tight one).

Run: .venv/bin/python benchmarks/bench_oracle.py [--prompts N --models L --generations G]
"""

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from itertools import combinations  # noqa: E402
from pathlib import Path  # noqa: E402

import duckdb  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SPEEDUP_TARGET = 10.0
MEMORY_TARGET_GB = 4.0
NAIVE_TOL = 1e-9
DEBIASED_TOL = 1e-5
COLUMNS = "query_id, model_id, generation, correct, cost_usd"


def write_table(db: Path, n_prompts: int, n_models: int, generations: int) -> float:
    """Synthetic records in the canonical query_records columns; returns the true oracle."""
    from compass.oracle.synthetic import generate

    data = generate(n_prompts, n_models, generations, seed=2026)
    rec = data.records.assign(dataset="synthetic", split="test", score=np.nan, confidence=np.nan, latency_ms=np.nan,
                              tokens_in=np.nan, tokens_out=np.nan, source="benchmark", as_of="2026-01-01")
    with duckdb.connect(str(db)) as con:
        con.register("rec", rec)
        con.execute("create table query_records as select dataset, split, query_id, model_id, generation, correct, "
                    "score, confidence, cost_usd, latency_ms, tokens_in, tokens_out, category, source, as_of from rec")
    return data.true_oracle


def read(db: Path) -> pd.DataFrame:
    """The pandas baseline's read: the table as a DataFrame with string ids."""
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(f"select {COLUMNS} from query_records where dataset = 'synthetic'").df()


def read_coded(db: Path) -> pd.DataFrame:
    """Ours: the same rows, with query_id and model_id as pandas Categoricals.

    DuckDB hashes the id strings in parallel and ships only numbers (`fetchnumpy`);
    pandas turns the 64-bit hashes into codes, and each distinct id is read once to
    label its hash (a hash collision between two distinct ids raises).
    """
    where = "from query_records where dataset = 'synthetic'"
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.sql(f"select hash(query_id) as query_id, hash(model_id) as model_id, generation, correct, "
                       f"cost_usd {where}").fetchnumpy()
        for col in ("query_id", "model_id"):
            labels = con.sql(f"select distinct {col} as label, hash({col}) as key {where}").fetchnumpy()
            keys = pd.Index(labels["key"])
            if not keys.is_unique:
                raise ValueError(f"hash collision between distinct {col} values")
            codes, hashes = pd.factorize(rows[col])
            rows[col] = pd.Categorical.from_codes(codes, categories=labels["label"][keys.get_indexer(hashes)])
    return pd.DataFrame(rows)


def run_ours(db: Path) -> dict:
    from compass.oracle.bias_correction import bias_corrected_oracle
    from compass.oracle.naive import naive_curve
    from compass.oracle.records import build_arrays

    arrays = build_arrays(read_coded(db), dataset="synthetic")
    curve = naive_curve(arrays)
    q, c = bias_corrected_oracle(arrays)
    return {"curve_quality": curve["quality"].tolist(), "curve_cost": curve["cost"].tolist(),
            "debiased_quality": q, "debiased_cost": c}


# ---- the straightforward pandas implementation ------------------------------------------------

def combine(cells: pd.DataFrame, pmf: np.ndarray, grid: np.ndarray) -> tuple[float, float]:
    """E[max] quality and routed cost per prompt from per-cell pmfs on a common grid, via group-by.

    `cells` is sorted by (query_id, cost, model order); the router picks the largest
    value, ties to the cheaper cell: P(l picked at j) = pmf_l(j) Π_{cheaper} F(j−1) Π_{dearer} F(j).
    """
    cols = [f"j{i}" for i in range(pmf.shape[1])]
    q = cells["query_id"].to_numpy()
    cdf = pd.DataFrame(np.cumsum(pmf, axis=1), columns=cols)
    below = cdf - pd.DataFrame(pmf, columns=cols)
    left = below.groupby(q).shift(1, fill_value=1.0).groupby(q).cumprod()
    rev = cdf.iloc[::-1]
    right = rev.groupby(q[::-1]).shift(1, fill_value=1.0).groupby(q[::-1]).cumprod().iloc[::-1]
    sel = pmf * left.to_numpy() * right.to_numpy()
    per_cell = pd.DataFrame({"query_id": q, "quality": sel @ grid, "cost": sel.sum(axis=1) * cells["cost"].to_numpy()})
    per_prompt = per_cell.groupby("query_id")[["quality", "cost"]].sum()
    return float(per_prompt["quality"].mean()), float(per_prompt["cost"].mean())


def subset_pmf_by_enumeration(outcomes: np.ndarray, subset: int, chunk: int = 20000) -> np.ndarray:
    """P(J = j) per cell: the share of all C(G, G′) generation subsets with j successes."""
    g = outcomes.shape[1]
    idx = np.zeros((len(list(combinations(range(g), subset))), g))
    for r, comb in enumerate(combinations(range(g), subset)):
        idx[r, list(comb)] = 1.0
    out = np.empty((outcomes.shape[0], subset + 1))
    for start in range(0, outcomes.shape[0], chunk):
        counts = np.rint(outcomes[start:start + chunk] @ idx.T).astype(int)
        out[start:start + chunk] = np.stack([(counts == j).mean(axis=1) for j in range(subset + 1)], axis=1)
    return out


def beta_binomial_prior(k: pd.Series, g: int) -> tuple[float, float]:
    """Per-model EB prior: maximize Σ_n log BetaBinom(k_n; G, a, b) over log a, log b (scipy)."""
    from scipy.optimize import minimize
    from scipy.stats import betabinom

    mean = k.mean() / g
    start = np.log(np.clip([2 * mean + 0.1, 2 * (1 - mean) + 0.1], 1e-2, None))
    res = minimize(lambda t: -betabinom.logpmf(k.to_numpy(), g, *np.exp(t)).sum(), start, method="L-BFGS-B",
                   bounds=[(np.log(1e-3), np.log(1e4))] * 2, options={"ftol": 1e-15, "gtol": 1e-10})
    return tuple(np.exp(res.x))


def run_pandas(db: Path) -> dict:
    from scipy.stats import binom

    df = read(db)
    cells = (df.groupby(["query_id", "model_id"], sort=True)
               .agg(k=("correct", "sum"), g=("correct", "size"), cost=("cost_usd", "mean")).reset_index())
    g = int(cells["g"].iloc[0])
    wide = df.pivot_table(index=["query_id", "model_id"], columns="generation", values="correct", aggfunc="first")
    cells = cells.merge(wide.reset_index(), on=["query_id", "model_id"])
    cells["model_order"] = cells.groupby("query_id").cumcount()
    cells = cells.sort_values(["query_id", "cost", "model_order"], kind="stable").reset_index(drop=True)
    outcomes = cells[list(range(g))].to_numpy(dtype=float)

    curve_q, curve_c = [], []
    for sub in range(1, g + 1):
        q, c = combine(cells, subset_pmf_by_enumeration(outcomes, sub), np.arange(sub + 1) / sub)
        curve_q.append(q)
        curve_c.append(c)

    priors = {m: beta_binomial_prior(s, g) for m, s in cells.groupby("model_id")["k"]}
    a = cells["model_id"].map(lambda m: priors[m][0])
    b = cells["model_id"].map(lambda m: priors[m][1])
    cells["p_tilde"] = (a + cells["k"]) / (a + b + g)
    j = np.arange(g + 1)
    q_rep, c_rep = combine(cells, binom.pmf(j[None, :], g, cells["p_tilde"].to_numpy()[:, None]), j / g)
    top = cells.groupby("query_id")["p_tilde"].transform("max")
    picked = cells[cells["p_tilde"] >= top - 1e-12].groupby("query_id").head(1)  # sorted by cost: cheapest tie
    bias_q, bias_c = q_rep - picked["p_tilde"].mean(), c_rep - picked["cost"].mean()
    return {"curve_quality": curve_q, "curve_cost": curve_c,
            "debiased_quality": curve_q[-1] - bias_q, "debiased_cost": curve_c[-1] - bias_c}


# ---- driver --------------------------------------------------------------------------------

def child(impl: str, db: Path) -> None:
    import compass.oracle.bias_correction  # noqa: F401  imports are not part of the timed work
    import compass.oracle.naive  # noqa: F401
    import scipy.optimize  # noqa: F401
    import scipy.stats  # noqa: F401

    start = time.perf_counter()
    result = {"ours": run_ours, "pandas": run_pandas}[impl](db)
    result["seconds"] = time.perf_counter() - start
    result["max_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
    print(json.dumps(result))


def run_child(impl: str, db: Path) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", impl, "--db", str(db)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=10_000)
    parser.add_argument("--models", type=int, default=50)
    parser.add_argument("--generations", type=int, default=10)
    parser.add_argument("--child", choices=["ours", "pandas"])
    parser.add_argument("--db")
    args = parser.parse_args()
    if args.child:
        child(args.child, Path(args.db))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.duckdb"
        t = time.perf_counter()
        truth = write_table(db, args.prompts, args.models, args.generations)
        n_obs = args.prompts * args.models * args.generations
        print(f"synthetic data: {args.prompts} prompts x {args.models} models x {args.generations} generations "
              f"= {n_obs:,} rows written to DuckDB in {time.perf_counter() - t:.1f} s (true oracle {truth:.4f})")
        ours, base = run_child("ours", db), run_child("pandas", db)
    naive_gap = max(np.max(np.abs(np.subtract(ours[k], base[k]))) for k in ("curve_quality", "curve_cost"))
    debiased_gap = max(abs(ours[k] - base[k]) for k in ("debiased_quality", "debiased_cost"))
    speedup = base["seconds"] / ours["seconds"]
    print(f"ours   : {ours['seconds']:7.2f} s  peak RSS {ours['max_rss_gb']:.2f} GB")
    print(f"pandas : {base['seconds']:7.2f} s  peak RSS {base['max_rss_gb']:.2f} GB")
    print(f"speed-up {speedup:.1f}x (target >= {SPEEDUP_TARGET:.0f}x)")
    print(f"naive O_biased(G') G'=1..{args.generations}: {np.round(ours['curve_quality'], 4).tolist()}")
    print(f"debiased (bias_corrected) quality {ours['debiased_quality']:.6f}, cost {ours['debiased_cost']:.6g}")
    print(f"max |ours - pandas|: naive curve {naive_gap:.2e} (tol {NAIVE_TOL:g}), "
          f"debiased {debiased_gap:.2e} (tol {DEBIASED_TOL:g})")
    assert naive_gap <= NAIVE_TOL, f"naive curves disagree by {naive_gap}"
    assert debiased_gap <= DEBIASED_TOL, f"debiased estimates disagree by {debiased_gap}"
    ok = speedup >= SPEEDUP_TARGET and ours["max_rss_gb"] < MEMORY_TARGET_GB
    print(f"{'PASS' if ok else 'FAIL'}: speed-up {speedup:.1f}x >= {SPEEDUP_TARGET:.0f}x and "
          f"peak {ours['max_rss_gb']:.2f} GB < {MEMORY_TARGET_GB:.0f} GB")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
