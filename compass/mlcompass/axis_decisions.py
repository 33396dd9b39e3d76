"""A scenario's task axes applied to one case's decision inputs (issue 48 item 2; compass.mlcompass.task_axes).

`with_axes` leaves out the models without a score on a weighted or floored axis and those below an axis floor
(the board's note says how many), replaces the utility by the weighted axis score (`task_axes.AxisUtility`, as
person weights replace it, §4.5) and makes the dominance repair compare on the axes' benchmarks: under a
coding scenario no model ranks below one that is at least as good on every coding benchmark.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from compass.mlcompass.decisions import MAX_GROUPS_NAMED, DecisionInputs, NotApplicable, _keep_only
from compass.mlcompass.task_axes import AxisUtility, axis_benchmarks, axis_scores, normalized, weighted_axis_utility


def axes_of(inputs: DecisionInputs) -> list[str]:
    """The axes a scenario weights or floors, weighted ones first."""
    s = inputs.scenario
    return list(dict.fromkeys([*(s.axes or {}), *s.axis_floors]))


def with_axes(inputs: DecisionInputs) -> DecisionInputs:
    """`inputs` under the scenario's `axes` and `axis_floors` (unchanged without them). Axis scores are min-max
    scaled over every model of `inputs` (before any other screen), so a filter does not move them. NotApplicable
    when the case has no benchmark of an axis the scenario names."""
    axes, s = axes_of(inputs), inputs.scenario
    if not axes:
        return inputs
    lacking = [a for a in axes if not axis_benchmarks(inputs.raw_scores, a)]
    if lacking:
        raise NotApplicable(f"scenario {s.name}: case {inputs.case.case_id} has no benchmark of axis "
                            f"{', '.join(lacking)} observed on enough models (compass.task_axes); skipped for this case")
    scores = axis_scores(inputs.raw_scores, axes)
    unscored = scores.index[scores.isna().any(axis=1)]
    below = [m for a, floor in s.axis_floors.items() for m in scores.index[scores[a] < floor]]
    notes = []
    if len(unscored):
        notes.append(f"not ranked on axes: {len(unscored)} model(s) observed on no benchmark of "
                     f"{' or '.join(axes)}{_names(unscored)}")
    if below:
        floors = ", ".join(f"{a} >= {v:g}" for a, v in s.axis_floors.items())
        notes.append(f"axis floors ({floors}) leave out {len(set(below))} model(s){_names(pd.Index(sorted(set(below))))}")
    kept = scores.index.difference(unscored).difference(below)
    out = _keep_only(inputs, kept, "; ".join(notes)) if notes else inputs
    if not s.axes:
        return out
    utility = weighted_axis_utility(scores.loc[kept], s.axes)
    used = list(dict.fromkeys(b for a in s.axes for b in axis_benchmarks(inputs.raw_scores, a)))
    observed = normalized(inputs.raw_scores, used).reindex(out.measures.index)
    empty = inputs.outcomes.iloc[0:0]  # the utility is not learned from outcomes: no outcome range to extrapolate from
    return dataclasses.replace(out, utilities={"all": AxisUtility(out.measures, utility)}, observed=observed,
                               outcomes=empty)


def _names(models: pd.Index) -> str:
    more = f" and {len(models) - MAX_GROUPS_NAMED} more" if len(models) > MAX_GROUPS_NAMED else ""
    return f" ({', '.join(sorted(models)[:MAX_GROUPS_NAMED])}{more})"
