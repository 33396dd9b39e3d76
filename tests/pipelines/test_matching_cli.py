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
    base = dict(pool="arena_bench_v1", budget=0.05, rounds=6, seed=0, max_lines=3)
    return argparse.Namespace(**{**base, **kw})


def spent(text: str) -> tuple[float, float]:
    used, budget = re.search(r"Spent \$([0-9.]+) of \$([0-9.]+)", text).groups()
    return float(used), float(budget)


def test_piped_session_through_the_command_line():
    answers = "\n" + "a\n\n" * 3 + "b\ncheaper\n" + "a\n\n" * 2
    done = subprocess.run([sys.executable, "-m", "pipelines.cli", "match", "--pool", "arena_bench_v1", "--rounds", "6",
                           "--max-lines", "2"],
                          input=answers, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "left out (no catalog price): Llama-2-70b-chat" in done.stdout
    assert done.stdout.count("=== Round") == 6 and "Your match: " in done.stdout
    used, budget = spent(done.stdout)
    assert used <= budget == 0.05


def test_a_tiny_budget_stops_before_it_is_exceeded():
    out = io.StringIO()
    assert run_match(args(budget=0.003, rounds=10), io.StringIO("\n" + "a\n\n" * 10), out) == 0
    text = out.getvalue()
    used, budget = spent(text)
    assert "No pair of answers fits the remaining" in text and used <= budget == 0.003


class Person(io.StringIO):
    """Reads the screen: picks the side whose answer says GOOD, asks for nothing."""

    def __init__(self, screen: io.StringIO):
        super().__init__()
        self.screen = screen

    def readline(self) -> str:
        shown = self.screen.getvalue()
        if not shown.rstrip().endswith("[A/B, q to stop]"):
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
    assert run_match(args(pool=str(path), rounds=3, budget=1.0), io.StringIO("\n" + "a\n\n" * 3), out) == 0
    # one round: prompt "qN" (2 chars) and 400 characters of answer from each, at 4 characters per token
    used, _ = spent(out.getvalue())
    assert used == pytest.approx(3 * (2 + 400) / 4 * (1.0 + 100.0) / 1e6, abs=1e-4)


def test_a_responses_file_without_a_response_column_is_named(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text("prompt,model,answer\nhi,gpt-3.5-turbo,hello\n")
    with pytest.raises(IngestError) as err:
        run_match(args(pool=str(path)), io.StringIO(""), io.StringIO())
    assert err.value.file == str(path) and err.value.column == "response"
