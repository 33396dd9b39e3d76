"""New model names from live sources: matched, never guessed (issue 36, item 3).

A spelling a connector reads resolves, in this order, through

1. the aliases file a person keeps (`confirmed`: alias_key -> canonical id; an id not yet in the catalog enters
   as a new model: a person's decision, not a guess);
2. the alias table and the catalog's ids (`alias_lookup`);
3. the canonicalization rules (`compass.ingest.canonical.canonical_id`: dated snapshots, effort suffixes, family
   spellings) when the id they give is in the catalog.

Any other spelling is *unmatched*. Its candidates are the catalog ids of the same family (the leading run of
letters of the canonical spelling, e.g. `claude`, `gpt`, `qwen`, or a family one edit from it: `qwne`) scored by
`compass.ingest.review.review_score` (1 for a suffix, date-token or separator difference, less per typo edit and per
date, mode or stage word only one side carries; 0 for another version, size or tier). A candidate scoring at least
`threshold` (chosen for precision on labelled upstream names: `compass.ingest.review_pairs`) is offered and the
name is held back (`pending`: its rows wait until a person confirms a match in the aliases file); so is a name that
misspells a suffix word (`qwen3.8-max-previw`, `review.misspelt`), with its best candidate. Otherwise no candidate is
offered: a spelling a quality source scores (benchmark rows) enters as a `new` model under its rule-canonical id, so
a model release reaches the leaderboards with no hand-written file; a spelling only a price list names stays out
(`unmatched`). Nothing is merged to an existing model without the rules or a person saying so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import pandas as pd

from compass.ingest.aliases import alias_key
from compass.ingest.canonical import canonical_id
from compass.ingest.review import MIN_TYPO_WORD, edits, misspelt, review_score

MATCHED, CONFIRMED, PENDING, NEW, UNMATCHED = "matched", "confirmed", "pending", "new", "unmatched"
N_CANDIDATES = 3
_FAMILY = re.compile(r"^[a-z]+")

MATCH_COLUMNS = ["raw_name", "model_id", "status", "best_candidate", "similarity", "candidates"]


def family(key: str) -> str:
    """The leading run of letters of a spelling (`claude-opus-5` -> `claude`), '' when it starts otherwise."""
    found = _FAMILY.match(key)
    return found.group(0) if found else ""


def candidates(name: str, ids_by_family: Mapping[str, list[str]], n: int = N_CANDIDATES) -> list[tuple[str, float]]:
    """The `n` ids of the spelling's family (or a family one typo away) with the highest review score above 0,
    best first."""
    key = alias_key(canonical_id(name))
    own = family(key)
    near = [f for f in ids_by_family
            if f == own or (min(len(f), len(own)) >= MIN_TYPO_WORD and edits(f, own) <= 1)]
    scored = [(i, review_score(key, i)) for f in near for i in ids_by_family[f]]
    return sorted((s for s in scored if s[1] > 0), key=lambda s: (-s[1], s[0]))[:n]


def match_names(names: Iterable[str], lookup: Mapping[str, str], confirmed: Mapping[str, str], scored: set[str],
                threshold: float) -> pd.DataFrame:
    """One row per distinct spelling: MATCH_COLUMNS. `model_id` is set for matched, confirmed and new spellings
    (their rows enter) and empty for pending and unmatched ones (held back). `scored`: the spellings a quality
    source scores (only they may enter as new models).

    Unresolved spellings are taken shortest canonical spelling first, and a new model is a candidate for the
    ones after it: of `muse-spark-1.1-xhigh` (rules: `muse-spark-1.1`) and `muse-spark-1.1-high`, the first
    enters and the second waits for a person, instead of both entering as two models."""
    ids_by_family: dict[str, list[str]] = {}
    for model_id in sorted(set(lookup.values())):
        ids_by_family.setdefault(family(alias_key(model_id)), []).append(model_id)
    rows, unresolved = [], []
    for name in sorted(set(names)):
        key = alias_key(name)
        found = confirmed.get(key)
        if found is not None:
            rows.append((name, found, CONFIRMED, None, None, None))
            continue
        found = lookup.get(key) or lookup.get(alias_key(canonical_id(name)))
        if found is not None:
            rows.append((name, found, MATCHED, None, None, None))
        else:
            unresolved.append(name)
    entered: dict[str, str] = {}  # alias key of a new id -> the id
    for name in sorted(unresolved, key=lambda n: (len(canonical_id(n)), n)):
        if alias_key(canonical_id(name)) in entered:  # the rules give a model this batch brought in
            rows.append((name, entered[alias_key(canonical_id(name))], MATCHED, None, None, None))
            continue
        best, typo = candidates(name, ids_by_family), bool(misspelt(alias_key(canonical_id(name))))
        offer = [c for c in best if c[1] >= threshold] or (best[:1] if typo else [])
        if offer or typo:
            status, model_id = PENDING, None
        elif name in scored:
            status, model_id = NEW, canonical_id(name)
            entered[alias_key(model_id)] = model_id
            ids_by_family.setdefault(family(alias_key(model_id)), []).append(model_id)
        else:
            status, model_id = UNMATCHED, None
        text = "; ".join(f"{i} ({s:.2f})" for i, s in offer) or None
        top_id, top = offer[0] if offer else (None, None)
        rows.append((name, model_id, status, top_id, None if top is None else round(top, 4), text))
    return pd.DataFrame(rows, columns=MATCH_COLUMNS).sort_values("raw_name", ignore_index=True)
