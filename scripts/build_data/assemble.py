"""Join the per-source frames through canonical ids and write the raw tables."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from compass.ingest.aliases import alias_key
from compass.ingest.schemas import RAW_TABLES

from compass.ingest.resolve import Resolver, with_variant
from .common import SOURCE_PRIORITY

HF_CAP = 400
ARROW_TYPES = {"str": pa.string(), "float": pa.float64(), "int": pa.int64(), "bool": pa.bool_(), "date": pa.date32(),
               "vector": pa.list_(pa.float64())}
# Organisations whose HF v2 rows are the original checkpoints of models other sources
# name; a same-named re-upload by anyone else is never taken as that model.
HF_ORIGINAL_ORGS = {
    "meta-llama", "mistralai", "mistral-community", "Qwen", "google", "01-ai", "microsoft", "CohereForAI",
    "deepseek-ai", "tiiuae", "ai21labs", "databricks", "nvidia", "allenai", "internlm", "THUDM",
    "upstage", "openchat", "HuggingFaceH4", "NousResearch", "berkeley-nest", "Nexusflow", "ibm-granite",
    "bigcode", "codellama", "lmsys", "stabilityai", "Snowflake", "openbmb", "teknium", "HuggingFaceTB",
}


def priority(source: pd.Series) -> pd.Series:
    order = {s: i for i, s in enumerate(SOURCE_PRIORITY)}
    return source.map(lambda s: order.get(s, len(order)))


def select_hf_v2(hf: pd.DataFrame, resolve: Resolver, known: set[str], cap: int = HF_CAP) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pick HF v2 rows: every original checkpoint matching another source, then the top
    official, non-merged, non-flagged models by leaderboard average up to `cap` models.

    Returns (selected rows with model_id, unmatched report rows).
    """
    hf = hf.assign(model_id=resolve(hf["model_name"]), org=hf["model_name"].str.split("/").str[0])
    clean = ~hf["features_is_merged"] & ~hf["features_is_flagged"]
    original = hf["org"].isin(HF_ORIGINAL_ORGS) | hf["features_is_official_provider"]
    hf["matched"] = hf["model_id"].isin(known) & original & clean
    candidates = hf[hf["matched"] | (hf["features_is_official_provider"] & clean)]
    candidates = candidates.sort_values(
        ["matched", "features_is_official_provider", "metadata_hub_hearts", "model_average_score", "id"],
        ascending=[False, False, False, False, True],
    ).drop_duplicates("model_id")
    matched = candidates[candidates["matched"]]
    rest = candidates[~candidates["matched"]].sort_values(["model_average_score", "id"], ascending=[False, True])
    selected = pd.concat([matched, rest.head(max(cap - len(matched), 0))])
    left = hf[~hf["id"].isin(selected["id"])]
    report = pd.DataFrame({
        "source": "open_llm_leaderboard_v2", "raw_name": left["model_name"],
        "reason": "hf_v2 row not imported: merged/flagged/non-official, a duplicate precision or re-upload, or beyond the 400-model cap",
    })
    return selected, report


META_FIELDS = ["display_name", "organization", "release_date", "open_weights", "params_b", "context_window", "reasoning",
               "modality", "tool_use"]


def build_models(ids: set[str], meta: pd.DataFrame, seen: pd.DataFrame) -> pd.DataFrame:
    """One row per canonical id; each field is the first non-null value by source priority
    (then the spelling equal to the id, then the newest spelling)."""
    meta = meta[meta["model_id"].isin(ids)].assign(
        prio=lambda d: priority(d["source"]),
        exact=lambda d: [alias_key(r) == m for r, m in zip(d["raw_name"], d["model_id"])],
        key=lambda d: d["raw_name"].map(alias_key),
    ).sort_values(["model_id", "prio", "exact", "key"], ascending=[True, True, False, False])
    out = pd.DataFrame({"model_id": sorted(ids)}).set_index("model_id")
    for field in META_FIELDS:
        first = meta.dropna(subset=[field]).drop_duplicates("model_id").set_index("model_id")
        out[field] = first[field]
        if field == "display_name":
            out["source"], out["as_of"] = first["source"], first["as_of"]
    fallback = (seen.assign(prio=priority(seen["source"])).sort_values(["model_id", "prio", "raw_name"])
                .drop_duplicates("model_id").set_index("model_id"))
    missing = out["display_name"].isna()
    out.loc[missing, "display_name"] = fallback["raw_name"]
    out.loc[missing, "source"] = fallback["source"]
    out.loc[missing, "as_of"] = fallback["as_of"]
    out["context_window"] = pd.to_numeric(out["context_window"]).round().astype("Int64")
    out["params_b"] = pd.to_numeric(out["params_b"]).astype(float)
    for flag in ("open_weights", "reasoning", "tool_use"):
        out[flag] = out[flag].map(lambda v: None if pd.isna(v) else bool(v)).astype("boolean")
    return out.reset_index()


def build_aliases(seen: pd.DataFrame) -> pd.DataFrame:
    """Every raw spelling -> canonical id; `source` is the highest-priority source using it, `sources` lists
    all, `effort` / `snapshot` what the spelling says beyond the model. Raises if one alias_key would
    resolve to two ids."""
    seen = seen.drop_duplicates(["raw_name", "model_id", "source"])
    clash = seen.groupby("raw_name")["model_id"].nunique()
    if (clash > 1).any():
        raise ValueError(f"raw names mapped to several ids: {clash[clash > 1].index.tolist()[:10]}")
    sources = seen.groupby("raw_name")["source"].agg(lambda s: ",".join(sorted(set(s))))
    aliases = (seen.assign(prio=priority(seen["source"])).sort_values(["raw_name", "prio"])
               .drop_duplicates("raw_name").drop(columns="prio").rename(columns={"raw_name": "alias"}))
    aliases["sources"] = aliases["alias"].map(sources)
    aliases = with_variant(aliases, "alias")
    keys = pd.concat([
        pd.DataFrame({"key": aliases["alias"].map(alias_key), "model_id": aliases["model_id"]}),
        pd.DataFrame({"key": aliases["model_id"].map(alias_key), "model_id": aliases["model_id"]}),
    ]).drop_duplicates()
    collide = keys.groupby("key")["model_id"].nunique()
    if (collide > 1).any():
        bad = collide[collide > 1].index.tolist()
        raise ValueError(f"alias_key collisions between canonical ids: {bad[:10]}")
    return aliases


def write_table(df: pd.DataFrame, name: str, out: Path) -> Path:
    """Write one raw table as zstd Parquet, schema columns first, rows sorted by the key."""
    schema = RAW_TABLES[name]
    missing = [c for c in schema.column_names if c not in df.columns]
    if missing:
        raise ValueError(f"{name}: missing schema columns {missing}")
    extra = [c for c in df.columns if c not in schema.column_names]
    df = df[schema.column_names + extra].sort_values(list(schema.key), ignore_index=True)
    if df.duplicated(list(schema.key)).any():
        raise ValueError(f"{name}: duplicate keys {list(schema.key)}")
    inferred = pa.Schema.from_pandas(df, preserve_index=False)
    arrow_schema = pa.schema([
        pa.field(f.name, ARROW_TYPES[schema.column(f.name).kind]) if f.name in schema.column_names else f
        for f in inferred
    ])
    path = out / f"{name}.parquet"
    pq.write_table(pa.Table.from_pandas(df, schema=arrow_schema, preserve_index=False), path, compression="zstd")
    return path
