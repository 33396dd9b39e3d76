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

Records that break a rule `prepare` enforces raise `prepare`'s error (the messages are its own functions), in the
order `prepare` checks them: the coverage rule, then the costs (`record_costs`), then `build_arrays`' rules on the
records of the kept cells (`_check`); records no slot holds are known by their cells' `DenseRecords.flags`, those
of no query id by their models' `null_query_kinds`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from compass.oracle.prepare import (MIN_COVERAGE, PLACEHOLDER_COST, ModelSet, Prepared, longest_g, low_coverage,
                                    model_prices, negative_cost, no_complete_prompt, partial_cost, prepared)
from compass.oracle.records import (OracleArrays, duplicate_records, generation_counts_rule, generation_rule,
                                    model_costs_array, not_binary_correct, not_integer_generations, null_values,
                                    too_few_models)


BLOCK = 1 << 20  # prompts at a time where numpy would copy a whole (N, L, G) tensor
# bits of `DenseRecords.flags` and `null_query_kinds` (resources.oracle_extract sets them); BEYOND: a generation at or
# past the slots' G (a stray large one: `DenseRecords.generations` counts it)
NULL_GENERATION, NULL_CORRECT, NOT_INTEGER, BEYOND, NO_COST, NEGATIVE_COST, NO_TOKENS, HAS_COST = \
    1, 2, 4, 8, 16, 32, 64, 128


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
    flags[N, L]       the kinds (bits above) of the cell's records no slot holds; None when every record has a slot
    duplicates        the cells (n * L + l) holding two records of one generation; None: not counted
    null_query_models the models (codes) with a record of no query id; null_query_kinds their records' bits (flags)
    dropped_models, dropped_prompts  what the coverage rule dropped before the slots were made (sparse records)
    not_binary        the smallest correctness values other than 0/1 of the kept cells' records (empty: none);
                      None: not counted (the slots are searched)
    generations       (G_l, cells with another count, a generation reaching G_l) per model, counted where the
                      slots stop short of some records (BEYOND); None: the slots hold every valid record
    min_coverage      the coverage rule's share (`prepare.complete_cases`)
    null_split_first  (cells, category codes) of the first NULL-split record of each cell of a prompt whose records
                      lie in a NULL and an empty split (they come first in the records' order); None: no such prompt
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
    flags: np.ndarray | None = None
    duplicates: np.ndarray | None = None
    null_query_models: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    null_query_kinds: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.uint8))
    dropped_models: list[str] | None = None
    dropped_prompts: int = 0
    not_binary: np.ndarray | None = None
    generations: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    min_coverage: float = MIN_COVERAGE
    null_split_first: tuple[np.ndarray, np.ndarray] | None = None

    def take(self, name: str) -> np.ndarray | tuple[np.ndarray, np.ndarray] | None:
        """The tensor(s) `name` ("correct", "cost", "tokens"), given up by the records: `prepare_dense` takes each
        before it cuts it, so the uncut tensor is freed once the cut copy exists (10^8 records: ~0.8 GB each)."""
        value = getattr(self, name)
        setattr(self, name, None)
        return value


