"""Share of the 96 Table 5.2 cells where our generator's data are easier than repliclust 1.0.0's (issue 47 item 4).

"Before": the four AMI/ARI tables of docs/results/clusters.md's first section as committed (ours (SE) and
the measured repliclust 1.0.0 mean "r", from scripts/clusters_repliclust.py with real torch). "After":
var/clusters_results/scores.csv from `scripts/clusters_results.py run` on the current generator, against
the same repliclust means. A cell is "easier" when ours > repliclust, "significantly easier" when
ours > repliclust + 2 SE(ours). Also writes the page's repliclust means as var/clusters_results/repliclust.csv
(one row per cell, value = the mean) when that file is absent, so `clusters_results.py tables` marks the new
numbers against the same reference.

Usage: PYTHONPATH=. .venv/bin/python scripts/clusters_easier_cells.py
"""

import re
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PAGE = ROOT / "docs" / "results" / "clusters.md"
OUT = ROOT / "var" / "clusters_results"
ALGORITHMS = ("em_gmm", "kmeans", "spectral", "hierarchical")
CELL = re.compile(r"(-?\d\.\d+) \((\d\.\d+)\) \[(-?\d\.\d+|–) / r (-?\d\.\d+)\]")


def _short_names() -> dict[str, str]:
    import importlib.util
    spec = importlib.util.spec_from_file_location("clusters_results", ROOT / "scripts" / "clusters_results.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SHORT


def before_cells(text: str) -> pd.DataFrame:
    rows, current = [], None
    for line in text.splitlines():
        if line.startswith("### ") or line.startswith("HDBSCAN"):  # the first section's four tables only
            break
        m = re.match(r"(AMI|ARI), (convex|distorted): ours \(SE\)", line)
        if m:
            current = (m.group(1).lower(), m.group(2))
            continue
        if current and line.startswith("| ") and not line.startswith("| Archetype"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            for algorithm, cell in zip(ALGORITHMS, cells[1:]):
                c = CELL.search(cell)
                assert c, f"unparsed cell {cell!r}"
                rows.append({"archetype": cells[0], "shape": current[1], "metric": current[0], "algorithm": algorithm,
                             "ours": float(c.group(1)), "se": float(c.group(2)), "repliclust": float(c.group(4))})
    out = pd.DataFrame(rows)
    assert len(out) == 96, f"expected the 96 Table 5.2 cells, parsed {len(out)}"
    return out


def after_cells(before: pd.DataFrame, short: dict[str, str]) -> pd.DataFrame:
    scores = pd.read_csv(OUT / "scores.csv")
    scores = scores[scores["algorithm"].isin(ALGORITHMS) & scores["metric"].isin(["ami", "ari"])]
    scores = scores.assign(archetype=scores["archetype"].map(short))
    g = scores.groupby(["archetype", "shape", "metric", "algorithm"])["value"]
    stats = pd.DataFrame({"ours": g.mean(), "se": g.std() / g.count() ** 0.5}).reset_index()
    return before[["archetype", "shape", "metric", "algorithm", "repliclust"]].merge(stats, how="left")


def shares(cells: pd.DataFrame) -> dict[str, str]:
    easier = cells["ours"] > cells["repliclust"]
    significant = cells["ours"] > cells["repliclust"] + 2 * cells["se"]
    harder = cells["ours"] < cells["repliclust"] - 2 * cells["se"]
    n = len(cells)
    return {"easier": f"{int(easier.sum())} of {n} ({easier.mean():.0%})",
            "easier by > 2 SE": f"{int(significant.sum())} of {n}",
            "harder by > 2 SE": f"{int(harder.sum())} of {n}",
            "mean(ours - repliclust)": f"{(cells['ours'] - cells['repliclust']).mean():+.3f}"}


def write_repliclust_means(before: pd.DataFrame, short: dict[str, str]) -> None:
    path = OUT / "repliclust.csv"
    if path.exists():
        return
    long = {v: k for k, v in short.items()}
    rows = before.assign(archetype=before["archetype"].map(long), dataset=0, value=before["repliclust"])
    rows[["archetype", "shape", "dataset", "algorithm", "metric", "value"]].to_csv(path, index=False)


def main() -> int:
    short = _short_names()
    before = before_cells(PAGE.read_text())
    after = after_cells(before, short)
    OUT.mkdir(parents=True, exist_ok=True)
    write_repliclust_means(before, short)
    table = pd.DataFrame({"before (page, shuffled cluster order)": shares(before),
                          "after (scores.csv, ascending cluster order)": shares(after)})
    print(table.to_markdown())
    for label, cells in (("before", before), ("after", after)):
        by = cells.assign(easier=cells["ours"] > cells["repliclust"]).groupby(["shape", "metric"])["easier"].sum()
        print(f"\n{label}: easier cells per table (of 24): " + ", ".join(f"{s} {m.upper()} {int(v)}"
                                                                      for (s, m), v in by.items()))
    must = after[(after["archetype"] == "7_overlap_10d") & (after["shape"] == "convex") & (after["metric"] == "ami")]
    print("\n7_overlap_10d convex AMI, after: " + ", ".join(
        f"{r.algorithm} {r.ours:.3f} ({r.se:.3f}) [r {r.repliclust:.3f}]" for r in must.itertuples()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
