"""Property-based: whatever numbers LiveBench's cost file carries (0, negative, huge, ±inf, NaN, text), every token
profile and cost the connector publishes on its score rows, and every cell cost priced from them, is finite or NaN
(issue 49 after-stop check: an input price of 0 used to give infinite input tokens per question and an infinite
cost; a NaN cell is not for sale, `compass.mlcompass.evaluation_costs`). Two explicit examples make it red on
every run without the fix, not only when the generator finds them: an input price of 0 among valid numbers, and
output tokens of 1e308 on both tasks of one category (the category's question-weighted sum overflows)."""

import json

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compass.ingest.connectors import CONNECTORS, Payload
from compass.ingest.connectors.livebench import TASK_COST_COLUMNS
from compass.ingest.errors import IngestError
from compass.mlcompass.evaluation_costs import benchmark_profiles, cell_costs

TASKS = ("LCB_generation", "coding_completion")
MODELS = ("gpt-4o", "o1", "claude-3-opus")
NUMBER = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10, 10**6),
                   st.sampled_from(["0", "0.0", "-1", "inf", "-inf", "nan", "1e400", "1e-320", "", "cheap"]))
COST_FIELDS = ("input_price_per_million", "output_price_per_million", "cost_per_question",
               *(f"{prefix}{t}" for t in TASKS for prefix in ("", "nq_", "out_")))


def _csv(rows: list[dict]) -> bytes:
    return pd.DataFrame(rows).to_csv(index=False).encode()


def _body(cost_rows: list[dict]) -> dict[str, bytes]:
    table = _csv([{"model": m, TASKS[0]: 50 + i, TASKS[1]: 60} for i, m in enumerate(MODELS)])
    return {"table_2026_06_25.csv": table, "categories_2026_06_25.json": json.dumps({"coding": list(TASKS)}).encode(),
            "cost_2026_06_25.csv": _csv(cost_rows)}


def _valid(**changed: str) -> dict[str, str]:
    """A cost row of valid numbers ($5 and 100 questions of 500 output tokens per task), with `changed` fields."""
    row = {"input_price_per_million": "2", "output_price_per_million": "10", "cost_per_question": "0.05",
           **{f"{prefix}{t}": v for t in TASKS for prefix, v in (("", "5"), ("nq_", "100"), ("out_", "500"))}}
    return row | changed


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example([_valid(input_price_per_million="0")])  # input tokens = (...) / 0: inf without the NaN mapping
@example([_valid(**{f"out_{t}": "1e308" for t in TASKS})])  # each finite, the category's sum past float range
@given(st.lists(st.fixed_dictionaries({f: NUMBER for f in COST_FIELDS}), min_size=1, max_size=len(MODELS)))
def test_every_published_token_profile_and_cost_is_finite_or_nan(rows):
    cost_rows = [{"model": m, **{f: str(v) for f, v in row.items()}} for m, row in zip(MODELS, rows)]
    try:
        parsed = CONNECTORS["livebench"].parse(Payload("table_2026_06_25.csv", _body(cost_rows)))
    except IngestError as exc:  # e.g. the price column empty: one line naming the file
        assert "\n" not in str(exc)
        return
    scores = parsed["benchmark_scores"]
    profile = scores[list(TASK_COST_COLUMNS)].astype(float).to_numpy()
    assert not np.isinf(profile).any(), scores[list(TASK_COST_COLUMNS)]
    profiles = benchmark_profiles(sorted(scores["benchmark"].unique()), scores)
    assert not np.isinf(profiles.to_numpy()).any()
    prices = pd.DataFrame({"input_usd_per_mtok": [0.5, 10.0], "output_usd_per_mtok": [1.5, 30.0]}, index=["a", "b"])
    assert not np.isinf(cell_costs(profiles, prices).to_numpy()).any()
