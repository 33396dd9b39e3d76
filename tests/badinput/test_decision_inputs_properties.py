"""Property-based tests of the inputs issues 42 and 48 added (a scenario's `tolerance`, measure references, workload,
monthly budget, task axes and attribute filters, a case's coverage rule and `anchors`, the name-pair and review-pair
fixtures): any generated file is either accepted or rejected with one
IngestError whose message starts with the file and names the key, never another exception (a traceback)."""

import math
from pathlib import Path

import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compass.ingest.errors import IngestError
from compass.ingest.name_pairs import read_pairs
from compass.ingest.review_pairs import read_review_pairs
from compass.mlcompass.case_study import CaseStudy
from compass.mlcompass.scenarios import Scenario

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# Any value a YAML file can hold: scalars of every kind (NaN, ±inf, huge, negative, text), lists and mappings.
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30), st.floats(allow_nan=True, allow_infinity=True),
                   st.text(max_size=8), st.sampled_from(["+", "-", "coverage", "fixed", ".nan", "C1", "general"]))
VALUE = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                     st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                     max_leaves=6)
BENCHMARK_KEYS = ["choose_by", "current_days", "min_current_coverage", "min_bridging", "max_imputed_share", "sources",
                  "min_models_per_benchmark", "min_benchmarks_per_model", "min_benchmarks_to_rank", "include", "exclude"]


def _rejected_cleanly(exc: IngestError, path: Path) -> None:
    assert exc.file == str(path) and str(exc).startswith(str(path)) and "\n" not in str(exc)


SCENARIO_KEYS = ["tolerance", "floors", "raw_floors", "context_weights", "aggregation", "utility", "lam", "budget",
                 "filters", "workload", "budget_usd_per_month", "axes", "axis_floors", "min_context", "max_latency_s",
                 "providers", "modalities", "tools"]


@SETTINGS
@given(st.dictionaries(st.sampled_from(SCENARIO_KEYS), VALUE, min_size=1, max_size=3), st.sampled_from([b"", b"# caf\xe9"]))
@example({"lam": float("inf")}, b"")  # issue 43: accepted, then `argmin of an empty sequence` in the CLI
@example({"floors": {"C1": float("nan")}}, b"")  # issue 43: accepted and silently ignored
@example({"floors": [1, 2]}, b"")  # issue 43: AttributeError
@example({"floors": "abc"}, b"")  # issue 43: AttributeError
@example({"context_weights": 5}, b"")  # issue 43: AttributeError
@example({"lam": "low"}, b"# caf\xe9")  # issue 43: UnicodeDecodeError
@example({"floors": {"\n": None}}, b"")  # a line break in a key made the error two lines
@example({"workload": {"input_tokens": float("inf"), "output_tokens": 1}}, b"")  # issue 48: infinite tokens
@example({"workload": {"input_tokens": 800, "output_tokens": 300}}, b"")  # issue 48: accepted, no monthly volume
@example({"workload": {"input_tokens": 10**400, "output_tokens": 1}}, b"")  # issue 48: too large for a float
@example({"workload": {"input_tokens": 1, "output_tokens": 1, "requests_per_month": 9},
          "budget_usd_per_month": float("nan")}, b"")  # issue 48: a NaN budget
