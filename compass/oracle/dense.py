"""The oracle's preparation (`prepare.prepare`) from dense per-generation tensors instead of a long record frame
(issue 45).

Seed paper 002, §3: the estimators see φ_nlg and the cost of each generation as (N, L, G) arrays
(`records.OracleArrays`). At 10^8 records a frame of them does not fit the memory target, so a DuckDB scan
(`resources.oracle_extract`) fills the tensors directly, one slot per (prompt, model, generation) of every prompt
key and model of the dataset; here the rules of `prepare` run on them, with the same numbers:

* coverage (`prepare.complete_cases`): models answering < 95 % of the prompts the best-covered model answers are
  dropped, then only the prompts every remaining model answered are kept;
* costs (`prepare.record_costs`): the records' cost_usd, else tokens × the cheapest provider's prices, else that
  provider's blended price per model; the `all` set of a dataset with unpriced models gets the placeholder cost;
* generations (`records.build_arrays`): each model carries its own G_l on every prompt, numbered 0..G_l−1;
* the model sets, the per-model mean cost (summed in the records' own order, as `groupby().mean()` sums it) and
  the topics (the category of each prompt's first record: its first model's generation 0).

Records that break a rule `prepare` enforces raise `RowsNeeded`: the caller prepares them as rows, where the same
error as always is raised (this module repeats no error message).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from compass.oracle.prepare import (MIN_COVERAGE, PLACEHOLDER_COST, ModelSet, Prepared, longest_g, model_prices,
                                    prepared)
from compass.oracle.records import OracleArrays, model_costs_array


BLOCK = 1 << 20  # prompts at a time where numpy would copy a whole (N, L, G) tensor


class RowsNeeded(Exception):
    """The records break a rule of `prepare` (or do not fit the dense form): prepare them as rows."""


@dataclass
class DenseRecords:
    """Every record of one dataset in dense slots; NaN where a (prompt, model, generation) has no record.

    prompt_ids[N]     every prompt key, sorted (`prepare.prompt_keys`: split/query_id when there is a split)
    model_ids[L]      every model, sorted
    correct[N, L, G]  φ of each record (G: the largest generation + 1)
    cost[N, L, G]     its cost_usd (NaN when null or NaN); None when no record has one
    tokens            (tokens_in, tokens_out)[N, L, G], read only when some record lacks a cost; else None
    categories        the distinct category labels; None when the records have no category column
    category[N, L]    code into `categories` of each cell's generation-0 record (−1: null or no record)
    has_category[N, L]  some record of the cell has a category
    record_rank[N]    each prompt's position in the records' order (split, query_id)
    rows              the number of records filled in
    """

    prompt_ids: np.ndarray
    model_ids: np.ndarray
    correct: np.ndarray
    cost: np.ndarray | None
    tokens: tuple[np.ndarray, np.ndarray] | None
    categories: np.ndarray | None
    category: np.ndarray | None
    has_category: np.ndarray | None
    record_rank: np.ndarray
    rows: int

    def take(self, name: str) -> np.ndarray | tuple[np.ndarray, np.ndarray] | None:
        """The tensor(s) `name` ("correct", "cost", "tokens"), given up by the records: `prepare_dense` takes each
        before it cuts it, so the uncut tensor is freed once the cut copy exists (10^8 records: ~0.8 GB each)."""
        value = getattr(self, name)
        setattr(self, name, None)
        return value


def prepare_dense(records: DenseRecords, model_costs: pd.DataFrame, dataset: str,
                  min_coverage: float = MIN_COVERAGE) -> Prepared:
    """`prepare.prepare` of the dense records (the module docstring); `RowsNeeded` where `prepare` would raise.
    It takes the tensors out of `records` (`DenseRecords.take`): prepare a `DenseRecords` once."""
    correct = records.take("correct")
    present = ~np.isnan(correct)
    if np.count_nonzero(present) != records.rows:  # two records in one slot
        raise RowsNeeded("duplicate (prompt, model, generation) records")
    prompts, models, low_coverage, n_dropped = _complete_cases(present, records.model_ids, min_coverage)
    all_prompts, all_models = len(prompts) == present.shape[0], len(models) == present.shape[1]
    # advanced indices on the leading axes give one C-order copy (a slice between them would not)
    kept = (prompts, slice(None)) if all_models else (prompts[:, None], models)
    used = np.flatnonzero((present if all_prompts and all_models else present[kept]).any(axis=(0, 1)))
    g = int(used[-1]) + 1

    def cut(a: np.ndarray) -> np.ndarray:
        """The complete cases' slots of a (N, L, G) tensor: one C-order copy (a view when nothing is dropped)."""
        if all_prompts and all_models:
            return a if g == a.shape[2] else np.ascontiguousarray(a[:, :, :g])
        return np.ascontiguousarray(a[(*kept, slice(0, g))])

    correct = cut(correct)  # the uncut tensor goes (records gave it up)
    present = cut(present)
    model_ids, prompt_ids = records.model_ids[models], records.prompt_ids[prompts]
    per_cell = present.sum(axis=2, dtype=np.int32)  # G_l per cell (its float copy is `trials`)
    g_model = per_cell.max(axis=0)
    if len(models) < 2 or np.any(per_cell != g_model) or np.any(present & (np.arange(g) >= g_model[:, None])):
        raise RowsNeeded("fewer than 2 models, or a model's generations differ across prompts or skip a number")
    record_cost, blended, basis, unpriced = _costs(records, present, cut, model_ids, model_costs, dataset)
    order = np.argsort(records.record_rank[prompts], kind="stable")
    topics = _topics(records, prompts, models)
    if unpriced:
        gen_cost = np.where(present, PLACEHOLDER_COST, np.nan)
    elif record_cost is not None:
        gen_cost = record_cost
    else:
        gen_cost = np.where(present, model_costs_array(pd.Index(model_ids), blended, dataset)[None, :, None], np.nan)
    full = _arrays(prompt_ids, model_ids, correct, per_cell, gen_cost, topics(np.arange(len(models))))
    every = longest_g(full, dataset)
    sets = [ModelSet("all", every, cost_known=not unpriced)]
    if unpriced:
        keep = np.flatnonzero(~np.isin(model_ids, unpriced) & np.isin(model_ids, every.model_ids))
        if len(keep) >= 2:
            # C order, as `build_arrays` makes them (numpy's sums round by the layout they run over)
            correct_p, present_p = np.ascontiguousarray(correct[:, keep]), np.ascontiguousarray(present[:, keep])
            cost = (np.ascontiguousarray(record_cost[:, keep]) if record_cost is not None else np.where(
                present_p, model_costs_array(pd.Index(model_ids[keep]), blended, dataset)[None, :, None], np.nan))
            sets.append(ModelSet("priced", _arrays(prompt_ids, model_ids[keep], correct_p,
                                                   np.ascontiguousarray(per_cell[:, keep]), cost, topics(keep)), True))
    if record_cost is not None:
        per_model = _mean_cost(record_cost, order, model_ids)
    else:
        per_model = blended.reindex(full.model_ids)
    return prepared(dataset, basis, full, sets, per_model, unpriced, low_coverage, n_dropped)


