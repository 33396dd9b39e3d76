"""Staging the live sources without Dagster (resources/live_sources.py): an Epoch export served as a ZIP is
checked and extracted in memory; a ZIP with a traversal entry, an oversize body, a redirect off http(s) and an
Aider YAML with a Python tag each fail their source with one line and stage nothing, while the other source
stages; the daily schedule's job fetches before it reads."""

import io
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from compass.ingest.load import read_config
from resources.fetch import RawStore
from resources.live_sources import refresh_live_sources, staged_files
from tests.live.server import serve
from tests.paths import FIXTURES

CATALOG = FIXTURES / "live_catalog"  # the embedded catalog before the mid-2026 rebuild

EPOCH = Path("/work/shared/data/snapshots/epoch_ai_benchmarking_hub/2026-05-14")
AIDER = Path("/work/shared/data/raw/aider/polyglot_leaderboard.yml")


def _epoch_zip(extra: dict[str, bytes] | None = None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(EPOCH.rglob("*.csv")):
            archive.write(path, "benchmark_data/" + path.relative_to(EPOCH).as_posix())
        for name, body in (extra or {}).items():
            archive.writestr(name, body)
    return out.getvalue()


@pytest.fixture
def stage(tmp_path):
    """run(aider bytes, epoch zip bytes, **server modes) -> (outcome, connectors folder)."""
    site = tmp_path / "site"
    site.mkdir()
    with serve(site) as server:
        def run(aider: bytes, epoch: bytes, modes: dict[str, str] | None = None, max_bytes: int = 2**22):
            (site / "polyglot_leaderboard.yml").write_bytes(aider)
            (site / "benchmark_data.zip").write_bytes(epoch)
            server.modes = modes or {}
            config = tmp_path / "config.yaml"
            config.write_text(f"""replace_defaults: true
sources:
  - {{table: models, path: {CATALOG}/models.parquet}}
  - {{table: model_aliases, path: {CATALOG}/model_aliases.parquet}}
  - {{connector: aider_polyglot, url: '{server.url("polyglot_leaderboard.yml")}', retries: 0}}
  - {{connector: epoch_benchmarks, url: '{server.url("benchmark_data.zip")}', retries: 0, max_bytes: {max_bytes}}}
""")
            out = refresh_live_sources(read_config(config), root=tmp_path / "connectors",
                                       store=RawStore(tmp_path / "raw"))
            return out, {e.connector: staged_files(e, tmp_path / "connectors") for e in read_config(config).connectors}
        yield run


def test_a_zip_export_is_extracted_in_memory_and_staged(stage):
    out, staged = stage(AIDER.read_bytes(), _epoch_zip())
    assert not out.failures
    scores = pd.read_parquet(next(f.path for f in staged["epoch_benchmarks"] if f.table == "benchmark_scores"))
    assert {"gpqa_diamond", "eci"} <= set(scores["benchmark"]) and len(scores) > 1000


@pytest.mark.parametrize("case, message", [
    ("traversal", "path traversal"), ("bomb", "ZIP bomb"), ("oversize", "size cap"), ("redirect", "only http")])
def test_unsafe_bytes_fail_their_source_alone(stage, case, message):
    epoch = _epoch_zip({"../../escape.csv": b"x"} if case == "traversal" else
                       {"zeros.csv": b"0" * 3_000_000} if case == "bomb" else None)
    modes = {"/benchmark_data.zip": "redirect:file:///etc/passwd"} if case == "redirect" else None
    out, staged = stage(AIDER.read_bytes(), epoch, modes, max_bytes=100_000 if case == "oversize" else 2**22)
    (line,) = out.failures
    assert line.startswith("source epoch_benchmarks (http://127.0.0.1:") and message in line
    assert line.endswith("no earlier data to keep") and staged["epoch_benchmarks"] == []
    assert any(f.table == "benchmark_scores" for f in staged["aider_polyglot"])  # the other source staged
    assert not list(Path("/").glob("escape.csv"))


def test_a_python_tag_in_the_yaml_is_refused_not_run(stage, tmp_path):
    marker = tmp_path / "pwned"
    evil = f"- !!python/object/apply:os.system ['touch {marker}']\n".encode()
    out, staged = stage(evil, _epoch_zip())
    (line,) = out.failures
    assert line.startswith("source aider_polyglot") and "python" in line.lower()
    assert not marker.exists() and staged["aider_polyglot"] == []


def test_the_daily_schedule_fetches_before_it_reads():
    from assets.live_sources import FETCH_KEY
    from pipelines.definitions import defs

    job = defs.resolve_job_def("raw_sources")
    keys = job.asset_layer.selected_asset_keys
    graph = defs.resolve_asset_graph()
    assert FETCH_KEY in keys
    assert all(FETCH_KEY in graph.get(k).parent_keys for k in keys if k != FETCH_KEY)


def test_an_aliases_file_without_its_columns_is_a_one_line_error(tmp_path):
    from compass.ingest.errors import IngestError

    (tmp_path / "aliases.csv").write_text("name,id\nkimi-k3,kimi-k2\n")
    config = tmp_path / "config.yaml"
    config.write_text(f"replace_defaults: true\naliases: aliases.csv\nsources:\n"
                      f"  - {{table: models, path: {CATALOG}/models.parquet}}\n")
    with pytest.raises(IngestError, match=r"aliases.csv: row -, column alias: the aliases file needs"):
        refresh_live_sources(read_config(config), root=tmp_path / "connectors", store=RawStore(tmp_path / "raw"))


def test_a_failing_source_turns_stale_only_after_stale_after_hours():
    import datetime as dt

    from compass.ingest.load import ConnectorSource
    from resources.live_sources import LiveOutcome, SourceResult

    now = dt.datetime(2026, 11, 26, 12)
    entry = ConnectorSource("livebench", url="http://127.0.0.1:1/table_2026_06_25.csv")
    kept = SourceResult(entry, parsed={}, manifest={"fetched_at": (now - dt.timedelta(hours=30)).isoformat()},
                        error="HTTP 500 Internal Server Error (after 3 attempts)")
    line = kept.failure_line(now)
    assert line == (f"source livebench ({entry.location}) failed: HTTP 500 Internal Server Error (after 3 attempts); "
                    "keeping the data fetched 30.0 h ago")
    out = LiveOutcome(pd.DataFrame(), pd.DataFrame(), {entry.location: line}, "v", {entry.location: 30.0}, {})
    assert out.stale(48) == [] and out.stale(24) == [entry.location] and out.stale(30) == [entry.location]
