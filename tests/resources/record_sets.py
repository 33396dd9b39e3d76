"""Generated per-query record sets, valid or broken by one or two perturbations (issue 45's differential property,
tests/resources/test_preparation_property.py, and the oracle asset's bad-record property,
tests/assets/oracle/test_bad_records_property.py)."""

import warnings
from collections.abc import Iterator

import numpy as np
import pandas as pd
from hypothesis import strategies as st

MODELS = ("a", "b", "c", "d", "e", "f")  # a..e priced (test_oracle_extract.`_prices`), f not
PERTURBATIONS = ("null_generation", "null_correct", "missing_record", "duplicate_record", "nan_cost",
                 "not_binary", "null_query_id", "negative_generation", "fractional_generation", "stray_generation",
                 "no_generation_no_cost", "sparse_models", "empty_split")


def clean_records(models: list[str], n_queries: int, g: int, short: bool, costed: bool, split: bool, category: bool,
                  rng: np.random.Generator) -> pd.DataFrame:
    """Dataset "p": every model answering every query (of a train and a test split, ids reused, when `split`) with
    G = `g` generations (the first model 1 when `short`), random correctness, confidences, costs (when `costed`),
    latencies, token counts and categories (when `category`)."""
    rows = []
    for s in ("train", "test") if split else (None,):
        for q in range(n_queries):
            for j, model in enumerate(models):
                for generation in range(1 if short and j == 0 else g):
                    rows.append({"dataset": "p", "split": s, "query_id": f"q{q}", "model_id": model,
                                 "generation": generation, "correct": float(rng.integers(0, 2)),
                                 "confidence": float(np.log(0.05 + 0.9 * rng.random())) if generation == 0 else None,
                                 "cost_usd": float(rng.random()) / 100 if costed else None,
                                 "latency_ms": 100 + 50 * rng.random(), "tokens_in": float(rng.integers(10, 500)),
                                 "tokens_out": float(rng.integers(10, 500)),
                                 "category": f"c{q % 3}" if category else None})
    frame = pd.DataFrame(rows)
    frame["cost_usd"] = frame["cost_usd"].astype(float)
    return frame


@st.composite
def record_sets(draw, turns: Iterator[int], kinds: tuple[str, ...] = PERTURBATIONS, perturbed_share: float = 0.35,
                null_split_share: float = 0.3) -> pd.DataFrame:
    """One dataset "p" of records, valid unless one or two perturbations (`perturbed_share` of the sets; one in ten
    has two) break or bend a rule. The perturbations are `kinds` in turn (`turns` counts them): Hypothesis' seeds
    repeat (one kind drawn 9 times in 23, six never). In `null_split_share` of the split sets one train query's
    records have no split (valid for the preparations; in a file, an empty cell of a split column is an ingest
    error)."""
    n_models = draw(st.integers(2, 4))
    models = sorted(draw(st.permutations(MODELS))[:n_models])
    n_queries = 20 if draw(st.integers(0, 3)) == 0 else draw(st.integers(2, 6))
    g = draw(st.integers(1, 2))
    short = draw(st.booleans()) and n_models >= 3 and g == 2  # one single-generation model among G = 2 ones
    costed, split, category = draw(st.booleans()), draw(st.booleans()), draw(st.booleans())
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    frame = clean_records(models, n_queries, g, short, costed, split, category, rng)
    # NULL splits and perturbations decided by a generator seeded with every draw: Hypothesis' own draws lean to
    # small values and dwell on a neighbourhood (5 or 21 perturbed sets of 40 by the seed, one kind 13 times)
    pick = np.random.default_rng([seed, n_models, n_queries, g, short, costed, split, category, *map(ord, models)])
    if split and pick.random() < null_split_share:  # valid: one train query's records without a split (oracle key "/q", train)
        frame.loc[frame["query_id"].eq(f"q{pick.integers(n_queries)}") & frame["split"].eq("train"), "split"] = None
    chance = pick.random()
    for _ in range(2 if chance < 0.1 else 1 if chance < perturbed_share else 0):  # the kinds in turn: each one drawn
        frame = perturbed(frame, kinds[next(turns) % len(kinds)], pick)
    return frame.sample(frac=1.0, random_state=int(rng.integers(0, 1000)))  # stored in no order


def perturbed(frame: pd.DataFrame, perturbation: str, pick: np.random.Generator) -> pd.DataFrame:
    """`frame` with one record broken (or added, or taken away) as `perturbation` says."""
    frame = frame.reset_index(drop=True)
    i = int(pick.integers(len(frame)))
    row = frame.loc[[i]]
    added = {"null_query_id": {"query_id": None, "generation": int(pick.integers(0, 3))},
             "stray_generation": {"generation": 1000}, "no_generation_no_cost": {"generation": None, "cost_usd": None}}
    if perturbation in added:
        with warnings.catch_warnings():  # pandas' notice about the all-NA columns of the added row
            warnings.simplefilter("ignore", FutureWarning)
            frame.loc[len(frame)] = {**frame.loc[i].to_dict(), **added[perturbation]}
        return frame
    if perturbation == "missing_record":
        return frame.drop(index=i)
    if perturbation == "duplicate_record":
        return pd.concat([frame, row], ignore_index=True)
    if perturbation == "sparse_models":  # a few models answering one prompt each
        strays = frame.loc[pick.integers(len(frame), size=int(pick.integers(6, 11)))]
        return pd.concat([frame, strays.assign(model_id=[f"z{k}" for k in range(len(strays))], generation=0)],
                         ignore_index=True)
    if perturbation == "empty_split":
        frame.loc[frame["query_id"].eq(row["query_id"].iloc[0]) & frame["split"].eq("train"), "split"] = ""
        return frame
    column, value = {"null_generation": ("generation", None), "null_correct": ("correct", None),
                     "nan_cost": ("cost_usd", np.nan), "not_binary": ("correct", 2.0),
                     "negative_generation": ("generation", -1.0), "fractional_generation": ("generation", 0.5)
                     }[perturbation]
    frame[column] = frame[column].astype(object if value is None else float)
    frame.loc[i, column] = value
    return frame