def _complete_cases(present: np.ndarray, model_ids: np.ndarray,
                    min_coverage: float) -> tuple[np.ndarray, np.ndarray, list[str], int]:
    """`prepare.complete_cases` on the slots: (kept prompts, kept models, dropped models, dropped prompts)."""
    answered = present.any(axis=2)  # (N, L): the model has a record of the prompt
    coverage = answered.sum(axis=0)
    low = coverage < min_coverage * coverage.max()
    models = np.flatnonzero(~low)
    kept = answered if not low.any() else answered[:, models]
    full = kept.all(axis=1)
    if not full.any():
        raise RowsNeeded("no prompt is answered by every model")
    return np.flatnonzero(full), models, sorted(model_ids[low].tolist()), int(kept.any(axis=1).sum() - full.sum())


def _costs(records: DenseRecords, present: np.ndarray, cut, model_ids: np.ndarray, model_costs: pd.DataFrame,
           dataset: str) -> tuple[np.ndarray | None, pd.Series | None, str, list[str]]:
    """`prepare.record_costs` on the slots: (record costs or None, blended price per model or None, basis,
    unpriced models)."""
    if records.cost is not None:
        cost = cut(records.take("cost"))
        known = np.count_nonzero(present & ~np.isnan(cost))
        if known == np.count_nonzero(present):
            if np.any(cost < 0):
                raise RowsNeeded("a negative cost_usd")
            return cost, None, "per_query_usd", []
        if known:
            raise RowsNeeded("cost_usd on some records but not all")
    prices = model_prices(model_costs, dataset)
    unpriced = [m for m in model_ids if m not in prices.index]
    if records.tokens is not None:
        tokens_in, tokens_out = records.take("tokens")
        tokens_in, tokens_out = cut(tokens_in), cut(tokens_out)
        if not (np.isnan(tokens_in) & present).any() and not (np.isnan(tokens_out) & present).any():
            p = prices.reindex(model_ids)
            usd = _token_cost(tokens_in, tokens_out, p["input_usd_per_mtok"].to_numpy()[None, :, None],
                              p["output_usd_per_mtok"].to_numpy()[None, :, None])
            return usd, None, "tokens_x_price_usd", unpriced
    return None, prices["blended_usd_per_mtok"], "blended_price_usd_per_mtok", unpriced


