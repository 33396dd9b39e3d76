"""The harder users (users/h1-h3.yaml): references that do not learn, best models, a judge and feedback that
follow the user's preference, and the one place CUPID beats both references."""

import numpy as np
import yaml

from compass.matching.references import CheapestFeasible, MostCapableAffordable, TwoCheapest
from compass.matching.simulate import LanguageFeedback, MetadataJudge
from compass.matching.study import Session, run_study
from compass.matching.users import User
from tests.compass.matching.test_heart import TOKENS, ZOO
from tests.paths import ROOT

HARD = {n: User.from_dict(yaml.safe_load((ROOT / "users" / f"{n}.yaml").read_text()), n, list(ZOO.metadata.columns))
        for n in ("h1", "h2", "h3")}


def test_hard_users_cheap_models_infeasible_and_h2_has_a_unique_best():
    cheapest_two = np.argsort(ZOO.cost_proxy)[:2]
    for user in HARD.values():
        assert not user.feasible(ZOO)[cheapest_two].any() or user.name == "h2"
        assert len(user.seeds) >= 20 and user.judge_noise > 0
    best = HARD["h2"].best_models(ZOO)
    assert [ZOO.models[k] for k in np.flatnonzero(best)] == ["o3"]
    assert HARD["h1"].best_models(ZOO).sum() == HARD["h1"].feasible(ZOO).sum() == 4


def test_references():
    c = np.array([3.0, 0.5, 2.0, 0.1, 9.0])
    lookup = CheapestFeasible(c, np.array([True, False, True, False, True]))
    assert lookup.best() == 2 and lookup.select(1, 1.0) == (2, 3)
    duel = TwoCheapest(c)
    assert duel.select(1, 1.0) == (3, 1)
    duel.observe(1, 3, 1, False, 0.0)
    assert duel.best() == 1
    # with call costs, a reference stops before a duel it cannot afford (CUPID's budget guard)
    guarded = CheapestFeasible(c, np.array([True, False, True, False, True]), c / 100)
    assert guarded.select(1, 0.021) == (2, 3) and guarded.select(2, 0.020) is None
    assert TwoCheapest(c, c / 100).select(1, 0.005) is None


def test_the_most_capable_affordable_model_is_what_a_catalog_and_a_budget_give():
    c = np.array([3.0, 0.5, 2.0, 0.1, 9.0])
    capability = np.array([5.0, 1.0, 5.0, np.nan, 7.0])
    # no call costs: the most capable (index 4); with them, its duel (0.09 + 0.001) is over a 0.05 budget, so the
    # cheaper of the two next most capable (index 2, 0.02 + 0.001), duelled against the cheapest other model
    assert MostCapableAffordable(capability, c, 0.05).best() == 4
    pick = MostCapableAffordable(capability, c, 0.05, c / 100)
    assert pick.best() == 2 and pick.select(1, 0.05) == (2, 3)
    assert MostCapableAffordable(np.full(5, np.nan), c, 0.05, c / 100).best() == 3  # nothing known: the cheapest


def test_the_stated_wish_reference_sees_one_constraint_not_the_feasible_set():
    from compass.matching.study import stated_wish

    h1 = HARD["h1"]
    wish = stated_wish(h1, ZOO)
    assert wish.sum() > h1.feasible(ZOO).sum() and (wish >= h1.feasible(ZOO)).all()


def test_judge_and_feedback_follow_the_users_preference():
    """Among equally feasible models the quality-first user prefers the more intelligent (not the cheaper) one, and
    with nothing violated its feedback points to models it would prefer, never against the judge."""
    user = HARD["h2"]
    rng = np.random.default_rng(0)
    judge = MetadataJudge.for_user(user, ZOO, rng)
    index = {m: k for k, m in enumerate(ZOO.models)}
    assert judge.i_wins(index["o3"], index["GPT-5-Nano"]) and not judge.i_wins(index["GPT-5-Nano"], index["GPT-4.1"])
    feedback = LanguageFeedback.for_user(user, ZOO, rng)
    mask = feedback.after(index["GPT-4.1"])
    assert feedback.requests[-1] == -2
    for m in np.flatnonzero(mask):
        assert judge.i_wins(m, index["GPT-4.1"])
    a1 = User.from_dict(yaml.safe_load((ROOT / "users" / "a1.yaml").read_text()), "a1", list(ZOO.metadata.columns))
    plain = MetadataJudge.for_user(a1, ZOO, rng)  # no preference: the spec's cheaper rule
    assert plain.i_wins(index["GPT-5-Nano"], index["GPT-4.1-Nano"])


def test_on_the_quality_first_user_cupid_beats_both_references_beyond_its_standard_error():
    """H2 over 20 seeds: neither reference ever names o3; CUPID does in most runs, by more than 2 SE."""
    runs, summary = run_study([Session(ZOO, HARD["h2"], TOKENS.call_cost(ZOO))], ["cheapest_feasible", "two_cheapest", "cupid"])
    found = summary.set_index("method")
    assert (found.loc[["cheapest_feasible", "two_cheapest"], "best_found_pct"] == 0).all()
    assert found.loc["cupid", "best_found_pct"] - 2 * found.loc["cupid", "best_found_se"] > 0
    assert found.loc["cupid", "best_found_pct"] >= 60 and found.loc["cupid", "over_budget_pct"] == 0


def test_two_cheapest_never_converges_where_the_cheap_models_are_infeasible():
    _, summary = run_study([Session(ZOO, HARD[n], TOKENS.call_cost(ZOO)) for n in ("h1", "h3")], ["two_cheapest", "cupid"])
    by = summary.set_index(["user", "method"])["converged_pct"]
    assert by[("h1", "two_cheapest")] == by[("h3", "two_cheapest")] == 0
    assert by[("h1", "cupid")] >= 70 and by[("h3", "cupid")] >= 70


def test_an_advantage_counts_only_beyond_the_standard_error_of_the_difference():
    """12 points ahead with SEs 10 and 10: within √(10² + 10²) ≈ 14.1, so it does not count (it would against
    CUPID's SE alone); 15 points ahead does. Every reference a person could run must be beaten; the oracle is a
    ceiling."""
    import pandas as pd

    from compass.matching.verdict import advantages, claimed_users

    def row(user, method, found, se):
        return dict(user=user, method=method, best_found_pct=found, best_found_se=se)

    table = pd.DataFrame([row("u", "cupid", 62.0, 10.0), row("u", "most_capable_affordable", 50.0, 10.0),
                          row("u", "two_cheapest", 47.0, 10.0), row("v", "cupid", 65.0, 10.0),
                          row("v", "most_capable_affordable", 50.0, 10.0), row("v", "two_cheapest", 0.0, 0.0),
                          row("u", "cheapest_stated", 0.0, 0.0), row("v", "cheapest_stated", 0.0, 0.0),
                          # the oracle lookup beats CUPID on v: a ceiling, which does not block the claim
                          row("u", "cheapest_feasible", 100.0, 0.0), row("v", "cheapest_feasible", 100.0, 0.0)])
    out = advantages(table).set_index(["user", "versus"])
    assert np.isclose(out.loc[("u", "most_capable_affordable"), "se"], np.hypot(10.0, 10.0))
    assert not out.loc[("u", "most_capable_affordable"), "counts"] and out.loc[("u", "two_cheapest"), "counts"]
    assert claimed_users(table) == ["v"]
    assert claimed_users(table[table["method"] != "cheapest_stated"]) == []  # every person's reference is needed
