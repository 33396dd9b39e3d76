"""sample_hyperparams, describe and the JSONL export (issue 30 item 4)."""

import json

import numpy as np

from compass.clusters.archetype import Archetype
from compass.clusters.describe import describe, describe_text, sample_hyperparams, to_jsonl
from compass.clusters.mixture import generate


def test_sampled_archetypes_stay_in_bounds_and_centre_on_the_original():
    a = Archetype(name="base", n_clusters=6, dim=10, n_samples=600)
    sampled = sample_hyperparams(a, 200, np.random.default_rng(0))
    k = np.array([s.n_clusters for s in sampled])
    assert k.min() >= 1 and k.max() <= 30 and abs(k.mean() - 6) < 0.5
    assert all(10 * s.n_clusters <= s.n_samples <= 1000 * s.n_clusters and 2 <= s.dim <= 50 for s in sampled)
    assert abs(np.mean([s.dim for s in sampled]) - 10) < 0.7 and sampled[3].name == "base_sampled_3"


def test_describe_reports_the_generated_data_set_and_jsonl_round_trips():
    a = Archetype(name="demo", n_clusters=4, dim=3, n_samples=200, distributions=("normal", "exponential"))
    d = generate(a, 1)
    summary = json.loads(json.dumps(describe(a, d, n_per_cluster=5000)))
    clusters = summary["dataset"]["clusters"]
    assert [c["size"] for c in clusters] == np.bincount(d.y).tolist()
    assert len(summary["dataset"]["overlap"]["pairs"]) == 6 and summary["dataset"]["converged"]
    assert summary["dataset"]["overlap"]["pairs_outside_band"] == 0  # calibrated tails by default
    text = describe_text(summary)
    assert "demo: 4 clusters in 3-D" in text and "0 of 6 pairs outside the band" in text
    rows = [json.loads(line) for line in to_jsonl(d).splitlines()]
    assert np.allclose([r["x"] for r in rows], d.X) and [r["label"] for r in rows] == d.y.tolist()
