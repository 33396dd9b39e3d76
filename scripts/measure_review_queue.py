"""The review queue's precision and recall on labelled upstream names, and the threshold they choose (issue 48, item 4).

Reads tests/fixtures/names/review_queue_pairs.csv (real upstream spellings from models.dev, LiteLLM and LiveBench
against the embedded catalog, hand-labelled, plus seeded one-letter typos and the issue's `qwen3.8-max-previw`) and
the issue-42 fixture's pairs the rules leave apart (tests/fixtures/names/cross_source_pairs.csv), sweeps the
threshold over the score levels (`compass.ingest.review_pairs`), and prints a Markdown section (the one in
docs/your-data.md, "Review queue: precision and recall").

    python scripts/measure_review_queue.py
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pandas as pd

from compass.ingest.aliases import alias_key
from compass.ingest.canonical import canonical_id
from compass.ingest.load import MATCH_THRESHOLD
from compass.ingest.name_pairs import read_pairs
from compass.ingest.review import strip
from compass.ingest.review_pairs import MIN_PRECISION, choose_threshold, confusion, from_cross_source, \
    read_review_pairs, scores, sweep

NAMES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "names"


def labelled() -> pd.DataFrame:
    review = NAMES / "review_queue_pairs.csv"
    cross = NAMES / "cross_source_pairs.csv"
    own = read_review_pairs(review.read_text(), str(review))
    apart = from_cross_source(read_pairs(cross.read_text(), str(cross))).assign(source="issue-42 fixture")
    return scores(pd.concat([own, apart], ignore_index=True))


def subset(scored: pd.DataFrame) -> pd.Series:
    names = {"synthetic_typo": "seeded one-letter typos", "issue_48": "seeded one-letter typos",
             "issue-42 fixture": "issue-42 pairs the rules leave apart"}
    return scored["source"].map(names).fillna("real upstream names (sample)")


def kind(scored: pd.DataFrame) -> pd.Series:
    """Which identity-ambiguous differences a pair has (review.review_score): date, mode, stage or none."""
    def one(name: str, candidate: str) -> str:
        a, b = strip(alias_key(canonical_id(name))), strip(candidate)
        found = [k for k, differs in (("date", bool(a.dates) != bool(b.dates)), ("mode", a.modes != b.modes),
                                      ("stage", a.stages != b.stages)) if differs]
        return "+".join(found) or "none"
    return pd.Series([one(n, c) for n, c in zip(scored["name"], scored["candidate"])], index=scored.index)


def old_queue(name: str, candidate: str) -> float:
    """The baseline: the queue's score before issue 48 (difflib's ratio of the rule-canonical spelling and the id,
    also without trailing effort words, halved when the version numbers disagree), offered at 0.85."""
    def ratio(a: str, b: str) -> float:
        x, y = re.findall(r"\d+(?:\.\d+)?", a), re.findall(r"\d+(?:\.\d+)?", b)
        shorter, longer = sorted((x, y), key=len)
        same = difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
        return same if longer[:len(shorter)] == shorter else 0.5 * same

    def bare(k: str) -> str:
        return re.sub(r"(?:-(?:x?high|max|medium|low|minimal|thinking|reasoning|effort))+$", "", k) or k
    key = canonical_id(name)
    return max(ratio(key, candidate), ratio(bare(key), bare(candidate)))


def pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def main() -> None:
    scored = labelled()
    table = sweep(scored)
    chosen = choose_threshold(table)
    at = confusion(scored, chosen)
    lines = [f"**Verdict:** at the shipped threshold {MATCH_THRESHOLD:g} (the lowest score level with precision "
             f">= {MIN_PRECISION:.2f}; chosen here: {chosen:g}) the queue offers {at.true_pos + at.false_pos} of "
             f"{len(scored)} labelled pairs, precision {pct(at.precision)}, recall {pct(at.recall)} "
             f"({at.true_pos} of {at.n_same} same-model pairs).", "",
             "| threshold | offered | same model | other model | precision | recall |", "|---|---|---|---|---|---|"]
    lines += [f"| {r.threshold:g} | {r.offered} | {r.true_pos} | {r.false_pos} | {pct(r.precision)} | {pct(r.recall)} |"
              for r in table.itertuples()]
    base = scored.assign(score=[old_queue(n, c) for n, c in zip(scored["name"], scored["candidate"])],
                         misspelt=False)
    old = confusion(base, 0.85)
    lines += [f"| baseline: the queue before issue 48 (difflib similarity, 0.85) | {old.true_pos + old.false_pos} | "
              f"{old.true_pos} | {old.false_pos} | {pct(old.precision)} | {pct(old.recall)} |"]
    lines += ["", f"By subset, at {chosen:g}:", "", "| pairs | n | same model | precision | recall |",
              "|---|---|---|---|---|"]
    for name, part in scored.groupby(subset(scored), sort=False):
        c = confusion(part, chosen)
        precision = pct(c.precision) if c.true_pos + c.false_pos else "none offered"
        lines.append(f"| {name} | {c.n_pairs} | {c.n_same} | {precision} | {pct(c.recall) if c.n_same else '-'} |")
    kinds = kind(scored)
    lines += ["", "Same-model share of the pairs scoring above 0, by the identity-ambiguous difference they carry "
              "(the reason for the factor AMBIGUOUS):", "", "| difference | pairs | same model |", "|---|---|---|"]
    live = scored["score"] > 0
    for name, part in scored[live].groupby(kinds[live]):
        lines.append(f"| {name} | {len(part)} | {int(part['same_model'].sum())} |")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
