"""The §5.4 benchmark and the realised overlaps (issue 30): each test names the broken code it catches."""

import dataclasses

import numpy as np
import pytest
from sklearn.metrics import adjusted_mutual_info_score

from compass.clusters.archetype import Archetype
from compass.clusters.benchmark import dataset_seed, draw, score
from compass.clusters.centers import initial_centers, packing_density
from compass.clusters.mixture import assign_distributions, generate
from compass.clusters.overlap import pairwise_overlaps
from compass.clusters.realised import band_status, realised_overlaps, tail
from compass.clusters.transforms import HIDDEN, N_BLOCKS, distort

ROOT = __import__("pathlib").Path(__file__).resolve().parents[3]


def shipped(name: str) -> Archetype:
    return Archetype.from_yaml(ROOT / "archetypes" / f"{name}.yaml")


def test_distorted_data_are_the_convex_draw_passed_through_distort():
    """Catches a benchmark that skips `distort`: the distorted data set is distort(generate(.)) on its seed."""
    a = Archetype(n_clusters=3, dim=2, n_samples=60)
    X, data = draw(a, "distorted", 0)
    rng = dataset_seed(0, a.name, "distorted", 0)
    expected = distort(generate(a, rng).X, rng)
    assert np.array_equal(X, expected) and not np.allclose(X, data.X)


def test_distort_runs_sixteen_blocks():
    """Catches `distort` running fewer blocks: it consumes exactly the App. 4E network's weights from the
    generator (embedding, 16 hidden layers, the projection layer whose weight the tie replaces), and the output is not affine in X."""
    X = np.random.default_rng(0).normal(size=(200, 3))
    rng = np.random.default_rng(7)
    Y = distort(X, rng)
    n_weights = (3 * HIDDEN + HIDDEN) + N_BLOCKS * (HIDDEN * HIDDEN + HIDDEN) + (HIDDEN * 3 + 3)
    reference = np.random.default_rng(7)
    reference.uniform(size=n_weights)
    assert N_BLOCKS == 16 and rng.uniform() == reference.uniform()
    design = np.hstack([X, np.ones((200, 1))])
    resid = Y - design @ np.linalg.lstsq(design, Y, rcond=None)[0]
    assert np.abs(resid).max() > 1e-3 * np.abs(Y - Y.mean(axis=0)).max()


def test_hdbscan_is_scored_on_its_non_noise_points():
    """Catches HDBSCAN scored with its noise points: two tight clusters plus scattered points HDBSCAN calls
    noise; the AMI is that of the kept points (noise as a label of its own scores lower), and p_noise is
    their share."""
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(0, 0.1, (60, 2)), rng.normal(5, 0.1, (60, 2)), rng.uniform(-20, 25, (30, 2))])
    y = np.concatenate([np.repeat([0, 1], 60), rng.integers(0, 2, 30)])  # scattered points: either cluster
    out = score("hdbscan", X, y, 2, 0)
    from sklearn.cluster import HDBSCAN
    labels = HDBSCAN(min_samples=5).fit_predict(X)
    keep = labels >= 0
    assert 0 < out["p_noise"] == pytest.approx(1 - keep.mean())
    assert out["ami"] == pytest.approx(adjusted_mutual_info_score(y[keep], labels[keep]))
    assert out["ami"] > adjusted_mutual_info_score(y, labels) + 0.05


def test_start_ball_holds_k_clusters_of_reference_volume():
    """Catches a start ball of the wrong size (e.g. 3x, or sized from Σ r^p): centres fill the ball of
    radius scale·(k/ρ_adj)^(1/p) uniformly (P(|c| ≤ r) = (r/R)^p)."""
    k, dim, scale = 4000, 10, 2.0
    centres = initial_centers(k, dim, scale, 0.1, np.random.default_rng(0))
    radius = scale * (k / packing_density(dim, 0.1)) ** (1 / dim)
    norms = np.linalg.norm(centres, axis=1) / radius
    assert norms.max() <= 1 and norms.max() > 0.99
    assert np.mean(norms <= 0.9) == pytest.approx(0.9 ** dim, abs=0.03)


