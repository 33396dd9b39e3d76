"""Matchmaking configuration (CUPID, seed 004): simulated users from `users/*.yaml` (resources.settings.user_dirs,
one dynamic partition each), model pools from data/matching/<pool>.csv or from a case of our own catalog
(`case:<case_id>`, read from the warehouse), the token model of a duel's cost, scenario export.

A bad user file is an IngestError naming the file and the key; a user whose constraints no model of its
pool meets is admissible (its runs report non-convergence) but warned about.
"""

from __future__ import annotations

import dataclasses
import io
import warnings
from functools import cache
from pathlib import Path

import pandas as pd
import yaml

from compass.ingest.errors import IngestError, IngestWarning
from compass.ingest.validate import MAX_USD_PER_MTOK
from compass.matching.costs import TokenModel
from compass.matching.pool import Pool, read_pool
from compass.matching.users import USER_KEYS, User
from resources import settings


def user_files() -> dict[str, Path]:
    """User name (file stem) -> YAML path; later folders override earlier ones."""
    return {p.stem: p for d in settings.user_dirs() if d.exists() for p in sorted(d.glob("*.yaml"))}


def pool_names() -> list[str]:
    return sorted(p.stem for p in settings.MATCHING_DATA_DIR.glob("*.csv") if p.stem != "matharena_tokens")


@cache
def _pool(name: str) -> Pool:
    return read_pool(settings.MATCHING_DATA_DIR / f"{name}.csv")


CASE_POOL = "case:"


def case_pool(wh, case_id: str) -> Pool:
    """A pool from our own catalog: the case's measures C1..Ck (compass.measures), the lowest list prices over
    providers (raw.model_costs) and the model attributes of raw.models (open_weights, context_window,
    reasoning, params_b); models without both prices are left out. Needs `compass run` first."""
    from compass.matching.pool import pool_from_frame
    from resources import readers

    prices = wh.query("select model_id, min(input_usd_per_mtok) as input_price, min(output_usd_per_mtok) as output_price "
                      "from raw.model_costs group by model_id")
    attributes = readers.model_attributes(wh)[["model_id", "open_weights", "context_window", "reasoning", "params_b"]]
    frame = (readers.measures(wh, case_id).reset_index().merge(prices.dropna(), on="model_id")
             .merge(attributes, on="model_id", how="left").rename(columns={"model_id": "model"}))
    numeric = frame.drop(columns="model").apply(lambda col: pd.to_numeric(col.astype("float64"), errors="coerce"))
    return pool_from_frame(f"{CASE_POOL}{case_id}", pd.concat([frame[["model"]], numeric], axis=1).astype(str))


def pool(name: str, wh=None) -> Pool:
    """A shipped model pool (data/matching/<name>.csv), or `case:<case_id>` from the warehouse `wh`."""
    if name.startswith(CASE_POOL) and wh is not None:
        return case_pool(wh, name[len(CASE_POOL):])
    if name not in pool_names():
        raise KeyError(f"no model pool {name!r}; known: {pool_names()} or case:<case_id>")
    return _pool(name)


def case_pool_for(path: Path, pool_name: str, wh) -> Pool:
    """The `case:<case_id>` pool of a user file, or a one-line IngestError on key `pool` saying what to run first."""
    if not wh.table_exists("compass.measures"):
        raise IngestError(str(path), None, "pool", f"{pool_name} reads compass.measures from the warehouse {wh.path}, "
                          "which has none yet: run `compass run` first")
    try:
        return case_pool(wh, pool_name[len(CASE_POOL):])
    except ValueError as err:
        raise IngestError(str(path), None, "pool", f"{err} (cases: `compass cases`)") from None


def case_measures(wh, case_id: str, models: list[str]) -> tuple[pd.DataFrame, list[str]]:
    """Measures C1..Ck of a case for the models of a person's pool (matched through data/model_aliases.parquet):
    the frame indexed by the pool's model names, and the names without measures. ValueError when the warehouse
    has no such case."""
    if not wh.table_exists("compass.measures"):
        raise ValueError(f"the warehouse {wh.path} has no compass.measures yet: run `compass run` first")
    from resources import readers

    table = readers.measures(wh, case_id)
    aliases = pd.read_parquet(settings.ROOT / "data" / "model_aliases.parquet")
    canonical = dict(zip(aliases["alias"].str.lower(), aliases["model_id"], strict=True))
    ids = {m: canonical.get(m.lower(), m.lower()) for m in models}
    found = [m for m in models if ids[m] in table.index]
    frame = table.loc[[ids[m] for m in found]].set_axis(found)
    return frame, [m for m in models if m not in found]


