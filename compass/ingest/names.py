"""New model names from live sources: matched, never guessed (issue 36, item 3).

A spelling a connector reads resolves, in this order, through

1. the aliases file a person keeps (`confirmed`: alias_key -> canonical id; an id not yet in the catalog enters
   as a new model: a person's decision, not a guess);
2. the alias table and the catalog's ids (`alias_lookup`);
3. the canonicalization rules (`compass.ingest.canonical.canonical_id`: dated snapshots, effort suffixes, family
   spellings) when the id they give is in the catalog.

Any other spelling is *unmatched*. Its candidates are the catalog ids of the same family (the leading run of
letters of the canonical spelling, e.g. `claude`, `gpt`, `qwen`) ranked by `difflib`'s ratio between the rule-
canonical spelling and the id, halved when their version numbers disagree (neither list of numbers is a prefix
of the other: `gpt-5.5-pro` is not a variant of `gpt-5.2-pro`, `claude-sonnet-5-5` not of `claude-sonnet-4-5`,
while `grok-code-fast` may be `grok-code-fast-1`); a trailing effort word the rules keep outside the families
where it is a serving mode (`muse-spark-1.1-high`) is also tried without it. At or above `threshold` the name is held back (`pending`: a probable variant of a
known model; its rows wait until a person confirms a match in the aliases file). Below it, a spelling a quality
source scores (benchmark rows) enters as a `new` model under its rule-canonical id, so a model release reaches
the leaderboards with no hand-written file; a spelling only a price list names stays out (`unmatched`). Nothing
is merged to an existing model without the rules or a person saying so.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping

import pandas as pd

from compass.ingest.aliases import alias_key
from compass.ingest.canonical import canonical_id

MATCHED, CONFIRMED, PENDING, NEW, UNMATCHED = "matched", "confirmed", "pending", "new", "unmatched"
N_CANDIDATES = 3
_FAMILY = re.compile(r"^[a-z]+")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
# A candidate whose version numbers disagree with the name's scores this fraction of its string similarity.
OTHER_VERSION = 0.5
_EFFORT = re.compile(r"(?:-(?:x?high|max|medium|low|minimal|thinking|reasoning|effort))+$")

MATCH_COLUMNS = ["raw_name", "model_id", "status", "best_candidate", "similarity", "candidates"]


def family(key: str) -> str:
    """The leading run of letters of a spelling (`claude-opus-5` -> `claude`), '' when it starts otherwise."""
    found = _FAMILY.match(key)
    return found.group(0) if found else ""


def similarity(key: str, model_id: str) -> float:
    """difflib's ratio of two spellings, times OTHER_VERSION when their version numbers disagree."""
    ratio = difflib.SequenceMatcher(None, key, model_id, autojunk=False).ratio()
    a, b = _NUMBER.findall(key), _NUMBER.findall(model_id)
    shorter, longer = sorted((a, b), key=len)
    return ratio if longer[:len(shorter)] == shorter else OTHER_VERSION * ratio


def bare(key: str) -> str:
    """A spelling without its trailing effort words (`muse-spark-1.1-high` -> `muse-spark-1.1`)."""
    return _EFFORT.sub("", key) or key


def candidates(name: str, ids_by_family: Mapping[str, list[str]], n: int = N_CANDIDATES) -> list[tuple[str, float]]:
    """The `n` ids of the spelling's family most similar to its rule-canonical spelling, best first (each pair
    also compared without trailing effort words)."""
    key = canonical_id(name)
    scored = [(i, max(similarity(key, i), similarity(bare(key), bare(i)))) for i in ids_by_family.get(family(key), [])]
    return sorted(scored, key=lambda s: (-s[1], s[0]))[:n]


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
        best = candidates(name, ids_by_family)
        text = "; ".join(f"{i} ({s:.2f})" for i, s in best) or None
        top_id, top = best[0] if best else (None, 0.0)
        if top >= threshold:
            status, model_id = PENDING, None
        elif name in scored:
            status, model_id = NEW, canonical_id(name)
            entered[alias_key(model_id)] = model_id
            ids_by_family.setdefault(family(alias_key(model_id)), []).append(model_id)
        else:
            status, model_id = UNMATCHED, None
        rows.append((name, model_id, status, top_id, round(top, 4) if best else None, text))
    return pd.DataFrame(rows, columns=MATCH_COLUMNS).sort_values("raw_name", ignore_index=True)
