"""Named measures with an identity across refreshes (ML Compass §4.3 internal measures; issue 42 item 2).

The paper names its measures by reading their loadings once per snapshot (§5.3: PRISM's C1 "general
capability", C2 ...). A refreshed catalog needs the same reading on every refresh, and a guarantee that a
name keeps meaning the same thing. Each measure therefore carries an identity: a factor id (C1, C2, ...),
a short name derived from its loadings when the identity is created (`derive_name`), and a one-line
description of its current top loadings. A refresh keeps the identity of a measure whose refitted loadings
match its previous ones (signed Tucker phi >= MIN_CONGRUENCE out of sample, `held_out_rotation` of
compass.mlcompass.factor_alignment, with the in-sample phi of the rotated pattern kept next to it); a measure that no longer matches gets a new id and name, and the old
identity is kept as "retired" with what changed, so a scenario that still refers to it is refused with that
reason (`resolve_references`) instead of silently meaning something else.

The registry (`identify_measures`) is one row per identity ever held by a case: columns REGISTRY_COLUMNS,
status "new" (created on this fit), "kept", "renewed" (created because an old one stopped matching) or "retired".
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np
import pandas as pd

from compass.mlcompass.factor_alignment import MIN_CONGRUENCE, factor_number
from compass.mlcompass.task_axes import skill

REGISTRY_COLUMNS = ["factor", "name", "description", "status", "congruence", "previous_factor", "replaced_by", "changed",
                    "congruence_in_sample", "label", "summary"]
ACTIVE = ("new", "kept", "renewed")
MEASURE_ID = re.compile(r"C[1-9][0-9]*")
#: A benchmark dominates a factor's name when its |loading| is at least this multiple of the next one's.
DOMINANT_RATIO = 1.5
#: A factor loading on at least this share of the case's benchmarks, from two families or more, is "general".
GENERAL_COVERAGE = 0.75
#: The skills that name a measure (`label`): the largest shares of its squared loadings until they reach this share.
LABEL_SHARE = 0.5
#: A family (benchmark id prefix: livebench, lmarena, hf, ...) names a factor carrying this share of its squared loadings.
FAMILY_SHARE = 0.75


def family(benchmark: str) -> str:
    """A benchmark's family: its id up to the first underscore (livebench_coding -> livebench)."""
    return benchmark.split("_", 1)[0]


def derive_name(loadings: pd.Series, benchmarks: pd.Index, others: pd.DataFrame | None = None) -> str:
    """A short slug for one factor from its sparsified loadings (index benchmark; `benchmarks` all of the case's;
    `others` the other factors' loadings of the same fit, wide).

    In order: one benchmark with |loading| >= DOMINANT_RATIO x the next ("livebench_data_analysis"); a factor on
    >= GENERAL_COVERAGE of the benchmarks from two families or more ("general", and with `others`, the benchmark
    that sets it apart from them, `distinctive`: "general_livebench_if"); one family with >= FAMILY_SHARE
    of the squared loadings, when the case has several ("lmarena"); else its two top benchmarks, their shared
    family prefix dropped ("gpqa_musr").
    """
    top = loadings[loadings != 0].abs().sort_values(ascending=False, kind="stable")
    if top.empty:
        raise ValueError("a measure without loadings cannot be named")
    if len(top) == 1 or top.iloc[0] >= DOMINANT_RATIO * top.iloc[1]:
        return str(top.index[0])
    families = top.index.map(family)
    if families.nunique() >= 2 and len(top) >= GENERAL_COVERAGE * len(benchmarks):
        apart = distinctive(loadings, others)
        return "general" if apart is None else f"general_{apart}"
    share = (top ** 2).groupby(families).sum() / (top ** 2).sum()
    if benchmarks.map(family).nunique() >= 2 and share.max() >= FAMILY_SHARE:
        return str(share.idxmax())
    first, second = (str(b) for b in top.index[:2])
    if family(first) == family(second):
        first, second = first.split("_", 1)[-1], second.split("_", 1)[-1]
    return f"{first}_{second}"


def distinctive(loadings: pd.Series, others: pd.DataFrame | None) -> str | None:
    """The benchmark on which this factor loads most beyond every other factor, argmax_j |l_j| - max_k |L_jk|
    (two general factors of one fit differ there, not in their shared loadings); None without other factors or
    when no benchmark loads more on this factor than on another."""
    if others is None or others.empty:
        return None
    margin = loadings.abs() - others.reindex(loadings.index).abs().max(axis=1).fillna(0.0)
    return str(margin.idxmax()) if margin.max() > 0 else None


def top_loadings(loadings: pd.Series, n: int = 3) -> str:
    """The `n` largest |loadings| as "benchmark +0.98, ..."."""
    top = loadings[loadings != 0].abs().sort_values(ascending=False, kind="stable").index[:n]
    return ", ".join(f"{b} {loadings[b]:+.2f}" for b in top)


