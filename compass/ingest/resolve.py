"""Connector rows (named by upstream spelling, `raw_name`) -> canonical rows (named by `model_id`).

The one step between `compass.ingest.connectors` and the canonical raw tables, used by the
embedded-default build and by the pipeline alike:

* `Resolver` names each spelling's canonical id: an explicit pair first (a confirmed alias, a
  source's own abbreviation table), else the rules of `compass.ingest.canonical.canonical_id`;
* `dedupe_scores` keeps one score per (model, benchmark, source), chosen without looking at the scores: one
  effort setting per model and source (the model's preferred one where the source has it), then the undated or
  newest snapshot; its spelling in `variant` and what the spelling says in `effort` and `snapshot`
  (`with_variant`);
* `dedupe_costs` keeps one price per (model, provider, source): the undated spelling, else the
  newest dated snapshot, and adds blended = (3 x input + output) / 4;
* `canonical_rows` applies the three to a connector's output.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import pandas as pd

from compass.ingest.aliases import alias_key
from compass.ingest.canonical import LEVELS, canonical_id, variant


class Resolver:
    """raw spelling -> canonical id, with explicit pairs keyed by alias_key."""

    def __init__(self, explicit: Mapping[str, str] | None = None) -> None:
        self.explicit = {alias_key(k): v for k, v in (explicit or {}).items()}

    def __call__(self, names: pd.Series) -> pd.Series:
        ids = {n: self.explicit.get(alias_key(n)) or canonical_id(n) for n in names.dropna().unique()}
        return names.map(ids)


def with_variant(rows: pd.DataFrame, spelling: str = "variant") -> pd.DataFrame:
    """`rows` with the columns `effort` and `snapshot`: what the raw spelling in column `spelling` says
    beyond its model (`compass.ingest.canonical.variant`), null where it says nothing."""
    found = {n: variant(n) for n in rows[spelling].dropna().unique()}
    return rows.assign(effort=rows[spelling].map(lambda n: found[n].effort if n in found else None).astype(object),
                       snapshot=rows[spelling].map(lambda n: found[n].snapshot if n in found else None).astype(object))


def effort_preference(effort: str | None) -> tuple[int, int, int]:
    """Sort key of an effort setting, larger preferred on ties of coverage: the plain spelling (the vendor's default
    serving setting, what its price is quoted for), then the higher level (`LEVELS`), then a thinking mode and the
    larger thinking budget."""
    if effort is None:
        return (1, 0, 0)
    level, _, mode = effort.partition("+") if effort.split("+")[0] in LEVELS else ("", "", effort)
    budget = re.search(r"(\d+)k", mode)
    return (0, LEVELS.index(level) if level in LEVELS else -1,
            int(budget.group(1)) if budget else int(mode.startswith("thinking")))


def dedupe_scores(scores: pd.DataFrame) -> pd.DataFrame:
    """One row per (model_id, benchmark, source), chosen without looking at the scores.

    Keeping each cell's best-scoring variant (effort level, thinking mode, dated snapshot) would rank a model by the
    maximum over its k variants, each cell possibly from another setting: a model nobody can deploy, at one
    variant's price (max-of-k bias). Instead:

    1. per model, its preferred effort setting: the one with the most (source, benchmark) rows in `scores`, ties to
       `effort_preference`;
    2. per (model, benchmark, source), the row at the preferred setting where the source has one, else at the
       setting covering the most of the model's benchmarks in that source, ties to `effort_preference` (a cell
       measured only at another setting is kept, not imputed: the choice never looks at a score);
    3. within a setting, one snapshot per (model, source): the spelling covering the most of the model's benchmarks in
       that source (undated spellings count as one), ties to the undated one, then to the newest dated one (a
       year-dated tag; `0613` or `002` carry no year and are not ordered), then to the spelling. Choosing it per
       benchmark mixed generations within a source (gemini-1.5-pro's Epoch rows from `-001-feb24` and `-002`).

    The raw spelling that produced the kept row is kept in the extra column `variant`, its effort level /
    thinking mode and snapshot tag in `effort` and `snapshot`.
    """
    rows = with_variant(scores.rename(columns={"raw_name": "variant"}))
    setting = rows["effort"].astype(object).where(rows["effort"].notna(), "")
    preference = setting.map({e: effort_preference(e or None) for e in setting.unique()})
    rows = rows.assign(_setting=setting, _preference=preference,
                       _coverage=rows.groupby(["model_id", setting])["benchmark"].transform("size"),
                       _in_source=rows.groupby(["model_id", "source", setting])["benchmark"].transform("nunique"))
    preferred = (rows.sort_values(["model_id", "_coverage", "_preference"], ascending=[True, False, False])
                 .drop_duplicates("model_id").set_index("model_id")["_setting"])
    rows["_preferred"] = rows["_setting"] == rows["model_id"].map(preferred)
    tag = rows["snapshot"].astype(object).where(rows["snapshot"].notna(), "")
    rows = rows.assign(_snap_cover=rows.groupby(["model_id", "source", setting, tag])["benchmark"].transform("nunique"),
                       _undated=tag == "", _dated=tag.str.extract(r"^(20\d\d-\d\d-\d\d)", expand=False).fillna(""))
    keys = {"model_id": True, "benchmark": True, "source": True, "_preferred": False, "_in_source": False,
            "_preference": False, "_snap_cover": False, "_undated": False, "_dated": False, "variant": True}
    rows = rows.sort_values(list(keys), ascending=list(keys.values()))
    return (rows.drop_duplicates(["model_id", "benchmark", "source"])
            .drop(columns=["_setting", "_preference", "_coverage", "_in_source", "_preferred", "_snap_cover", "_undated",
                           "_dated"]).reset_index(drop=True))


def dedupe_costs(costs: pd.DataFrame) -> pd.DataFrame:
    """One price per (model_id, provider, source): the undated spelling if present, else the
    newest dated snapshot (greatest alias_key); blended = (3*input + output)/4."""
    costs = costs.assign(
        exact=[alias_key(r) == m for r, m in zip(costs["raw_name"], costs["model_id"])],
        key=costs["raw_name"].map(alias_key),
    )
    costs = (costs.sort_values(["model_id", "provider", "source", "exact", "key"],
                               ascending=[True, True, True, False, False])
             .drop_duplicates(["model_id", "provider", "source"])
             .drop(columns=["exact", "key"]).rename(columns={"raw_name": "variant"}))
    costs = with_variant(costs)
    costs["blended_usd_per_mtok"] = (3 * costs["input_usd_per_mtok"] + costs["output_usd_per_mtok"]) / 4
    return costs


def canonical_rows(parsed: Mapping[str, pd.DataFrame], resolve: Resolver) -> dict[str, pd.DataFrame]:
    """A connector's output with `model_id` resolved: scores and costs deduplicated as above, `models`
    rows (metadata per spelling) kept with their spelling in `raw_name` for the caller to merge."""
    out = {}
    for table, rows in parsed.items():
        rows = rows.assign(model_id=resolve(rows["raw_name"]))
        out[table] = {"benchmark_scores": dedupe_scores, "model_costs": dedupe_costs}.get(table, lambda r: r)(rows)
    return out
