"""The paper's ablations (iii) and (iv) change only what they ablate (compass.router.ablations): (iii) runs in a world
whose gold labels are in rubric points, so normalization has something to fix; (iv) keeps more coordinates of the
same embedding, so its draws are the main run's."""

import numpy as np
import pytest

from compass.router.ablations import ABLATIONS, MAIN, run_ablations
from compass.router.normalize import scale_constant
from compass.router.synthetic import RUBRIC_POINTS, make_data

D, N, N_GOLD = 8, 800, 30  # 500 of N are the test queries


def _draw(config, seed=3):
    return config.world(D).apply(make_data(n_gs=N_GOLD, N=N, D=D, seed=seed, preset="B"), seed)


@pytest.fixture(scope="module")
def study():
    return run_ablations(("B",), (N_GOLD,), 2, 5, N, D, ("gold_only", "preference_only", "mean_shift"),
                         ablations=("iii_none", "iv_d100"))


def test_iv_keeps_twice_the_coordinates_of_the_main_runs_embedding_and_nothing_else_changes():
    """Main's features are the generator's D coordinates exactly (the main configuration is unchanged); (iv)'s are
    the same rows' 2D leading embedding coordinates, whose first D are main's; labels, splits and truth are equal.
    Mutation applied: the embedding with its extra coordinates first, so that main's reduction keeps other features
    than the generator's: red. (Drawing (iv) with the generator at 2D is the next test's mutation.)"""
    plain = make_data(n_gs=N_GOLD, N=N, D=D, seed=3, preset="B")
    main, iv = _draw(MAIN), _draw(ABLATIONS["iv_d100"])
    for X in ("X_g", "X_p", "X_test"):
        assert np.array_equal(getattr(main, X), getattr(plain, X))
        assert getattr(iv, X).shape[1] == 2 * D and np.array_equal(getattr(iv, X)[:, :D], getattr(main, X))
        assert getattr(iv, X)[:, D:].std() > 0.3  # the extra coordinates are there, not zeros
    for label in ("r", "y", "r_p", "psi_test", "delta_p"):
        assert np.array_equal(getattr(iv, label), getattr(main, label))


def test_iii_world_has_gold_labels_on_another_scale_that_normalization_maps_back_to_main():
    """In (iii)'s world the gold labels are in rubric points: the variance-matching constant is about a tenth of
    main's (it is ≈ 0.8 when the scales match), and c·r is main's c·r, so with normalization (iii)'s world *is* the
    main configuration. Mutation applied: (iii)'s world with matched scales (gold_points = 1, the old ablation): red."""
    main, iii = _draw(MAIN), _draw(ABLATIONS["iii_none"])
    c_main, c_iii = scale_constant(main.r, main.y), scale_constant(iii.r, iii.y)
    assert c_main > 0.5 and c_iii < 0.2 * c_main
    np.testing.assert_allclose(c_iii * iii.r, c_main * main.r, rtol=1e-12)
    assert np.array_equal(iii.X_g, main.X_g) and np.array_equal(iii.y, main.y)


def test_every_configuration_ran_on_the_generators_draws_and_iv_on_twice_the_features(study):
    """Mutation applied: run_ablations passing (iv) the generator at 2D: red (its rounds say D = 16)."""
    dims = study.rounds.groupby("configuration")[["D", "dim_features"]].agg(set)
    assert dims["D"].map(lambda s: s == {D}).all()
    assert dims["dim_features"].to_dict() == {"main": {D}, "iii_none": {D}, "iv_d100": {2 * D}}


def test_iii_moves_only_the_routers_that_mix_the_two_scales(study):
    """Without normalization in the rubric world, routers fitted on one label source rank queries exactly as in the
    main run (paired difference 0 in every round), while mean-shift, which pools gold and preference labels, moves.
    Mutation applied: (iii) regenerating its data (seed + 1 when the gold labels are in points): red (gold-only
    moves)."""
    diff = study.differences[study.differences["ablation"] == "iii_none"].set_index("router")
    assert diff.loc["gold_only", "mean_difference"] == 0 and diff.loc["preference_only", "mean_difference"] == 0
    assert diff.loc["gold_only", "se"] == 0
    rounds = study.rounds
    main = rounds[(rounds["configuration"] == "main")].set_index(["router", "round"])["mean_gain"]
    iii = rounds[(rounds["configuration"] == "iii_none")].set_index(["router", "round"])["mean_gain"]
    assert (abs(main.loc["mean_shift"] - iii.loc["mean_shift"]) > 1e-4).any()  # not float noise of equal labels


def test_iii_fits_on_gold_labels_rubric_points_times_mains():
    """The labels (iii)'s routers see, c·r with (iii)'s own normalization, have RUBRIC_POINTS times the spread of
    main's c·r: nothing maps them back (review item 3; mutation applied: iii_none with normalization "variance",
    which ablates nothing: red, the ratio is 1)."""
    main, iii = _draw(MAIN), _draw(ABLATIONS["iii_none"])
    seen_main = scale_constant(main.r, main.y, MAIN.normalization) * main.r
    seen_iii = scale_constant(iii.r, iii.y, ABLATIONS["iii_none"].normalization) * iii.r
    assert np.std(seen_iii) / np.std(seen_main) == pytest.approx(RUBRIC_POINTS / scale_constant(main.r, main.y))
    assert np.std(seen_iii) > 5 * np.std(seen_main)