def describe(loadings: pd.Series) -> str:
    """One line: how many benchmarks the measure loads on, from which families, and its top loadings."""
    nonzero = loadings[loadings != 0]
    families = ", ".join(sorted(nonzero.index.map(family).unique()))
    return f"loads on {len(nonzero)} benchmark(s) ({families}); top: {top_loadings(loadings)}"


def skill_shares(loadings: pd.Series) -> pd.Series:
    """Each skill's share of a measure's squared loadings (`task_axes.skill` of each benchmark), largest first."""
    nonzero = loadings[loadings != 0]
    squared = (nonzero ** 2).groupby(nonzero.index.map(skill)).sum()
    return (squared / squared.sum()).sort_values(ascending=False, kind="stable")


def label(loadings: pd.Series) -> str:
    """A measure's name in words, re-read from its loadings on every fit (the slug `name` keeps the identity):
    the skills with the largest shares of its squared loadings until they reach LABEL_SHARE (at most two), after
    "general, strongest in" when it loads on >= GENERAL_COVERAGE of the case's benchmarks from two families or more
    ("general, strongest in maths and data analysis"; "instruction following")."""
    shares = skill_shares(loadings)
    if shares.empty:
        raise ValueError("a measure without loadings cannot be named")
    top = [shares.index[0]] + ([shares.index[1]] if len(shares) > 1 and shares.iloc[0] < LABEL_SHARE else [])
    words = " and ".join(top)
    nonzero = loadings[loadings != 0]
    general = nonzero.index.map(family).nunique() >= 2 and len(nonzero) >= GENERAL_COVERAGE * len(loadings)
    return f"general, strongest in {words}" if general else words


def summary(loadings: pd.Series) -> str:
    """One line in words: what the measure is (`label`), how many of the benchmarks it loads on, and the skills'
    shares of its squared loadings."""
    shares = skill_shares(loadings)
    parts = ", ".join(f"{s} {v:.0%}".replace("%", " %") for s, v in shares.head(4).items())
    return (f"{label(loadings)}: loads on {int((loadings != 0).sum())} of {len(loadings)} benchmarks; share of its "
            f"squared loadings by skill: {parts}")


def _unique(name: str, taken: set[str]) -> str:
    """`name`, or name_v2, name_v3, ... when taken; never "all" or an id like C3 (reserved in scenarios)."""
    if name == "all" or MEASURE_ID.fullmatch(name):
        name = f"measure_{name}"
    out, version = name, 1
    while out in taken:
        version += 1
        out = f"{name}_v{version}"
    return out


def _row(factor: str, name: str, loadings: pd.Series, status: str, **extra) -> dict:
    base = dict.fromkeys(REGISTRY_COLUMNS, None)
    return {**base, "factor": factor, "name": name, "description": describe(loadings), "status": status,
            "congruence": float("nan"), "congruence_in_sample": float("nan"), "label": label(loadings),
            "summary": summary(loadings), **extra}


def first_registry(loadings: pd.DataFrame) -> pd.DataFrame:
    """The registry of a first fit (or of published loadings that predate the registry): every factor "new"."""
    taken: set[str] = set()
    rows = []
    for factor in loadings.columns:
        name = _unique(derive_name(loadings[factor], loadings.index, loadings.drop(columns=factor)), taken)
        taken.add(name)
        rows.append(_row(factor, name, loadings[factor], "new"))
    return pd.DataFrame(rows, columns=REGISTRY_COLUMNS)


