"""`compass route`: route a file of queries with a dataset's served meta-router (seed 003, eq. 4, App. A.1).

The router is read from the warehouse (router/deployment: embedder and forest as arrays), so routing needs no
pickle and no refit; `--export` writes the same arrays as one JSON file a gateway can load.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd


DEFAULT_SHARE = 0.3


class QueryFileError(ValueError):
    """A bad --queries file: names the file, and the row and column where there is one."""


def read_queries(path: Path, embedder_kind: str, dim: int | None = None) -> pd.DataFrame:
    """The user's queries: `query_text` (or `embedding`, a JSON list of `dim` finite numbers, for a router fitted on
    embeddings), and an optional `query_id` (default: the row number)."""
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    except (OSError, pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise QueryFileError(f"{path}: cannot read the queries file ({str(exc).splitlines()[0]})") from None
    column = "embedding" if embedder_kind == "pca" else "query_text"  # pca: the user's own embeddings
    if column not in frame.columns:
        raise QueryFileError(f"{path}: column {column!r} is missing (columns present: {list(frame.columns)})")
    if frame.empty:
        raise QueryFileError(f"{path}: no queries")
    blank = np.flatnonzero(frame[column].str.strip() == "")
    if len(blank):
        raise QueryFileError(f"{path}: row {blank[0] + 1}, column {column}: blank query "
                             f"({len(blank)} blank row(s)); remove it or give its text")
    if column == "embedding":
        vectors = []
        for row, text in enumerate(frame["embedding"], start=1):
            try:
                vector = np.asarray(json.loads(text), dtype=float)
            except (ValueError, TypeError, OverflowError):
                vector = None
            if vector is None or vector.ndim != 1 or not np.isfinite(vector).all():
                raise QueryFileError(f"{path}: row {row}, column embedding: not a JSON list of finite numbers")
            if dim is not None and len(vector) != dim:
                raise QueryFileError(f"{path}: row {row}, column embedding: {len(vector)} numbers; the router was "
                                     f"fitted on embeddings of {dim}")
            vectors.append(vector)
        frame["embedding"] = vectors
    if "query_id" not in frame.columns:
        frame["query_id"] = [str(i) for i in range(1, len(frame) + 1)]
    return frame


def _router_name(facts: dict) -> str:
    """"meta_cv (chose mean_shift)" for the CV-chosen meta-router, else the router's name."""
    chosen = facts.get("chosen")
    return f"{facts['router']} (chose {chosen})" if chosen and chosen != facts["router"] else str(facts["router"])


def export_router(path: Path, embedder, nodes: pd.DataFrame, facts: dict,
                  prices: tuple[tuple[float, float], tuple[float, float]] | None, threshold: dict) -> None:
    """One JSON file: what the router is, the rule, the threshold w of the budget (App. A.1, chosen on held-out gold
    queries), the pair's prices, the embedder's arrays and the forest's node arrays per tree."""
    trees = [{c: tree[c].tolist() for c in ("left", "right", "feature", "threshold", "value")}
             for _, tree in nodes.sort_values(["tree", "node"]).groupby("tree", sort=True)]
    walk = ("psi_hat = mean over trees of the leaf value reached by x (go left iff x[feature] <= threshold); "
            "x = (f(q) - centre) @ loadings")
    rule = ("route to model_p iff psi_hat > w * (cost_p - cost_a) (eq. 4, Remark 2), cost = (input tokens * input "
            "price + output tokens * output price) / 1e6 with prices_usd_per_mtok; " if prices else
            "route to model_p iff psi_hat > w (normalized costs, eq. 4); ")
    doc = {"router": {k: (v.item() if hasattr(v, "item") else v) for k, v in facts.items()},
           "rule": rule + walk,
           "threshold": threshold,
           "prices_usd_per_mtok": None if prices is None else {
               "model_p": {"input": prices[0][0], "output": prices[0][1]},
               "model_a": {"input": prices[1][0], "output": prices[1][1]}},
           "embedder": {"kind": embedder.kind, "terms": list(embedder.terms or []),
                        "idf": [] if embedder.idf is None else embedder.idf.tolist(),
                        "centre": embedder.centre.tolist(), "loadings": embedder.loadings.tolist()},
           "forest": trees}
    path.write_text(json.dumps(doc))


