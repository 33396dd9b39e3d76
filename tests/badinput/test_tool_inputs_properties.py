"""Property-based tests of the files the tools read (issue 43): cluster archetypes (YAML and English descriptions
translated by an endpoint), the answers CSV of `compass match` and the query files of `compass route`. Any generated file is either accepted, with its numbers finite and its sizes within
the stated bounds, or rejected with one error of the tool's kind naming the file and the key, never another
exception (a traceback)."""

import json
import math
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compass.clusters.archetype import MAX_COUNTS, Archetype, ArchetypeError
from compass.clusters.describe import sample_hyperparams
from compass.clusters.natural_language import archetype_from_description
from compass.ingest.errors import IngestError
from pipelines.route_cli import QueryFileError, read_queries
from resources.matching import answers, priced_pool

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
NUMBER = st.one_of(st.integers(-10**12, 10**12), st.floats(allow_nan=True, allow_infinity=True),
                   st.sampled_from([0, 1, 2, 3, 500, 5_000_000, 0.5, "many", None, True, [1]]))
ARCHETYPE_KEYS = ["n_clusters", "dim", "n_samples", "max_epoch", "n_restarts", "scale", "learning_rate", "packing",
                  "tol", "max_overlap", "min_overlap", "aspect_ref", "distribution_proportions"]


def _accepted_within_bounds(a: Archetype) -> None:
    assert all(1 <= getattr(a, key) <= most for key, most in MAX_COUNTS.items())
    numbers = [a.scale, a.learning_rate, a.packing, a.tol, a.max_overlap, a.min_overlap, *(a.distribution_proportions or ())]
    assert all(math.isfinite(x) for x in numbers), a


@SETTINGS
@given(st.dictionaries(st.sampled_from(ARCHETYPE_KEYS), NUMBER, max_size=4), st.sampled_from([b"", b"# caf\xe9\n"]))
@example({"n_clusters": 5_000_000, "n_samples": 5_000_000}, b"")  # issue 43: 22.7 TiB asked for after ~100 s
@example({"n_clusters": 1000, "dim": 100, "n_samples": 5000}, b"")  # each count in bounds, their pairs not
@example({"scale": float("inf")}, b"")
@example({"n_clusters": float("inf")}, b"")  # an OverflowError in the whole-number check
@example({}, b"# caf\xe9\n")  # issue 43: UnicodeDecodeError
def test_an_archetype_file_is_accepted_within_bounds_or_rejected_in_one_line_naming_the_key(tmp_path_factory, spec,
                                                                                              tail):
    path = tmp_path_factory.mktemp("archetype") / "a.yaml"
    path.write_bytes(yaml.safe_dump({"n_samples": 600, **spec}).encode() + tail)
    try:
        archetype = Archetype.from_yaml(path)
    except ArchetypeError as exc:
        assert str(exc).startswith(f"{path}: key ") and "\n" not in str(exc) and exc.key, str(exc)
        return
    _accepted_within_bounds(archetype)


@pytest.fixture(scope="module")
def endpoint():
    """A chat-completions endpoint answering the body set in `reply[0]` (bytes) to every request."""
    reply = [b""]

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.end_headers()
            self.wfile.write(reply[0])

        def log_message(self, *args):
            pass

    httpd = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", reply
    httpd.shutdown()


def _chat(content: object) -> bytes:
    return json.dumps({"choices": [{"message": {"content": content}}]}).encode()


REPLIES = st.one_of(
    st.binary(max_size=40),
    st.builds(_chat, st.one_of(st.none(), st.integers(), st.text(max_size=30),
                               st.builds(lambda d: json.dumps(d), st.dictionaries(st.sampled_from(ARCHETYPE_KEYS),
                                                                                 NUMBER, max_size=3)))))


@settings(SETTINGS, max_examples=60)
@given(REPLIES)
@example(b"<html>502 Bad Gateway</html>")  # issue 43: NaturalLanguageError was no ArchetypeError: a traceback
@example(_chat(None))  # content null: an AttributeError in the reply parser
@example(b"\xff\xfe{}")  # not UTF-8
def test_a_description_is_translated_within_bounds_or_rejected_in_one_line_naming_the_file(tmp_path_factory, endpoint,
                                                                                              body):
    url, reply = endpoint
    reply[0] = body
    path = tmp_path_factory.mktemp("description") / "d.txt"
    path.write_text("three round clusters")
    try:
        archetype = archetype_from_description(path, url, "m", timeout=5)
    except ArchetypeError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc), str(exc)
        return
    _accepted_within_bounds(archetype)


