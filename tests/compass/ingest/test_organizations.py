"""One spelling per organisation (issue 36 item 3): the spellings the sources use today fold together."""

from __future__ import annotations

import pytest

from compass.ingest.organizations import canonical_organization

SAME_ORGANIZATION = {
    "Google": ["google", "Google DeepMind", "DeepMind", "Google DeepMind,Google", "Google Research", "gemini"],
    "DeepSeek": ["deepseek", "DeepSeek", "deepseek-ai", "DeepSeek,Peking University"],
    "Alibaba": ["Qwen", "qwen", "Alibaba", "dashscope"],
    "Meta": ["Meta AI", "meta", "meta-llama", "facebook"],
    "Mistral AI": ["Mistral AI", "mistral", "mistralai", "Mistral"],
    "Z.ai": ["Z.ai (Zhipu AI),Tsinghua University", "Z.ai", "zai"],
}


@pytest.mark.parametrize("canonical", sorted(SAME_ORGANIZATION))
def test_spellings_fold_to_one(canonical):
    assert {canonical_organization(s) for s in SAME_ORGANIZATION[canonical]} == {canonical}


def test_unknown_organisations_keep_their_spelling_and_missing_stays_missing():
    assert canonical_organization(" mlabonne ") == "mlabonne"
    assert canonical_organization("Tsinghua University,UIUC") == "Tsinghua University"
    assert canonical_organization(None) is None and canonical_organization(float("nan")) is None
    assert canonical_organization("") is None
