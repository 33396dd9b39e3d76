"""repliclust 1.0.0's own generator on the Table 5.2 design of docs/results/clusters.md (issue 30 item 2).

Draws 10 convex and 10 distorted data sets per shipped archetype with the thesis' reference package (its
MaxMinArchetype and DataGenerator at the archetype file's Table 5.1 parameters, everything else at the package's
defaults; convex data set i drawn after repliclust.set_seed(i), distorted data set i drawn after set_seed(10 + i)
and passed through repliclust.distort on the CPU) and clusters them with this repository's benchmark settings (compass.clusters.benchmark.
score: true k, scikit-learn defaults, clustering seed i as in run_benchmark with seed 0). Prints AMI and ARI, mean
(SE) over the data sets, and writes var/clusters_results/repliclust.csv.

The package needs torch, which this project does not install (nor repliclust). Run it from a THROWAWAY venv
outside the repository, with the project's scikit-learn version:

    python3 -m venv /tmp/rpl-venv
    /tmp/rpl-venv/bin/pip install torch --index-url https://download.pytorch.org/whl/cpu   # or a local CPU wheel
    /tmp/rpl-venv/bin/pip install repliclust==1.0.0 scikit-learn==1.7.2 pyyaml pandas tabulate
    OPENBLAS_NUM_THREADS=1 /tmp/rpl-venv/bin/python scripts/clusters_repliclust.py

Without repliclust importable the script says so and exits 0 (nothing to measure).
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: The six shipped §5.4 archetypes (the first two hold the cells issue 30 quoted).
ARCHETYPES = ("seven_very_different_shapes_significant_overlap_10d", "four_clusters_100d_100_samples_each",
              "twelve_clusters_different_distributions", "twelve_different_distributions_high_class_imbalance",
              "seven_highly_separated_10d_very_different_shapes", "four_clusters_100d_1000_samples_each")
SHAPES = ("convex", "distorted")
ALGORITHMS = ("em_gmm", "kmeans", "spectral", "hierarchical")
N_DATASETS = 10
#: Table 5.1 keys passed to repliclust's MaxMinArchetype (the rest at the package's defaults, as the thesis ran it).
KEYS = ("n_clusters", "dim", "n_samples", "aspect_ref", "aspect_maxmin", "radius_maxmin", "imbalance_ratio",
        "max_overlap", "min_overlap", "distributions")


def main() -> int:
    try:
        import repliclust
    except ImportError:
        print("repliclust is not importable: nothing measured (see this script's docstring for the throwaway venv)")
        return 0
    import sklearn
    import yaml

    from compass.clusters.benchmark import score

    print(f"repliclust {getattr(repliclust, '__version__', '1.0.0')}, scikit-learn {sklearn.__version__}",
          file=sys.stderr)
    rows = []
    for name in ARCHETYPES:
        spec = yaml.safe_load((ROOT / "archetypes" / f"{name}.yaml").read_text())
        start = time.process_time()
        for s, shape in enumerate(SHAPES):
            for index in range(N_DATASETS):
                repliclust.set_seed(s * N_DATASETS + index)
                archetype = repliclust.Archetype(name=name, **{k: spec[k] for k in KEYS})
                X, y, _ = repliclust.DataGenerator(archetype).synthesize(quiet=True)
                if shape == "distorted":
                    X = np.asarray(repliclust.distort(X, device="cpu", set_seed=s * N_DATASETS + index), dtype=float)
                for algorithm in ALGORITHMS:
                    for metric, value in score(algorithm, X, y, spec["n_clusters"], index).items():
                        rows.append((name, shape, index, algorithm, metric, value))
        print(f"{name}: {time.process_time() - start:.0f} s CPU", file=sys.stderr)
    scores = pd.DataFrame(rows, columns=["archetype", "shape", "dataset", "algorithm", "metric", "value"])
    out = ROOT / "var" / "clusters_results"
    out.mkdir(parents=True, exist_ok=True)
    scores.to_csv(out / "repliclust.csv", index=False)
    g = scores.groupby(["archetype", "shape", "metric", "algorithm"])["value"]
    table = g.agg(mean="mean", se=lambda v: v.std() / np.sqrt(len(v)), n="count").reset_index()
    print(table.to_markdown(index=False, floatfmt=".3f"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
