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

Everything else is the study's (`compass.cascades.study`): thresholds tuned on train (the full training set,
Table 2.7, or an n <= 30 subsample, Table 2.8), test curves through every tuned threshold vector, AUC on the cost
interval shared with RT, %Delta = 100 (AUC_RT - AUC_GS) / AUC_GS.
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
from compass.cascades.study import PRIMARY_CHAIN, RT_COPULAS, CascadeData, test_curve, train_queries
from compass.cascades.wide import WideRecords

GRIDS = ("thesis_text", "authors_code")
COSTS = ("per_query", "model_mean")
OPTIMIZERS = ("pattern", "lbfgsb")
THESIS_RESOLUTION = 1 / 40  # "increments of 2.5 % probability mass" (Sec. 2.4): the grid of Tables 2.7 and 2.8


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


def protocol_curves(model: CascadeModel, cal: pd.DataFrame | WideRecords, cascades: list[tuple[str, ...]],
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
    """Per protocol and training setting: RT vs grid-search AUC per cascade (``auc_comparisons``) and the
    Table 2.7 / 2.8 summary per cascade size, k >= 3 and all (``k_group_summary``), each row labelled with its
    protocol's settings and ``setting`` (full | low; a ``curves`` without a ``sample`` column is the full
    training set). The low setting pools every seed's cascades, as ``study.auc_tables`` does."""
    curves = curves if "sample" in curves else curves.assign(sample="full")
    curves = curves.assign(setting=np.where(curves["sample"] == "full", "full", "low"))
    auc, summary = [], []
    for (label, grid, costs, opt, setting), g in curves.groupby(["protocol", "grid", "costs", "optimizer", "setting"],
                                                                 sort=True):
        labels = {"protocol": label, "grid": grid, "costs": costs, "optimizer": opt, "setting": setting}
        comp = pd.concat([auc_comparisons(s, reference="rt").drop(columns="benchmark").assign(sample=sample)
                          for sample, s in g.groupby("sample", sort=True)], ignore_index=True)
        auc.append(comp.assign(**labels))
        summary.append(k_group_summary(comp).assign(**labels))
    return pd.concat(auc, ignore_index=True), pd.concat(summary, ignore_index=True)


def protocol_study(samples: list[tuple[str, pd.DataFrame | WideRecords, int]], chains: dict[str, list[str]],
                   protocols: list[Protocol], resolution: float = THESIS_RESOLUTION
                   ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Tables 2.7 and 2.8 under each protocol on every size-ordered subset (k >= 2) of the primary (Llama)
    chain, or of the longest chain when it is absent: 26 cascades for the five Llama models.

    ``samples``: (sample, calibrated records, seed) of ``study.training_samples``: "full" (Table 2.7) and
    "low_seed<s>" (Table 2.8: calibrators, marginals and copulas refitted on the n <= 30 subsample). Per sample,
    RT uses the thesis' Gumbel model of the whole chain fitted on that sample's train rows. Returns (curves,
    auc, summary) of ``protocol_curves`` and ``protocol_auc_tables``, each with ``chain``; curves and auc with
    ``sample`` and ``n_train``, auc and summary with ``setting``."""
    name = PRIMARY_CHAIN if PRIMARY_CHAIN in chains else max(chains, key=lambda c: len(chains[c]))
    chain = chains[name]
    parts = []
    for sample, cal, _seed in samples:
        model = fit_cascade_model(cal, chain, copula=RT_COPULAS["rt"])
        n_train = train_queries(cal, chain)
        parts.append(protocol_curves(model, cal, size_ordered_subcascades(chain), protocols, resolution)
                     .assign(sample=sample, n_train=n_train))
    curves = pd.concat(parts, ignore_index=True)
    auc, summary = protocol_auc_tables(curves)
    n_train = curves[["sample", "n_train"]].drop_duplicates()
    return curves.assign(chain=name), auc.merge(n_train, on="sample").assign(chain=name), summary.assign(chain=name)
