"""Where our generator makes the must-hold archetype easier than repliclust 1.0.0 (issue 47 item 4).

Side by side on one archetype (default 7_overlap_10d, convex): repliclust 1.0.0's own generator (data set i
after repliclust.set_seed(i), as scripts/clusters_repliclust.py) and ours (benchmark.draw, thesis generator,
i.e. calibrate_tails false), each step's output measured the same way: per-cluster aspect ratio (longest /
shortest axis) and radius (geometric mean of the axis lengths), group-size max/min, the pairwise LDA
overlap of the Gaussian model (compass.clusters.overlap.pairwise_overlaps on each model's centres and
covariances: all pairs, and each cluster's nearest neighbour) and the benchmark's AMI (EM-GMM, K-Means, Ward,
spectral). Then ours with one step swapped for repliclust 1.0.0's rule ("variants"), to see which step
closes the gap.

repliclust 1.0.0 is not a project dependency. Unpack its wheel outside the repository and stub the modules
it imports for features not used here (torch for `distort`, openai/dotenv for the language front end,
umap for plots):

    /work/main/.venv/bin/python -m pip download repliclust==1.0.0 --no-deps -d /tmp/rc-dl
    mkdir -p /tmp/rc-src && cd /tmp/rc-src && unzip -q /tmp/rc-dl/repliclust-1.0.0-py3-none-any.whl
    # /tmp/rc-stubs/{torch,openai,dotenv,umap}/__init__.py: see STUBS below (written by --write-stubs)
    PYTHONPATH=/tmp/rc-src:/tmp/rc-stubs:. python scripts/clusters_repliclust_gap.py [--n 10] [--variants]
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KEYS = ("n_clusters", "dim", "n_samples", "aspect_ref", "aspect_maxmin", "radius_maxmin", "imbalance_ratio",
        "max_overlap", "min_overlap", "distributions")
METHODS = ("em_gmm", "kmeans", "hierarchical", "spectral")
STUBS = {
    "torch": ("class _Any:\n    def __init__(self, *a, **k): pass\n    def __getattr__(self, name): return _Any()\n"
              "    def __call__(self, *a, **k): return _Any()\nclass _NN:\n    Module = object\n"
              "    def __getattr__(self, name): return _Any\nnn = _NN()\nclass Tensor: pass\n"
              "def __getattr__(name): return _Any\n"),
    "openai": "class OpenAI:\n    def __init__(self, *a, **k): pass\n",
    "dotenv": "def load_dotenv(*a, **k): return False\n",
    "umap": "",
}


def write_stubs(path: Path) -> None:
    for name, text in STUBS.items():
        (path / name).mkdir(parents=True, exist_ok=True)
        (path / name / "__init__.py").write_text('"""Stub for repliclust 1.0.0 imports unused here."""\n' + text)


def describe(centers, covs, lengths, sizes) -> dict:
    from compass.clusters.overlap import pairwise_overlaps
    ov = pairwise_overlaps(np.asarray(centers), np.asarray(covs))
    k = len(centers)
    iu = np.triu_indices(k, 1)
    nearest = np.where(np.eye(k, dtype=bool), 0, ov).max(axis=1)
    lengths = np.asarray(lengths)
    return {"aspect_mean": float(np.mean(lengths.max(1) / lengths.min(1))),
            "aspect_max": float(np.max(lengths.max(1) / lengths.min(1))),
            "radius_maxmin": float(np.exp(np.log(lengths).mean(1)).max() / np.exp(np.log(lengths).mean(1)).min()),
            "size_maxmin": float(np.max(sizes) / np.min(sizes)),
            "overlap_pairs": float(ov[iu].mean()), "overlap_nearest": float(nearest.mean()),
            "overlap_max": float(ov[iu].max())}


def scores(X, y, k, index) -> dict:
    from compass.clusters.benchmark import score
    return {m: score(m, X, y, k, index)["ami"] for m in METHODS}


def repliclust_rows(spec: dict, name: str, n: int) -> list[dict]:
    import repliclust
    rows = []
    for i in range(n):
        repliclust.set_seed(i)
        arch = repliclust.Archetype(name=name, **{k: spec[k] for k in KEYS})
        X, y, _ = repliclust.DataGenerator(arch).synthesize(quiet=True)
        axes, lengths = np.asarray(arch._axes), np.asarray(arch._lengths)  # axes: rows are the principal axes
        covs = np.einsum("kji,kj,kjl->kil", axes, lengths ** 2, axes)
        rows.append({"generator": "repliclust 1.0.0", "dataset": i,
                     **describe(arch._centers, covs, lengths, np.bincount(y)), **scores(X, y, spec["n_clusters"], i)})
    return rows


def ours_rows(archetype, n: int, label: str = "ours") -> list[dict]:
    from compass.clusters.benchmark import draw
    thesis = dataclasses.replace(archetype, calibrate_tails=False)
    rows = []
    for i in range(n):
        X, data = draw(thesis, "convex", i)
        m = data.model
        rows.append({"generator": label, "dataset": i,
                     **describe(m.centers, m.covariances, m.lengths, np.bincount(data.y)),
                     **scores(X, data.y, archetype.n_clusters, i)})
    return rows


def _around(lo, ref, hi, n, rng):
    """repliclust 1.0.0's pattern of n values from lo to hi around ref: the two ends, then pairs (s, ref²/s) with s
    drawn triangular(lo, ref, hi), so their geometric mean stays ref."""
    if n <= 2:
        return np.array([lo, hi][:n]) if n == 2 else np.array([ref])
    rest = np.full(n - 2, float(ref))
    for j in range(n - 3, 0, -2):
        rest[j] = rng.triangular(lo, ref, hi)
        rest[j - 1] = ref ** 2 / rest[j]
    return np.concatenate([[lo], rest, [hi]])


def repliclust_aspect_ratios(k, aspect_ref, aspect_maxmin, rng):
    """repliclust 1.0.0's MaxMinCovarianceSampler.make_cluster_aspect_ratios with our rng."""
    ref, mm = aspect_ref, aspect_maxmin
    delta = (-(1 + mm) + np.sqrt((1 + mm) ** 2 + 4 * mm * (ref ** 2 - 1))) / 2
    return _around(1 + delta / mm, ref, 1 + delta, k, rng)


