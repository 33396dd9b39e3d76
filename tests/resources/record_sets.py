"""Generated per-query record sets, valid or broken by one or two perturbations (issue 45's differential property,
tests/resources/test_preparation_property.py, and the oracle asset's bad-record property,
tests/assets/oracle/test_bad_records_property.py)."""

import warnings

import numpy as np
import pandas as pd
from hypothesis import example, note
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
def record_sets(draw, kinds: st.SearchStrategy[str] = st.sampled_from(PERTURBATIONS), perturbed_share: float = 0.35,
                null_split_share: float = 0.3) -> pd.DataFrame:
    """One dataset "p" of records, valid unless one or two perturbations (`perturbed_share` of the sets; one in ten
    has two) break or bend a rule, of the kinds drawn from `kinds` (a Hypothesis draw: a failing example replays
    with its kinds; they are `note`d and kept in `frame.attrs["perturbations"]`). In `null_split_share` of the split
    sets one train query's records have no split (valid for the preparations; in a file, an empty cell of a split
    column is an ingest error)."""
    n_models = draw(st.integers(2, 4))
    models = sorted(draw(st.permutations(MODELS))[:n_models])
    n_queries = 20 if draw(st.integers(0, 3)) == 0 else draw(st.integers(2, 6))
    g = draw(st.integers(1, 2))
    short = draw(st.booleans()) and n_models >= 3 and g == 2  # one single-generation model among G = 2 ones
    costed, split, category = draw(st.booleans()), draw(st.booleans()), draw(st.booleans())
    seed = draw(st.integers(0, 2 ** 32 - 1))
    drawn_kinds = (draw(kinds), draw(kinds))
    frame = record_set(models, n_queries, g, short, costed, split, category, seed, drawn_kinds, perturbed_share,
                       null_split_share)
    note(f"perturbations: {frame.attrs['perturbations']}")
    return frame


def record_set(models: list[str], n_queries: int, g: int, short: bool, costed: bool, split: bool, category: bool,
               seed: int, kinds: tuple[str, str], perturbed_share: float, null_split_share: float) -> pd.DataFrame:
    """`clean_records` of these parameters with none, the first or both of `kinds` applied (`record_sets`)."""
    rng = np.random.default_rng(seed)
    frame = clean_records(models, n_queries, g, short, costed, split, category, rng)
    # NULL splits and how many perturbations decided by a generator seeded with every draw: Hypothesis' own draws
    # lean to small values and dwell on a neighbourhood (5 or 21 perturbed sets of 40 by the seed)
    pick = np.random.default_rng([seed, len(models), n_queries, g, short, costed, split, category,
                                 *map(ord, models)])
    if split and pick.random() < null_split_share:  # valid: one train query's records without a split (oracle key "/q", train)
        frame.loc[frame["query_id"].eq(f"q{pick.integers(n_queries)}") & frame["split"].eq("train"), "split"] = None
    chance = pick.random()
    applied = list(kinds[:2 if chance < 0.1 else 1 if chance < perturbed_share else 0])
    for kind in applied:
        frame = perturbed(frame, kind, pick)
    frame = frame.sample(frac=1.0, random_state=int(rng.integers(0, 1000)))  # stored in no order
    frame.attrs["perturbations"] = applied
    return frame


def one_of_each(kinds: tuple[str, ...], seed: int) -> list[pd.DataFrame]:
    """A record set broken by each of `kinds` (twice in one in ten), the other parameters drawn by a generator of
    `seed` in `record_sets`' ranges: explicit examples that meet every kind, whatever Hypothesis draws."""
    rng, out = np.random.default_rng(seed), []
    for kind in kinds:
        n_models = int(rng.integers(2, 5))
        models = sorted(rng.permutation(MODELS)[:n_models].tolist())
        n_queries = 20 if rng.integers(0, 4) == 0 else int(rng.integers(2, 7))
        g = int(rng.integers(1, 3))
        short = bool(rng.integers(0, 2)) and n_models >= 3 and g == 2
        costed, split, category = (bool(b) for b in rng.integers(0, 2, size=3))
        out.append(record_set(models, n_queries, g, short, costed, split, category, int(rng.integers(0, 2 ** 32)),
                              (kind, kind), 1.0, 0.0))
    return out


def with_examples(test, frames):
    """`test` with one explicit example per frame (Hypothesis' explicit phase runs them before it generates)."""
    for frame in frames:
        test = example(frame)(test)
    return test


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