def identify_measures(
    loadings: pd.DataFrame,
    congruence: pd.Series | None,
    previous: pd.DataFrame | None,
    previous_loadings: pd.DataFrame | None,
    in_sample: pd.Series | None = None,
) -> tuple[dict[str, str], pd.DataFrame]:
    """Identities of the measures of a fit: (rename map fitted factor id -> identity id, registry).

    `loadings`: the fit's wide sparsified loadings (index benchmark, columns factor id from `extract_measures`,
    named after the previous factors they were rotated toward or matched with); `congruence`: their signed
    Tucker phi with those namesakes (`MeasureResult.congruence`, out of sample, None on a first fit; `in_sample`:
    `MeasureResult.congruence_in_sample`, published next to it); `previous`: the case's
    registry (None or empty when there is none yet: then it is derived from `previous_loadings`, wide, as
    `first_registry` would have named them). A factor keeps its identity when phi >= MIN_CONGRUENCE; otherwise it
    gets the next unused id and a new name (derived from its loadings, _v2 when taken), and the old identity is
    retired with what changed. Retired identities stay in the registry.
    """
    if congruence is None or previous_loadings is None:  # a first fit
        return {f: f for f in loadings.columns}, first_registry(loadings)
    if previous is None or previous.empty:
        previous = first_registry(previous_loadings)
    previous = previous.reindex(columns=REGISTRY_COLUMNS)  # a registry published before a column was added
    active = previous[previous["status"].isin(ACTIVE)].set_index("factor")
    taken = set(previous["name"])
    next_id = max(factor_number(f) for f in [*previous["factor"], *loadings.columns]) + 1
    rename, rows, retired = {}, [], previous[~previous["status"].isin(ACTIVE)].to_dict("records")
    for factor in loadings.columns:
        phi = float(congruence.get(factor, np.nan))
        phis = {"congruence": phi, "congruence_in_sample": float((congruence if in_sample is None else in_sample)
                                                                 .get(factor, np.nan))}
        if factor in active.index and phi >= MIN_CONGRUENCE:
            rename[factor] = factor
            rows.append(_row(factor, active.at[factor, "name"], loadings[factor], "kept", **phis,
                             previous_factor=factor))
            continue
        new_id = f"C{next_id}"
        next_id += 1
        name = _unique(derive_name(loadings[factor], loadings.index, loadings.drop(columns=factor)), taken)
        taken.add(name)
        rename[factor] = new_id
        if factor not in active.index:  # a factor the previous fit did not have
            rows.append(_row(new_id, name, loadings[factor], "new"))
            continue
        old = active.loc[factor]
        changed = (f"{factor} '{old['name']}' no longer matches its previous loadings (Tucker phi {phi:.2f} out of sample < "
                   f"{MIN_CONGRUENCE}): it loaded {top_loadings(previous_loadings[factor])}, the refit "
                   f"{top_loadings(loadings[factor])}; it is now {new_id} '{name}'")
        rows.append(_row(new_id, name, loadings[factor], "renewed", **phis, previous_factor=factor,
                         changed=changed))
        retired.append({**old.to_dict(), "factor": factor, "status": "retired", **phis,
                        "replaced_by": new_id, "changed": changed})
    for factor in active.index.difference(list(rename)):
        changed = f"{factor} '{active.at[factor, 'name']}' has no counterpart in the refit (fewer factors)"
        retired.append({**active.loc[factor].to_dict(), "factor": factor, "status": "retired", "changed": changed})
    registry = pd.DataFrame([*rows, *retired], columns=REGISTRY_COLUMNS)
    return rename, registry.sort_values("factor", key=lambda s: s.map(factor_number), kind="stable").reset_index(drop=True)


def registry_problems(registry: pd.DataFrame, factors: set[str]) -> dict[str, int]:
    """What the blocking check `measures_keep_their_meaning` counts in a case's registry, given the factor ids its
    published measures use: kept identities below MIN_CONGRUENCE, renewed ones that do not say what changed,
    published measures without exactly one current identity, names used twice, and no registry at all."""
    if registry.empty:
        return {"no_measure_names": 1}
    current = registry[registry["status"].isin(ACTIVE)]
    kept, renewed = current[current["status"] == "kept"], current[current["status"] == "renewed"]
    return {
        "kept_below_min_congruence": int((~(kept["congruence"] >= MIN_CONGRUENCE)).sum()),
        "renewed_without_change": int((renewed["changed"].fillna("") == "").sum()),
        "measures_without_one_name": len(factors ^ set(current["factor"])) + int(current["factor"].duplicated().sum()),
        "duplicate_names": int(registry["name"].duplicated().sum()),
    }


class MeasureRefused(ValueError):
    """A scenario refers to a measure that no longer means what it meant (its identity was retired)."""


def resolve_references(refs: Mapping[str, float] | None, registry: pd.DataFrame, where: str) -> dict[str, float] | None:
    """Measure references of a scenario key (`floors` or `utility.weights`: name or id -> value) as factor ids.

    A current measure's name or id resolves to its id; a retired one raises MeasureRefused naming `where`
    (the scenario file and key) and what changed; anything else ("all", a measure this case never had) is left
    as it is for the caller's own rule. An empty registry (no measures named yet) resolves nothing.
    """
    if refs is None or registry.empty:
        return None if refs is None else dict(refs)
    active = registry[registry["status"].isin(ACTIVE)]
    ids = dict(zip(active["name"], active["factor"])) | dict(zip(active["factor"], active["factor"]))
    retired = registry[~registry["status"].isin(ACTIVE)]
    gone = {**dict(zip(retired["name"], retired["changed"])), **dict(zip(retired["factor"], retired["changed"]))}
    out: dict[str, float] = {}
    for ref, value in refs.items():
        if ref in gone and ref not in ids:
            raise MeasureRefused(f"{where}.{ref}: refers to a retired measure: {gone[ref]}; refer to the current "
                                 f"measures by name or id ({', '.join(f'{n} = {i}' for n, i in zip(active['name'], active['factor']))})")
        key = ids.get(ref, ref)
        if key in out:
            raise MeasureRefused(f"{where}.{ref}: refers to measure {key} a second time")
        out[key] = value
    return out