def test_a_description_without_cache_or_endpoint_is_a_bad_archetype(tmp_path):
    """Issue 43: NaturalLanguageError was a ValueError, so `compass clusters` printed a traceback."""
    path = tmp_path / "d.txt"
    path.write_bytes(b"four clusters")
    with pytest.raises(ArchetypeError, match="no language-model endpoint"):
        archetype_from_description(path)
    path.write_bytes(b"caf\xe9 clusters")
    with pytest.raises(ArchetypeError, match=r"d\.txt: line 1: not valid UTF-8"):
        archetype_from_description(path)


def test_archetypes_sampled_around_one_outside_the_sampling_bounds_are_drawn_at_once():
    """`compass clusters sample` redrew Poisson(n_clusters) until inside [1, 30]: forever for n_clusters = 100."""
    class Draws:  # a generator that gives up after 1000 draws
        def __init__(self):
            self.rng, self.count = np.random.default_rng(0), 0

        def poisson(self, lam):
            self.count += 1
            assert self.count < 1000, "the redraw loop does not end"
            return self.rng.poisson(lam)

    variants = sample_hyperparams(Archetype(n_clusters=100, dim=60, n_samples=100_000), 5, Draws())
    assert all(v.n_clusters <= 30 and v.dim <= 50 and v.n_samples <= 1000 * v.n_clusters for v in variants)


CELL = st.one_of(st.sampled_from(["", " ", "gpt-4o", "o1", "hi", "nan", "inf", "-1", "1e9", "cheap", "2.5"]),
                 st.text(max_size=4))


@SETTINGS
@given(st.lists(st.tuples(*[CELL] * 5), min_size=1, max_size=4), st.booleans())
@example([("hi", "gpt-4o", "hello", "1", "2"), ("hi", "", "yo", "1", "2")], False)  # issue 43: TypeError in sorted
@example([("hi", "gpt-4o", "hello", "1", "2"), ("hi", "o1", "yo", "cheap", "2")], True)  # ValueError in parse_value
def test_an_answers_csv_is_priced_or_rejected_in_one_line_naming_its_cell(tmp_path_factory, rows, priced):
    """`compass match --pool FILE.csv`: prompt, model, response (and prices) per row."""
    columns = ["prompt", "model", "response", "input_price", "output_price"][:5 if priced else 3]
    path = tmp_path_factory.mktemp("answers") / "answers.csv"
    pd.DataFrame([r[:len(columns)] for r in rows], columns=columns).to_csv(path, index=False)
    try:
        pool, unpriced = priced_pool(answers(path), "mine")
    except IngestError as exc:
        assert exc.file == str(path) and exc.column in columns and exc.row is not None and "\n" not in str(exc), str(exc)
        return
    prices = np.concatenate([pool.price_in, pool.price_out])
    assert np.isfinite(prices).all() and (prices >= 0).all() and len(unpriced) + pool.size >= 1


EMBEDDING = st.one_of(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=4).map(json.dumps),
                      st.sampled_from(["[[0.1, 0.2, 0.3]]", "[0.1, 0.2, 0.3]", "0.5", "[0.1, oops]", "[]", "{}", "[1e999]"]))


@SETTINGS
@given(st.lists(EMBEDDING, min_size=1, max_size=3))
@example(["[NaN]"])  # issue 43: a NaN embedding of any length was routed
@example(["[0.1, 0.2, 0.3]", "[0.1, 0.2]"])  # one number short of the router's three
def test_a_query_file_holds_finite_embeddings_of_the_routers_length_or_is_rejected_naming_its_row(tmp_path_factory, cells):
    """`compass route --queries FILE.csv` for a router fitted on 3-number embeddings."""
    path = tmp_path_factory.mktemp("queries") / "queries.csv"
    pd.DataFrame({"embedding": cells}).to_csv(path, index=False)
    try:
        queries = read_queries(path, "pca", 3)
    except QueryFileError as exc:
        assert str(exc).startswith(f"{path}: ") and "\n" not in str(exc), str(exc)
        assert "column embedding" in str(exc) or "no queries" in str(exc) or "blank" in str(exc), str(exc)
        return
    assert all(v.shape == (3,) and np.isfinite(v).all() for v in queries["embedding"])
