"""The oracle's memory-saving paths (issue 45: 10^8 records under 6 GB) give the numbers of the plain computations
they replace, bit for bit: the α-sweep routed a block of prompts at a time, the PGM's prompt patterns found by an
integer key and its estimate taken on the patterns, and OracleArrays sharing memory where values repeat."""

import numpy as np
import pandas as pd
import pytest

from compass.oracle import frontier, pgm
from compass.oracle.frontier import default_alphas, route, sweep
from compass.oracle.prepare import prompt_keys
from compass.oracle.records import OracleArrays, build_arrays, from_arrays
from tests.paths import ROOT


@pytest.fixture(scope="module")
def truthfulqa() -> OracleArrays:
    """An embedded dataset at G = 1 (the shape of the 10^8-record benchmark), 817 prompts x 9 models."""
    records = pd.read_parquet(ROOT / "data" / "query_records.parquet", filters=[("dataset", "==", "truthfulqa")])
    return build_arrays(prompt_keys(records), dict.fromkeys(records["model_id"], 1.0), "truthfulqa")


def _plain_sweep(sel_q, sel_c, eval_q, eval_c, alphas):
    """The sweep as it was: the whole (N, L) matrix normalized (eqs. 20-21) and routed at once."""
    def minmax(x):
        lo, hi = np.nanmin(x), np.nanmax(x)
        return np.zeros_like(x) if hi <= lo else (x - lo) / (hi - lo)
    qn, cn, rows = minmax(sel_q), minmax(sel_c), np.arange(len(sel_q))
    picks = [route(a * qn - (1.0 - a) * cn, sel_c) for a in alphas]
    return ([eval_q[rows, p].mean() for p in picks], [eval_c[rows, p].mean() for p in picks])


def test_blocked_sweep_is_the_whole_matrix_sweep(monkeypatch, truthfulqa):
    # blocks of 100 prompts (817: the last one partial); ties in p_hat at G = 1 test the cheaper-model rule per block
    monkeypatch.setattr(frontier, "BLOCK", 100)
    monkeypatch.setattr(frontier, "ALPHAS_AT_ONCE", 7)  # 83 α: 12 passes, the last one partial
    rng = np.random.default_rng(0)
    p, cost = truthfulqa.p_hat, rng.lognormal(size=truthfulqa.successes.shape)
    alphas = default_alphas()
    q = 0.2 + 0.6 * rng.random(p.shape)  # a selection score whose min and max differ from block to block
    got = sweep([(p, cost, p, cost), (q, cost, p, cost)], alphas)
    quality, cost_mean = np.add(_plain_sweep(p, cost, p, cost, alphas), _plain_sweep(q, cost, p, cost, alphas)) / 2
    assert frontier._picks(p, cost, alphas, (frontier._bounds(p), frontier._bounds(cost))).dtype == np.uint8
    np.testing.assert_array_equal(got["quality"], quality)
    np.testing.assert_array_equal(got["cost"], cost_mean)