def _token_cost(tokens_in: np.ndarray, tokens_out: np.ndarray, input_usd_per_mtok: np.ndarray,
                output_usd_per_mtok: np.ndarray) -> np.ndarray:
    """`prepare.token_cost`, the same operations in the same order (the same bits), with one temporary of a block
    of prompts instead of three of the whole tensor."""
    usd = np.multiply(tokens_in, input_usd_per_mtok)
    for start in range(0, len(usd), BLOCK):
        usd[start:start + BLOCK] += tokens_out[start:start + BLOCK] * output_usd_per_mtok
    usd /= 1e6
    return usd


def _topics(records: DenseRecords, prompts: np.ndarray, models: np.ndarray):
    """topics(set): the category of each kept prompt's first record among the set's models (positions into the
    kept models), as `build_arrays` picks it; None when no record of the set has one."""
    def topics(keep: np.ndarray) -> np.ndarray | None:
        if records.category is None:
            return None
        columns = models[keep]
        if not records.has_category[prompts][:, columns].any():
            return None
        return np.append(records.categories.astype(object), None)[records.category[prompts, columns[0]]]
    return topics


def _arrays(prompt_ids: np.ndarray, model_ids: np.ndarray, correct: np.ndarray, per_cell: np.ndarray,
            gen_cost: np.ndarray, topics: np.ndarray | None) -> OracleArrays:
    """The `build_arrays` arrays of validated slots: k_nl summed a block of prompts at a time (a sum of 0/1, exact
    in any order; `nansum` copies its input, so the copy is one block's)."""
    successes = np.empty(per_cell.shape)
    for start in range(0, len(successes), BLOCK):
        successes[start:start + BLOCK] = np.nansum(correct[start:start + BLOCK], axis=2)
    return OracleArrays(prompt_ids=prompt_ids, model_ids=model_ids, successes=successes,
                        trials=per_cell.astype(float), outcomes=correct, gen_cost=gen_cost, topics=topics)


def _mean_cost(cost: np.ndarray, order: np.ndarray, model_ids: np.ndarray) -> pd.Series:
    """Mean record cost per model, each model's records summed in the records' order (prompt, then generation) by
    the pandas group mean `prepare` uses, so the sums round as they did there."""
    means = [pd.Series(cost[order, j, :].ravel()).groupby(np.zeros(len(order) * cost.shape[2], dtype=np.int8)).mean()
             .iloc[0] for j in range(len(model_ids))]
    return pd.Series(means, index=pd.Index(model_ids, name="model_id"), name="cost_usd")
