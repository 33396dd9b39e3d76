"""A platform engineer's support-bot scenario on the small real fixture, as a new user runs it (issue 48 item 3):
`compass leaderboard` shows the attributes they filter on, every model on it satisfies the filters, the models left
out because an attribute is unknown are counted next to the recommendation (the lines `compass recommend` prints)
and on the page, and a misspelt provider
or modality, or a negative context or latency, is one line naming the key, exit 2, the warehouse unchanged."""

import hashlib
import io

import pandas as pd
import pytest

from pipelines.cli import main
from pipelines.report.site import board_table, leaderboard_body
from resources.warehouse import Warehouse
from tests.pipelines.conftest import compass_small_env
from tests.pipelines.report.test_leaderboard_page import _board

CASE = "small_open"
SUPPORT_BOT = "name: support_bot\nlam: low\nmin_context: 100000\nfilters: {open_weights: true}\n"


@pytest.fixture
def small(compass_small_baseline, monkeypatch):
    root, _ = compass_small_baseline
    for k, v in compass_small_env(root).items():
        monkeypatch.setenv(k, v)
    return root


def scenario(tmp_path, text: str) -> str:
    path = tmp_path / "support_bot.yaml"
    path.write_text(text)
    return str(path)


def test_the_support_bot_board_keeps_what_the_filters_allow_and_counts_the_unknowns(small, tmp_path, capsys):
    path = scenario(tmp_path, SUPPORT_BOT)
    wh = Warehouse(small / "warehouse.duckdb")
    ranked = wh.read("compass.leaderboards", {"case_id": CASE, "scenario": "cost_aware_low"})["model_id"]
    catalog = wh.read("compass.case_catalog", {"case_id": CASE}).set_index("model_id").loc[ranked]
    allowed = catalog[(catalog["context_window"] >= 100000) & catalog["open_weights"].eq(True)].index
    n_unknown = int(catalog["context_window"].isna().sum())
    assert len(allowed) >= 2 and n_unknown >= 10  # the fixture holds both kinds

    assert main(["leaderboard", "--case", CASE, "--scenario", path, "--top", "100", "--format", "csv"]) == 0
    shown = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert set(shown["model_id"]) == set(allowed)  # red when the filter is ignored
    assert shown["context_window"].tolist() == catalog.loc[shown["model_id"], "context_window"].tolist()
    assert {"provider", "latency_s", "throughput_tps", "modality", "tool_use"} <= set(shown)  # null: unknown

    assert main(["leaderboard", "--case", CASE, "--scenario", path, "--top", "100"]) == 0
    table = capsys.readouterr().out
    first = catalog.loc[shown["model_id"].iloc[0]]
    assert f"{int(first['context_window']):,}" in table.splitlines()[1]  # 128,000: people's numbers
    assert (f"Unknown (no source gives it): provider (price) for all {len(allowed)} models shown, modality for all "
            f"{len(allowed)} models shown, tool use for all") in table
    lines = table.splitlines()  # the table, then the recommendation as `compass recommend` prints it (`explain`)
    at = next(i for i, line in enumerate(lines) if line.startswith("recommended: "))
    assert lines[at + 1] == (f"  ({n_unknown} more models left out because an attribute a filter reads is unknown "
                             f"(min_context_window {n_unknown}); they may comply)")  # red when dropped silently


@pytest.mark.parametrize("line, named", [
    ("providers: [togther_ai]", ("column providers", "unknown provider 'togther_ai'; known: none")),
    ("modalities: [text, smell]", ("column modalities", "['audio', 'image', 'pdf', 'text', 'video']")),
    ("min_context: -100000", ("column min_context", "got -100000")),
    ("max_latency_s: -2", ("column max_latency_s", "got -2")),
])
@pytest.mark.parametrize("command", ["leaderboard", "recommend"])
def test_a_bad_attribute_filter_is_one_line_naming_the_key_exit_2_nothing_changed(small, tmp_path, capsys, line,
                                                                                 named, command):
    path = scenario(tmp_path, f"name: support_bot\n{line}\n")
    before = hashlib.sha256((small / "warehouse.duckdb").read_bytes()).hexdigest()
    assert main([command, "--case", CASE, "--scenario", path]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err and path in err
    assert all(word in err for word in named), err
    assert hashlib.sha256((small / "warehouse.duckdb").read_bytes()).hexdigest() == before


def test_the_page_says_the_unknowns_next_to_the_verdict_and_shows_every_attribute():
    note = "19 more models left out because an attribute a filter reads is unknown (open_weights 19); they may comply"
    board = _board(filter_unknown=note, provider=["azure", None, "groq"], throughput_tps=[88.5, None, 250.0],
                   latency_s=[0.41, None, 0.2], context_window=[200_000, None, 32_768])
    body = leaderboard_body(board)
    verdict = body.split('<p class="verdict">')[1].split("</p>")[0]
    assert verdict.endswith(f"Filters: {note}.")  # red when the count sits only in the filter note
    shown = board_table(board)
    assert shown["provider (price)"].tolist() == ["azure", "unknown", "groq"]
    assert shown["throughput tok/s"].tolist() == ["88.5", "unknown", "250"]
    assert shown["tool use"].tolist() == ["unknown"] * 3 and shown["context window"].tolist()[1] == "unknown"
    assert "Unknown (no source gives it): provider (price) for 1 of 3" in body