def test_blocked_sweep_picks_beyond_255_models(monkeypatch):
    # 300 models: picks need uint16 (uint8 would wrap 294 to 38); 0/1 quality ties go to the cheaper model, here the
    # later columns (costs fall with the index, two models per cost level: ties in cost too, broken by index)
    monkeypatch.setattr(frontier, "BLOCK", 16)
    rng = np.random.default_rng(3)
    n, n_models = 40, 300
    p = (rng.random((n, n_models)) < 0.3).astype(float)
    cost = np.broadcast_to(np.repeat(np.linspace(2.0, 0.5, n_models // 2), 2), (n, n_models)).copy()
    alphas = default_alphas(9)
    bounds = (frontier._bounds(p), frontier._bounds(cost))
    picks = frontier._picks(p, cost, alphas, bounds)
    assert picks.dtype == np.uint16 and picks.max() > 255
    got = sweep([(p, cost, p, cost)], alphas)
    quality, cost_mean = _plain_sweep(p, cost, p, cost, alphas)
    np.testing.assert_array_equal(got["quality"], quality)
    np.testing.assert_array_equal(got["cost"], cost_mean)


def test_pattern_key_finds_the_byte_patterns(monkeypatch, truthfulqa):
    codes = np.random.default_rng(1).integers(0, 10, truthfulqa.n_prompts)
    keyed = pgm._patterns(truthfulqa.successes, truthfulqa.trials, codes)
    monkeypatch.setattr(pgm, "_pattern_key", lambda k, g, codes: None)  # the sort of the rows' bytes
    plain = pgm._patterns(truthfulqa.successes, truthfulqa.trials, codes)
    assert keyed[0].size < truthfulqa.n_prompts
    for a, b in zip(keyed, plain):
        np.testing.assert_array_equal(a, b)


def test_pgm_estimate_on_patterns_is_the_per_prompt_estimate(truthfulqa):
    # checks the expansion only: pgm_estimate (on patterns) against the same fit expanded to prompts by fit_pgm
    fit = pgm.fit_pgm(truthfulqa.successes, truthfulqa.trials, seed=0, tol=1e-4)
    model_cost = pgm.lognormal_model_costs(truthfulqa.gen_cost)
    pick = route(fit.p_hat, np.broadcast_to(model_cost, fit.p_hat.shape))
    assert pgm.pgm_estimate(truthfulqa) == (pgm.pgm_oracle(fit), float(model_cost[pick].mean()))


def test_arrays_share_memory_where_values_repeat(truthfulqa):
    assert np.shares_memory(truthfulqa.successes, truthfulqa.outcomes)  # G = 1: k_nl is φ_nl0
    assert truthfulqa.trials.strides[0] == 0  # one row per model
    assert np.shares_memory(truthfulqa.cell_cost, truthfulqa.gen_cost)
    np.testing.assert_array_equal(truthfulqa.successes, np.nansum(truthfulqa.outcomes, axis=2))
    np.testing.assert_array_equal(truthfulqa.cell_cost, np.nanmean(truthfulqa.gen_cost, axis=2))
    # unequal values keep their own array
    a = OracleArrays(prompt_ids=np.arange(2), model_ids=np.arange(2), successes=np.array([[1.0, 0], [0, 1]]),
                     trials=np.array([[1.0, 1], [2, 1]]), outcomes=np.array([[[1.0], [0]], [[1], [1]]]),
                     gen_cost=np.ones((2, 2, 1)))
    assert a.trials.strides[0] != 0 and not np.shares_memory(a.successes, a.outcomes)


def _byte_patterns(monkeypatch, k, g, codes):
    """`_patterns` by the sort of the rows' bytes (the method before the integer key)."""
    with monkeypatch.context() as m:
        m.setattr(pgm, "_pattern_key", lambda k, g, codes: None)
        return pgm._patterns(k, g, codes)


@pytest.mark.parametrize("n_models, generations, keyed", [(31, 1, True), (60, 1, True), (62, 1, False),
                                                           (3, 1000, True)])
def test_pattern_key_size_limit(monkeypatch, n_models, generations, keyed):
    # topics 0 and 4 on equal counts: the key holds 5 * 2^L values at G = 1 (g constant: no digits), 2^63 > 5 * 2^60;
    # at L = 62 the key would overflow and merge topics 0 and 4 (4 * 2^62 wraps to 0). At G = 1000 one g column
    # varies (missing cells, g = 0): 5 * 1001^4 values, the largest digits included, two rows differing in g only
    rng = np.random.default_rng(2)
    k = rng.integers(0, generations + 1, (400, n_models)).astype(float)
    g = np.full(k.shape, float(generations))
    if generations > 1:
        g[::3, 0] = k[::3, 0] = 0
        k[2] = k[3]  # rows 2 and 3 differ in g only
    k[200:], g[200:], k[1] = k[:200], g[:200], generations
    codes = np.r_[np.zeros(200, int), np.full(200, 4)]
    assert (pgm._pattern_key(k, g, codes) is not None) == keyed
    got, plain = pgm._patterns(k, g, codes), _byte_patterns(monkeypatch, k, g, codes)
    assert got[0].size == 400
    for a, b in zip(got, plain):
        np.testing.assert_array_equal(a, b)


def test_views_are_read_only():
    # at G = 1 successes is a view of outcomes and cell_cost one of gen_cost: a write would change both
    a = from_arrays(np.zeros((3, 2, 1)), np.ones((3, 2)))
    assert np.shares_memory(a.successes, a.outcomes) and np.shares_memory(a.cell_cost, a.gen_cost)
    for view in (a.successes, a.cell_cost):
        with pytest.raises(ValueError, match="read-only"):
            view[0, 0] = 9.0
    assert not a.outcomes.any() and (a.gen_cost == 1).all()


def test_negative_zero_correct_counts_as_zero():
    # k_nl is a view of φ_nl0 at G = 1: a -0.0 in `correct` stays +0.0 there, as bincount's sums gave before
    records = pd.DataFrame({"query_id": np.repeat(np.arange(4), 2), "model_id": np.tile(["a", "b"], 4),
                            "generation": 0, "correct": np.tile([1.0, -0.0], 4)})
    a = build_arrays(records, {"a": 1.0, "b": 0.5})
    assert not np.signbit(a.successes).any() and not np.signbit(a.outcomes).any()