def test_overlap_archetype_is_as_hard_as_repliclust_makes_it():
    """Catches a start rule that makes data too easy (issue 30: mean pairwise overlap .071 with a ball 1.44x
    too wide, .128 with repliclust 1.0.0's rule): over 10 draws of seven_very_different_shapes_significant_
    overlap_10d the mean pairwise LDA overlap is within .025 of .128, and every cluster reaches min_overlap."""
    a = shipped("seven_very_different_shapes_significant_overlap_10d")
    means, reach = [], []
    for i in range(10):
        d = generate(a, dataset_seed(0, a.name, "convex", i))
        o = pairwise_overlaps(d.model.centers, d.model.covariances)
        off = ~np.eye(a.n_clusters, dtype=bool)
        means.append(o[off].mean())
        reach.append(np.all(o.max(axis=1) >= a.min_overlap * (1 - 1e-6)) and d.converged)
    assert np.mean(means) == pytest.approx(0.128, abs=0.025) and all(reach)


def test_distributions_are_assigned_by_proportion():
    """Catches every cluster drawn normal: floor(k·p_d) clusters of each distribution (§5.3)."""
    a = shipped("twelve_clusters_different_distributions")
    names = assign_distributions(a, np.random.default_rng(0))
    counts = {d: names.count(d) for d in a.distributions}
    assert all(c >= 2 for c in counts.values()) and sum(counts.values()) == 12


def test_thesis_tails_overshoot_and_calibrated_tails_meet_the_band():
    """Catches normal radial draws for non-normal clusters and a missing calibration: exponential clusters
    at max_overlap 1e-4 in 10-D overlap ~45x more than asked as the thesis draws them (sampled along the
    exact axis), and inside [min, max] up to the tolerance once calibrated."""
    a = dataclasses.replace(shipped("seven_highly_separated_10d_very_different_shapes"), distributions=("exponential",),
                            calibrate_tails=False)
    d = generate(a, 5)
    pairs = band_status(realised_overlaps(d.model, 20_000, np.random.default_rng(1)), a.min_overlap, a.max_overlap)
    assert pairs["realised_overlap"].max() > 20 * a.max_overlap and pairs["warning"].any()
    # Population against sampled, pair by pair (the maximum of 21 noisy sampled values sits ~2 SE high:
    # .0057 against a population .0045 on this draw since issue 47's cluster order).
    sampled = pairs[pairs["realised_se"] > 0]  # a pair with no sampled point across has no SE
    z = (sampled["realised_overlap"] - sampled["population_overlap"]) / sampled["realised_se"]
    assert len(sampled) >= 15 and (z.abs() < 4).all() and pairs["population_overlap"].max() > 20 * a.max_overlap
    calibrated = generate(dataclasses.replace(a, calibrate_tails=True), 5)
    pairs = band_status(realised_overlaps(calibrated.model, 20_000, np.random.default_rng(1)), a.min_overlap,
                        a.max_overlap)
    assert not pairs["warning"].any() and pairs["population_overlap"].max() <= a.max_overlap * 1.01


def test_projected_tail_matches_simulation():
    """The Rao-Blackwellised P(Z > z) of an exponential cluster in 10-D against 400,000 simulated projections."""
    from compass.clusters.mixture import radial_draws

    rng = np.random.default_rng(11)
    s = radial_draws("exponential", 400_000, 10, rng)
    v = rng.standard_normal((400_000, 10))
    z = s * v[:, 0] / np.linalg.norm(v, axis=1)
    for point in (1.0, 2.0, 3.0):
        p = np.mean(z > point)
        assert tail("exponential", 10, point) == pytest.approx(p, abs=4 * np.sqrt(p / 400_000))


def _convex_ami(name: str, n_datasets: int) -> dict[str, float]:
    from compass.clusters.benchmark import run_benchmark

    run = run_benchmark(shipped(name), n_datasets, shapes=("convex",), algorithms=("em_gmm", "kmeans", "hierarchical"),
                        keep_datasets=0)
    ami = run.scores[run.scores["metric"] == "ami"]
    return ami.groupby("algorithm")["value"].mean().to_dict()


