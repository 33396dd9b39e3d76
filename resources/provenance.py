"""What the embedded default data says about itself (data/PROVENANCE.md, data/unmatched_names.csv).

A user's own config (COMPASS_CONFIG) brings its own files, so both readers return nothing then.
"""

from __future__ import annotations

import pandas as pd

from resources import settings

DATA_DIR = settings.ROOT / "data"


def source_licences() -> pd.DataFrame:
    """[source, upstream, licence] of every source in the sources table of data/PROVENANCE.md."""
    columns = ["source", "upstream", "licence"]
    path = DATA_DIR / "PROVENANCE.md"
    if settings.config_path() is not None or not path.exists():
        return pd.DataFrame(columns=columns)
    rows = []
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) >= 5 and cells[1] != "upstream":  # | `source` | upstream | path | commit | licence
            rows.append((cells[0].strip("`"), cells[1].replace("`", ""), cells[4].replace("*", "")))
    return pd.DataFrame(rows, columns=columns)


def unmatched_names() -> pd.DataFrame:
    """[source, reason, names] counts of the raw names the data build did not import (data/unmatched_names.csv)."""
    path = DATA_DIR / "unmatched_names.csv"
    if settings.config_path() is not None or not path.exists():
        return pd.DataFrame(columns=["source", "reason", "names"])
    names = pd.read_csv(path)
    return (names.groupby(["source", "reason"]).size().rename("names").reset_index()
            .sort_values(["source", "names"], ascending=[True, False], ignore_index=True))