def prepare_dense(records: DenseRecords, model_costs: pd.DataFrame, dataset: str) -> Prepared:
    """`prepare.prepare` of the dense records (the module docstring), its errors included. It takes the tensors out
    of `records` (`DenseRecords.take`): prepare a `DenseRecords` once."""
    correct = records.take("correct")
    present = ~np.isnan(correct)
    answered = present.any(axis=2) if records.flags is None else present.any(axis=2) | (records.flags != 0)
    prompts, models, low, n_dropped = complete_cells(answered, records.model_ids, records.min_coverage, dataset)
    low, n_dropped = sorted([*(records.dropped_models or []), *low]), n_dropped + records.dropped_prompts
    flags = None if records.flags is None else records.flags[prompts][:, models]
    all_prompts, all_models = len(prompts) == present.shape[0], len(models) == present.shape[1]
    # advanced indices on the leading axes give one C-order copy (a slice between them would not)
    kept = (prompts, slice(None)) if all_models else (prompts[:, None], models)
    used = np.flatnonzero((present if all_prompts and all_models else present[kept]).any(axis=(0, 1)))
    g = int(used[-1]) + 1 if len(used) else 1  # no slot: the kept cells' records all break a rule (`_check`)

    def cut(a: np.ndarray) -> np.ndarray:
        """The complete cases' slots of a (N, L, G) tensor: one C-order copy (a view when nothing is dropped)."""
        if all_prompts and all_models:
            return a if g == a.shape[2] else np.ascontiguousarray(a[:, :, :g])
        return np.ascontiguousarray(a[(*kept, slice(0, g))])

    correct = cut(correct)  # the uncut tensor goes (records gave it up)
    present = cut(present)
    model_ids, prompt_ids = records.model_ids[models], records.prompt_ids[prompts]
    # records of no query id stay when no prompt is dropped (`complete_cases` keeps every kept model's rows)
    null_query = np.zeros(len(records.model_ids), dtype=np.uint8)
    if n_dropped == 0:
        null_query[records.null_query_models] = records.null_query_kinds
    null_query = null_query[models]
    record_cost, blended, basis, unpriced = _costs(records, present, cut, model_ids, model_costs, dataset, flags,
                                                   null_query)
    per_cell = present.sum(axis=2, dtype=np.int32)  # G_l per cell (its float copy is `trials`)
    _check(records, correct, present, per_cell, flags, prompts, models, model_ids, n_dropped, dataset)
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
    return prepared(dataset, basis, full, sets, per_model, unpriced, low, n_dropped)


def complete_cells(answered: np.ndarray, model_ids: np.ndarray, min_coverage: float,
                    dataset: str) -> tuple[np.ndarray, np.ndarray, list[str], int]:
    """`prepare.complete_cases` on the (N, L) cells some record answers: (kept prompts, kept models, dropped models,
    dropped prompts)."""
    low = low_coverage(answered.sum(axis=0), min_coverage)
    models = np.flatnonzero(~low)
    kept = answered if not low.any() else answered[:, models]
    full = kept.all(axis=1)
    if not full.any():
        raise no_complete_prompt(dataset, model_ids[models])
    return np.flatnonzero(full), models, sorted(model_ids[low].tolist()), int(kept.any(axis=1).sum() - full.sum())


def _costs(records: DenseRecords, present: np.ndarray, cut, model_ids: np.ndarray, model_costs: pd.DataFrame,
           dataset: str, flags: np.ndarray | None, null_query: np.ndarray
           ) -> tuple[np.ndarray | None, pd.Series | None, str, list[str]]:
    """`prepare.record_costs` on the slots, the kept cells' `flags` and the kept records' of no query id
    (`null_query`, (L,) bits): (record costs or None, blended price per model or None, basis, unpriced models)."""
    def flagged(bit: int) -> np.ndarray:
        return _flagged(flags, bit, null_query)

    if records.cost is not None:
        cost = cut(records.take("cost"))
        missing = (present & np.isnan(cost)).any(axis=(0, 2)) | flagged(NO_COST)
        if not missing.any():
            negative = (cost < 0).any(axis=(0, 2)) | flagged(NEGATIVE_COST)
            if negative.any():
                raise negative_cost(dataset, model_ids[negative])
            return cost, None, "per_query_usd", []
        if np.any(present & ~np.isnan(cost)) or flagged(HAS_COST).any():
            raise partial_cost(dataset, model_ids[missing])
    prices = model_prices(model_costs, dataset)
    unpriced = [m for m in model_ids if m not in prices.index]
    if records.tokens is not None:
        tokens_in, tokens_out = records.take("tokens")
        tokens_in, tokens_out = cut(tokens_in), cut(tokens_out)
        if not (np.isnan(tokens_in) & present).any() and not (np.isnan(tokens_out) & present).any() and \
                not flagged(NO_TOKENS).any():
            p = prices.reindex(model_ids)
            usd = _token_cost(tokens_in, tokens_out, p["input_usd_per_mtok"].to_numpy()[None, :, None],
                              p["output_usd_per_mtok"].to_numpy()[None, :, None])
            return usd, None, "tokens_x_price_usd", unpriced
    return None, prices["blended_usd_per_mtok"], "blended_price_usd_per_mtok", unpriced


