"""Canonical model ids: the rules that turn an upstream spelling into one id (default data and pipeline).

Rules (applied to `compass.ingest.aliases.alias_key(raw)`, so the canonical id is a
function of the lookup key and two spellings with the same key can never map to
two different ids):

1. Packaging suffixes are dropped: `_5shots` (MMLU-Pro files), `@together`,
   ` (n=1)` (LiveCodeBench), `-hf`, `-bf16`/`-fp8`, `-web-app`,
   `-instruct-turbo` -> `-instruct` (Together serving names), a leading `amazon.`
   / `c4ai-` / `meta-` and `-v1:0` / `-v1.0` version tags. `-latest` is dropped only
   from versioned names (`gemini-1.5-pro-latest`, `claude-3-5-sonnet-latest`);
   unversioned moving aliases (`gemini-pro-latest`, `mistral-large-latest`,
   `qwen-plus-latest`) point at whatever is newest and keep their own id.
2. Reasoning-effort and thinking-budget variants collapse to the base model:
   `-high-effort`, `-max-effort`, `-thinking-64k-high-effort`, `(16K thinking)` and `-xhigh`
   (an effort level only, never a model name) everywhere; `_high`,
   `_xhigh`, `_medium`, `_low`, `_minimal`, `_none`, `_unknown`, `-highthinking`,
   `-nothinking`, `_32K`, `-thinking` (and Claude `_max`, `-base`) only for families
   where they are a serving *mode* of the same weights (Claude, Gemini, DeepSeek,
   GLM, GPT, o-series, Grok), and GPT's `-max` effort (LiveBench's `gpt-5.6-sol-max`) except
   for Codex models, where `-max` names a model (`gpt-5.1-codex-max`), so `mistral-medium` or `minimax-m1-80k` keep their
   names. Kimi / Qwen / OLMo `-thinking` checkpoints are separate weights and keep
   their own id.
3. Dated snapshot spellings collapse to the base id: `-2024-08-06`, `-20240620`,
   `-0613` (MMDD), `-05-06` (MM-DD), `-09-2025` (MM-YYYY), `-01-29-2025`,
   Gemini `-001`/`-002` and Gemini `-preview`. YYMM version tags such as
   `mistral-large-2407` or `qwen3-...-2507` are *kept* (different models).
4. Family spellings are unified: `llama3.1` -> `llama-3.1`, `llama-3-1-70b`
   (MMLU-Pro's `3_1`) -> `llama-3.1-70b`, `qwen-1.5` -> `qwen1.5`, `qwen2-5` -> `qwen2.5`, Claude dots ->
   dashes and Claude >= 4 in new order (`claude-4-1-opus` -> `claude-opus-4-1`).
5. A short explicit override table handles the remaining source-specific names
   (LiveCodeBench abbreviations, the cascades' `qwen2.5-32b-coder-instruct`, ...).

`canonical_id` is idempotent (checked by the build), so `alias_key(model_id)` of a
canonical id always resolves to itself.
"""

from __future__ import annotations

import re

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
}

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

_SUFFIX_RULES: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p)
    for p in (
        r"-5shots$",
        r"@[a-z0-9_.\-]+$",
        r"-\(n=1\)$",
        r"-hf$",
        r"-(?:bf16|fp8)$",
        r"-web-?app$",
        r"-v1[.\-]0$",
        # effort / thinking budget (rule 2)
        r"-(?:thinking-auto-|thinking-\d+k-)?(?:x?high|medium|low|minimal|none|unknown|max)-effort$",
        r"-xhigh$",
        r"-\(\d+k-thinking\)$",
        # dated snapshots (rule 3)
        r"-20\d\d-\d\d-\d\d$",
        r"-20\d{6}$",
        r"-\d\d-\d\d-20\d\d$",
        r"-(?:0[1-9]|1[0-2])-20\d\d$",
        r"-(?:0[1-9]|1[0-2])-[0-3]\d$",
        r"-(?:0[1-9]|1[0-2])[0-3]\d$",
    )
)
# Serving modes of the same weights, stripped only inside _MODE_FAMILIES (rule 2).
_MODE_RULES: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p)
    for p in (
        r"-(?:x?high|medium|low|minimal|none|unknown|nothinking|no-thinking|highthinking)$",
        r"-thinking$",
        r"-\d+k$",
    )
)
# LiveBench's Claude `-base` (thinking off) and Epoch's `_max` effort; elsewhere `-base`
# names a pre-trained checkpoint (`deepseek-v3-base`) and `-max` a model (`gpt-5.1-codex-max`).
_CLAUDE_ONLY = re.compile(r"-(?:max|base)$")
# LiveBench's GPT `-max` effort (`gpt-5.6-sol-max`); Codex `-max` is a model (`gpt-5.1-codex-max`).
_GPT_MAX = re.compile(r"-max$")
_GEMINI_RULES: tuple[re.Pattern[str], ...] = tuple(re.compile(p) for p in (r"-00\d$", r"-preview$"))


def _strip_suffixes(key: str) -> str:
    family = next((f for f in _MODE_FAMILIES if key.startswith(f)), None)
    changed = True
    while changed:
        before = key
        if key.endswith("-latest") and re.search(r"\d", key[: -len("-latest")]):
            key = key[: -len("-latest")]  # versioned `-latest` only; see rule 1
        for rule in _SUFFIX_RULES:
            key = rule.sub("", key)
        if family is not None:
            for rule in _MODE_RULES:
                key = rule.sub("", key)
        if family == "claude":
            key = _CLAUDE_ONLY.sub("", key)
        if family == "gpt" and "codex" not in key:
            key = _GPT_MAX.sub("", key)
        if family == "gemini":
            for rule in _GEMINI_RULES:
                key = rule.sub("", key)
        changed = key != before
    return key


def _family_spelling(key: str) -> str:
    key = re.sub(r"^(?:amazon\.|amazon-|c4ai-|meta-(?=llama))", "", key)
    key = re.sub(r"^llama(\d)", r"llama-\1", key)
    key = re.sub(r"^llama-(\d)-(\d)-(\d+b)", r"llama-\1.\2-\3", key)
    key = re.sub(r"-instruct-turbo$", "-instruct", key)
    key = re.sub(r"^qwen-(\d(?:\.\d)?)-", r"qwen\1-", key)
    key = re.sub(r"^qwen(\d)-(\d)-", r"qwen\1.\2-", key)
    if key.startswith("claude"):
        key = key.replace(".", "-")
        key = re.sub(r"^claude-(\d)(-\d)?-(opus|sonnet|haiku)", _claude_new_order, key)
    return key


def _claude_new_order(m: re.Match[str]) -> str:
    major, minor, tier = m.group(1), m.group(2) or "", m.group(3)
    return f"claude-{tier}-{major}{minor}" if int(major) >= 4 else m.group(0)


def canonical_id(raw: str) -> str:
    """Canonical model id of a raw spelling (rules in the module docstring)."""
    key = alias_key(raw)
    if not key:
        raise ValueError(f"empty model name {raw!r} cannot be given a canonical id")
    if key in RAW_OVERRIDES:
        return RAW_OVERRIDES[key]
    for _ in range(3):
        before = key
        key = _family_spelling(_strip_suffixes(key))
        key = OVERRIDES.get(key, key)
        if key == before:
            break
    return key
