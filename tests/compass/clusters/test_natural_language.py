"""English descriptions -> archetypes through an OpenAI-compatible endpoint (a fake one on 127.0.0.1)."""

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from compass.clusters.archetype import ArchetypeError
from compass.clusters.natural_language import NaturalLanguageError, archetype_from_description, parse_reply

GOOD = ('Archetype JSON: {\n "n_clusters": 7,\n "dim": 10,\n "n_samples": 700,\n "max_overlap": 0.2,\n'
        ' "min_overlap": 0.1,\n "distributions": ["normal", "exponential"],\n}')


@pytest.fixture
def server():
    """A chat-completions endpoint whose reply content is set per test; it records the requests."""
    state = {"content": GOOD, "requests": [], "raw": None}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state["requests"].append((self.path, self.headers.get("Authorization"), body))
            payload = state["raw"] or json.dumps({"choices": [{"message": {"content": state["content"]}}]})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(payload.encode())

        def log_message(self, *args):
            pass

    httpd = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", state
    httpd.shutdown()


def test_translation_is_cached_and_reused_offline(tmp_path, server):
    url, state = server
    path = tmp_path / "seven_overlapping_10d.txt"
    path.write_text("seven clusters in 10D with very different shapes and significant overlap\n")
    a = archetype_from_description(path, url, "fake-model", "k3y")
    assert (a.name, a.n_clusters, a.dim, a.max_overlap, a.min_overlap) == ("seven_overlapping_10d", 7, 10, 0.2, 0.1)
    assert a.aspect_ref == 1.5 and a.imbalance_ratio == 2.0  # the rest from the Table 5.1 defaults
    route, auth, body = state["requests"][0]
    assert route == "/v1/chat/completions" and auth == "Bearer k3y" and body["model"] == "fake-model"
    prompt = body["messages"][0]["content"]
    assert prompt.rstrip().endswith("Archetype JSON:")
    assert "seven clusters in 10D" in prompt and "ONLY include the Pareto" in prompt
    cache = json.loads((tmp_path / "seven_overlapping_10d.txt.json").read_text())
    assert cache["archetype"]["n_clusters"] == 7
    # offline: no endpoint, same description -> the cache; no new request
    assert archetype_from_description(path) == a and len(state["requests"]) == 1
    # an edited description is translated again
    path.write_text("three clusters\n")
    state["content"] = '{"n_clusters": 3}'
    assert archetype_from_description(path, url, "fake-model").n_clusters == 3 and len(state["requests"]) == 2


def test_no_endpoint_and_no_cache_says_to_write_yaml(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text("four clusters")
    with pytest.raises(NaturalLanguageError, match=r"d\.txt: no cached translation.*write the archetype as YAML"):
        archetype_from_description(path)


@pytest.mark.parametrize("content,raw,error,words", [
    ("I cannot help with that.", None, NaturalLanguageError, "no JSON object"),
    ('{"n_clusters": 3, "dim": }', None, NaturalLanguageError, "not valid JSON"),
    ('{"n_clusters": 3, "min_overlap": 0.5, "max_overlap": 0.1}', None, ArchetypeError, "'min_overlap' = 0.5"),
    ('{"n_clusters": 3, "distributions": ["cauchy"]}', None, ArchetypeError, "'cauchy'"),
    ("", '{"error": "rate limited"}', NaturalLanguageError, "sent no chat completion"),
    ("", "<html>502</html>", NaturalLanguageError, "sent no chat completion"),
])
def test_a_malformed_reply_is_a_clear_error_and_nothing_is_cached(tmp_path, server, content, raw, error, words):
    url, state = server
    state["content"], state["raw"] = content, raw
    path = tmp_path / "x.txt"
    path.write_text("three clusters")
    with pytest.raises(error, match="x.txt") as err:
        archetype_from_description(path, url, "m")
    assert words in str(err.value)
    assert not (tmp_path / "x.txt.json").exists()


def test_unreachable_endpoint(tmp_path):
    path = tmp_path / "y.txt"
    path.write_text("three clusters")
    with pytest.raises(NaturalLanguageError, match="failed"):
        archetype_from_description(path, "http://127.0.0.1:9/v1", "m", timeout=2)


def test_parse_reply_tolerates_fences_and_trailing_commas():
    assert parse_reply('```json\n{"n_clusters": 5, "dim": 2,}\n```', "s") == {"n_clusters": 5, "dim": 2}