def test_benchmark_pins_the_overlap_archetype():
    """Seeded (seed 0, data sets 0-2) convex AMI on seven_very_different_shapes_significant_overlap_10d:
    EM-GMM .477 > K-Means .423 > Ward .353 (repliclust 1.0.0's order; its data sets 0-2 give .460 / .444 /
    .391), each within .04 of the pinned value (library drift). Catches Ward swapped for average linkage, an
    easier or harder generator (issue 47: the shuffled cluster order gave .499 / .475 / .408), a changed
    overlap."""
    ami = _convex_ami("seven_very_different_shapes_significant_overlap_10d", 3)
    assert ami == pytest.approx({"em_gmm": 0.477, "kmeans": 0.423, "hierarchical": 0.353}, abs=0.04)
    assert ami["em_gmm"] > ami["kmeans"] > ami["hierarchical"]


def test_overlap_archetype_is_as_hard_as_repliclust_data():
    """Issue 47 item 4: over the page's 10 convex draws of seven_very_different_shapes_significant_overlap_10d
    our AMI is within .03 (about 2 SE of a 10-draw mean) of repliclust 1.0.0's own data sets 0-9 clustered
    the same way (scripts/clusters_repliclust_gap.py: EM-GMM .447, K-Means .434, Ward .383). Catches data
    easier than the reference: with radii, aspect ratios and group sizes in shuffled cluster order (the
    largest cluster not the most populous) ours were .495 / .461 / .433."""
    ami = _convex_ami("seven_very_different_shapes_significant_overlap_10d", 10)
    assert ami == pytest.approx({"em_gmm": 0.447, "kmeans": 0.434, "hierarchical": 0.383}, abs=0.03)


def test_clusters_take_radii_aspect_ratios_and_sizes_in_ascending_order():
    """repliclust 1.0.0's assignment (issue 47): cluster i takes the i-th smallest radius (geometric mean of
    its axis lengths), aspect ratio (longest / shortest axis) and group size. Catches each drawn in
    shuffled order, which made the overlap archetype easier than the reference's."""
    a = dataclasses.replace(shipped("twelve_different_distributions_high_class_imbalance"), calibrate_tails=False)
    for i in range(3):
        d = generate(a, dataset_seed(0, a.name, "convex", i))
        lengths = d.model.lengths
        radius, aspect = np.exp(np.log(lengths).mean(axis=1)), lengths.max(axis=1) / lengths.min(axis=1)
        sizes = np.bincount(d.y)
        for values in (radius, aspect, sizes):
            assert np.all(np.diff(values) >= -1e-9 * values.max())
        assert radius[-1] / radius[0] == pytest.approx(a.radius_maxmin) and sizes[-1] > sizes[0]


def test_benchmark_pins_the_separated_archetype():
    """Seeded convex AMI on seven_highly_separated_10d_very_different_shapes (data sets 0-2): all three
    above .93 and Ward within .01 of the best (thesis: Ward .990 the best). Pinned at .965 / .944 / .992 since
    issue 47's cluster order (before: .989 / .975 / .986; repliclust 1.0.0 over 10: .956 / .942 / .991)."""
    ami = _convex_ami("seven_highly_separated_10d_very_different_shapes", 3)
    assert ami == pytest.approx({"em_gmm": 0.965, "kmeans": 0.944, "hierarchical": 0.992}, abs=0.02)
    assert ami["hierarchical"] >= max(ami.values()) - 0.01


def test_segmentation_rules_split_users_into_their_types():
    """Catches a segmentation rule returning one segment: on a separated, aligned three-type population the
    C1 - C2 terciles give three equal thirds and every method recovers the types (AMI > .4)."""
    from compass.clusters.segmentation import METHODS, POPULATIONS, align, difference_terciles, segment

    a = POPULATIONS["user_types_separated"]
    data = generate(a, np.random.default_rng(0))
    X = align(data.X, data.model.centers)
    assert np.bincount(difference_terciles(X)).tolist() == [400, 400, 400]
    for method in METHODS:
        labels = segment(method, X, 3, 0)
        assert len(set(labels[labels >= 0])) >= 2
        assert adjusted_mutual_info_score(data.y, labels) > 0.4, method


