"""The live-sources page (issue 36): how each `connector:` source fared at its last fetch, the new model names it
brought in, and the names held back until a person confirms a match in the aliases file."""

from __future__ import annotations

import pandas as pd

from pipelines.formatting import count
from pipelines.report.html import verdict
from pipelines.report.sections import section
from pipelines.report.slice import Slice
from resources import readers
from resources.warehouse import Warehouse

HELD = ["connector", "raw_name", "best_candidate", "similarity", "candidates", "tables", "rows"]


def last_fetches(fetches: pd.DataFrame) -> pd.DataFrame:
    """The latest fetch of every URL (status 0: the fetch failed, `error` says why)."""
    if fetches.empty:
        return fetches
    latest = fetches.sort_values("fetched_at").drop_duplicates("url", keep="last")
    return latest[["connector", "url", "status", "bytes", "fetched_at", "error"]].sort_values(["connector", "url"])


def sources_body(wh: Warehouse) -> str:
    fetches = last_fetches(readers.published(wh, "raw.fetches"))
    names = readers.published(wh, "raw.unmatched_names")
    # Failed: the rows of the table below with an error, a 200 whose body was refused included (issue 43: the banner
    # counted status 0 only and said "all fetched" above two such rows).
    failed = fetches[(fetches["status"] == 0) | fetches["error"].fillna("").astype(str).str.strip().ne("")] \
        if len(fetches) else fetches
    by_status = names["status"].value_counts() if len(names) else pd.Series(dtype=int)
    pending, new = names[names["status"] == "pending"], names[names["status"] == "new"]
    failing = (f"{count(failed['connector'].nunique())} failed at the last fetch and kept their previous rows"
               if len(failed) else "all fetched")
    text = (f"{count(fetches['connector'].nunique() if len(fetches) else 0)} live source(s), {failing}; "
            f"{count(by_status.get('new', 0))} new model name(s) brought in, "
            f"{count(by_status.get('pending', 0))} held back for a person to confirm.")
    return (verdict(text)
            + section("Last fetch per file", fetches, "Status 200: new bytes; 304: unchanged upstream (nothing "
                      "downstream ran); 0: the fetch failed. A row with an error failed (a 200 whose body could not "
                      "be read too): the source's previous rows are kept.")
            + section("Names held back: confirm a match in your aliases file", pending[HELD],
                      "Each is similar to a catalog model (similarity at or above the threshold) but neither the alias "
                      "table nor the canonicalization rules resolve it, so its rows wait. Add a line "
                      "`<raw_name>,<model_id>` to the aliases file named in your config (header `alias,model_id`; "
                      "model_id: a candidate, or a new id) and the next refresh brings them in.")
            + section("New models brought in", new[["connector", "raw_name", "model_id", "best_candidate",
                                                   "similarity", "tables", "rows"]],
                      "Scored by a quality source and unlike every catalog model: entered under the canonical id.")
            + section("Names left out (price or metadata only, no score)",
                      names[names["status"] == "unmatched"][HELD].head(300)))


SLICE = Slice("sources", "Live sources", "raw.fetches", sources_body, ("raw.fetches", "raw.unmatched_names"))
