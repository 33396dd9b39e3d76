"""Thesis ch. 5 Tables 5.2-5.3 and the realised-overlap table of docs/results/clusters.md (issue 30).

`run` draws the thesis' full design (10 convex and 10 distorted data sets per shipped archetype, every
algorithm on every data set) with compass.clusters.benchmark and saves scores, centre fits and realised
overlaps as CSV under var/clusters_results/; `tables` prints the markdown: ours beside the thesis and,
where measured, repliclust 1.0.0, with a mark per cell (tolerance below), the HDBSCAN table, the 100-D
EM-GMM check and the realised-overlap summary.

Usage: OPENBLAS_NUM_THREADS=1 .venv/bin/python scripts/clusters_results.py [run] [tables]
(run: ~20 min of one core)
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import dataclasses  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "var" / "clusters_results"

from compass.clusters.archetype import Archetype  # noqa: E402
from compass.clusters.benchmark import draw, run_benchmark, summarize  # noqa: E402

#: A cell "reproduces" when |ours - reference| ≤ TOLERANCE + 2·SE(ours) (the thesis' SEs are of the same size);
#: marked "(✓)" when it needs the 2·SE allowance, "✓" when within TOLERANCE outright.
TOLERANCE = 0.10
SHORT = {"twelve_clusters_different_distributions": "12_diff_distr",
         "twelve_different_distributions_high_class_imbalance": "12_imbalance",
         "seven_highly_separated_10d_very_different_shapes": "7_sep_10d",
         "seven_very_different_shapes_significant_overlap_10d": "7_overlap_10d",
         "four_clusters_100d_100_samples_each": "4_100d_100",
         "four_clusters_100d_1000_samples_each": "4_100d_1000"}
ALGOS = ("em_gmm", "kmeans", "spectral", "hierarchical")
# Thesis Tables 5.2 (AMI, ARI; convex, distorted) in ALGOS order, per SHORT archetype.
THESIS = {
    ("ami", "convex"): {"12_diff_distr": (.884, .848, .859, .853), "12_imbalance": (.854, .836, .852, .834),
                        "7_sep_10d": (.983, .976, .986, .990), "7_overlap_10d": (.349, .452, .443, .380),
                        "4_100d_100": (.063, .512, .074, .654), "4_100d_1000": (.548, .664, .205, .868)},
    ("ami", "distorted"): {"12_diff_distr": (.576, .563, .565, .565), "12_imbalance": (.544, .542, .547, .553),
                           "7_sep_10d": (.750, .606, .709, .637), "7_overlap_10d": (.173, .149, .165, .145),
                           "4_100d_100": (.077, .100, .079, .092), "4_100d_1000": (.307, .145, .109, .132)},
    ("ari", "convex"): {"12_diff_distr": (.855, .795, .807, .798), "12_imbalance": (.800, .760, .787, .756),
                        "7_sep_10d": (.967, .977, .988, .992), "7_overlap_10d": (.238, .375, .385, .291),
                        "4_100d_100": (.004, .404, .053, .554), "4_100d_1000": (.408, .601, .185, .874)},
    ("ari", "distorted"): {"12_diff_distr": (.368, .365, .364, .362), "12_imbalance": (.341, .347, .345, .360),
                           "7_sep_10d": (.684, .505, .628, .523), "7_overlap_10d": (.109, .090, .089, .081),
                           "4_100d_100": (.018, .062, .053, .051), "4_100d_1000": (.252, .088, .065, .072)},
}
# Thesis Table 5.3: HDBSCAN AMI / p_noise per shape.
THESIS_HDBSCAN = {"12_diff_distr": ((.796, .269), (.605, .353)), "12_imbalance": ((.733, .238), (.560, .346)),
                  "7_sep_10d": ((.992, .175), (.747, .417)), "7_overlap_10d": ((.595, .909), (.163, .744)),
                  "4_100d_100": ((1.0, 1.0), (.794, .990)), "4_100d_1000": ((.800, .999), (.031, .687))}
# repliclust 1.0.0 with the same scikit-learn and clustering settings, measured by scripts/clusters_repliclust.py
# (its throwaway venv; var/clusters_results/repliclust.csv): mean per (archetype, shape, metric, algorithm).
REPLICLUST_CSV = OUT / "repliclust.csv"


def repliclust_means() -> dict[tuple[str, str, str, str], float]:
    """{(short archetype, shape, metric, algorithm): mean over its 10 data sets}; empty without the CSV."""
    if not REPLICLUST_CSV.exists():
        return {}
    means = pd.read_csv(REPLICLUST_CSV).groupby(["archetype", "shape", "metric", "algorithm"])["value"].mean()
    return {(SHORT[a], shape, metric, algo): v for (a, shape, metric, algo), v in means.items()}


def archetypes() -> list[Archetype]:
    return [Archetype.from_yaml(ROOT / "archetypes" / f"{name}.yaml") for name in SHORT]


def run() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    parts: dict[str, list[pd.DataFrame]] = {"scores": [], "generation": [], "overlaps": []}
    for spec in archetypes():
        start = time.process_time()
        result = run_benchmark(spec, 10, keep_datasets=0)
        for key in parts:
            parts[key].append(getattr(result, key))
        print(f"{spec.name}: {time.process_time() - start:.0f} s CPU", flush=True)
    for key, frames in parts.items():
        pd.concat(frames, ignore_index=True).to_csv(OUT / f"{key}.csv", index=False)
    em_iterations().to_csv(OUT / "em_iterations.csv", index=False)


def em_iterations() -> pd.DataFrame:
    """The 100-D EM-GMM check: scikit-learn GaussianMixture at its defaults (k-means initialisation,
    tol 1e-3 on the per-sample lower bound, max_iter 100, full covariances, reg_covar 1e-6): iterations
    run and the AMI between its labels and the benchmark's K-Means labels, per convex data set."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import adjusted_mutual_info_score
    from sklearn.mixture import GaussianMixture

    rows = []
    for spec in archetypes():
        if spec.dim < 100:
            continue
        for index in range(10):
            X, data = draw(dataclasses.replace(spec, calibrate_tails=False), "convex", index)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                gmm = GaussianMixture(n_components=spec.n_clusters, random_state=index).fit(X)
                kmeans = KMeans(n_clusters=spec.n_clusters, random_state=index).fit_predict(X)
            labels = gmm.predict(X)
            rows.append((SHORT[spec.name], index, gmm.n_iter_, bool(gmm.converged_),
                         adjusted_mutual_info_score(kmeans, labels), adjusted_mutual_info_score(data.y, labels)))
    return pd.DataFrame(rows, columns=["archetype", "dataset", "n_iter", "converged", "ami_to_kmeans", "ami"])


