"""One spelling per organisation: sources write the same developer many ways (`google`,
`Google DeepMind`, `DeepMind`; `deepseek`, `deepseek-ai`, `DeepSeek`; `Qwen`, `Alibaba`).

`canonical_organization` keeps the lead developer of a comma-separated list (Epoch lists the lead
first: `DeepSeek,Peking University`), folds case and punctuation, and maps the known spellings of
one developer to one display name. Research labs that publish under their parent company fold into
it (Google DeepMind and Google Research -> Google; Qwen -> Alibaba; meta-llama and FAIR -> Meta).
An organisation not in the table keeps its own (first, stripped) spelling.
"""

from __future__ import annotations

import re

import pandas as pd

_SPELLINGS: dict[str, tuple[str, ...]] = {
    "Google": ("google", "googledeepmind", "deepmind", "googleresearch", "gemini"),
    "OpenAI": ("openai", "openaicommunity"),
    "Anthropic": ("anthropic",),
    "Alibaba": ("alibaba", "alibabacloud", "qwen", "dashscope"),
    "Meta": ("meta", "metaai", "metallama", "facebook", "fair"),
    "Mistral AI": ("mistral", "mistralai", "mistralcommunity"),
    "DeepSeek": ("deepseek", "deepseekai"),
    "xAI": ("xai",),
    "Microsoft": ("microsoft",),
    "NVIDIA": ("nvidia",),
    "IBM": ("ibm", "ibmgranite"),
    "01.AI": ("01ai",),
    "Cohere": ("cohere", "cohereforai", "cohereai"),
    "Z.ai": ("zai", "zaizhipuai", "zhipuai", "zhipu", "thudm"),
    "Moonshot AI": ("moonshot", "moonshotai"),
    "TII": ("tiiuae", "technologyinnovationinstitute", "tii"),
    "AI21 Labs": ("ai21", "ai21labs"),
    "Amazon": ("amazon", "amazonnova"),
    "MiniMax": ("minimax", "minimaxai"),
    "Tencent": ("tencent", "tencentarc", "tencenthunyuan"),
    "Hugging Face": ("huggingface", "huggingfaceh4", "huggingfacetb"),
    "Allen Institute for AI": ("allenai", "alleninstituteforai", "ai2"),
    "Nous Research": ("nousresearch",),
    "Stability AI": ("stabilityai",),
    "Nexusflow": ("nexusflow",),
    "Databricks": ("databricks",),
    "Shanghai AI Lab": ("shanghaiailab", "internlm"),
    "LMSYS": ("lmsys", "largemodelsystemsorganization"),
    "Baidu": ("baidu",),
    "ByteDance": ("bytedance", "bytedanceseed"),
    "Upstage": ("upstage",),
    "StepFun": ("stepfun", "stepfunai"),
    "Xiaomi": ("xiaomi", "xiaomimimo"),
    "Sakana AI": ("sakana", "sakanaai"),
    "Poolside": ("poolside",),
    "Perplexity": ("perplexity", "perplexityai"),
    "Inception": ("inception", "inceptionlabs"),
    "Sarvam AI": ("sarvam", "sarvamai"),
    "Cognitive Computations": ("cognitivecomputations",),
    "Prime Intellect": ("primeintellect",),
    "Reka AI": ("rekaai", "reka"),
}
_LOOKUP = {key: name for name, keys in _SPELLINGS.items() for key in keys}
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def organization_key(name: str) -> str:
    """Lookup key: the lead organisation, lowercase, letters and digits only."""
    return _NON_ALNUM.sub("", str(name).split(",")[0].lower())


def is_developer(name: str) -> bool:
    """Whether a spelling is one of the developers of the table (a models.dev provider id such as `xai` or
    `stepfun` is then the lab serving its own models)."""
    return organization_key(name) in _LOOKUP


def canonical_organization(name: object) -> str | None:
    """The one display spelling of an organisation; None for a missing or empty name."""
    if name is None or (isinstance(name, float) and pd.isna(name)):
        return None
    lead = str(name).split(",")[0].strip()
    if not lead:
        return None
    return _LOOKUP.get(organization_key(lead), lead)


def canonical_organizations(names: pd.Series) -> pd.Series:
    """`canonical_organization` over a column (missing stays missing)."""
    return names.map(canonical_organization).astype(object)
