"""A person's matchmaking session (CUPID §4.4, App. E; `compass match`): real answers to the same prompt
from two anonymous models per round, the person's pick and optional change request, the budget.

The paper turns a change request into a 0/1 mask over the pool with an auxiliary LLM (§3.2.4). Offline we
use a keyword stand-in: "cheaper" -> models cheaper than the last pick, "better / smarter / expensive"
-> dearer ones, "shorter / concise" and "longer / detailed" -> models whose answers are on average shorter
or longer than the last pick's. Anything else gives no mask (ℓ ≡ 0). Token counts are the answers' real
lengths at 4 characters per token.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from compass.matching.pool import Pool

CHARS_PER_TOKEN = 4.0
KEYWORDS = {"cheap": ("cost", -1), "afford": ("cost", -1), "better": ("cost", 1), "smart": ("cost", 1),
            "expensive": ("cost", 1), "short": ("length", -1), "concise": ("length", -1), "brief": ("length", -1),
            "long": ("length", 1), "detail": ("length", 1)}


def answer_costs(answers: pd.DataFrame, pool: Pool) -> pd.DataFrame:
    """USD per (question_id, model): (prompt chars · p_in + response chars · p_out) / 4 / 10⁶, as a
    question_id x model table in pool order."""
    price = pd.DataFrame({"p_in": pool.price_in, "p_out": pool.price_out}, index=list(pool.models))
    rows = answers.join(price, on="model")
    usd = (rows["prompt"].str.len() * rows["p_in"] + rows["response"].str.len() * rows["p_out"]) / CHARS_PER_TOKEN / 1e6
    return rows.assign(usd=usd).pivot(index="question_id", columns="model", values="usd")[list(pool.models)]


def request_mask(request: str, pool: Pool, last: int | None, mean_length: np.ndarray) -> np.ndarray | None:
    """ℓ from a change request relative to the last picked model, or to the pool's median before any pick
    (the initial direction); keyword stand-in for the routing LLM."""
    text = request.lower()
    for word, (axis, sign) in KEYWORDS.items():
        if word in text:
            value = pool.cost_proxy if axis == "cost" else mean_length
            reference = np.median(value) if last is None else value[last]
            return (sign * (value - reference) > 0).astype(float)
    return None


def side_by_side(left: str, right: str, width: int = 60, max_lines: int = 30) -> str:
    """Two answers in two columns ("A" | "B"), each wrapped to `width` and cut after `max_lines` lines."""
    import textwrap

    def column(text: str) -> list[str]:
        lines = [w for para in text.splitlines() for w in (textwrap.wrap(para, width) or [""])]
        return lines[:max_lines] + (["[...]"] if len(lines) > max_lines else [])

    a, b = column(left), column(right)
    a += [""] * (len(b) - len(a))
    b += [""] * (len(a) - len(b))
    header = f"{'A':<{width}} | B\n{'-' * width}-+-{'-' * width}"
    return header + "\n" + "\n".join(f"{x:<{width}} | {y}" for x, y in zip(a, b, strict=True))


def scenario_requests(requests: list[str]) -> tuple[list[None], list[str]]:
    """A person's change requests as scenario requests (compass.matching.bridge.scenario_from_session): "cheaper"
    becomes None (a cost sensitivity); the others have no scenario counterpart and are returned as notes."""
    carried: list[None] = []
    notes: list[str] = []
    for text in filter(None, requests):
        axis = next((KEYWORDS[w] for w in KEYWORDS if w in text.lower()), None)
        if axis == ("cost", -1):
            carried.append(None)
        else:
            notes.append(f"request {text!r}")
    return carried, notes
