"""Issue 43: a bad row upstream is a bad row, not a dead source. For each connector, a body served on 127.0.0.1 with
one unreadable row (null, NaN, infinite, wrong type, out of range) stages the good rows and records the dropped count
in the fetch log; a body mostly bad fails the source (one line naming connector, URL and field) and keeps its
previously staged rows byte for byte."""

import io
import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from compass.ingest.connectors.base import MAX_BAD_SHARE
from compass.ingest.load import read_config
from resources.fetch import RawStore
from resources.live_sources import refresh_live_sources, staged_files
from tests.live.server import serve
from tests.paths import FIXTURES

CATALOG = FIXTURES / "live_catalog"
EPOCH = Path("/work/shared/data/snapshots/epoch_ai_benchmarking_hub/2026-05-14")
NAMES = ["gpt-4o", "gpt-4o-mini", "gpt-4-turbo", "claude-3-opus", "o1"]  # catalog models


def _aider(bad: set[int], value: str) -> bytes:
    return "".join(f"- model: {n}\n  pass_rate_2: {value if i in bad else 40.0 + i}\n"
                   for i, n in enumerate(NAMES)).encode()


def _lmarena(bad: set[int], value) -> bytes:
    return json.dumps({"text": {n: {"rating": value if i in bad else 1200.0 + i, "rating_q025": 1190.0,
                                    "rating_q975": 1210.0} for i, n in enumerate(NAMES)}}).encode()


def _litellm(bad: set[int], value) -> bytes:
    return json.dumps({n: {"litellm_provider": "openai", "mode": "chat",
                           "input_cost_per_token": value if i in bad else 1e-6 * (i + 1),
                           "output_cost_per_token": 4e-6} for i, n in enumerate(NAMES)}).encode()


def _models_dev(bad: set[int], value) -> bytes:
    return json.dumps({"openai": {"models": {n: {
        "name": n, "last_updated": "2026-01-01", "cost": {"input": value if i in bad else 1.0 + i, "output": 4.0},
        "limit": {"context": value if i in bad else 128000}} for i, n in enumerate(NAMES)}}}).encode()


def _livebench(bad: set[int], value: str) -> dict[str, bytes]:
    table = "model,LCB_generation,coding_completion\n" + "".join(
        f"{n},{value if i in bad else 50 + i},{value if i in bad else 60}\n" for i, n in enumerate(NAMES))
    return {"table_2026_06_25.csv": table.encode(),
            "categories_2026_06_25.json": json.dumps({"coding": ["LCB_generation", "coding_completion"]}).encode()}