def repliclust_axis_lengths(radius, aspect, dim, rng):
    """repliclust 1.0.0's make_axis_lengths: linear triangular draws (min, r, max), partner r²/s."""
    lo = radius / np.sqrt(aspect)
    return _around(lo, radius, lo * aspect, dim, rng)


def variant_rows(archetype, n: int) -> list[dict]:
    """Ours with one step changed: the draws unordered (before issue 47: radii, aspect ratios and group
    sizes each in shuffled order), then repliclust 1.0.0's aspect-ratio and axis-length rules."""
    from compass.clusters import maxmin, mixture
    saved = mixture.in_cluster_order, maxmin.aspect_ratios, maxmin.axis_lengths
    rows = []
    try:
        mixture.in_cluster_order = lambda v: np.asarray(v)
        rows += ours_rows(archetype, n, "ours before (shuffled)")
        maxmin.aspect_ratios = repliclust_aspect_ratios
        rows += ours_rows(archetype, n, "ours before, repliclust aspect ratios")
        maxmin.axis_lengths = repliclust_axis_lengths
        rows += ours_rows(archetype, n, "ours before, repliclust aspect ratios + axis lengths")
        mixture.in_cluster_order = saved[0]
        rows += ours_rows(archetype, n, "ours, repliclust aspect ratios + axis lengths")
    finally:
        mixture.in_cluster_order, maxmin.aspect_ratios, maxmin.axis_lengths = saved
    return rows


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    cols = [c for c in df.columns if c not in ("generator", "dataset")]
    g = df.groupby("generator", sort=False)[cols]
    mean, se = g.mean(), g.std() / np.sqrt(g.count())
    return mean.round(3).astype(str) + " (" + se.round(3).astype(str) + ")"


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--archetype", default="seven_very_different_shapes_significant_overlap_10d")
    p.add_argument("--n", type=int, default=10)
    p.add_argument("--variants", action="store_true")
    p.add_argument("--write-stubs", type=Path)
    args = p.parse_args()
    if args.write_stubs:
        write_stubs(args.write_stubs)
        return 0
    import yaml

    from compass.clusters.archetype import Archetype
    path = ROOT / "archetypes" / f"{args.archetype}.yaml"
    spec = yaml.safe_load(path.read_text())
    archetype = Archetype.from_yaml(path)
    rows = []
    try:
        rows += repliclust_rows(spec, args.archetype, args.n)
    except ImportError as err:
        print(f"repliclust not importable ({err}): ours only (see the docstring)", file=sys.stderr)
    rows += ours_rows(archetype, args.n)
    if args.variants:
        rows += variant_rows(archetype, args.n)
    df = pd.DataFrame(rows)
    out = ROOT / "var" / "clusters_results"
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / f"repliclust_gap_{args.archetype}.csv", index=False)
    print(summarize(df).T.to_markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