def test_realised_overlap_is_measured_along_the_exact_axis():
    """Catches the realised overlap measured along the LDA axis instead of the exact (Anderson-Bahadur)
    one: for two normal clusters with unlike covariances the minimax overlap (eq. 5.4, .364) is well below
    the LDA one (eq. 5.5, .392); the population value equals the exact overlap and the sampled one is within
    4 SE of it."""
    from compass.clusters.mixture import MixtureModel
    from compass.clusters.overlap import exact_overlap

    centers = np.array([[0.0, 0.0], [2.0, 1.0]])
    model = MixtureModel(centers, np.stack([np.eye(2)] * 2), np.array([[2.0, 0.2], [0.3, 1.5]]), ("normal", "normal"))
    covs = model.covariances
    exact = exact_overlap(centers[0], centers[1], covs[0], covs[1])
    pair = realised_overlaps(model, 20_000, np.random.default_rng(0)).iloc[0]
    assert pair["lda_overlap"] > exact + 0.02
    assert pair["population_overlap"] == pytest.approx(exact, rel=1e-6)
    assert abs(pair["realised_overlap"] - exact) < 4 * pair["realised_se"]


def test_distort_applies_every_block():
    """Catches `distort` drawing 16 blocks' weights but applying fewer: its output equals an independent
    forward pass of the App. 4E network (written here from the spec, PyTorch's U(±1/√fan_in) initialisation
    in the same draw order), and not the pass that applies only the first block."""
    X = np.random.default_rng(2).normal(size=(50, 3))
    rng = np.random.default_rng(9)

    def linear(fan_in, fan_out):
        bound = 1 / np.sqrt(fan_in)
        return rng.uniform(-bound, bound, (fan_out, fan_in)), rng.uniform(-bound, bound, fan_out)

    def forward(blocks_applied):
        x = X / np.linalg.norm(X, axis=1).max()
        w_emb, b_emb = linear(3, HIDDEN)
        h = x @ w_emb.T + b_emb
        for block in range(N_BLOCKS):
            w, b = linear(HIDDEN, HIDDEN)
            if block < blocks_applied:
                z = h @ w.T + b
                h = np.tanh((z - z.mean(1, keepdims=True)) / np.sqrt(z.var(1, keepdims=True) + 1e-5))
        return h @ w_emb + linear(HIDDEN, 3)[1]

    full = forward(16)
    rng = np.random.default_rng(9)
    one = forward(1)
    out = distort(X, np.random.default_rng(9))
    assert np.allclose(out, full, atol=1e-10) and not np.allclose(out, one, atol=1e-3)


def test_center_fit_restarts_when_the_sgd_does_not_converge():
    """Catches restarts that never run, a fit that keeps the last attempt instead of the best, and a
    `restarts` count that reports the kept attempt's index instead of the restarts run: with 2 epochs and an
    unreachable tol, all 3 attempts run (restarts = 2), and the kept loss is the lowest of the three (here
    the second attempt's, .00069, against .0021 for the first alone)."""
    from compass.clusters.centers import fit_centers

    covs = np.stack([np.eye(5)] * 6)
    kw = dict(scale=1.0, packing=0.1, max_overlap=0.05, min_overlap=0.04, lam=0.01, learning_rate=0.5, max_epoch=2,
              tol=1e-12, mode="lda")
    three = fit_centers(6, 5, covs, n_restarts=3, rng=np.random.default_rng(3), **kw)
    one = fit_centers(6, 5, covs, n_restarts=1, rng=np.random.default_rng(3), **kw)
    assert (three.restarts, three.converged, one.restarts) == (2, False, 0)
    assert three.loss == pytest.approx(0.000695, rel=0.01) and one.loss > 2 * three.loss


def test_realised_overlap_sampling_seed_includes_the_shape(monkeypatch):
    """Issue 30 item 4 (low): the convex and the distorted data set of one index draw their overlap samples from
    different streams. Mutation killed: SHAPES.index(shape) dropped from the seed in _generation_rows, red."""
    from compass.clusters import benchmark

    first_draws = []

    def recording(model, n, rng):
        first_draws.append(rng.random())
        return realised_overlaps(model, 50, rng)

    monkeypatch.setattr(benchmark, "realised_overlaps", recording)
    tiny = Archetype(name="tiny", n_clusters=2, n_samples=40)
    data = generate(tiny, 0)
    for shape in ("convex", "distorted"):
        benchmark._generation_rows(tiny, "thesis", shape, 0, data, seed=0)
    assert first_draws[0] != first_draws[1]
