"""Which catalog model an unknown spelling may be: the review queue's score (issue 48, item 4).

A spelling the rules do not resolve (`compass.ingest.names`) is compared with catalog ids; both are rule-canonical
keys (`compass.ingest.canonical.canonical_id`, `alias_key`). `strip` drops from each what never names a model:
date tokens, effort and release-channel words (`high`, `xhigh`, `non`, `preview`, `beta`; `latest` in a versioned
name), mode words (`thinking`, `reasoning`), stage words (`exp`, `experimental`, `alpha`), serving tags (`free`,
`tee`, `maas`, `original`, quantisation), a repeated vendor prefix (`qwen.qwen3-...`) and, in a name without other
digits, a first-version tag (`-1`). `thinking`, `reasoning`, `preview` and `experimental` misspelt by one edit
count as themselves (`previw`, `reasoming`). Then `review_score`:

* two different dates on the two sides are two releases (`mistral-large-2407` / `-2411`): 0;
* the bare keys equal, or equal without `-` and `.` with the sizes unchanged (`gpt4o` / `gpt-4o`, not
  `opt-1.3b` / `opt-13b`): 1;
* a typo: the same tokens and digits, and each token that differs a word of at least `MIN_TYPO_WORD` letters within
  `MAX_TYPO_EDITS` edits of the other (`flsh` / `flash`): TYPO ** e for e edits. A short token that differs is
  another model (`command-a-plus` / `command-r-plus`, `qwen-vl-max` / `qwen-max`);
* anything else (a version, a size, a tier word such as `mini`, `pro`, `lite`, `vl`, an added word): 0;

times AMBIGUOUS for each of a date, a mode word and a stage word that only one side carries: an undated pointer
(`mistral-small`) against a dated release, a thinking checkpoint (`kimi-k2-thinking`) or a pre-release
(`deepseek-v3.2-exp`) is as often another model as not. On the labelled upstream pairs
(tests/fixtures/names/review_queue_pairs.csv; scripts/measure_review_queue.py) pairs scoring above 0 were the same
model in 6 of 14 with a date on one side only, 10 of 22 with a mode word, 0 of 4 with a stage word, and 92 of 93
with none of these: hence the factor, and a threshold above it (`compass.ingest.load.MATCH_THRESHOLD`). Edit counts
are difflib's (the standard library).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

MIN_TYPO_WORD = 4
MAX_TYPO_EDITS = 2
AMBIGUOUS = 0.9  # factor per identity-ambiguous difference (review_score)
TYPO = 0.95  # factor per typo edit (review_score)
# Words that say how a model is run or released, never which model (each a whole `-` token).
_EFFORT_WORDS = ("high", "xhigh", "medium", "low", "minimal", "effort", "non", "nothinking", "preview", "beta")
# Words that may name a model of their own (AMBIGUOUS when one side only carries them).
_MODE_WORDS = ("thinking", "reasoning")
_STAGE_WORDS = ("experimental", "exp", "alpha")
_WORDS = {**{w: "" for w in _EFFORT_WORDS}, **{w: "mode" for w in _MODE_WORDS}, **{w: "stage" for w in _STAGE_WORDS}}
_FUZZY = ("thinking", "reasoning", "preview", "experimental")
_SERVING = re.compile(r"^(?:free|tee|maas|original|fp[48]|bf16|int[48]|\d+bit)$")
_DATE = re.compile(r"-(20\d\d-[01]\d-[0-3]\d|20\d\d[01]\d[0-3]\d|[01]\d-20\d\d|[01]\d-[0-3]\d|\d\d[01]\d)(?=-|$)")
_FIRST_VERSION = re.compile(r"-v?1(?:\.0)?$")
_DIGITS = re.compile(r"\d+")
_NUMBER_DASH = re.compile(r"(\d)-(\d)")  # `1-5b`: models.dev's dash for a decimal point
_SIZE = re.compile(r"\d+(?:\.\d+)?[bmk]\b")


def edits(a: str, b: str) -> int:
    """Characters difflib's opcodes insert, delete or replace to turn `a` into `b`; two swapped neighbours count
    as one edit (`opsu` / `opus`)."""
    differ = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    if len(a) == len(b) and len(differ) == 2 and differ[1] == differ[0] + 1 and a[differ[0]] == b[differ[1]] \
            and a[differ[1]] == b[differ[0]]:
        return 1
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in ops if tag != "equal")


def _allowed_edits(word: str) -> int:
    """Typos allowed in a word: none under MIN_TYPO_WORD letters, one under 6, else MAX_TYPO_EDITS."""
    return 0 if len(word) < MIN_TYPO_WORD else 1 if len(word) < 6 else MAX_TYPO_EDITS


def suffix_word(token: str) -> str | None:
    """The effort, mode or stage word a token spells (`_WORDS`), one of `_FUZZY` also when misspelt by one edit
    (`previw`, `reasoming`); else None."""
    if token in _WORDS:
        return token
    near = [w for w in _FUZZY if len(token) >= 6 and edits(token, w) <= 1]
    return near[0] if near else None


def misspelt(key: str) -> list[str]:
    """The tokens of a key after its first that misspell one of `_FUZZY` (`previw`): a name with a typo in it,
    held for a person whatever its score, never entered as a new model."""
    return [t for t in key.split("-")[1:] if t not in _WORDS and suffix_word(t) is not None]


def _droppable(token: str, versioned: bool) -> bool:
    if token == "latest":  # a versioned name's `-latest` only (canonical rule 1); `mistral-large-latest` moves
        return versioned
    return suffix_word(token) is not None or _SERVING.match(token) is not None


@dataclass(frozen=True)
class Stripped:
    """A key without its suffix words (`strip`), the dates it carried and the mode and stage words it named."""

    bare: str
    dates: frozenset[str]
    modes: frozenset[str]
    stages: frozenset[str]


def strip(key: str) -> Stripped:
    """The key without a repeated vendor prefix (Bedrock's `qwen.qwen3-...`), its date tokens, effort, stage and
    serving words and, in a name without other digits, a first-version tag (`grok-code-fast-1`)."""
    key = re.sub(r"^([a-z]+)\.(?=\1)", "", key)
    dates = frozenset(m.group(1).replace("-", "") for m in _DATE.finditer(key))
    undated = _DATE.sub("", key)
    versioned = bool(_DIGITS.search(undated))
    first, *rest = undated.split("-")
    tokens = [first, *(t for t in rest if t and not _droppable(t, versioned))]
    bare = "-".join(tokens) or undated
    if not _DIGITS.search(_FIRST_VERSION.sub("", bare)):
        bare = _FIRST_VERSION.sub("", bare)
    words = {w: _WORDS[w] for w in map(suffix_word, rest) if w}
    return Stripped(bare, dates, frozenset(w for w, k in words.items() if k == "mode"),
                    frozenset(w for w, k in words.items() if k == "stage"))


def _typo_edits(a: str, b: str) -> int | None:
    """Total edits when `a` and `b` differ by typos within words only (module docstring, relation 3), else None."""
    ta, tb = a.split("-"), b.split("-")
    if len(ta) != len(tb) or _DIGITS.findall(a) != _DIGITS.findall(b):
        return None
    total = 0
    for x, y in zip(ta, tb):
        if x == y:
            continue
        n = edits(x, y)
        if n > _allowed_edits(max(x, y, key=len)) or min(len(x), len(y)) < MIN_TYPO_WORD - 1:
            return None
        total += n
    return total


def _same_sizes(a: str, b: str) -> bool:
    """The sizes (`1.3b`, `13b`, `128k`) are spelt alike: dropping a separator may not turn `opt-1.3b` into
    `opt-13b`."""
    return _SIZE.findall(_NUMBER_DASH.sub(r"\1.\2", a)) == _SIZE.findall(_NUMBER_DASH.sub(r"\1.\2", b))


def review_score(key: str, model_id: str) -> float:
    """How likely a spelling's canonical key and a catalog id name one model, in [0, 1] (module docstring)."""
    a, b = strip(key), strip(model_id)
    if a.dates and b.dates and a.dates != b.dates:
        return 0.0
    if a.bare == b.bare or (re.sub(r"[-.]", "", a.bare) == re.sub(r"[-.]", "", b.bare) and _same_sizes(a.bare, b.bare)):
        score = 1.0
    else:
        n = _typo_edits(a.bare, b.bare)
        score = 0.0 if n is None else TYPO ** n
    ambiguous = (bool(a.dates) != bool(b.dates)) + (a.modes != b.modes) + (a.stages != b.stages)
    return score * AMBIGUOUS ** ambiguous
