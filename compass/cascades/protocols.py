"""Protocol variants of the Table 2.7 comparison, Rational Tuning vs grid search (thesis seed 001, Ch. 2,
Sec. 2.4; issue 12, item 7).

The thesis' text and the authors' code run the comparison differently in three ways; each variant is one
``Protocol``, and the study reports every combination, labelled:

* grid levels (``compass.cascades.baselines.grid_levels``): ``thesis_text`` = 0, h, ..., 1 ("from phi_min
  to phi_max in increments of 2.5 % probability mass"), ``authors_code`` = 0.01, 0.01 + h, ..., 0.985 (the
  authors' ``np.arange(0.01, 0.99, h)``), which never defers the top ~1.5 % of a model's queries;
* costs: ``per_query`` = every query is charged its own cost (grid scoring on train, test curves),
  ``model_mean`` = every query is charged each model's mean cost on that split (the authors' code; RT's
  model charges E[C_j] either way, eq. 2.15);
* Rational Tuning's optimiser: ``pattern`` (our batched pattern search) or ``lbfgsb`` (the thesis').

Everything else is the study's (`compass.cascades.study`): thresholds tuned on train, test curves through
every tuned threshold vector, AUC on the cost interval shared with RT, %Delta = 100 (AUC_RT - AUC_GS) / AUC_GS.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np
import pandas as pd

from compass.cascades.baselines import grid_search_curve, threshold_columns
from compass.cascades.curves import auc_comparisons, k_group_summary, size_ordered_subcascades
from compass.cascades.markov_model import CascadeModel, fit_cascade_model
from compass.cascades.rational_tuning import rational_tuning
from compass.cascades.study import PRIMARY_CHAIN, RT_COPULAS, CascadeData, test_curve

GRIDS = ("thesis_text", "authors_code")
COSTS = ("per_query", "model_mean")
OPTIMIZERS = ("pattern", "lbfgsb")


@dataclass(frozen=True)
class Protocol:
    """One way to run Table 2.7 (module docstring)."""

    grid: str
    costs: str
    optimizer: str

    def __post_init__(self) -> None:
        for value, allowed in ((self.grid, GRIDS), (self.costs, COSTS), (self.optimizer, OPTIMIZERS)):
            if value not in allowed:
                raise ValueError(f"protocol setting {value!r} is not one of {allowed}")

    @property
    def label(self) -> str:
        return f"grid={self.grid},costs={self.costs},rt={self.optimizer}"


PROTOCOLS: dict[str, Protocol] = {p.label: p for p in (Protocol(*v) for v in product(GRIDS, COSTS, OPTIMIZERS))}
OURS = Protocol("thesis_text", "per_query", "pattern")  # what cascade.curves runs
AUTHORS = Protocol("authors_code", "model_mean", "lbfgsb")  # the authors' code


def protocols_named(names: list[str]) -> list[Protocol]:
    """Protocols by label; 'all' = every combination, 'ours' / 'authors' = the two ends."""
    named = {"ours": [OURS], "authors": [AUTHORS], "all": list(PROTOCOLS.values()), **{k: [v] for k, v in PROTOCOLS.items()}}
    unknown = [n for n in names if n not in named]
    if unknown:
        raise ValueError(f"unknown protocol(s) {unknown}; choose from 'all', 'ours', 'authors' or {sorted(PROTOCOLS)}")
    return list(dict.fromkeys(p for n in names for p in named[n]))


def _mean_costs(data: CascadeData) -> CascadeData:
    """Every query charged each model's mean cost on this split."""
    return CascadeData(data.p, data.y, np.broadcast_to(data.c.mean(axis=0), data.c.shape).copy())


def protocol_curves(model: CascadeModel, cal: pd.DataFrame, cascades: list[tuple[str, ...]],
                    protocols: list[Protocol], resolution: float) -> pd.DataFrame:
    """Test curves of RT and grid search for every cascade under every protocol.

    ``model``: the Markov-copula model of a chain covering ``cascades`` (fitted on train); ``cal``: the
    calibrated records with train and test rows. Each distinct tuning (RT per optimiser, grid search per
    grid and cost setting) runs once per cascade. Columns: protocol, grid, costs, optimizer, cascade, k,
    method (rt | grid), point, cost, error, thresholds, pareto.
    """
    parts = []
    for cascade in cascades:
        train, test = CascadeData.of(cal, cascade, "train"), CascadeData.of(cal, cascade, "test")
        cols = threshold_columns(len(cascade))
        rt = {opt: rational_tuning(model, cascade=cascade, method=opt)[cols].to_numpy(float)
              for opt in {p.optimizer for p in protocols}}
        grid = {}
        for g, c in {(p.grid, p.costs) for p in protocols}:
            scored = train if c == "per_query" else _mean_costs(train)
            grid[(g, c)] = grid_search_curve(scored.p, scored.y, scored.c, resolution, levels=g)[cols].to_numpy(float)
        for p in protocols:
            for method, thresholds in (("rt", rt[p.optimizer]), ("grid", grid[(p.grid, p.costs)])):
                parts.append(test_curve(test, thresholds, mean_cost=p.costs == "model_mean").assign(
                    protocol=p.label, grid=p.grid, costs=p.costs, optimizer=p.optimizer, cascade=">".join(cascade),
                    k=len(cascade), method=method))
    curves = pd.concat(parts, ignore_index=True)
    return curves[["protocol", "grid", "costs", "optimizer", "cascade", "k", "method", "point", "cost", "error",
                   "thresholds", "pareto"]]


def protocol_auc_tables(curves: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per protocol: RT vs grid-search AUC per cascade (``auc_comparisons``) and the Table 2.7 summary per
    cascade size, k >= 3 and all (``k_group_summary``), each row labelled with its protocol's settings."""
    auc, summary = [], []
    for (label, grid, costs, opt), g in curves.groupby(["protocol", "grid", "costs", "optimizer"], sort=True):
        labels = {"protocol": label, "grid": grid, "costs": costs, "optimizer": opt}
        comp = auc_comparisons(g, reference="rt").drop(columns="benchmark")
        auc.append(comp.assign(**labels))
        summary.append(k_group_summary(comp).assign(**labels))
    return pd.concat(auc, ignore_index=True), pd.concat(summary, ignore_index=True)


def protocol_study(cal: pd.DataFrame, chains: dict[str, list[str]], protocols: list[Protocol], resolution: float
                   ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Table 2.7 under each protocol on every size-ordered subset (k >= 2) of the primary (Llama) chain, or of
    the longest chain when it is absent: 26 cascades for the five Llama models. RT uses the thesis' Gumbel
    model of the whole chain, fitted on train. Returns (curves, auc, summary) of ``protocol_curves`` and
    ``protocol_auc_tables``, each with a ``chain`` column."""
    name = PRIMARY_CHAIN if PRIMARY_CHAIN in chains else max(chains, key=lambda c: len(chains[c]))
    chain = chains[name]
    model = fit_cascade_model(cal[cal["split"] == "train"], chain, copula=RT_COPULAS["rt"])
    curves = protocol_curves(model, cal, size_ordered_subcascades(chain), protocols, resolution)
    return tuple(frame.assign(chain=name) for frame in (curves, *protocol_auc_tables(curves)))