def _mark(ours: float, se: float, refs: list[float]) -> str:
    """✓: within TOLERANCE of a reference; (✓): only with the 2·SE allowance; ✗: neither."""
    refs = [r for r in refs if r is not None]
    if any(abs(ours - r) <= TOLERANCE for r in refs):
        return "✓"
    close = [abs(ours - r) <= TOLERANCE + 2 * (se if np.isfinite(se) else 0) for r in refs]
    return "(✓)" if any(close) else "✗"


def table(summary: pd.DataFrame, metric: str, shape: str, replic: dict) -> str:
    cells = summary[(summary["metric"] == metric) & (summary["shape"] == shape)].set_index(["archetype", "algorithm"])
    head = "| Archetype | " + " | ".join(("EM-GMM", "K-Means", "Spectral", "Ward")) + " |"
    lines = [head, "|---" * 5 + "|"]
    for name, short in SHORT.items():
        row = []
        for j, algo in enumerate(ALGOS):
            mean, se = cells.loc[(name, algo), ["mean", "se"]]
            thesis = THESIS[(metric, shape)][short][j]
            rc = replic.get((short, shape, metric, algo))
            ref = f"{thesis:.3f}" + (f" / r {rc:.3f}" if rc is not None else "")
            row.append(f"{mean:.3f} ({se:.3f}) [{ref}] {_mark(mean, se, [thesis, rc])}")
        lines.append(f"| {short} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def hdbscan_table(summary: pd.DataFrame) -> str:
    cells = summary[summary["algorithm"] == "hdbscan"].set_index(["archetype", "shape", "metric"])
    lines = ["| Archetype | Convex: AMI / p_noise [thesis] | Distorted: AMI / p_noise [thesis] |", "|---|---|---|"]
    for name, short in SHORT.items():
        row = []
        for s, shape in enumerate(("convex", "distorted")):
            t_ami, t_noise = THESIS_HDBSCAN[short][s]
            noise = cells.loc[(name, shape, "p_noise")]
            if (name, shape, "ami") in cells.index:
                ami = cells.loc[(name, shape, "ami")]
                n = "" if ami["n_datasets"] == 10 else f" n={int(ami['n_datasets'])}"
                text = f"{ami['mean']:.3f} ({ami['se']:.3f}){n}"
            else:
                text = "– (all noise)"
            row.append(f"{text} / {noise['mean']:.3f} [{t_ami:.3f} / {t_noise:.3f}]")
        lines.append(f"| {short} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def overlap_table(overlaps: pd.DataFrame, generation: pd.DataFrame) -> str:
    lines = ["| Archetype | requested [min, max] | generator | pairs | max realised (sampled) | max population "
             "| pairs flagged | converged |", "|---|---|---|---|---|---|---|---|"]
    conv = generation.groupby(["archetype", "generator"])["converged"].agg(["sum", "count"])
    for (name, generator), g in overlaps.groupby(["archetype", "generator"], sort=False):
        c = conv.loc[(name, generator)]
        lines.append(f"| {SHORT[name]} | [{g['requested_min'].iloc[0]:g}, {g['requested_max'].iloc[0]:g}] | {generator} "
                     f"| {len(g)} | {g['realised_overlap'].max():.3g} | {g['population_overlap'].max():.3g} "
                     f"| {int(g['warning'].sum())} ({', '.join(sorted(set(g.loc[g['warning'], 'status'])) or ['–'])}) "
                     f"| {int(c['sum'])}/{int(c['count'])} |")
    return "\n".join(lines)


def tables() -> None:
    scores = pd.read_csv(OUT / "scores.csv")
    summary = summarize(scores)
    replic = repliclust_means()
    for metric in ("ami", "ari"):
        for shape in ("convex", "distorted"):
            print(f"\n{metric.upper()}, {shape}: ours (SE) [thesis / r repliclust 1.0.0] mark\n")
            print(table(summary, metric, shape, replic))
    print("\nHDBSCAN\n")
    print(hdbscan_table(summary))
    print("\nRealised overlap\n")
    print(overlap_table(pd.read_csv(OUT / "overlaps.csv"), pd.read_csv(OUT / "generation.csv")))
    em = pd.read_csv(OUT / "em_iterations.csv")
    print("\n100-D EM-GMM\n")
    print(em.groupby("archetype").agg(n_iter_median=("n_iter", "median"), n_iter_max=("n_iter", "max"),
                                      same_as_kmeans=("ami_to_kmeans", lambda v: int((v > 0.999).sum())),
                                      ami=("ami", "mean")).to_markdown(floatfmt=".3f"))


if __name__ == "__main__":
    steps = sys.argv[1:] or ["run", "tables"]
    if "run" in steps:
        run()
    if "tables" in steps:
        tables()
