"""Archetypes from English descriptions (thesis ch. 5, §5.3 "Generating Archetypes from Natural Language").

The few-shot prompt of App. 4F (`prompts/archetype.txt`, from the thesis text) is sent to any
OpenAI-compatible chat-completions endpoint the user configures (base URL, model, key); the reply's JSON
is merged onto the Table 5.1 defaults and validated like a YAML archetype. The translation is cached
as `<description>.json` next to the description file, with the description it translates: a run is
reproducible and works offline once cached, and an edited description is translated again. Standard
library HTTP (urllib) only. The thesis also asks the model for the archetype's identifier (its second
prompt); here the description file's name is the identifier, as YAML archetypes' are.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path

from compass.clusters.archetype import Archetype, ArchetypeError
from compass.ingest.errors import IngestError, utf8_text

PROMPT_FILE = Path(__file__).with_name("prompts") / "archetype.txt"


class NaturalLanguageError(ArchetypeError):
    """The description could not be turned into an archetype (no endpoint, a failing one, a reply without JSON): a
    bad archetype like any other, one line naming the file (`source`) and saying why."""

    def __init__(self, source: str, message: str):
        self.source, self.key, self.value = source, "<description>", None
        ValueError.__init__(self, f"{source}: {message}")


def prompt(description: str) -> str:
    """The App. 4F few-shot prompt with the description filled in (header comment lines dropped)."""
    text = "\n".join(line for line in PROMPT_FILE.read_text().splitlines() if not line.startswith("#"))
    return text.replace("{description}", description.strip())


def parse_reply(content: str, source: str) -> dict:
    """The JSON object in a model reply (code fences and trailing commas, as in the few-shot examples, are
    tolerated); anything else is a NaturalLanguageError quoting the start of the reply."""
    start, end = content.find("{"), content.rfind("}")
    if start < 0 or end < start:
        raise NaturalLanguageError(source, f"the model's reply holds no JSON object: {content[:200]!r}")
    body = re.sub(r",\s*([}\]])", r"\1", content[start:end + 1])
    try:
        spec = json.loads(body)
    except json.JSONDecodeError as err:
        raise NaturalLanguageError(source, f"the model's reply is not valid JSON ({err.msg}): {content[:200]!r}") from err
    if not isinstance(spec, dict):
        raise NaturalLanguageError(source, f"the model's reply is not a JSON object: {content[:200]!r}")
    return spec


def complete(text: str, base_url: str, model: str, api_key: str | None, timeout: float = 60.0) -> str:
    """One chat completion (temperature 0) from an OpenAI-compatible endpoint: the message content."""
    body = json.dumps({"model": model, "temperature": 0, "messages": [{"role": "user", "content": text}]}).encode()
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {api_key}"} if api_key else {})}
    request = urllib.request.Request(base_url.rstrip("/") + "/chat/completions", data=body, headers=headers)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        reply = json.loads(response.read().decode())
    content = reply["choices"][0]["message"]["content"]
    if not isinstance(content, str):
        raise TypeError(f"the message content is {type(content).__name__}, not text")
    return content


def archetype_from_description(path: str | Path, base_url: str | None = None, model: str | None = None,
                               api_key: str | None = None, timeout: float = 60.0) -> Archetype:
    """The archetype a description file asks for: from its cache when the cache translates this very text,
    else from the endpoint (then cached). Named after the file; errors name the file."""
    path = Path(path)
    description = _text(path)
    cache = path.with_suffix(path.suffix + ".json")
    source = str(path)
    if cache.exists():
        try:
            cached = json.loads(cache.read_bytes())
        except ValueError as err:  # not JSON, not UTF-8
            raise NaturalLanguageError(str(cache), f"unreadable cached translation ({err}); delete it") from None
        if isinstance(cached, dict) and cached.get("description") == description:
            return _archetype(cached.get("archetype"), path, source)
    if not base_url or not model:
        raise NaturalLanguageError(
            source, "no cached translation of this description and no language-model endpoint configured "
            "(set COMPASS_LLM_BASE_URL and COMPASS_LLM_MODEL, and COMPASS_LLM_API_KEY if it needs one), "
            f"or write the archetype as YAML instead ({path.stem}.yaml with the Table 5.1 keys)")
    try:
        content = complete(prompt(description), base_url, model, api_key, timeout)
    except (urllib.error.URLError, TimeoutError, OSError) as err:
        raise NaturalLanguageError(source, f"the endpoint {base_url} failed: {err}") from err
    except (KeyError, IndexError, TypeError, ValueError) as err:  # ValueError: not JSON, not UTF-8
        raise NaturalLanguageError(source, f"the endpoint {base_url} sent no chat completion: {err!r}") from err
    spec = parse_reply(content, source)
    archetype = _archetype(spec, path, source)
    cache.write_text(json.dumps({"description": description, "model": model, "archetype": spec, "reply": content},
                                indent=1))
    return archetype


def _text(path: Path) -> str:
    """The description, stripped; not UTF-8 text is a NaturalLanguageError naming the file and line."""
    try:
        return utf8_text(path.read_bytes(), str(path)).strip()
    except IngestError as err:
        raise NaturalLanguageError(str(path), f"line {err.row}: {err.reason}") from None


def _archetype(spec: object, path: Path, source: str) -> Archetype:
    if not isinstance(spec, dict):
        raise ArchetypeError(source, "<root>", spec, "the translation is not a mapping of archetype parameters")
    spec = {k: v for k, v in spec.items() if k != "name"}
    return Archetype.from_dict({**spec, "name": path.stem, "description": _text(path)}, source)
