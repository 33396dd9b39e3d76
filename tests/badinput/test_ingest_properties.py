"""Property-based tests of the CSV and Parquet ingest (issue 17): any generated file is either accepted and
round-trips (values as written, model names canonical) or rejected with an IngestError naming the file."""

from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compass.ingest.errors import IngestError
from compass.ingest.ingest import ingest_table
from compass.ingest.load import SourceFile

MODELS = ["gpt-4o", "claude-3-5-sonnet"]
LOOKUP = {m: m for m in MODELS}
# Scores: anything a file might hold, in range or not, text or not.
CELL = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=6),
                 st.sampled_from(["", "nan", "inf", "-0", "1e-3", "0.5", " 0.7 "]))
ROW = st.tuples(st.sampled_from([*MODELS, "unknown-model"]), st.text(min_size=0, max_size=8), CELL)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _check(path: Path, rows: list[tuple]) -> None:
    try:
        frame = ingest_table("benchmark_scores", [SourceFile("benchmark_scores", path)], LOOKUP)
    except IngestError as exc:
        assert exc.file == str(path) and str(exc).startswith(str(path))
        return
    # accepted: every row kept (keys unique), known models, finite fractions as written
    assert len(frame) == len(rows)
    assert set(frame["model_id"]) <= set(MODELS)
    scores = frame["score"].to_numpy(dtype=float)
    assert np.isfinite(scores).all() and ((scores >= 0) & (scores <= 1)).all()
    written = pd.to_numeric(pd.Series([str(r[2]).strip() for r in rows]), errors="coerce").to_numpy(dtype=float)
    np.testing.assert_allclose(np.sort(scores), np.sort(written), rtol=1e-12)


@SETTINGS
@given(st.lists(ROW, min_size=1, max_size=6))
def test_csv_ingest_accepts_and_round_trips_or_rejects_cleanly(tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("csv") / "scores.csv"
    pd.DataFrame(rows, columns=["model_id", "benchmark", "score"]).to_csv(path, index=False)
    _check(path, rows)


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from([*MODELS, "unknown-model"]), st.text(min_size=1, max_size=8),
                          st.floats(allow_nan=True, allow_infinity=True)), min_size=1, max_size=6))
def test_parquet_ingest_accepts_and_round_trips_or_rejects_cleanly(tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("pq") / "scores.parquet"
    pd.DataFrame(rows, columns=["model_id", "benchmark", "score"]).to_parquet(path, index=False)
    _check(path, rows)