def cmd_route(args: argparse.Namespace) -> int:
    from compass.router.decision import budget_overrun, choose_w, route_to_primary
    from compass.router.export import forest_predict
    from compass.embeddings import embed_queries
    from compass.router.study import query_costs
    from pipelines.formatting import pct, usd
    from resources import readers
    from resources.warehouse import Warehouse

    try:
        embedder, nodes, facts = readers.router_deployment(Warehouse(), args.dataset)
    except LookupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    prices = readers.router_pair_prices(Warehouse(), args.dataset)
    budget = {"max_primary_share": args.budget_share, "max_cost_share": args.max_cost_share}
    if budget["max_primary_share"] is None and budget["max_cost_share"] is None:
        budget["max_primary_share"] = DEFAULT_SHARE
    for flag, value in zip(("--budget-share", "--max-cost-share"), budget.values()):
        if value is not None and not 0 <= value <= 1:
            print(f"error: {flag} must be in [0, 1], got {value}", file=sys.stderr)
            return 2
    if budget["max_cost_share"] is not None and prices is None:
        print(f"error: --max-cost-share needs prices for {facts['model_p']} and {facts['model_a']} in "
              f"raw.model_costs (router.prices has none for {args.dataset!r}); use --budget-share", file=sys.stderr)
        return 2
    try:
        holdout = readers.router_holdout(Warehouse(), args.dataset)
    except LookupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    # App. A.1: w is chosen once, on the held-out gold queries, and then applied to any batch (one query included)
    # Remark 2: real per-query dollars when the pair is priced, else the paper's normalized C_p = 1, C_a = 0
    def costs(rows: pd.DataFrame, n: int) -> tuple[np.ndarray, np.ndarray]:
        return query_costs(rows, *prices) if prices else (np.ones(n), np.zeros(n))

    held_p, held_a = costs(holdout, len(holdout))
    held_psi = holdout["psi_hat"].to_numpy(float)
    w = choose_w(held_psi, held_p - held_a, cost_p=held_p, cost_a=held_a, **budget)
    held_to_p = route_to_primary(held_psi, w, held_p - held_a)
    held_share = float(held_to_p.mean())
    threshold = {"w": w, "cost_basis": "usd" if prices else "normalized", **budget,
                 "share_to_primary_on_held_out": held_share, "held_out_queries": len(holdout),
                 "psi_units": "normalized (gold labels times scale_c)", "scale_c": facts["scale_c"]}
    if args.export:
        export_router(Path(args.export), embedder, nodes, facts, prices, threshold)
        print(f"wrote the {args.dataset} router ({_router_name(facts)}, {facts['n_trees']} trees, w = {w:.4g}) to "
              f"{args.export}", file=sys.stderr)
    if args.queries is None:
        return 0
    try:
        queries = read_queries(Path(args.queries), embedder.kind, len(embedder.centre))
    except QueryFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    psi = forest_predict(nodes, embed_queries(embedder, queries))
    # a batch rarely knows its output tokens: fill them with the held-out rows' medians, the basis w was chosen on
    queries = queries.assign(**{c: holdout[c].median() for c in ("tokens_out_p", "tokens_out_a")
                                if c not in queries and c in holdout and holdout[c].notna().any()})
    cost_p, cost_a = costs(queries, len(psi))
    to_p = route_to_primary(psi, w, cost_p - cost_a)  # eq. 4: ψ̂(q) > w·(C_p(q) − C_a(q))
    out = pd.DataFrame({"query_id": queries["query_id"], "psi_hat": psi,
                        "psi_hat_gold_units": psi / facts["scale_c"],
                        "route": np.where(to_p, facts["model_p"], facts["model_a"])})
    spend = ""
    if prices:
        out["cost_usd"] = np.where(to_p, cost_p, cost_a)
        spend = f"; {usd(out['cost_usd'].sum())} against {usd(cost_p.sum())} for always-{facts['model_p']}"
    # people read these: ψ̂ to 4 significant digits, dollars to 4 (a batch's sum is printed from the unrounded costs)
    out.round({"psi_hat": 4, "psi_hat_gold_units": 4}).assign(
        **({"cost_usd": out["cost_usd"].map(lambda v: float(f"{v:.4g}"))} if prices else {})
    ).to_csv(args.out or sys.stdout, index=False)
    limits = ", ".join(f"{name} {pct(value, default_decimals=0)}" for name, value in (
        ("share", budget["max_primary_share"]), ("cost share", budget["max_cost_share"])) if value is not None)
    print(f"{_router_name(facts)}: {to_p.sum()} of {len(out)} queries to {facts['model_p']} "
          f"({pct(to_p.mean(), default_decimals=0)} of this batch; {pct(held_share, default_decimals=0)} of the {len(holdout)} held-out gold queries; budget: "
          f"{limits}; w = {w:.4g} chosen on those held-out queries), the rest to {facts['model_a']}{spend}. "
          f"psi_hat is in the router's normalized units (gold labels x {facts['scale_c']:.3g}); psi_hat_gold_units "
          "is the expected gold-label gain of the primary model", file=sys.stderr)
    for name, realized, target, se in budget_overrun(to_p, cost_p, cost_a, held_to_p, held_p, held_a, **budget):
        print(f"warning: this batch's {name} to {facts['model_p']} is {pct(realized, default_decimals=0)}, over the "
              f"{pct(target, default_decimals=0)} budget by more than twice its sampling error "
              f"({pct(se, default_decimals=1)} for {len(out)} queries): the budget holds on traffic like the "
              f"{len(holdout)} held-out gold queries w was chosen on, and these queries are unlike them "
              "(their psi_hat runs higher)", file=sys.stderr)
    return 0


def add_route_parser(sub: argparse._SubParsersAction) -> None:
    route = sub.add_parser("route", help="route queries with a dataset's meta-router (seed 003), or export it")
    route.add_argument("--dataset", required=True, help="routing dataset of raw.route_labels")
    route.add_argument("--queries", help="CSV with query_text (and optional query_id)")
    route.add_argument("--budget-share", dest="budget_share", type=float, default=None,
                       help=f"the expected share of queries sent to the primary model on traffic like the held-out "
                            f"gold queries w is chosen on (App. A.1), not a cap on each batch: a batch unlike them "
                            f"can exceed it (a warning says so); default {DEFAULT_SHARE:g} when no --max-cost-share "
                            "is given")
    route.add_argument("--max-cost-share", dest="max_cost_share", type=float, default=None,
                       help="the expected total cost as a share of always-primary's, in dollars from the catalog's "
                            "prices, on traffic like the held-out gold queries (App. A.1); a batch unlike them can "
                            "exceed it (a warning says so)")
    route.add_argument("--out", help="output CSV (default: stdout)")
    route.add_argument("--export", help="write the router (embedder and forest arrays) as one JSON file")
    route.set_defaults(func=cmd_route)
