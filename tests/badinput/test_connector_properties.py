"""Property-based: every connector's body with any value in its rows' fields (issue 43). Whatever a field holds (null,
NaN, ±inf, huge, negative, text, a list, a mapping) and in however many rows, `parse` either returns tables whose
numbers are finite and inside their column's stated range, with every unreadable row counted, or raises one
IngestError (TooManyBadRows past MAX_BAD_SHARE) naming the connector and the field: never another exception."""

import json

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compass.ingest.connectors import CONNECTORS, Payload
from compass.ingest.connectors.base import TooManyBadRows
from compass.ingest.errors import IngestError
from compass.ingest.validate import RANGES
from tests.live.test_bad_rows import CASES, NAMES, _files

SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30), st.floats(allow_nan=True, allow_infinity=True),
                   st.text(max_size=6), st.sampled_from(["nan", "inf", "-1", "1e400", "cheap", ""]))
VALUE = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=2),
                                                     st.dictionaries(st.text(max_size=3), inner, max_size=2)),
                     max_leaves=3)


def _text(value) -> str:
    """A generated value as the YAML/CSV text a text format would carry."""
    return json.dumps(value, allow_nan=True) if not isinstance(value, str) else value


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(CASES)), st.sets(st.integers(0, len(NAMES) - 1), min_size=1), VALUE)
def test_a_connector_keeps_good_rows_or_fails_in_one_line_whatever_a_field_holds(connector, bad, value):
    main, make, _, _, _ = CASES[connector]
    text_format = connector in ("aider_polyglot", "livebench")
    if text_format and not isinstance(value, (str, int, float, type(None))):
        value = _text(value)
    try:
        body = make(bad, _text(value).replace(",", ";").replace("\n", " ") if text_format else value)
    except (TypeError, ValueError):  # not JSON-serializable by the body maker (e.g. a NaN key): not a body upstream can send
        return
    try:
        parsed = CONNECTORS[connector].parse(Payload(main, _files(main, body)))
    except TooManyBadRows as exc:
        assert connector in str(exc) and "\n" not in str(exc)
        return
    except IngestError as exc:  # a body that is not the connector's format at all
        assert "\n" not in str(exc)
        return
    for table, frame in parsed.items():
        for column, (low, high) in RANGES.get(table, {}).items():
            if column in frame:
                values = pd.to_numeric(frame[column], errors="coerce").dropna().to_numpy(float)
                assert np.isfinite(values).all() and (values >= low).all() and (values <= high).all(), (table, column)
        if "score" in frame:
            assert np.isfinite(pd.to_numeric(frame["score"], errors="coerce").dropna()).all()
