"""A price change in the served LiteLLM JSON reaches only the cost side and the decisions, as a price change in a
canonical file does (tests/pipelines/test_price_refresh.py, whose ops cases and expected runs this reuses): the
ops fixture with a `litellm_prices` connector entry fetching a JSON cut from the real one from 127.0.0.1.

The warehouse starts from that module's cold refresh before its cut (`before_the_cut`, refreshed once per session):
adding the connector there is one refresh of what it reaches, instead of a cold refresh with it."""

import json

import pytest

from tests.live.server import serve
from tests.live.world import LITELLM
from tests.pipelines.helpers import SOME_SCENARIOS, run_refresh, throwaway_instance
from tests.pipelines.test_price_refresh import OPS, before_the_cut, cases_env

KEYS = ("gpt-4o", "gpt-4o-mini")


def _serve_prices(site, gpt_4o_per_token: float | None = None) -> None:
    table = json.loads(LITELLM.read_text())
    cut = {k: dict(table[k]) for k in KEYS}
    if gpt_4o_per_token is not None:
        cut["gpt-4o"].update(input_cost_per_token=gpt_4o_per_token, output_cost_per_token=gpt_4o_per_token)
    (site / "prices.json").write_text(json.dumps(cut))


@pytest.fixture(scope="module")
def price_cut(tmp_path_factory):
    """(report of the refresh after the served price of gpt-4o was cut, its warehouse)."""
    tmp = before_the_cut(tmp_path_factory, tmp_path_factory.mktemp("live_price") / "copy")
    site = tmp / "site"
    site.mkdir()
    _serve_prices(site)
    env = cases_env(tmp)
    with serve(site) as server:
        config = tmp / "config.yaml"
        config.write_text(OPS.joinpath("config.yaml").read_text().replace("path: ", f"path: {OPS}/")
                          + f"  - {{connector: litellm_prices, url: '{server.url('prices.json')}'}}\n")
        with pytest.MonkeyPatch.context() as mp, throwaway_instance(mp, tmp / "warm", config, env) as instance:
            assert not run_refresh(instance).failed
            _serve_prices(site, 1e-07)
            report = run_refresh(instance)
    return report, tmp / "warm" / "warehouse.duckdb"


def test_a_served_price_cut_reaches_only_the_cost_side_and_the_decisions(price_cut):
    report, db = price_cut
    from resources.warehouse import Warehouse

    board = Warehouse(db).read("compass.leaderboards", {"case_id": "ops_tiny", "scenario": "cost_aware_high"})
    assert board.set_index("model_id").loc["gpt-4o", "raw_cost"] == pytest.approx(0.1)
    decisions = ("targets", "recommendations", "leaderboards", "policy_values", "lambda_path", "rank_uncertainty",
                 "leaderboard_changes")
    derived = sorted(k for k in report.materialized if not k.startswith("report/"))
    assert derived == sorted(["live/fetches", "raw/model_costs", "datasets/model_costs",
                              "compass/case_catalog[ops_nine]", "compass/case_catalog[ops_tiny]",
                              "compass/cost_side[ops_nine]",  # follows its catalog's run; unchanged, it stops there
                              "compass/cost_side[ops_tiny]", "compass/frontier_sensitivity[ops_tiny]",
                              *(f"compass/{a}[ops_tiny|{s}]" for a in decisions for s in SOME_SCENARIOS),
                              # next_evaluations prices from its case's own price table: ops_nine's is unchanged
                              *(f"compass/next_evaluations[ops_tiny|{s}]" for s in SOME_SCENARIOS)])