def _flagged(flags: np.ndarray | None, bit: int, null_query: np.ndarray | None = None) -> np.ndarray:
    """(L,): some record of the model no slot holds (`flags`, the kept cells') or of no query id (`null_query`, the
    models' bits) has `bit`."""
    models = np.zeros(0 if flags is None else flags.shape[1], dtype=bool) if null_query is None else \
        (null_query & bit) != 0
    return models if flags is None else (flags & bit).any(axis=0) | models


def _check(records: DenseRecords, correct: np.ndarray, present: np.ndarray, per_cell: np.ndarray,
           flags: np.ndarray | None, prompts: np.ndarray, models: np.ndarray, model_ids: np.ndarray, n_dropped: int,
           dataset: str) -> None:
    """`build_arrays`' rules, in its order, on the records of the kept cells (`correct`, `present`, `per_cell` cut
    to them; `flags` theirs; `prompts`, `models` the kept codes): `build_arrays`' error where one breaks."""
    def flagged(bit: int) -> bool:
        return bool(_flagged(flags, bit).any())

    # a record without a query id stays when no prompt is dropped (`complete_cases` keeps every kept model's rows)
    nulls = [c for c, bad in (("query_id", n_dropped == 0 and np.isin(records.null_query_models, models).any()),
                              ("generation", flagged(NULL_GENERATION)), ("correct", flagged(NULL_CORRECT))) if bad]
    if nulls:
        raise null_values(dataset, nulls)
    if records.not_binary is not None:  # counted in DuckDB: every kept record's, slotted or not
        if len(records.not_binary):
            raise not_binary_correct(dataset, records.not_binary)
    else:
        not_binary = present & (correct != 0.0) & (correct != 1.0)
        if not_binary.any():
            raise not_binary_correct(dataset, correct[not_binary])
    if flagged(NOT_INTEGER):
        raise not_integer_generations(dataset)
    if len(model_ids) < 2:
        raise too_few_models(dataset, model_ids)
    if records.duplicates is not None and len(records.duplicates):
        n_models = len(records.model_ids)
        if np.any(np.isin(records.duplicates // n_models, prompts)
                  & np.isin(records.duplicates % n_models, models)):
            raise duplicate_records(dataset)
    if records.generations is not None:  # some records past the slots: the rule as DuckDB counted it
        g_model, uneven, beyond = (a[models] for a in records.generations)
        generation_counts_rule(g_model, uneven, beyond, model_ids, dataset)
        return
    g_model = per_cell.max(axis=0)
    beyond = [bool(present[:, j, g_model[j]:].any()) for j in range(len(model_ids))]
    generation_rule(per_cell, g_model, beyond, model_ids, dataset)


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
        labels = np.append(records.categories.astype(object), None)
        out = labels[records.category[prompts, columns[0]]]
        if records.null_split_first is not None:  # a prompt of NULL- and empty-split records: a NULL one is first
            cells, codes = records.null_split_first
            n_models = len(records.model_ids)
            rank = np.full(n_models, len(columns))
            rank[columns] = np.arange(len(columns))
            at = np.searchsorted(prompts, cells // n_models)
            kept = (at < len(prompts)) & (prompts[np.minimum(at, len(prompts) - 1)] == cells // n_models) & \
                (rank[cells % n_models] < len(columns))
            # per prompt, its first set model's NULL-split record (cells sorted by rank, the first of each prompt)
            order = np.lexsort((rank[cells % n_models][kept], at[kept]))
            first = np.unique(at[kept][order], return_index=True)[1]
            out[at[kept][order][first]] = labels[codes[kept][order][first]]
        return out
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
