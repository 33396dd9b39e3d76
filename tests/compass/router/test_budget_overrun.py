"""`compass route`'s budget is an expectation on traffic like the held-out gold queries (App. A.1): a batch is
flagged only when it exceeds the budget by more than twice its sampling error (issue 46 item 4)."""

import numpy as np

from compass.router.decision import budget_overrun

HELD = 200
held_to_p = np.arange(HELD) < 60  # the held-out share at w: 30 %
ones, zeros = np.ones(HELD), np.zeros(HELD)


def batch(n_to_p: int, n: int = 30) -> np.ndarray:
    return np.arange(n) < n_to_p


def test_the_reviewers_batch_17_of_30_against_a_30_percent_share_is_flagged():
    (name, realized, target, se), = budget_overrun(batch(17), np.ones(30), np.zeros(30), held_to_p, ones, zeros,
                                                   max_primary_share=0.3)
    assert name == "share" and realized == 17 / 30 and target == 0.3
    assert np.isclose(se, np.sqrt(0.3 * 0.7 / 30))


def test_a_batch_within_its_sampling_error_is_not_flagged():
    # 11 of 30 = 36.7 % is above 30 %, but by 0.8 sampling errors (se 8.4 points for 30 queries)
    assert budget_overrun(batch(11), np.ones(30), np.zeros(30), held_to_p, ones, zeros, max_primary_share=0.3) == []


def test_a_cost_share_overrun_is_flagged_in_dollars():
    rng = np.random.default_rng(0)
    held_p, held_a = rng.uniform(1, 3, HELD), rng.uniform(0.1, 0.3, HELD)
    cost_p, cost_a = rng.uniform(1, 3, 30), rng.uniform(0.1, 0.3, 30)
    # held out: 30 % of queries to the primary; the batch sends all of them: cost share 100 % against a 40 % target
    flagged = budget_overrun(batch(30), cost_p, cost_a, held_to_p, held_p, held_a, max_cost_share=0.4)
    assert [f[0] for f in flagged] == ["cost share"] and flagged[0][1] == 1.0
    assert budget_overrun(batch(9), cost_p, cost_a, held_to_p, held_p, held_a, max_cost_share=0.4) == []
