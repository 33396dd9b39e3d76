"""Issue 48 item 1, as a platform engineer runs it: the shipped support-bot scenario (examples/support_bot.yaml: 800
input tokens of which half cached, 300 output tokens, 2 million requests a month, at most $3,000 a month, open
weights only) on the ops fixture's real prices, plus a cache-read price and a second provider written here.

The dollars per request and per month printed by `compass leaderboard` and `compass recommend` are checked against
the arithmetic below, done by hand from those prices; the one open model over $3,000 a month is off the board, and
the budget is named as the constraint that binds below it."""

import io
import shutil

import pandas as pd
import pytest

from pipelines.cli import main
from pipelines.definitions import defs
from pipelines.partitions import sync_dynamic_partitions
from pipelines.refresh import run_selection
from tests.paths import FIXTURES, ROOT
from tests.pipelines.helpers import SOURCE_KEYS, throwaway_instance

OPS = FIXTURES / "ops"
SUPPORT_BOT = str(ROOT / "examples" / "support_bot.yaml")
# By hand, in USD per request: (400 uncached x input + 400 cached x cache-read (input where none) + 300 x output) / 1e6.
BY_HAND = {
    "deepseek-v3": (400 * 0.27 + 400 * 0.07 + 300 * 1.1) / 1e6,  # 466e-6: deepseek states a cache-read price
    "qwen2.5-72b-instruct": min(400 * 0.35 + 400 * 0.35 + 300 * 0.4,  # deepinfra: 400e-6
                                400 * 0.3 + 400 * 0.3 + 300 * 0.5) / 1e6,  # together_ai: 390e-6, the cheaper
    "llama-3.1-405b-instruct": (800 * 0.9 + 300 * 0.9) / 1e6,  # 990e-6
    "llama-3.1-70b-instruct": (800 * 0.2 + 300 * 0.2) / 1e6,  # 220e-6
}
OVER_BUDGET = ("mistral-large-2407", (800 * 2.0 + 300 * 6.0) / 1e6 * 2_000_000)  # $6,800 a month > $3,000
# What `compass recommend` reads for a scenario file (no bootstrap: the rule's default tolerance, 0, then applies).
COMPASS_KEYS = [["compass", k] for k in ("measures", "tiers", "ces_shape", "case_catalog", "cost_side", "utilities")]


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    """The ops fixture's raw tables and the ops_tiny case's compass inputs (no shipped scenario: the support-bot
    file is ranked on demand, as a user's own file is)."""
    import dagster as dg

    tmp = tmp_path_factory.mktemp("workload")
    data = tmp / "data"
    shutil.copytree(OPS, data, ignore=shutil.ignore_patterns("inbox"))
    costs = pd.read_csv(data / "model_costs.csv").assign(cache_read_usd_per_mtok=float("nan"))
    costs.loc[costs["model_id"] == "deepseek-v3", "cache_read_usd_per_mtok"] = 0.07
    together = costs[costs["model_id"] == "qwen2.5-72b-instruct"].assign(
        provider="together_ai", input_usd_per_mtok=0.3, output_usd_per_mtok=0.5)
    pd.concat([costs, together]).to_csv(data / "model_costs.csv", index=False)
    (tmp / "scenarios").mkdir()
    with pytest.MonkeyPatch.context() as mp, throwaway_instance(mp, tmp, data / "config.yaml", {
            "COMPASS_CASES": str(data / "cases"), "COMPASS_SCENARIOS": str(tmp / "scenarios")}) as instance:
        run_selection(defs, instance, SOURCE_KEYS, None, False)
        sync_dynamic_partitions(instance)
        run_selection(defs, instance, [dg.AssetKey(k) for k in COMPASS_KEYS], "ops_tiny", False)
        yield tmp


def _cli(warehouse, capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_board_shows_dollars_per_request_and_month_computed_from_the_workload(warehouse, capsys):
    code, out, _ = _cli(warehouse, capsys, "leaderboard", "--case", "ops_tiny", "--scenario", SUPPORT_BOT,
                        "--format", "csv", "--top", "100")
    board = pd.read_csv(io.StringIO(out)).set_index("model_id")
    assert code == 0 and sorted(board.index) == sorted(BY_HAND)
    for model, per_request in BY_HAND.items():
        assert board.at[model, "usd_per_request"] == pytest.approx(per_request, rel=1e-9), model
        assert board.at[model, "usd_per_month"] == pytest.approx(per_request * 2_000_000, rel=1e-9), model
    assert "usd_per_query" not in board  # the case's own QA workload is not this team's
    assert "normalized_cost" in board


def test_the_monthly_budget_removes_the_model_over_it_and_is_named_where_it_binds(warehouse, capsys):
    code, out, _ = _cli(warehouse, capsys, "leaderboard", "--case", "ops_tiny", "--scenario", SUPPORT_BOT)
    model, month = OVER_BUDGET
    assert code == 0 and month > 3000
    rows = {line.split()[1]: line for line in out.splitlines()[1:5]}  # rank, model_id, ...
    assert model not in rows and set(rows) == set(BY_HAND)
    # below the over-budget model's score, the budget is what keeps it off: named as the binding constraint
    assert "budget_usd_per_month" in rows["llama-3.1-70b-instruct"] and "$440.00" in rows["llama-3.1-70b-instruct"]
    assert f"1 of 5 models over it ({model})" in out  # the open-weights filter keeps 5 of the 10
    assert "normalized budget=1 (share of the most expensive model's price)" in out


def test_recommend_prints_the_monthly_dollars_of_its_pick(warehouse, capsys):
    code, out, _ = _cli(warehouse, capsys, "recommend", "--case", "ops_tiny", "--scenario", SUPPORT_BOT)
    pick = BY_HAND["deepseek-v3"]
    assert code == 0
    assert f"recommended: deepseek-v3 (utility 1.000, ${pick:.3g}/request, ${pick * 2_000_000:,.2f}/month" in out
    assert "$0.000466/request, $932.00/month" in out  # written out: 466e-6 x 2,000,000
    assert "workload: 800 input tokens (50 % cached) + 300 output tokens per request, 2,000,000 requests/month; " \
           "monthly budget $3,000.00" in out


@pytest.mark.parametrize("bad, key", [
    ("workload: {input_tokens: -800, output_tokens: 300}", "workload.input_tokens"),
    ("workload: {input_tokens: 800, output_tokens: 300, requests_per_month: -1}", "workload.requests_per_month"),
    ("workload: {input_tokens: 800, output_tokens: 300, cached_input_share: 1.5}", "workload.cached_input_share"),
    ("workload: {input_tokens: 800, output_tokens: 300, cached_share: 0.5}", "workload.cached_share"),
    ("workload: {input_tokens: 8, output_tokens: 3, requests_per_month: 10}\nbudget_usd_per_month: 5k",
     "budget_usd_per_month"),
])
def test_a_bad_workload_or_budget_is_one_line_naming_the_key_and_exit_2(warehouse, capsys, tmp_path, bad, key):
    path = tmp_path / "mine.yaml"
    path.write_text(f"name: mine\n{bad}\n")
    code, out, err = _cli(warehouse, capsys, "recommend", "--case", "ops_tiny", "--scenario", str(path))
    assert code == 2 and out == "" and err.count("\n") == 1 and key in err and str(path) in err
