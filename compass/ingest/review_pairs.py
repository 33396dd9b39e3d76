"""The review queue's precision and recall on labelled upstream names, and the threshold they choose (issue 48, item 4).

A labelled row names an upstream spelling (`name`, from `source`), a catalog id (`candidate`) and whether the two
are the same model (`same_model`, 1 or 0; the labelling rule is in tests/fixtures/names/README.md). The queue
*offers* the candidate when `compass.ingest.review.review_score` of the spelling's rule-canonical key and the id is
at least the threshold, or when the spelling misspells a suffix word (`review.misspelt`) and the score is above 0.
Precision = offered pairs that are the same model / offered pairs; recall = offered same-model pairs / same-model
pairs. The threshold is the lowest score level whose precision is at least `MIN_PRECISION`.
"""

from __future__ import annotations

import pandas as pd

from compass.ingest.aliases import alias_key
from compass.ingest.canonical import canonical_id
from compass.ingest.errors import IngestError
from compass.ingest.name_pairs import PairScore, labelled_rows
from compass.ingest.review import misspelt, review_score

COLUMNS = ("name", "source", "candidate", "same_model", "note")
MIN_PRECISION = 0.95


def read_review_pairs(text: str, file: str) -> pd.DataFrame:
    """The fixture's rows; IngestError naming the file, row and column on a missing column, a label other than 0/1
    or a pair listed twice."""
    pairs = labelled_rows(text, file, COLUMNS, "review-pair")
    dup = pairs.duplicated(["source", "name", "candidate"])
    if dup.any():
        raise IngestError(file, int(dup.idxmax()) + 1, "name,candidate", "this pair is listed twice")
    return pairs.assign(same_model=pairs["same_model"].astype(int))


def from_cross_source(pairs: pd.DataFrame) -> pd.DataFrame:
    """The issue-42 fixture's pairs (`compass.ingest.name_pairs`) the rules leave apart, as review pairs: `name_a`
    against `name_b`'s canonical id."""
    key_a, key_b = pairs["name_a"].map(canonical_id), pairs["name_b"].map(canonical_id)
    apart = pairs[key_a.map(alias_key) != key_b.map(alias_key)]
    return pd.DataFrame({"name": apart["name_a"], "source": apart["source_a"], "candidate": key_b[apart.index],
                         "same_model": apart["same_model"], "note": apart["note"]}).reset_index(drop=True)


def scores(pairs: pd.DataFrame) -> pd.DataFrame:
    """The pairs with `score` (review_score) and `misspelt` (the spelling misspells a suffix word)."""
    keys = pairs["name"].map(lambda n: alias_key(canonical_id(n)))
    return pairs.assign(score=[review_score(k, c) for k, c in zip(keys, pairs["candidate"])],
                        misspelt=keys.map(lambda k: bool(misspelt(k))))


def offered(scored: pd.DataFrame, threshold: float) -> pd.Series:
    """True where the queue offers the candidate at `threshold` (module docstring)."""
    return (scored["score"] >= threshold) | (scored["misspelt"] & (scored["score"] > 0))


def confusion(scored: pd.DataFrame, threshold: float) -> PairScore:
    said, truth = offered(scored, threshold), scored["same_model"] == 1
    return PairScore(len(scored), int(truth.sum()), int((said & truth).sum()), int((said & ~truth).sum()),
                     int((~said & truth).sum()))


def sweep(scored: pd.DataFrame) -> pd.DataFrame:
    """Precision and recall at every score level above 0 (each a candidate threshold), highest first."""
    levels = sorted({round(s, 4) for s in scored["score"] if s > 0}, reverse=True)
    rows = [(t, c.true_pos + c.false_pos, c.true_pos, c.false_pos, c.precision, c.recall)
            for t, c in ((t, confusion(scored, t)) for t in levels)]
    return pd.DataFrame(rows, columns=["threshold", "offered", "true_pos", "false_pos", "precision", "recall"])


def choose_threshold(table: pd.DataFrame, min_precision: float = MIN_PRECISION) -> float:
    """The lowest score level whose precision is at least `min_precision` (the most recall at that precision)."""
    ok = table[table["precision"] >= min_precision]
    if ok.empty:
        raise ValueError(f"no threshold reaches precision {min_precision:.2f}")
    return float(ok["threshold"].min())