def token_model(absolute: bool = False) -> TokenModel:
    """Tokens per call from MathArena's AIME output-token counts (compass.matching.costs)."""
    return TokenModel.from_matharena(settings.MATCHING_DATA_DIR / "matharena_tokens.csv", absolute=absolute)


def read_yaml(path: Path) -> object:
    """A YAML file's content; a missing file or a syntax error is a one-line IngestError naming the line."""
    if not path.is_file():
        raise IngestError(str(path), None, None, "no such file; give the path of a user YAML such as users/a1.yaml")
    try:
        return yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        line = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise IngestError(str(path), None, None, f"not valid YAML{line}: {problem}") from None
    except UnicodeDecodeError as err:
        raise IngestError(str(path), None, None, f"not UTF-8 text (byte {err.start}); save the user file as UTF-8 YAML") from None


def load_user(path: Path, wh=None) -> tuple[User, Pool]:
    """One user file, validated against its pool's columns; the partition key (file stem) is its name. Under
    COMPASS_HEAVY=1 its runs use `heavy_seeds` where it has them.
    A `case:<case_id>` pool is read from the warehouse `wh`."""
    spec = read_yaml(path)
    if not isinstance(spec, dict):
        raise IngestError(str(path), None, None, f"expected a mapping with keys {list(USER_KEYS)}, got a "
                          f"{type(spec).__name__}; write one `key: value` per line (see users/a1.yaml)")
    pool_name = spec.get("pool")
    is_case = isinstance(pool_name, str) and pool_name.startswith(CASE_POOL) and wh is not None
    if not is_case and pool_name not in pool_names():
        raise IngestError(str(path), None, "pool", f"unknown pool {pool_name!r}; known: {pool_names()} "
                          f"(case:<case_id> where a warehouse is read)")
    the_pool = case_pool_for(path, pool_name, wh) if is_case else pool(pool_name)
    user = User.from_dict({**spec, "name": path.stem}, str(path), list(the_pool.metadata.columns))
    if settings.heavy() and user.heavy_seeds:
        user = dataclasses.replace(user, seeds=user.heavy_seeds)
    if not user.feasible(the_pool).any():
        warnings.warn(f"{path}: no model of pool {pool_name!r} meets every constraint; its runs cannot converge",
                      IngestWarning, stacklevel=2)
    return user, the_pool


def user(name: str, wh=None) -> tuple[User, Pool]:
    """The user of a partition key and its pool (a `case:<case_id>` pool is read from `wh`)."""
    files = user_files()
    if name not in files:
        raise KeyError(f"no user file {name}.yaml in {[str(d) for d in settings.user_dirs()]}")
    return load_user(files[name], wh)


ANSWER_COLUMNS = ("prompt", "model", "response")
PRICE_COLUMNS = ("input_price", "output_price")


def answers(responses: str | Path | None = None):
    """Answers to show in `compass match`: the arena-bench-v1 answers shipped in data/matching/, or a
    person's own CSV with columns prompt, model, response (an IngestError names a missing column)."""
    if responses is None:
        return pd.read_parquet(settings.MATCHING_DATA_DIR / "arena_bench_v1_answers.parquet")
    if not Path(responses).is_file():
        raise IngestError(str(responses), None, None, "no such file; --pool takes arena_bench_v1 or the path of a CSV "
                          f"with columns {', '.join(ANSWER_COLUMNS)}")
    try:
        table = pd.read_csv(responses, dtype=str, keep_default_na=False, na_values=[""])  # a model "nan" is a name
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        raise IngestError(str(responses), None, None, f"not a readable CSV ({str(err).splitlines()[0]}); need columns "
                          f"{', '.join(ANSWER_COLUMNS)}") from None
    missing = [c for c in ANSWER_COLUMNS if c not in table]
    if missing:
        raise IngestError(str(responses), None, missing[0], f"missing column; the file has {list(table.columns)}, "
                          f"need {list(ANSWER_COLUMNS)} (one row per prompt x model)")
    _check_answers(table, str(responses))
    return table.assign(question_id=table.groupby("prompt", sort=False).ngroup().astype(str))


