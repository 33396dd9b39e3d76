"""A small live-sources world for the pipeline tests: the real catalog as it was before the mid-2026 rebuild
(tests/fixtures/live_catalog),
LiveBench's 2026-06-25 release served as upstream publishes it (the intermediate 2026-07-23 version first, then the
newest 2026-08-22), and a LiteLLM price JSON cut from the real one, all on a local server (tests.live.server)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.live.server import place
from tests.paths import FIXTURES

CATALOG = FIXTURES / "live_catalog"  # the embedded catalog before the mid-2026 rebuild

SNAPSHOTS = Path("/work/shared/data/snapshots")
LITELLM = Path("/work/shared/data/raw/litellm/model_prices_and_context_window.json")
LIVEBENCH_FILES = ("table_2026_06_25.csv", "categories_2026_06_25.json", "cost_2026_06_25.csv")
LIVEBENCH_URL = "livebench/table_2026_06_25.csv"
LITELLM_URL = "litellm/model_prices_and_context_window.json"
# Real LiteLLM keys: two catalog models, a near miss of a catalog id (a dated snapshot without its "beta"), a model
# the catalog lacks (a price list never brings a model in).
PRICE_KEYS = ("gpt-4o", "claude-opus-4-5", "xai/grok-4.20-0309-non-reasoning", "claude-sonnet-5-5")
VERSIONS = {"2026-07-23": 1_785_000_000, "2026-08-22": 1_787_500_000}  # their Last-Modified


def serve_livebench(site: Path, version: str) -> None:
    """LiveBench's release files of `version` (a snapshots/livebench date folder) under site/livebench/."""
    for name in LIVEBENCH_FILES:
        place(SNAPSHOTS / "livebench" / version / name, site / "livebench" / name, VERSIONS[version])


def serve_litellm(site: Path, overrides: dict[str, dict] | None = None, mtime: float = 1_786_000_000) -> None:
    """PRICE_KEYS' entries of the real LiteLLM JSON (with `overrides` merged into them) under site/litellm/."""
    table = json.loads(LITELLM.read_text())
    cut = {k: {**table[k], **(overrides or {}).get(k, {})} for k in PRICE_KEYS}
    path = site / LITELLM_URL
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(cut, indent=1))
    import os

    os.utime(path, (mtime, mtime))


def write_config(folder: Path, base_url: str, aliases: list[str] | None = None) -> Path:
    """The world's source config: the pre-release catalog, LiveBench and LiteLLM by URL (fast retries), an aliases
    file."""
    (folder / "aliases.csv").write_text("alias,model_id\n" + "".join(f"{line}\n" for line in aliases or []))
    config = folder / "config.yaml"
    config.write_text(f"""replace_defaults: true
aliases: aliases.csv
stale_after_hours: 0
sources:
  - {{table: models, path: {CATALOG}/models.parquet}}
  - {{table: model_aliases, path: {CATALOG}/model_aliases.parquet}}
  - connector: livebench
    url: {base_url}{LIVEBENCH_URL}
    timeout_s: 0.5
    retries: 1
    backoff_s: 0.05
  - connector: litellm_prices
    url: {base_url}{LITELLM_URL}
""")
    return config