@example({"axes": {"coding": float("nan")}}, b"")  # issue 48: a NaN axis weight
@example({"axis_floors": {"coding": float("inf")}}, b"")  # issue 48: an infinite axis floor
@example({"axes": {"cooking": 1}}, b"")  # issue 48: an unknown axis
@example({"max_latency_s": float("nan")}, b"")  # issue 48: a NaN latency bound
@example({"min_context": 10**400}, b"")  # issue 48: a context too large for a float
@example({"modalities": "text"}, b"")  # issue 48: not a list
@example({"tools": False, "min_context": 1000, "filters": {"min_context_window": 2000}}, b"")  # both spellings
def test_a_scenario_file_is_accepted_with_finite_numbers_or_rejected_in_one_line_naming_the_key(tmp_path_factory, keys,
                                                                                                 tail):
    path = tmp_path_factory.mktemp("scenario") / "s.yaml"
    path.write_bytes(yaml.safe_dump({"name": "s", **keys}).encode() + tail)
    try:
        scenario = Scenario.from_yaml(path)
    except IngestError as exc:
        _rejected_cleanly(exc, path)
        assert exc.column is not None or exc.row is not None, str(exc)  # the key (or the line) is named
        return
    numbers = [scenario.budget, *scenario.floors.values(), *scenario.raw_floors.values(),
               *(scenario.context_weights or {}).values(), *([] if isinstance(scenario.lam, str) else [scenario.lam]),
               *(v for v in (vars(scenario.workload).values() if scenario.workload else []) if v is not None),
               *([scenario.budget_usd_per_month] if scenario.budget_usd_per_month is not None else []),
               *(scenario.axes or {}).values(), *scenario.axis_floors.values(),
               *(v for v in (scenario.filters or {}).values() if isinstance(v, (int, float)) and not isinstance(v, bool))]
    assert all(math.isfinite(x) for x in numbers), scenario


@SETTINGS
@given(st.dictionaries(st.sampled_from(BENCHMARK_KEYS), VALUE, max_size=3), VALUE)
def test_a_case_files_rule_and_anchors_are_accepted_or_rejected_in_one_line(tmp_path_factory, rule, anchors):
    path = tmp_path_factory.mktemp("case") / "c.yaml"
    path.write_text(yaml.safe_dump({"case_id": "c", "benchmarks": {"choose_by": "coverage", **rule}, "anchors": anchors,
                                    "cost": {"table": "models", "column": "params_b"}}))
    try:
        CaseStudy.from_yaml(path)
    except IngestError as exc:
        _rejected_cleanly(exc, path)


@SETTINGS
@given(st.lists(st.tuples(*[st.text(max_size=6)] * 4, st.one_of(st.sampled_from(["0", "1"]), st.text(max_size=3)),
                          st.text(max_size=4)), max_size=4))
def test_a_name_pair_fixture_is_accepted_or_rejected_in_one_line(rows):
    _pairs_accepted_or_one_line(read_pairs, "name_a,source_a,name_b,source_b,same_model,note", rows)


@SETTINGS
@given(st.lists(st.tuples(*[st.text(max_size=6)] * 3, st.one_of(st.sampled_from(["0", "1"]), st.text(max_size=3)),
                          st.text(max_size=4)), max_size=4))
def test_a_review_pair_fixture_is_accepted_or_rejected_in_one_line(rows):
    """Issue 48 item 4: the labelled review-queue pairs."""
    _pairs_accepted_or_one_line(read_review_pairs, "name,source,candidate,same_model,note", rows)


def _pairs_accepted_or_one_line(reader, header: str, rows: list[tuple]) -> None:
    text = header + "\n" + "".join(",".join('"' + c.replace('"', '""') + '"' for c in r) + "\n" for r in rows)
    try:
        pairs = reader(text, "pairs.csv")
    except IngestError as exc:
        assert exc.file == "pairs.csv" and str(exc).startswith("pairs.csv") and "\n" not in str(exc)
        return
    assert set(pairs["same_model"]) <= {0, 1}


@SETTINGS
@given(VALUE)
def test_a_case_files_benchmarks_section_of_any_kind_is_accepted_or_rejected_in_one_line(tmp_path_factory, section):
    path = tmp_path_factory.mktemp("case") / "c.yaml"
    path.write_text(yaml.safe_dump({"case_id": "c", "benchmarks": section, "cost": {"table": "models", "column": "params_b"}}))
    try:
        CaseStudy.from_yaml(path)
    except IngestError as exc:
        _rejected_cleanly(exc, path)
