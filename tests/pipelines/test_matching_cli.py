"""`compass match` driven by piped input: the budget holds, the matched model is the one the person picks."""

import argparse
import io
import re
import subprocess
import sys

import pandas as pd
import pytest

from compass.ingest.errors import IngestError
from pipelines.matching_cli import run_match
from tests.paths import ROOT

MODELS = ["gpt-3.5-turbo", "gpt-4-1106-preview", "mistralai/Mixtral-8x7B-Instruct-v0.1", "mistralai/Mistral-7B-Instruct-v0.1"]


def args(**kw):
    base = dict(pool="arena_bench_v1", budget=0.05, rounds=6, seed=0, max_lines=3, simulate=None, inputs="metadata",
                case=None, export_scenario=None)
    return argparse.Namespace(**{**base, **kw})


def spent(text: str) -> tuple[float, float]:
    used, budget = re.search(r"Spent \$([0-9.]+) of \$([0-9.]+)", text).groups()
    return float(used), float(budget)


def test_piped_session_through_the_command_line():
    answers = "\n" + "a\n" * 3 + "b cheaper\n" + "a\n" * 2  # one line a round: the pick, maybe a change request
    done = subprocess.run([sys.executable, "-m", "pipelines.cli", "match", "--pool", "arena_bench_v1", "--rounds", "6",
                           "--max-lines", "2"],
                          input=answers, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert ("left out: claude-1 (not in the catalog; LMArena's 2024-10-16 price table lists it without a price)"
            in done.stdout)
    assert done.stdout.count("=== Round") == 6 and "Your match: " in done.stdout
    used, budget = spent(done.stdout)
    assert used <= budget == 0.05


def test_every_shipped_model_is_priced_with_its_source_or_left_out_with_a_reason():
    """Issue 48: 11 of the 17 shipped models were left out for want of a catalog price. Each is now priced, with
    where the price comes from, or named with the reason it is left out; none disappears silently."""
    from pipelines.matching_cli import price_lines
    from resources.matching import answers, model_prices, priced_pool

    table = answers(None)
    pool, left_out = priced_pool(table, "arena_bench_v1")
    shipped = set(table["model"])
    assert set(pool.models) | set(left_out) == shipped and not set(pool.models) & set(left_out)
    assert sorted(left_out) == ["claude-1", "palm-2-chat-bison-001"] and all(left_out.values())
    screen = price_lines(model_prices(table))
    assert all(f"left out: {m} ({why})" in screen for m, why in left_out.items())
    assert all(f"  {m}: $" in screen for m in pool.models)
    # LMArena's row for Llama-2-70b-chat ($0.64 in, $0.80 out), printed with the page it cites
    i = pool.models.index("Llama-2-70b-chat")
    assert (pool.price_in[i], pool.price_out[i]) == (0.64, 0.8)
    assert "Llama-2-70b-chat: $0.64 / $0.80 from LMArena price table 2024-10-16 (https://llmpricecheck.com" in screen


def test_one_question_a_round_takes_the_pick_and_a_change_request_on_the_same_line():
    """Issue 48: a second prompt ("Change request (optional):") after each pick mixed up first keystrokes."""
    from pipelines.matching_cli import _pick

    screen = io.StringIO()
    assert _pick(io.StringIO("B, cheaper\n"), screen) == ("b", "cheaper")
    assert _pick(io.StringIO("a\n"), screen) == ("a", "")
    assert _pick(io.StringIO("maybe\nq\n"), screen) == ("q", "")
    assert screen.getvalue().count("Which answer is better?") == 4 and "please type A or B" in screen.getvalue()
    assert _pick(io.StringIO(""), screen) is None


def test_a_tiny_budget_stops_before_it_is_exceeded():
    out = io.StringIO()
    assert run_match(args(budget=0.0005, rounds=10), io.StringIO("\n" + "a\n" * 10), out) == 0
    text = out.getvalue()
    used, budget = spent(text)
    assert "No pair of answers fits the remaining" in text and used <= budget == 0.0005


class Person(io.StringIO):
    """Reads the screen: picks the side whose answer says GOOD, asks for nothing."""

    def __init__(self, screen: io.StringIO):
        super().__init__()
        self.screen = screen

    def readline(self) -> str:
        shown = self.screen.getvalue()
        if not shown.rstrip().endswith("q to stop]"):
            return "\n"
        table = shown.rsplit("=== Round", 1)[1]
        rows = [line for line in table.splitlines() if " | " in line and "GOOD" in line]
        return "b\n" if rows and "GOOD" not in rows[0].split(" | ")[0] else "a\n"


def test_the_match_is_the_model_the_person_prefers(tmp_path):
    rows = [(f"question {q}", m, "GOOD answer" if m == "gpt-3.5-turbo" else f"meh answer {q}")
            for q in range(12) for m in MODELS]
    path = tmp_path / "responses.csv"
    pd.DataFrame(rows, columns=["prompt", "model", "response"]).to_csv(path, index=False)
    out = io.StringIO()
    assert run_match(args(pool=str(path), rounds=8), Person(out), out) == 0
    text = out.getvalue()
    assert "Your match: gpt-3.5-turbo " in text and "lost to" not in text.split("Your match:")[1]


def test_own_prices_in_the_responses_file(tmp_path):
    rows = [(f"q{q}", m, "x" * 400, price, price) for q in range(3) for m, price in (("mine", 1.0), ("theirs", 100.0))]
    path = tmp_path / "priced.csv"
    pd.DataFrame(rows, columns=["prompt", "model", "response", "input_price", "output_price"]).to_csv(path, index=False)
    out = io.StringIO()
    assert run_match(args(pool=str(path), rounds=3, budget=1.0), io.StringIO("\n" + "a\n" * 3), out) == 0
    # one round: prompt "qN" (2 chars) and 400 characters of answer from each, at 4 characters per token
    used, _ = spent(out.getvalue())
    assert used == pytest.approx(3 * (2 + 400) / 4 * (1.0 + 100.0) / 1e6, abs=1e-4)


def test_a_responses_file_without_a_response_column_is_named(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text("prompt,model,answer\nhi,gpt-3.5-turbo,hello\n")
    with pytest.raises(IngestError) as err:
        run_match(args(pool=str(path)), io.StringIO(""), io.StringIO())
    assert err.value.file == str(path) and err.value.column == "response"


# -- mistakes: one line naming file / key / flag and the fix, exit 2, no traceback, nothing written -------------
A1 = (ROOT / "users" / "a1.yaml").read_text()


def _files(folder):
    return sorted(p.relative_to(folder) for p in folder.rglob("*"))


MISTAKES = {
    "missing user file": (dict(simulate="{tmp}/nope.yaml"), None, ["nope.yaml", "no such file", "users/a1.yaml"]),
    "malformed YAML": (dict(simulate="{tmp}/u.yaml"), "name: x\nconstraints: {output_price: {max: 0.4}\n",
                       ["u.yaml", "not valid YAML at line"]),
    "unknown column": (dict(simulate="{tmp}/u.yaml"), A1.replace("rl_t5:", "rl_tier5:"),
                       ["u.yaml", "constraints.rl_tier5", "did you mean rl_t5"]),
    "list, not a mapping": (dict(simulate="{tmp}/u.yaml"), "- pool: openai_zoo\n- rounds: 3\n",
                            ["u.yaml", "expected a mapping", "got a list"]),
    "missing answers CSV": (dict(pool="{tmp}/answers.csv"), None, ["answers.csv", "no such file", "prompt, model, response"]),
    "CSV without response": (dict(pool="{tmp}/u.csv"), "prompt,model,answer\nhi,gpt-3.5-turbo,hello\n",
                             ["u.csv", "column response", "missing column"]),
    "export on openai_zoo": (dict(simulate="{tmp}/u.yaml", export_scenario="{tmp}/s.yaml"), A1,
                             ["--export-scenario", "openai_zoo", "no measure columns", "pool: case:<case_id>"]),
    "negative rounds": (dict(rounds=-3), None, ["--rounds -3", "from 1 to 1000"]),
    "zero rounds": (dict(rounds=0), None, ["--rounds 0"]),
    "a trillion rounds": (dict(rounds=10**12), None, ["--rounds 1000000000000", "from 1 to 1000"]),
    "zero budget": (dict(budget=0.0), None, ["--budget 0", "> 0"]),
    "negative budget": (dict(budget=-1.0), None, ["--budget -1", "> 0"]),
    "person's export without a case": (dict(export_scenario="{tmp}/s.yaml"), None, ["--export-scenario", "--case"]),
    "negative seed": (dict(seed=-5), None, ["--seed -5", ">= 0"]),
    "empty user file": (dict(simulate="{tmp}/u.yaml"), "", ["u.yaml", "expected a mapping"]),
    "export into a missing folder": (dict(export_scenario="{tmp}/no/s.yaml", case="x"), None, ["folder", "does not exist"]),
}


@pytest.mark.parametrize("name", list(MISTAKES))
def test_each_mistake_is_one_line_exit_2_and_writes_nothing(name, tmp_path, monkeypatch):
    from pipelines.matching_cli import run

    flags, content, words = MISTAKES[name]
    flags = {k: v.format(tmp=tmp_path) if isinstance(v, str) else v for k, v in flags.items()}
    monkeypatch.setenv("COMPASS_DB", str(tmp_path / "w.duckdb"))
    if content is not None:
        path = flags.get("simulate") or flags["pool"]
        (tmp_path / path.rsplit("/", 1)[1]).write_text(content)
    before = _files(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    assert run(args(**flags), io.StringIO("\n" + "a\n" * 6), out, err) == 2
    message = err.getvalue()
    assert message.count("\n") == 1 and message.startswith("error: "), message
    assert all(w in message for w in words), message
    assert "=== Round" not in out.getvalue() and _files(tmp_path) == before


def test_a_user_file_that_is_not_utf8_is_one_line(tmp_path):
    from pipelines.matching_cli import run

    (tmp_path / "u.yaml").write_bytes(b"\xff\xfename: x\n")
    err = io.StringIO()
    assert run(args(simulate=str(tmp_path / "u.yaml")), io.StringIO(), io.StringIO(), err) == 2
    assert err.getvalue().count("\n") == 1 and "u.yaml" in err.getvalue() and "UTF-8" in err.getvalue()


def test_a_mistake_through_the_command_line_shows_no_traceback(tmp_path):
    bad = tmp_path / "u.yaml"
    bad.write_text(A1.replace("rl_t5:", "rl_tier5:"))
    done = subprocess.run([sys.executable, "-m", "pipelines.cli", "match", "--simulate", str(bad)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") == 0 and "constraints.rl_tier5" in done.stderr


def test_a_person_session_exports_a_scenario_the_leaderboard_loads(tmp_path, monkeypatch):
    import duckdb

    from compass.mlcompass.scenarios import Scenario

    db = tmp_path / "w.duckdb"
    measures = {"gpt-3.5-turbo": (0.9, 0.1), "gpt-4-1106-preview": (0.3, 0.8), "mistral-7b-instruct-v0.1": (0.2, 0.5),
                "mixtral-8x7b-instruct-v0.1": (0.4, 0.9)}
    with duckdb.connect(str(db)) as con:
        con.execute("create schema compass")
        con.execute("create table compass.measures (case_id varchar, model_id varchar, factor varchar, value double)")
        con.executemany("insert into compass.measures values ('demo', ?, ?, ?)",
                        [(m, f, v) for m, vs in measures.items() for f, v in zip(("C1", "C2"), vs, strict=True)])
    monkeypatch.setenv("COMPASS_DB", str(db))
    rows = [(f"question {q}", m, "GOOD answer" if m == "gpt-3.5-turbo" else f"meh answer {q}")
            for q in range(12) for m in MODELS]
    responses = tmp_path / "responses.csv"
    pd.DataFrame(rows, columns=["prompt", "model", "response"]).to_csv(responses, index=False)
    target = tmp_path / "mine.yaml"
    from pipelines.matching_cli import run

    out = io.StringIO()
    assert run(args(pool=str(responses), rounds=8, case="demo", export_scenario=str(target)), Person(out), out) == 0
    scenario = Scenario.from_yaml(target)
    assert scenario.utility_weights["C1"] > scenario.utility_weights["C2"], out.getvalue()