def _epoch(bad: set[int], value: str) -> bytes:
    """The real export, the first rows of gpqa_diamond.csv given `value` as score (`bad`: which rows; 99: all)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(EPOCH.rglob("*.csv")):
            data = path.read_bytes()
            if path.name == "gpqa_diamond.csv":
                frame = pd.read_csv(path)
                rows = frame.index if 99 in bad else [i for i in bad if i < len(frame)]
                frame["mean_score"] = frame["mean_score"].astype(object)
                frame.loc[rows, "mean_score"] = value
                data = frame.to_csv(index=False).encode()
            archive.writestr("benchmark_data/" + path.relative_to(EPOCH).as_posix(), data)
    return out.getvalue()


# connector -> (main file name, body maker, bad value, staged table, rows dropped for one bad row)
CASES = {
    "aider_polyglot": ("polyglot_leaderboard.yml", _aider, ".nan", "benchmark_scores", 1),
    "lmarena_leaderboard": ("leaderboard-text.json", _lmarena, None, "benchmark_scores", 1),
    "litellm_prices": ("model_prices.json", _litellm, "cheap", "model_costs", 1),
    "models_dev": ("api.json", _models_dev, -3, "model_costs", 2),  # its price row and its metadata row
    "livebench": ("table_2026_06_25.csv", _livebench, "inf", "benchmark_scores", 4),  # 2 tasks, category, global
}


@pytest.fixture
def stage(tmp_path):
    """run(connector, files) -> (outcome, staged files' bytes by table) for one source served on 127.0.0.1."""
    site = tmp_path / "site"
    site.mkdir()
    with serve(site) as server:
        def run(connector: str, main: str, files: dict[str, bytes]):
            for name, body in files.items():
                (site / name).write_bytes(body)
            config = tmp_path / "config.yaml"
            config.write_text(f"""replace_defaults: true
sources:
  - {{table: models, path: {CATALOG}/models.parquet}}
  - {{table: model_aliases, path: {CATALOG}/model_aliases.parquet}}
  - {{connector: {connector}, url: '{server.url(main)}', retries: 0}}
""")
            (entry,) = read_config(config).connectors
            out = refresh_live_sources(read_config(config), root=tmp_path / "connectors",
                                       store=RawStore(tmp_path / "raw"))
            return out, {f.table: f.path.read_bytes() for f in staged_files(entry, tmp_path / "connectors")}
        yield run


def _files(main: str, body) -> dict[str, bytes]:
    return body if isinstance(body, dict) else {main: body}


def _main_row(out, main: str) -> pd.Series:
    log = out.fetches[out.fetches["url"].str.endswith("/" + main)]
    assert len(log) == 1
    return log.iloc[0]


@pytest.mark.parametrize("connector", sorted(CASES))
def test_one_bad_row_is_dropped_and_counted_the_good_rows_staged(stage, connector):
    main, make, value, table, dropped = CASES[connector]
    out, staged = stage(connector, main, _files(main, make({3}, value)))
    assert not out.failed, out.failures
    assert _main_row(out, main)["rows_dropped"] == dropped
    rows = pd.read_parquet(io.BytesIO(staged[table]))
    kept = set(rows["model_id"])
    assert NAMES[3] not in kept and {NAMES[0], NAMES[1], NAMES[2], NAMES[4]} <= kept


@pytest.mark.parametrize("connector", sorted(CASES))
def test_a_mostly_bad_body_fails_the_source_and_keeps_its_previous_rows(stage, connector):
    main, make, value, _, _ = CASES[connector]
    _, before = stage(connector, main, _files(main, make(set(), value)))
    mostly = set(range(int(len(NAMES) * MAX_BAD_SHARE) + 1))
    out, after = stage(connector, main, _files(main, make(mostly, value)))
    (line,) = out.failures
    assert line.startswith(f"source {connector} (http://127.0.0.1:") and main in line
    assert "unreadable" in line and "keeping the data fetched" in line
    assert _main_row(out, main)["rows_dropped"] >= len(mostly)
    assert after == before  # the previous staged files, byte for byte


def test_an_epoch_export_with_one_infinite_score_drops_that_row(stage):
    out, staged = stage("epoch_benchmarks", "benchmark_data.zip", {"benchmark_data.zip": _epoch({0}, "inf")})
    assert not out.failed, out.failures
    assert _main_row(out, "benchmark_data.zip")["rows_dropped"] == 1
    scores = pd.read_parquet(io.BytesIO(staged["benchmark_scores"]))
    gpqa = scores[scores["benchmark"] == "gpqa_diamond"]["score"]
    assert len(gpqa) > 10 and gpqa.between(0, 1).all() and gpqa.max() > 0.5  # fractions, not divided again


def test_a_connector_type_error_is_one_line_naming_connector_url_and_field(stage):
    body = "".join(f"- model: {n}\n  pass_rate_2: [1]\n" for n in NAMES).encode()
    out, _ = stage("aider_polyglot", "polyglot_leaderboard.yml", {"polyglot_leaderboard.yml": body})
    (line,) = out.failures
    assert line.startswith("source aider_polyglot (http://127.0.0.1:") and "polyglot_leaderboard.yml" in line
    assert "'score'" in line and "\n" not in line


@pytest.mark.parametrize(("connector", "main", "files", "dropped"), [
    ("livebench", "table_2026_06_25.csv", _livebench({3}, "pending"), 2),  # its two task cells; no category without them
    ("epoch_benchmarks", "benchmark_data.zip", {"benchmark_data.zip": _epoch({0}, "pending")}, 1),
])
def test_text_in_a_number_column_is_a_dropped_row_not_a_missing_score(stage, connector, main, files, dropped):
    """Text where a score belongs ("pending"; "n/a" and the like are missing values to pandas) used to be coerced to NaN and pass for a score the source never measured,
    uncounted; it is a bad row now, dropped and counted like an infinite one."""
    out, staged = stage(connector, main, files)
    assert not out.failed, out.failures
    assert _main_row(out, main)["rows_dropped"] == dropped


def test_a_path_source_counts_its_dropped_rows_too(tmp_path):
    """A source read from a path has no fetch-log row; its dropped count is in the outcome (the asset's metadata and
    a warning), as a URL source's is."""
    body = tmp_path / "polyglot_leaderboard.yml"
    body.write_bytes(_aider({3}, ".nan"))
    config = tmp_path / "config.yaml"
    config.write_text(f"""replace_defaults: true
sources:
  - {{table: models, path: {CATALOG}/models.parquet}}
  - {{table: model_aliases, path: {CATALOG}/model_aliases.parquet}}
  - {{connector: aider_polyglot, path: {body}}}
""")
    out = refresh_live_sources(read_config(config), root=tmp_path / "connectors", store=RawStore(tmp_path / "raw"))
    assert not out.failed and out.fetches.empty
    assert out.dropped == {str(body): 1}
