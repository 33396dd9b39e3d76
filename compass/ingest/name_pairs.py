"""A labelled fixture of cross-source name pairs and the resolver's precision and recall on it (issue 42, item 3).

Each row names two upstream spellings (`name_a` from `source_a`, `name_b` from `source_b`) and says whether they
are the same model (`same_model`, 1 or 0; effort levels, thinking modes and dated snapshots of one model are the
same model, base vs instruct, `-mini` vs base or two version numbers are not). The resolver predicts "same" when
both spellings get one canonical id (`compass.ingest.canonical.canonical_id`, what the default build and the
live connectors use). A pair listed twice (in either order) is bad input.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import pandas as pd

from compass.ingest.canonical import canonical_id
from compass.ingest.errors import IngestError

COLUMNS = ("name_a", "source_a", "name_b", "source_b", "same_model", "note")


@dataclass(frozen=True)
class PairScore:
    n_pairs: int
    n_same: int
    true_pos: int
    false_pos: int
    false_neg: int

    @property
    def precision(self) -> float:
        return self.true_pos / max(self.true_pos + self.false_pos, 1)

    @property
    def recall(self) -> float:
        return self.true_pos / max(self.true_pos + self.false_neg, 1)


def labelled_rows(text: str, file: str, columns: tuple[str, ...], fixture: str) -> pd.DataFrame:
    """A labelled fixture's rows as text; IngestError naming the file, row and column on a missing column or a
    `same_model` label other than 0/1."""
    pairs = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    missing = [c for c in columns if c not in pairs.columns]
    if missing:
        raise IngestError(file, None, missing[0], f"the {fixture} fixture needs this column")
    bad = ~pairs["same_model"].isin(["0", "1"])
    if bad.any():
        raise IngestError(file, int(bad.idxmax()) + 1, "same_model", "must be 0 or 1")
    return pairs


def read_pairs(text: str, file: str) -> pd.DataFrame:
    """The fixture's rows (`labelled_rows`); IngestError naming the file and row of a duplicate pair."""
    pairs = labelled_rows(text, file, COLUMNS, "name-pair")
    key = pairs.apply(lambda r: tuple(sorted([(r["source_a"], r["name_a"]), (r["source_b"], r["name_b"])])), axis=1)
    dup = key.duplicated()
    if dup.any():
        row = int(dup.idxmax())
        (sa, na), (sb, nb) = key[row]
        first = key.tolist().index(key[row]) + 1
        raise IngestError(file, row + 1, "name_a,name_b",
                          f"duplicate pair {f'{sa}:{na}'!r} / {f'{sb}:{nb}'!r} (first at row {first})")
    return pairs.assign(same_model=pairs["same_model"].astype(int))


def predict(pairs: pd.DataFrame) -> pd.Series:
    """1 where the resolver gives both spellings one canonical id."""
    return (pairs["name_a"].map(canonical_id) == pairs["name_b"].map(canonical_id)).astype(int)


def score(pairs: pd.DataFrame) -> PairScore:
    """Confusion counts of `predict` against the labels."""
    said, truth = predict(pairs), pairs["same_model"]
    return PairScore(len(pairs), int(truth.sum()), int(((said == 1) & (truth == 1)).sum()),
                     int(((said == 1) & (truth == 0)).sum()), int(((said == 0) & (truth == 1)).sum()))