def _check_answers(table: pd.DataFrame, file: str) -> None:
    """Every prompt, model and response cell filled; prices, where given, numbers in [0, MAX_USD_PER_MTOK] (an
    empty price leaves the model out). The first bad cell is an IngestError naming its row and column."""
    def fail(bad: pd.Series, column: str, message: str) -> None:
        if bad.any():
            row = int(bad.to_numpy().argmax())
            value = table[column].iloc[row]
            raise IngestError(file, row + 1, column, message + ("" if pd.isna(value) else f" (value {str(value)!r})"))

    for column in ANSWER_COLUMNS:
        fail(table[column].isna() | (table[column].astype(str).str.strip() == ""), column,
             "empty cell: every row needs a prompt, a model and a response")
    for column in PRICE_COLUMNS:
        if column in table:
            price = pd.to_numeric(table[column], errors="coerce")
            fail(table[column].notna() & ~price.between(0, MAX_USD_PER_MTOK), column,
                 f"a price must be a number of USD per 1M tokens from 0 to {MAX_USD_PER_MTOK:g}")


ARENA_PRICES = "arena_bench_v1_prices.csv"  # LMArena's 2024-10-16 list prices of the shipped models (data/matching)


def model_prices(table) -> pd.DataFrame:
    """Per model of an answers table: `input_usd_per_mtok`, `output_usd_per_mtok` and where they come from
    (`price_source`), or, where no source prices it, empty prices and the `reason`.

    Sources in order: the table's own `input_price`, `output_price` columns (USD / 1M tokens) when it has them; else
    the catalog (the provider with the lowest blended price in the embedded data/model_costs.parquet, matched through
    data/model_aliases.parquet); else LMArena's price table of 2024-10-16 (data/matching/arena_bench_v1_prices.csv,
    built by scripts/build_matching_data.py)."""
    models = sorted(table["model"].unique())
    columns = ["input_usd_per_mtok", "output_usd_per_mtok"]
    if {"input_price", "output_price"} <= set(table.columns):
        given = (table.groupby("model")[["input_price", "output_price"]].first().set_axis(columns, axis=1)
                 .apply(pd.to_numeric, errors="coerce"))
        priced = given.notna().all(axis=1)
        return given.assign(price_source=priced.map({True: "your file", False: None}),
                            reason=priced.map({True: None, False: "no input_price / output_price in your file"}))
    data = settings.ROOT / "data"
    aliases = pd.read_parquet(data / "model_aliases.parquet")
    costs = pd.read_parquet(data / "model_costs.parquet")
    canonical = dict(zip(aliases["alias"].str.lower(), aliases["model_id"], strict=True))
    cheapest = (costs.dropna(subset=columns).sort_values(["blended_usd_per_mtok", "provider"])
                .drop_duplicates("model_id").set_index("model_id"))  # one provider's price, the lowest blended
    lines = (data / "matching" / ARENA_PRICES).read_text().splitlines(keepends=True)
    arena = pd.read_csv(io.StringIO("".join(ln for ln in lines if not ln.startswith("#")))).set_index("model")
    rows = {}
    for model in models:
        model_id = canonical.get(model.lower(), model.lower())
        if model_id in cheapest.index:
            row = cheapest.loc[model_id]
            rows[model] = (*row[columns], f"catalog: {row['provider']} via {row['source']} ({row['as_of']})", None)
        elif model in arena.index and arena.loc[model, columns].notna().all():
            row = arena.loc[model]
            rows[model] = (*row[columns], f"LMArena price table {row['as_of']} ({row['price_page']})", None)
        else:
            reason = ("not in the catalog; LMArena's 2024-10-16 price table lists it without a price" if model in arena.index
                      else "in no price source: not in the catalog nor in LMArena's 2024-10-16 price table")
            rows[model] = (None, None, None, reason)
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=[*columns, "price_source", "reason"])
    return frame.rename_axis("model")


def priced_pool(table, name: str) -> tuple[Pool, dict[str, str]]:
    """The models of an answers table that have a price (`model_prices`), and each model without one with the
    reason."""
    from compass.matching.pool import pool_from_frame

    prices = model_prices(table)
    priced = prices[prices["reason"].isna()]
    frame = pd.DataFrame({"model": priced.index, "input_price": priced["input_usd_per_mtok"].to_numpy(),
                          "output_price": priced["output_usd_per_mtok"].to_numpy()})
    return pool_from_frame(name, frame.astype(str)), prices["reason"].dropna().to_dict()


def write_scenario(path: str | Path, spec: dict, notes: list[str]) -> Path:
    """A scenario YAML (compass.mlcompass.scenarios) exported from a session, with what it could not carry as comments."""
    path = Path(path)
    header = "# Exported from a CUPID matchmaking session (compass.matching.bridge).\n"
    header += "".join(f"# not exported (no scenario counterpart): {n}\n" for n in notes)
    path.write_text(header + yaml.safe_dump(spec, sort_keys=False))
    return path
