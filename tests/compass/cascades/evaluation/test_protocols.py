"""Table 2.7 protocol variants (issue 12, item 7): grid levels, costs, RT optimiser."""

import numpy as np
import pytest

from compass.cascades.baselines import grid_levels, grid_search_curve
from compass.cascades.markov_model import fit_cascade_model
from compass.cascades.protocols import AUTHORS, OURS, PROTOCOLS, Protocol, protocol_auc_tables, protocol_curves, protocols_named
from tests.compass.cascades.model.synthetic import synthetic_calibrated


def test_grid_levels_of_the_thesis_text_and_the_authors_code():
    thesis, authors = grid_levels(1 / 40, "thesis_text"), grid_levels(1 / 40, "authors_code")
    np.testing.assert_allclose(thesis, np.arange(41) / 40, atol=1e-15)  # phi_min .. phi_max in 2.5 % steps
    assert len(authors) == 40 and authors[0] == pytest.approx(0.01) and authors[-1] == pytest.approx(0.985)
    np.testing.assert_allclose(np.diff(authors), 0.025)
    with pytest.raises(ValueError, match="grid levels"):
        grid_levels(1 / 40, "hebo")


def test_only_the_thesis_text_grid_can_skip_a_weak_first_model():
    """M1 is cheap but always wrong (plug-in P(correct) 0.2-0.4), M2 right with probability 0.9. Deferring every
    query (t1 = phi_max) reaches the plug-in error 0.1; the authors' top level, the 98.5 % quantile, leaves
    the queries above it to M1, so its lowest error is 0.1 plus their share of M1's extra error."""
    rng = np.random.default_rng(3)
    n = 400
    p1 = rng.uniform(0.2, 0.4, n)
    p = np.column_stack([p1, np.full(n, 0.9)])
    y = np.column_stack([np.zeros(n), np.ones(n)])
    c = np.column_stack([np.full(n, 1.0), np.full(n, 10.0)])
    thesis = grid_search_curve(p, y, c, 1 / 40, levels="thesis_text")
    authors = grid_search_curve(p, y, c, 1 / 40, levels="authors_code")
    assert thesis["train_error"].min() == pytest.approx(0.1, abs=1e-12)
    assert thesis["phi_1"].max() == p1.max()  # the all-defer threshold is on the curve
    top = p1 > np.quantile(p1, 0.985)
    expected = np.mean(np.where(top, 1 - p1, 0.1))
    assert authors["train_error"].min() == pytest.approx(expected, abs=1e-12)
    assert authors["train_error"].min() > 0.1 + 0.005  # 6 of 400 queries stay with the weak model
    assert authors["train_cost"].min() > 1.0 and thesis["train_cost"].max() == pytest.approx(11.0)


def test_protocol_names():
    assert len(PROTOCOLS) == 8 and protocols_named(["ours", "authors"]) == [OURS, AUTHORS]
    assert protocols_named(["all", "ours"]) == list(PROTOCOLS.values())
    assert OURS.label == "grid=thesis_text,costs=per_query,rt=pattern"
    with pytest.raises(ValueError, match="unknown protocol"):
        protocols_named(["grid=both"])
    with pytest.raises(ValueError, match="not one of"):
        Protocol("thesis_text", "per_token", "pattern")


def test_protocol_curves_label_each_setting_and_charge_mean_costs():
    cal = synthetic_calibrated(n_train=300, n_test=300, k=3, seed=2)
    chain = ["m0", "m1", "m2"]
    model = fit_cascade_model(cal[cal["split"] == "train"], chain)
    mixed = Protocol("authors_code", "per_query", "pattern")
    cascades = [("m0", "m1"), ("m0", "m2"), ("m1", "m2"), tuple(chain)]
    curves = protocol_curves(model, cal, cascades, [OURS, AUTHORS, mixed], 1 / 20)
    assert set(curves["protocol"]) == {OURS.label, AUTHORS.label, mixed.label}
    rt = curves[(curves["method"] == "rt") & (curves["cascade"] == "m0>m1>m2")].groupby("protocol")["thresholds"]
    assert sorted(rt.get_group(OURS.label)) == sorted(rt.get_group(mixed.label))  # same optimiser, same thresholds
    grid = curves[(curves["method"] == "grid") & (curves["cascade"] == "m0>m1")].groupby("protocol")["thresholds"]
    assert set(grid.get_group(OURS.label)) != set(grid.get_group(mixed.label))  # the grids differ
    # model_mean: every query answered by M_i is charged the test means of M_1..M_i (authors' protocol)
    test = cal[cal["split"] == "test"]
    wide = {col: test.pivot(index="query_id", columns="model_id", values=col)[chain].to_numpy(float)
            for col in ("p_correct", "cost_usd")}
    mean_cum = np.cumsum(wide["cost_usd"].mean(axis=0))
    # (RT rows: their thresholds are interior, so the 6-digit thresholds text routes like the exact values)
    authors = curves[(curves["protocol"] == AUTHORS.label) & (curves["cascade"] == "m0>m1>m2") & (curves["method"] == "rt")]
    for row in authors.sample(10, random_state=0).itertuples():
        t = [float(v) for v in row.thresholds.split(",")]
        answer = np.where(wide["p_correct"][:, 0] > t[0], 0, np.where(wide["p_correct"][:, 1] > t[1], 1, 2))
        assert row.cost == pytest.approx(mean_cum[answer].mean(), rel=1e-12)
    auc, summary = protocol_auc_tables(curves)
    assert len(auc) == 3 * len(cascades) and set(auc["method"]) == {"grid"}
    counts = summary.set_index(["protocol", "k_group"])["n_cascades"]
    assert counts[(AUTHORS.label, "all")] == 4 and counts[(AUTHORS.label, "k>=3")] == 1
    assert set(summary.columns) >= {"protocol", "grid", "costs", "optimizer", "k_group", "mean_pct_delta", "p_value"}
