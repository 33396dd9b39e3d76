"""Small numbers quoted in docs/results/router.md (seed 003) that no table prints: the hindsight router's gain on
the embedded real labels (the scale of the tables), the §2.11 overlap rule on the worlds of
tests/compass/router/test_causal.py (identical and disjoint query distributions, L2 penalty C = 1 and 10), and the
scale constant c of Remark 1 on the synthetic presets at the paper's sizes (and in ablation (iii)'s world), and how
the synthetic presets split ψ's variance between η (what preferences carry) and Δ (what only gold labels carry).
Seconds of CPU.

Usage: .venv/bin/python scripts/router_checks.py
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compass.router.ablations import ABLATIONS, MAIN  # noqa: E402
from compass.router.evaluation import PMUR_GRID, efficiency_gain, interior_mean  # noqa: E402
from compass.router.normalize import scale_constant  # noqa: E402
from compass.router.routers import overlap_region  # noqa: E402
from compass.router.study import split_labels  # noqa: E402
from compass.router.synthetic import make_data  # noqa: E402


def hindsight() -> None:
    """ψ̂ = r on all gold rows: the mean gain over the whole usage grid (the first real table's convention, ends
    included) and over its interior (the paired tables' convention)."""
    labels = pd.read_parquet(ROOT / "data" / "route_labels.parquet")
    for dataset, part in labels.groupby("dataset"):
        r = split_labels(part).gold["outcome"].to_numpy(float)
        curve = efficiency_gain(r, r)
        print(f"hindsight {dataset}: {len(r)} gold rows, mean gain over the grid {curve.mean():.3f} "
              f"({len(PMUR_GRID)} points, ends included), over its interior {float(interior_mean(curve)):.3f}")


def overlap() -> None:
    """The share of rows inside the overlap region in test_causal.py's worlds (same seeds)."""
    for penalty in (1.0, 10.0):
        for n_gold, n_pref in ((100, 4400), (50, 805), (300, 300)):
            rng = np.random.default_rng(1)
            _, inside = overlap_region(rng.normal(size=(n_gold, 5)), rng.normal(size=(n_pref, 5)), penalty_c=penalty)
            print(f"overlap C = {penalty:g}, identical distributions, n/m = {n_gold}/{n_pref}: {inside.mean():.1%} inside")
        for n_gold, n_pref in ((100, 4400), (300, 300)):
            rng = np.random.default_rng(2)
            X_g = rng.normal(size=(n_gold, 5)) + np.r_[8.0, np.zeros(4)]
            _, inside = overlap_region(X_g, rng.normal(size=(n_pref, 5)), penalty_c=penalty)
            print(f"overlap C = {penalty:g}, disjoint supports (8 SD), n/m = {n_gold}/{n_pref}: {inside.mean():.1%} inside")


def scale() -> None:
    """c (variance matching, Remark 1) on presets A and B, N = 5,000, D = 50, n = 100, seeds 0-4 (the headline's
    data), in the main world and in ablation (iii)'s (gold labels in rubric points, `compass.router.ablations`)."""
    for preset in ("A", "B"):
        for tag, config in (("main", MAIN), ("ablation (iii)", ABLATIONS["iii_none"])):
            values = [scale_constant((d := config.world(50).apply(make_data(n_gs=100, N=5000, D=50, seed=s,
                                                                             preset=preset), s)).r, d.y, "variance")
                      for s in range(5)]
            print(f"scale constant c, preset {preset}, {tag} world, n = 100, seeds 0-4: {np.round(values, 3).tolist()}")


def variance_split() -> None:
    """Var η, Var Δ, Var ψ and corr(ψ, Δ) per preset on 195,000 generated queries (ψ = η + Δ, spec §4)."""
    for preset in ("A", "B"):
        d = make_data(n_gs=100, N=200_000, D=7, n_test=5_000, seed=0, preset=preset)
        eta, delta = d.eta_p, d.delta_p
        psi = eta + delta
        print(f"preset {preset}: Var η {eta.var():.3f}, Var Δ {delta.var():.3f}, Var ψ {psi.var():.3f} "
              f"(Δ's share {delta.var() / psi.var():.0%}), corr(ψ, Δ) {np.corrcoef(psi, delta)[0, 1]:.2f}, "
              f"corr(ψ, η) {np.corrcoef(psi, eta)[0, 1]:.2f}")


if __name__ == "__main__":
    hindsight()
    overlap()
    scale()
    variance_split()
