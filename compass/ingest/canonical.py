"""Canonical model ids: the rules that turn an upstream spelling into one id (default data and pipeline).

Rules (applied to `compass.ingest.aliases.alias_key(raw)`, so the canonical id is a
function of the lookup key and two spellings with the same key can never map to
two different ids):

1. Packaging suffixes are dropped: `_5shots` (MMLU-Pro files), `@together`,
   ` (n=1)` (LiveCodeBench), `-hf`, `-bf16`/`-fp8`, `-web-app`,
   `-instruct-turbo` -> `-instruct` (Together serving names), a leading `amazon.`
   / `c4ai-` / `meta-` / `nvidia-` (before `llama`) and `-v1:0` / `-v1.0` version tags. `-latest` is dropped only
   from versioned names (`gemini-1.5-pro-latest`, `claude-3-5-sonnet-latest`);
   unversioned moving aliases (`gemini-pro-latest`, `mistral-large-latest`,
   `qwen-plus-latest`) point at whatever is newest and keep their own id.
2. Reasoning-effort and thinking-budget variants collapse to the base model, and `variant(raw)` returns the
   level and mode as data (`Variant.effort`), so they are a column, not a model:
   * everywhere: `-<level>-effort` (`-max-effort`, `-xhigh-effort`, `-thinking-64k-high-effort`), the levels no
     model is named by (`-xhigh`, `-high`, `-low`, `-minimal`, `-none`: Epoch's `kimi-k3_high`, `qwen3-32b_none`;
     `-no-thinking`: LMArena's `qwen3-235b-a22b-no-thinking`),
     Aider's `(high)`, `(32k thinking tokens)`, `(no think)`, `(default)` and Epoch's `(16K thinking)`;
   * `-medium`, `-unknown` and `-max` only in families where they are effort levels (Claude, Gemini, DeepSeek,
     GLM, GPT, o-series, Grok, Kimi, Inkling, Muse, Gemma): `mistral-medium`, `phi-3-medium`, `qwen3.8-max`,
     `qwen-vl-max`, `ox-alpha-max` keep their names, and so does Codex `-max` (`gpt-5.1-codex-max` is a model);
   * `-thinking`, `-highthinking` and budgets `_32K` only where they are a serving *mode* of
     the same weights (Claude, Gemini, DeepSeek, GLM, GPT, o-series, Grok), plus Claude's `-base` (LiveBench's
     thinking off). Kimi / Qwen / OLMo `-thinking` checkpoints are separate weights and keep their own id, as
     does `minimax-m1-80k`.
3. Dated snapshot spellings collapse to the base id: `-2024-08-06`, `-20240620`,
   `-0613` (MMDD), `-05-06` (MM-DD), `-09-2025` (MM-YYYY), `-01-29-2025`,
   Gemini `-001`/`-002` and Gemini `-preview`. YYMM version tags such as
   `mistral-large-2407` or `qwen3-...-2507` are *kept* (different models). `Variant.snapshot` keeps the tag.
   Exception, `DATED_GENERATIONS`: families whose vendor named successive releases by their date, which one
   source scores side by side as different models (LMArena's `qwen-max-0428` / `qwen-max-0919`,
   `gemini-exp-1114` / `-1121` / `-1206`; DeepSeek's `deepseek-r1-0528`): the date is part of the id, written
   MMDD (`qwen-plus-2025-01-25` and `qwen-plus-0125` are one model). API pins of one continuing product
   (`gpt-4o-2024-08-06`, `claude-3-5-sonnet-20241022`, `gemini-1.5-pro-002`, previews of a GA model) still
   collapse: the sources that name the product undated mean its current pin, and within a source the undated
   or newest pin is the one kept (`compass.ingest.resolve.dedupe_scores`).
4. Family spellings are unified: `llama3.1` -> `llama-3.1`, `llama-3-1-70b`
   (MMLU-Pro's `3_1`) -> `llama-3.1-70b`, `qwen-1.5` -> `qwen1.5`, `qwen2-5` / `qwen25` -> `qwen2.5`,
   `gemini-3-1-pro` -> `gemini-3.1-pro`, `deepseek-3.2` -> `deepseek-v3.2`, Claude dots ->
   dashes and Claude >= 4 in new order (`claude-4-1-opus` -> `claude-opus-4-1`).
5. A short explicit override table handles the remaining source-specific names
   (LiveCodeBench abbreviations, the cascades' `qwen2.5-32b-coder-instruct`, ...).

`canonical_id` is idempotent (checked by the build), so `alias_key(model_id)` of a
canonical id always resolves to itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from compass.ingest.aliases import alias_key

# Overrides keyed by the alias_key of the *raw* spelling. rational-llm-cascades calls
# the Llama chain `llama3.1-70b` etc. but queries the instruct models through an API
# (Zellinger & Thomson 2025, Sec. 5), whereas MMLU-Pro's `Meta-Llama-3_1-70B` is the
# base checkpoint; the raw cascades spelling is therefore pinned to the instruct id.
# Dated snapshots that a per-query source (LiveCodeBench) evaluates side by side are
# kept as their own ids instead of collapsing to the base id (rule 3 exception).
PINNED_SNAPSHOTS = ("gpt-3.5-turbo-0301", "gpt-3.5-turbo-0125", "gpt-4-1106-preview", "gpt-4-turbo-2024-04-09")
RAW_OVERRIDES: dict[str, str] = {
    **{
        f"llama{v}-{s}": f"llama-{v}-{s}-instruct"
        for v, s in (("3.2", "1b"), ("3.2", "3b"), ("3.1", "8b"), ("3.1", "70b"), ("3.1", "405b"))
    },
    **{snapshot: snapshot for snapshot in PINNED_SNAPSHOTS},
    # Gemini 2.0's thinking model was a separate experimental release, not a mode of gemini-2.0-flash.
    "gemini-2.0-flash-thinking": "gemini-2.0-flash-thinking-exp",
}

# Rule 3's exception: base id, then a date tag (MMDD, MM-DD, YYYYMMDD or YYYY-MM-DD) naming a release.
DATED_GENERATIONS = re.compile(
    r"^(?:amazon-)?(?P<base>gemini-exp|gemini-2\.0-flash-thinking-exp|qwen-max|qwen-plus|qwen-turbo|qwen-vl-max|glm-4|"
    r"reka-core|reka-flash|hunyuan-turbos|nova-experimental-chat|deepseek-r1|deepseek-v3)-"
    r"(?:20\d\d-?)?(?P<mm>0[1-9]|1[0-2])-?(?P<dd>[0-3]\d)$")

# Overrides keyed by the alias_key *after* rule 1-4 normalisation.
OVERRIDES: dict[str, str] = {
    "qwen2.5-32b-coder-instruct": "qwen2.5-coder-32b-instruct",
    # LiveCodeBench abbreviations (model_repr) are mapped via their `model_name`;
    # these are the API / HF names that still differ from other sources.
    "databricks-dbrx-instruct": "dbrx-instruct",
    "command-r+": "command-r-plus",
    "qwen-1.5-72b-chat": "qwen1.5-72b-chat",
    "claude-2-0": "claude-2",
    "claude-instant-1-2": "claude-instant-1",
    "claude-instant-1-1": "claude-instant-1",
    "command-r-v01": "command-r",
    "command-r-plus-04-2024": "command-r-plus",
    "mathstral-7b": "mathstral-7b-v0.1",
    "mistral-large-2-2407": "mistral-large-2407",
    "mistral-large-2": "mistral-large-2407",
    "gpt-4.5-preview": "gpt-4.5",
    "deepseekv2-chat": "deepseek-v2-chat",
    "deepseek-v3p2": "deepseek-v3.2",
    "kimi-k2p5": "kimi-k2.5",
    "kimi-k2-instruct": "kimi-k2",
    "kimi-k2-0711-preview": "kimi-k2",
    "kimi-k2-0905-preview": "kimi-k2",
    "kimi-k2-instruct-0905": "kimi-k2",
    "llama-4-maverick-17b-128e-instruct": "llama-4-maverick",
    "llama-4-scout-17b-16e-instruct": "llama-4-scout",
    "llama-3.2-11b-vision-instruct": "llama-3.2-11b-instruct",
    "llama-3.2-90b-vision-instruct": "llama-3.2-90b-instruct",
    "open-mixtral-8x7b": "mixtral-8x7b-instruct-v0.1",
    "open-mixtral-8x22b": "mixtral-8x22b-instruct-v0.1",
    "open-mistral-nemo": "mistral-nemo-instruct-2407",
    "mistral-nemo-instruct": "mistral-nemo-instruct-2407",
    "open-mistral-7b": "mistral-7b-instruct-v0.1",
    "gemini-1.5-pro-001-feb24": "gemini-1.5-pro",
    "chatgpt-4o-latest": "chatgpt-4o",
    "grok-4.1": "grok-4-1",
    "grok-3-mini-beta": "grok-3-mini",
    "grok-3-beta": "grok-3",
    "grok-3-preview": "grok-3",
    "claude-opus-4-0": "claude-opus-4",
    "claude-sonnet-4-0": "claude-sonnet-4",
    "deepseek-v3-1": "deepseek-v3.1",
    "llama-3-8b-chat": "llama-3-8b-instruct",
    "llama-3-70b-chat": "llama-3-70b-instruct",
    "ministral-8b-instruct-2410": "ministral-8b-2410",
    "mistral-nemo": "mistral-nemo-instruct-2407",
    "open-mistral-nemo-2407": "mistral-nemo-instruct-2407",
    "llama-3.3-nemotron-49b-super-v1": "llama-3.3-nemotron-super-49b-v1",
    "pixtral-large-2411": "pixtral-large",
    "pixtral-12b": "pixtral-12b-2409",
    "llama-3.2-vision-11b-instruct": "llama-3.2-11b-instruct",
    "llama-3.2-vision-90b-instruct": "llama-3.2-90b-instruct",
    "gemini-pro": "gemini-1.0-pro",
    "grok-4.1-thinking": "grok-4-1",
}

_MODE_FAMILIES = ("claude", "gemini", "deepseek", "glm", "gpt", "grok", "o1", "o3", "o4")
# Families whose `-max` / `-medium` are effort levels (Epoch's `kimi-k3_max`, `inkling-small_medium`); elsewhere
# they name models (`qwen3.8-max`, `qwen-vl-max`, `mistral-medium`, `phi-3-medium`, `ox-alpha-max`).
_LEVEL_FAMILIES = (*_MODE_FAMILIES, "kimi", "inkling", "muse", "gemma")

EFFORT, SNAPSHOT, PACKAGING = "effort", "snapshot", "packaging"
_Rule = tuple[str, re.Pattern[str]]


def _rules(kind: str, *patterns: str) -> tuple[_Rule, ...]:
    return tuple((kind, re.compile(p)) for p in patterns)


_SUFFIX_RULES: tuple[_Rule, ...] = (
    *_rules(PACKAGING, r"-5shots$", r"@[a-z0-9_.\-]+$", r"-\(n=1\)$", r"-hf$", r"-(?:bf16|fp8)$", r"-web-?app$",
            r"-v1[.\-]0$"),
    # effort / thinking budget (rule 2): words no model is named by, in every family
    *_rules(EFFORT, r"-(?:thinking-auto-|thinking-\d+k-)?(?:x?high|medium|low|minimal|none|unknown|max)-effort$",
            r"-(?:x?high|low|minimal|none|nothinking|no-thinking)$", r"-\((?:x?high|medium|low|minimal|none|max)\)$",
            r"-\((?:\d+k-think(?:ing)?(?:-tokens)?|no-think(?:ing)?|default(?:-think)?)\)$"),
    # dated snapshots (rule 3)
    *_rules(SNAPSHOT, r"-20\d\d-\d\d-\d\d$", r"-20\d{6}$", r"-\d\d-\d\d-20\d\d$", r"-(?:0[1-9]|1[0-2])-20\d\d$",
            r"-(?:0[1-9]|1[0-2])-[0-3]\d$", r"-(?:0[1-9]|1[0-2])[0-3]\d$"),
)
# Effort levels that are model names outside _LEVEL_FAMILIES (rule 2).
_LEVEL_RULES = _rules(EFFORT, r"-(?:medium|unknown)$")
# Serving modes of the same weights, stripped only inside _MODE_FAMILIES (rule 2).
_MODE_RULES = _rules(EFFORT, r"-highthinking$", r"-thinking$", r"-\d+k$")
# Models without a thinking mode whose `-<N>k` suffix is a context window, a separate model.
_CONTEXT_SIZED = ("gpt-3.5", "gpt-4-")
# Claude's `-base` is LiveBench's thinking-off mode; elsewhere `-base` names a pre-trained checkpoint.
_CLAUDE_ONLY = _rules(EFFORT, r"-base$")
# `-max` effort (Epoch's `_max`, LiveBench's `gpt-5.6-sol-max`), except Codex, where `-max` is a model.
_MAX = _rules(EFFORT, r"-max$")
_GEMINI_RULES = _rules(SNAPSHOT, r"-00\d$", r"-preview$")


def _family_rules(key: str) -> tuple[_Rule, ...]:
    """The rules that apply to a spelling: the universal ones, then those of its family (rule 2)."""
    rules = list(_SUFFIX_RULES)
    if key.startswith(_LEVEL_FAMILIES):
        rules += _LEVEL_RULES
        if "codex" not in key:
            rules += _MAX
    if key.startswith(_MODE_FAMILIES):
        # GPT-3.5 / GPT-4's `-16k` / `-32k` are context-window models (`gpt-4-32k`, `gpt-3.5-turbo-16k`), not
        # thinking budgets: those models have no thinking mode.
        rules += [r for r in _MODE_RULES if not (key.startswith(_CONTEXT_SIZED) and r[1].pattern == r"-\d+k$")]
    if key.startswith("claude"):
        rules += _CLAUDE_ONLY
    if key.startswith("gemini"):
        rules += _GEMINI_RULES
    return tuple(rules)


def _strip_suffixes(key: str, stripped: list[tuple[str, str]] | None = None) -> str:
    """The key without its packaging, effort and snapshot suffixes; each removed (kind, suffix) is appended
    to `stripped` (outermost first)."""
    rules = _family_rules(key)
    changed = True
    while changed:
        before = key
        if key.endswith("-latest") and re.search(r"\d", key[: -len("-latest")]):
            key = key[: -len("-latest")]  # versioned `-latest` only; see rule 1
        for kind, rule in rules:
            found = rule.search(key)
            if found:
                if stripped is not None:
                    stripped.append((kind, found.group(0)))
                key = key[: found.start()]
        changed = key != before
    return key


def _family_spelling(key: str) -> str:
    key = re.sub(r"^(?:amazon\.|amazon-|c4ai-|(?:meta|nvidia)-(?=llama))", "", key)
    key = re.sub(r"^llama(\d)", r"llama-\1", key)
    key = re.sub(r"^llama-(\d)-(\d)-(\d+b)", r"llama-\1.\2-\3", key)
    key = re.sub(r"-instruct-turbo$", "-instruct", key)
    key = re.sub(r"^qwen-(\d(?:\.\d)?)-", r"qwen\1-", key)
    key = re.sub(r"^qwen(\d)-?(5)-", r"qwen\1.\2-", key)  # qwen2-5-, qwen25- (models.dev) -> qwen2.5-
    key = re.sub(r"^qwen(\d)-(\d)-", r"qwen\1.\2-", key)
    key = re.sub(r"^gemini-(\d)-(\d)-", r"gemini-\1.\2-", key)  # gemini-3-1-pro -> gemini-3.1-pro
    key = re.sub(r"^deepseek-(\d\.\d)(?=-|$)", r"deepseek-v\1", key)  # deepseek-3.2 -> deepseek-v3.2
    if key.startswith("claude"):
        key = key.replace(".", "-")
        key = re.sub(r"^claude-(\d)(-\d)?-(opus|sonnet|haiku)", _claude_new_order, key)
    return key


def _claude_new_order(m: re.Match[str]) -> str:
    major, minor, tier = m.group(1), m.group(2) or "", m.group(3)
    return f"claude-{tier}-{major}{minor}" if int(major) >= 4 else m.group(0)


def canonical_id(raw: str) -> str:
    """Canonical model id of a raw spelling (rules in the module docstring)."""
    return _resolve(raw, None)


def _resolve(raw: str, stripped: list[tuple[str, str]] | None) -> str:
    key = alias_key(raw)
    if not key:
        raise ValueError(f"empty model name {raw!r} cannot be given a canonical id")
    if key in RAW_OVERRIDES:
        return RAW_OVERRIDES[key]
    release = DATED_GENERATIONS.match(key)
    if release:  # rule 3's exception: the date names the model
        return f"{release['base']}-{release['mm']}{release['dd']}"
    for _ in range(3):
        before = key
        key = _family_spelling(_strip_suffixes(key, stripped))
        key = OVERRIDES.get(key, key)
        if key == before:
            break
    return key


@dataclass(frozen=True)
class Variant:
    """What a spelling says beyond its model (rule 2 and 3): the effort level / thinking mode and the snapshot.

    `effort` joins the level (`none` < `minimal` < `low` < `medium` < `high` < `xhigh` < `max`, or `unknown`)
    and the thinking mode (`thinking`, `thinking-auto`, `thinking-<N>k` budget, `no-thinking`) with `+`, e.g.
    `high+thinking-64k`; `snapshot` is the dated tag (`2025-02-19`, `0613`, `preview`); None when absent."""

    model_id: str
    effort: str | None
    snapshot: str | None


LEVELS = ("unknown", "none", "minimal", "low", "medium", "high", "xhigh", "max")  # effort levels, lowest first
_ISO_DATE = re.compile(r"^(20\d\d)(\d\d)(\d\d)$")


def _effort(suffixes: list[str]) -> str | None:
    words = [w for s in suffixes for w in re.split(r"[-()]+", s.replace("highthinking", "high-thinking")) if w]
    words = ["no-thinking" if w in ("nothinking", "base") else "thinking" if w == "think" else w
             for w in words if w not in ("effort", "no", "tokens", "default")]
    if any(re.search(r"no-?think", s) for s in suffixes):
        words = [w for w in words if w != "thinking"] + ["no-thinking"]
    level = next((w for w in words if w in LEVELS), None)
    budget = next((w for w in words if re.fullmatch(r"\d+k", w)), None)
    thinking = next((w for w in words if w in ("thinking", "no-thinking")), None)
    if budget or "auto" in words:
        thinking = f"thinking-{budget or 'auto'}"
    return "+".join(w for w in (level, thinking) if w) or None


def _snapshot(suffixes: list[str]) -> str | None:
    parts = [_ISO_DATE.sub(r"\1-\2-\3", s.lstrip("-")) for s in reversed(suffixes)]
    return "-".join(parts) or None


def variant(raw: str) -> Variant:
    """The canonical id of a spelling with its effort and snapshot (`claude-opus-4-7_max` -> `claude-opus-4-7`,
    effort `max`; `gpt-5.2-2025-12-11-high` -> `gpt-5.2`, effort `high`, snapshot `2025-12-11`)."""
    stripped: list[tuple[str, str]] = []
    model_id = _resolve(raw, stripped)
    by_kind = {kind: [s for k, s in stripped if k == kind] for kind in (EFFORT, SNAPSHOT)}
    return Variant(model_id, _effort(by_kind[EFFORT]), _snapshot(by_kind[SNAPSHOT]))
