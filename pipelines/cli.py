"""The `compass` command line: run the pipeline and read the warehouse."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import shutil
import sys
import threading
from pathlib import Path
from typing import NoReturn

from pipelines.route_cli import add_route_parser
from resources.settings import DEFAULT_DB, ROOT, log_dir


def prepare_environment(config: str | None = None, db: str | None = None) -> None:
    """Point Dagster at var/dagster_home (seeded with the repo's dagster.yaml) and the warehouse."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        os.environ.setdefault(var, "1")  # BLAS threads only contend on small machines
    home = Path(os.environ.setdefault("DAGSTER_HOME", str(ROOT / "var" / "dagster_home")))
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "dagster.yaml").exists():
        shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    if config:
        os.environ["COMPASS_CONFIG"] = str(Path(config).resolve())
    if db:
        os.environ["COMPASS_DB"] = str(Path(db).resolve())
    os.environ.setdefault("COMPASS_DB", str(ROOT / DEFAULT_DB))


class UsageError(Exception):
    """A mistake in what was typed (an unknown case, scenario, dataset or file): one line, exit code 2."""


def choices(names) -> str:
    names = sorted(names)
    return ", ".join(names) if names else "(none)"


def known_case(case_id: str):
    """The case study `case_id`, or a UsageError naming the valid ones."""
    from resources.configs import cases

    known = cases()
    if case_id not in known:
        raise UsageError(f"unknown case {case_id!r}; valid cases: {choices(known)}")
    return known[case_id]


def resolve_scenario(name_or_path: str, case):
    """(name, scenario with a numeric λ) for a shipped scenario's name or a scenario YAML file's path."""
    from compass.mlcompass.decisions import numeric_lambda
    from compass.mlcompass.scenarios import Scenario
    from resources.configs import scenario_files, scenario_for

    shipped = scenario_files()
    if name_or_path in shipped:
        scenario = scenario_for(name_or_path, case)
        _check_providers(scenario, str(shipped[name_or_path]))
        return name_or_path, scenario
    path = Path(name_or_path)
    if not path.is_file():
        kind = "scenario file" if path.suffix in (".yaml", ".yml") or "/" in name_or_path else "scenario"
        raise UsageError(f"unknown {kind} {name_or_path!r}; shipped scenarios: {choices(shipped)}, "
                         "or the path of a scenario YAML file")
    scenario = Scenario.from_yaml(path)  # an IngestError names the file, line and key
    _check_providers(scenario, str(path))
    return scenario.name, numeric_lambda(scenario, case)


def _check_providers(scenario, origin: str) -> None:
    """A scenario's `providers` filter naming a provider the warehouse has no price from is bad input (an
    IngestError naming `origin`, the key and the valid providers); the warehouse is read only for that filter."""
    from resources.readers import check_providers

    if (scenario.filters or {}).get("providers"):
        check_providers(_warehouse(), scenario, origin)


def check_scenarios() -> None:
    """Every scenario file of the configured folders parses (its keys, `tolerance`, filters and weights) before a
    refresh writes anything: a broken one is rejected input (an IngestError naming the file and key)."""
    from compass.mlcompass.scenarios import Scenario
    from resources.configs import scenario_files

    for path in scenario_files().values():
        Scenario.from_yaml(path)


def _warehouse():
    from resources.warehouse import Warehouse

    return Warehouse()


@contextlib.contextmanager
def dagster_logs_to(path: Path | None):
    """Send everything written to file descriptor 2 (Dagster's console logs, stack traces, warnings; child
    processes too) to `path` while the block runs; None leaves them on the console (`compass run -v`)."""
    if path is None:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stderr.flush()
    saved = os.dup(2)
    with open(path, "w") as log, contextlib.redirect_stderr(log):
        os.dup2(log.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


INTERRUPTED = ("interrupted: the refresh stopped and its workers with it; what it published stays, its unfinished "
               "runs are marked failed and re-run by the next `compass run`")


def cmd_run(args: argparse.Namespace) -> int:
    from pipelines import interrupts

    # Ctrl-C or SIGTERM at any moment, the definitions' import included: one line, exit 130 (pipelines/interrupts.py).
    with interrupts.watching(INTERRUPTED):
        try:
            return _run(args)
        except BaseException as exc:
            if not interrupts.caused(exc):
                raise
    print(INTERRUPTED, file=sys.stderr)
    return 130


def _run(args: argparse.Namespace) -> int:
    import time

    import dagster as dg

    from compass.ingest.errors import IngestError
    from pipelines.definitions import defs
    from pipelines.partition_report import dataset_recompute_line
    from pipelines.refresh import refresh
    from pipelines.run_pool import WorkerDied
    from pipelines.summary import print_summary
    from resources.warehouse import RefreshInProgress, Warehouse

    source_keys = [k for k in defs.resolve_asset_graph().materializable_asset_keys if k.path[0] == "raw"]
    log_path = None if args.verbose else log_dir() / "run.log"
    start = time.monotonic()

    def progress(line: str) -> None:
        print(f"[{time.monotonic() - start:6.1f} s] {line}", flush=True)

    error = None
    try:
        # The refresh lock before the log: a refused second refresh must not truncate the running one's log.
        with Warehouse().refreshing(), dg.DagsterInstance.get() as instance, dagster_logs_to(log_path):
            try:
                check_scenarios()
                report = refresh(defs, instance, source_keys, multiprocess=args.multiprocess, progress=progress,
                                 jobs=args.jobs)
                recomputed = dataset_recompute_line(defs, instance, report)
            except (IngestError, WorkerDied) as exc:
                error = exc
    except RefreshInProgress as exc:
        error = exc
    if isinstance(error, RefreshInProgress):
        print(f"error: {error}; wait for it to finish (`compass status`), nothing was changed", file=sys.stderr)
        return 3
    if isinstance(error, WorkerDied):
        print(f"error: {error}", file=sys.stderr)
        return 4
    if error is not None:
        print(f"error: rejected input, warehouse unchanged: {error}", file=sys.stderr)
        return 2
    print(f"refresh: {len(report.runs)} run(s), {report.ticks} automation tick(s), "
          f"{len(report.materialized)} asset materialization(s)" + (f"; Dagster's logs: {log_path}" if log_path else ""))
    if recomputed:
        print(recomputed)
    print_summary(_warehouse())
    if report.blocked_by:
        print(f"\nwarning: {len(report.blocked_by)} run(s) were unfinished when the refresh started "
              f"({', '.join(report.blocked_by[:5])}); their assets count as in progress, so nothing downstream "
              "of them ran. Finish or terminate them in `make ui` (Runs), then run again.", file=sys.stderr)
    for line in report.source_failures:  # the run completed with the source's previous rows (issue 36)
        print(f"warning: {line}", file=sys.stderr)
    if report.failed:
        print(f"\nfailed ({len(report.failed)}): {', '.join(report.failed)}", file=sys.stderr)
        for label, message in report.errors.items():
            print(f"\n{label}: {message}", file=sys.stderr)
        waiting = report.waiting_on_failures(defs)
        if waiting:
            print(f"\nnot run because of those failures ({len(waiting)}): {', '.join(waiting)}", file=sys.stderr)
        print(f"\nstack traces: {log_path or 'above'}; every run's events: `make ui`", file=sys.stderr)
        return 1
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    import time

    import dagster as dg

    from pipelines.summary import status_table

    wh = _warehouse()
    with dg.DagsterInstance.get() as instance:
        print(status_table(wh, instance).to_string(index=False))
    replica = wh.replica_path
    as_of = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(replica.stat().st_mtime)) if replica.exists() else "none yet"
    print(f"\nrefresh: {wh.refresh_status()}\nread replica for outside readers: {replica} (as of {as_of})")
    return 0


LEADERBOARD_COLUMNS = {"rank": "rank", "rank_90": "rank_90", "p_rank1": "p_rank1", "model_id": "model_id",
                       "usd_mtok": "usd_per_mtok", "usd_query": "usd_per_query", "usd_per_request": "usd_per_request",
                       "usd_per_month": "usd_per_month", "cost": "normalized_cost",
                       "raw_cost": "raw_cost", "score": "score", "utility": "utility", "binding": "binding", "dominates": "dominates",
                       "tier": "tier", "imputed_share": "imputed_share", "has_outcomes": "has_outcomes",
                       "extrapolated": "extrapolated", "outcome_range": "outcome_range",
                       "beyond_outcome_range": "beyond_outcome_range", "interval_conditional": "interval_conditional",
                       "near_leader": "near_leader"}


def board_text(board) -> str:
    """The leaderboard as a person reads it: dollars with `$`, probabilities and shares in %, no "e-05"."""
    from pipelines.formatting import number, pct, usd

    shown = board.copy()
    for col, fmt in (("usd_per_mtok", usd), ("usd_per_query", usd), ("usd_per_request", usd), ("usd_per_month", usd),
                     ("p_rank1", pct), ("imputed_share", pct)):
        if col in shown:
            shown[col] = shown[col].map(fmt)
    return shown.to_string(index=False, float_format=number)


def decision_inputs(wh, case, scenario):
    """`readers.decision_inputs`; a scenario the case cannot answer (an axis or a measure it lacks) is a UsageError
    saying why."""
    from compass.mlcompass.decisions import NotApplicable
    from resources import readers

    try:
        return readers.decision_inputs(wh, case, scenario)
    except NotApplicable as exc:
        raise UsageError(str(exc)) from None


def ranked_decision(wh, case, scenario, board):
    """(rank rows, decision rows) of a leaderboard `board` under `scenario` (λ numeric) from the case's bootstrap
    replicates (compass.rank_bootstrap): P(rank 1), the interval and the three picks of `decisions.decision_rows`;
    (None, the picks without P(rank 1) and with no bootstrap tolerance) before the bootstrap has run."""
    from compass.mlcompass.decisions import decision_rows, rank_uncertainty_frame
    from resources import readers

    if scenario.axes:  # axis scores are not bootstrapped: no P(rank 1), the scenario's tolerance or none
        return None, decision_rows(board, None, scenario)
    costs = wh.read("compass.costs", {"case_id": case.case_id}).set_index("model_id")["cost"]
    try:
        replicates = readers.rank_replicates(wh, case.case_id)
    except ValueError:  # no replicates yet
        return None, decision_rows(board, None, scenario)
    ranks = rank_uncertainty_frame(replicates, costs, scenario, board)
    return ranks, decision_rows(board, ranks, scenario, replicates, costs)


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from compass.mlcompass.decision_rule import shown_rows
    from compass.mlcompass.decisions import leaderboard_frame
    from compass.mlcompass.explain import explain
    from pipelines.attributes import ATTRIBUTE_NAMES, unknown_attributes_note, with_attributes
    from resources import readers
    from resources.configs import scenario_files

    case = known_case(args.case)
    name, scenario = resolve_scenario(args.scenario, case)
    wh = _warehouse()
    if args.scenario in scenario_files():
        board = readers.leaderboard_view(wh, args.case, name, args.as_of)
        if board.empty:
            raise UsageError(f"no leaderboard for case {args.case!r}, scenario {name!r}"
                             + (f" as of {args.as_of}" if args.as_of else "") + "; run `compass run` first")
    else:  # an ad-hoc scenario file: ranked now, from the warehouse's decision inputs
        if args.as_of:
            raise UsageError("--as-of needs a shipped scenario's name (ad-hoc scenario files have no history)")
        board = leaderboard_frame(decision_inputs(wh, case, scenario))
        board = board.merge(readers.prices(wh, case.case_id)[["model_id", "usd_mtok", "usd_query"]],
                            on="model_id", how="left").merge(readers.board_attributes(wh, case.case_id),
                                                             on="model_id", how="left")
        ranks, _ = ranked_decision(wh, case, scenario, board)
        if ranks is not None:
            board = board.merge(ranks.drop(columns=["rank"]), on="model_id", how="left")
    # the 90 % rank interval and P(rank 1) next to the rank (compass.rank_uncertainty), prices next to the cost
    if "rank_lo" in board:
        board["rank_90"] = (board["rank_lo"].astype("Int64").astype(str) + "-"
                            + board["rank_hi"].astype("Int64").astype(str)).where(board["rank_lo"].notna())
    if "interval_supported" in board:  # too few outcome models: no interval claimed (issue 29)
        board["rank_90"] = board["rank_90"].mask(board["interval_supported"].eq(False), "not supported")
    # the top rows, then the P(rank 1) leader and every model with P(rank 1) >= 10 % below them (issue 42)
    board = shown_rows(board, args.top)
    if "usd_per_request" in board and board["usd_per_request"].notna().any():  # the scenario's workload (issue 48)
        board = board.drop(columns=["usd_query"], errors="ignore")
    # the attributes a person filters on, "unknown" (null in csv / json) where no source gives them (issue 48)
    unknown = unknown_attributes_note(board)
    attributes = (with_attributes(board) if args.format == "table" else board.reindex(columns=list(ATTRIBUTE_NAMES)))
    board = board[[c for c in LEADERBOARD_COLUMNS if c in board.columns]].rename(columns=LEADERBOARD_COLUMNS)
    board = board.dropna(axis=1, how="all")  # older versions lack the diagnostics
    board = board.join(attributes[list(ATTRIBUTE_NAMES)])
    if args.format == "csv":
        print(board.to_csv(index=False), end="")
    elif args.format == "json":
        print(board.to_json(orient="records", date_format="iso"))
    else:
        print(board_text(board))
        if unknown:
            print(unknown)
        if args.as_of is None:
            inputs = decision_inputs(wh, case, scenario)
            ranks, decision = ranked_decision(wh, case, scenario, leaderboard_frame(inputs))
            print("\n" + explain(inputs, ranks, decision, prices=price_texts(wh, case.case_id, inputs)))
            print(measure_legend(wh, case.case_id))
    return 0


def measure_legend(wh, case_id: str) -> str:
    """'measures: C1 = general, strongest in ...; C2 = ...': what the case's measures are, named from their loadings
    (compass.measure_names label and summary)."""
    from resources import readers

    labels = readers.measure_labels(wh, case_id)
    return "\n".join(["measures:", *(f"  {f} = {text}" for f, text in labels.items())]) if len(labels) else ""


def price_texts(wh, case_id: str, inputs=None):
    """model_id -> '$4.5/Mtok ($0.000474/query), normalized 0.048' (`summary.price_text`) of a case's models; with
    decision `inputs` under a scenario workload, its dollars per request and per month instead of per query."""
    from pipelines.summary import price_text
    from resources import readers

    prices = readers.prices(wh, case_id).set_index("model_id")
    dollars = inputs.model_info.reindex(columns=["usd_per_request", "usd_per_month"]) if inputs is not None else None
    if dollars is not None and dollars.notna().any().any():
        prices = prices.drop(columns=["usd_query"]).join(dollars)
    return prices.apply(price_text, axis=1) if len(prices) else None


def cmd_recommend(args: argparse.Namespace) -> int:
    from compass.mlcompass.decisions import leaderboard_frame
    from compass.mlcompass.explain import explain
    from resources import readers

    case = known_case(args.case)
    _, scenario = resolve_scenario(args.scenario, case)
    wh = _warehouse()
    inputs = decision_inputs(wh, case, scenario)
    board = leaderboard_frame(inputs)
    ranks, decision = ranked_decision(wh, case, scenario, board)
    print(explain(inputs, ranks, decision, prices=price_texts(wh, case.case_id, inputs)))
    print(measure_legend(wh, case.case_id))
    return 0


def oracle_headline_line(row) -> str:
    """One oracle.summary row for people: the oracle, cost saving and AIQ, each with its headline flag."""
    from pipelines.formatting import flagged, number, pct

    flag_q = row.headline_flag
    ci = flagged(f"[{number(getattr(row, 'headline_ci_lo', None), 4)}, "
                 f"{number(getattr(row, 'headline_ci_hi', None), 4)}]", getattr(row, "headline_ci_flag", ""))
    quality = (f"in [{number(row.headline_lo, 4)}, {number(row.headline_hi, 4)}] (95 % CI {ci})"
               if flag_q == "range" else number(row.oracle_quality, 4))
    return (f"{row.model_set}: oracle {flagged(quality, flag_q)}, cost saving at SOTA quality "
            f"{flagged(pct(row.cost_saving_at_sota_quality), getattr(row, 'cost_saving_flag', flag_q))}, "
            f"AIQ {flagged(number(row.aiq, 3), getattr(row, 'aiq_flag', flag_q))}")


FLAG_WORDS = {"range": "not identified: the data bound it, no estimator pins it down",
              "clipped": "the recommended estimate fell outside the identified range and was clipped into it",
              "below_split_sample": "the recommended estimate fell below the split-sample oracle, a lower bound "
                                    "in expectation; published at that bound"}


def oracle_verdict(row) -> str:
    """What routing each query to its best model would buy over the best single model, in words (seed 002 §4.3),
    with what its flag means."""
    from pipelines.formatting import pct

    sota = f"{pct(row.sota_quality)} for the best single model ({row.sota_model})"
    if row.headline_flag == "range":
        gain = (f"at most {pct(row.error_rate_reduction_hi, default_decimals=0)} fewer errors"
                if getattr(row, "error_rate_reduction_hi", None) is not None else "an unknown gain")
        said = (f"routing each query to its best model would score between {pct(row.headline_lo)} and "
                f"{pct(row.headline_hi)}, against {sota}: {gain}")
    else:
        saving = pct(row.cost_saving_at_sota_quality, default_decimals=0)
        said = (f"routing each query to its best model would score {pct(row.oracle_quality)}, against {sota}: "
                f"{pct(row.error_rate_reduction, default_decimals=0)} fewer errors"
                + (f", or the best model's quality for {saving} less" if saving != "–" else ""))
    flag = FLAG_WORDS.get(row.headline_flag, "")
    return f"verdict ({row.model_set}, {row.n_prompts} prompts, {row.n_models} models): {said}" + \
        (f" [{row.headline_flag}: {flag}]" if flag else "")


def cmd_oracle(args: argparse.Namespace) -> int:
    """Print a dataset's oracle summary row(s) and estimator table from the warehouse."""
    import pandas as pd

    wh = _warehouse()
    summary = wh.read("oracle.summary", {"dataset": args.dataset})
    if summary.empty:
        known = wh.query("select distinct dataset from oracle.summary order by 1")["dataset"].tolist() \
            if wh.table_exists("oracle.summary") else []
        raise UsageError(f"no oracle results for dataset {args.dataset!r}; valid datasets: {choices(known)}")
    estimates = wh.read("oracle.estimates", {"dataset": args.dataset})
    hidden = ["data_version", "run_id", "refreshed_at"]
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        for row in summary.itertuples():
            print(oracle_verdict(row))
        print()
        for row in summary.itertuples():
            print(oracle_headline_line(row))
        print()
        print(summary.drop(columns=hidden, errors="ignore").T.to_string(header=False))
        print()
        cols = ["model_set", "estimator", "quality", "quality_lo", "quality_hi", "cost", "recommended", "identified",
                "cost_basis"]
        print(estimates.sort_values(["model_set", "estimator"])[cols].to_string(index=False))
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    """Leaderboard changes since the previous published version, per case x scenario, with reasons."""
    import dagster as dg
    import pandas as pd

    from compass.mlcompass.changes import leaderboard_changes
    from resources import readers
    from resources.configs import cases, scenario_for

    wh = _warehouse()
    pairs = readers.leaderboard_pairs(wh)
    if pairs.empty:
        print("no leaderboards published; run `compass run` first", file=sys.stderr)
        return 2
    pairs = pairs[(pairs["case_id"] == args.case) if args.case else pairs["case_id"].notna()]
    pairs = pairs[(pairs["scenario"] == args.scenario) if args.scenario else pairs["scenario"].notna()]
    if pairs.empty:
        raise UsageError(f"no leaderboard for case {args.case or '*'!r}, scenario {args.scenario or '*'!r}; "
                         f"published: {choices(c + '/' + s for c, s in readers.leaderboard_pairs(wh).itertuples(index=False))}")
    known = cases()
    with dg.DagsterInstance.get() as instance:
        found = [(c, s, leaderboard_changes(readers.decision_inputs(wh, known[c], scenario_for(s, known[c])),
                                            *readers.leaderboard_snapshots(wh, c, s, instance)))
                 for c, s in pairs.itertuples(index=False) if c in known]
    for case_id, scenario, changes in found:
        real = changes[changes["change"] != "none"]
        print(f"== {case_id} / {scenario}: " + (f"{len(real)} change(s)" if len(real) else changes["detail"].iloc[0]))
        changes = real
        for row in changes.fillna({"model_id": "-"}).astype({"old_rank": object, "new_rank": object}).itertuples(index=False):
            ranks = " -> ".join("-" if pd.isna(r) else str(r) for r in (row.old_rank, row.new_rank))
            print(f"  {row.change:<15} {row.model_id:<28} {ranks:<9} {row.detail}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    """Write the static report site from the warehouse (what the report/site asset does on every refresh)."""
    import time

    from pipelines.report.site import build_site
    from resources.settings import site_dir

    wh = _warehouse()
    if not wh.table_exists("compass.leaderboards"):
        print("no leaderboards published; run `compass run` first", file=sys.stderr)
        return 2
    start = time.monotonic()
    out = Path(args.out) if args.out else site_dir()
    site = build_site(wh, out)
    print(f"report: {len(site.pages)} pages ({len(site.rewritten)} rewritten) in {time.monotonic() - start:.1f} s; "
          f"open {out / 'index.html'}")
    return 0


def cmd_cascade(args: argparse.Namespace) -> int:
    """Rational Tuning (thesis seed 001, eq. 2.11) of one cascade at one cost sensitivity lambda."""
    import numpy as np

    from compass.cascades.evaluate import evaluate_thresholds
    from compass.cascades.markov_model import fit_cascade_model
    from compass.cascades.rational_tuning import rational_tuning
    from compass.cascades.study import CascadeData, calibrated_records
    from pipelines.formatting import pct, usd
    from resources import readers

    models = [m.strip() for m in args.models.split(",") if m.strip()]
    try:
        if not np.isfinite(args.lam) or args.lam < 0:
            raise ValueError(f"--lambda must be a finite number >= 0, got {args.lam}")
        wh = _warehouse()
        datasets = wh.query("select distinct dataset from raw.query_records")["dataset"].tolist()
        if args.dataset not in datasets:
            raise UsageError(f"unknown dataset {args.dataset!r}; valid datasets: {choices(datasets)}")
        records = readers.cascade_records(wh, args.dataset)
        if records is None:
            raise ValueError(f"dataset {args.dataset!r} has no confidence signal; cascades need confidences")
        known = sorted(records.models)
        unknown = [m for m in models if m not in known]
        if unknown:
            raise ValueError(f"unknown model(s) {unknown} for dataset {args.dataset!r}; available: {known}")
        cal, _ = calibrated_records(records, args.dataset)
        model = fit_cascade_model(cal, models, copula=args.copula)  # on the train split
        row = rational_tuning(model, [args.lam], infill_q=None).iloc[0]
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"cascade {' > '.join(models)} on {args.dataset}, copula {model.copula}, lambda {args.lam:g}")
    for j, m in enumerate(models[:-1], start=1):
        print(f"  threshold phi_{j} ({m}): {row[f'phi_{j}']:.6f}  (answer if calibrated P(correct) > threshold)")
    print(f"  {models[-1]}: always answers")
    print(f"expected error: {pct(row['pred_error'])}, expected cost: {usd(row['pred_cost'])} per query (the fitted model)")
    test = CascadeData.of(cal, tuple(models), "test")
    thresholds = np.array([[row[f"phi_{j}"] for j in range(1, len(models))]])
    realized = {"cascade": tuple(float(v[0]) for v in evaluate_thresholds(test.p, test.y, test.c, thresholds))}
    for j in (len(models) - 1, 0):  # always the biggest (last) model, always the smallest (first)
        realized[f"always {models[j]}"] = (1 - float(test.y[:, j].mean()), float(test.c[:, j].mean()))
    print(f"on the {len(test.y):,} held-out test queries (realized):")
    for name, (error, cost) in realized.items():
        print(f"  {name:<{max(map(len, realized)) + 2}}error {pct(error)}, {usd(cost)} per query")
    print(cascade_verdict(realized, models[-1]))
    return 0


def cascade_verdict(realized: dict[str, tuple[float, float]], big: str) -> str:
    """One sentence: the cascade against always using the biggest model, in dollars and error points."""
    from pipelines.formatting import pct

    (error, cost), (big_error, big_cost) = realized["cascade"], realized[f"always {big}"]
    saving = 1 - cost / big_cost if big_cost > 0 else 0.0
    points = 100 * (error - big_error)
    change = f"{abs(points):.1f} points {'more' if points > 0 else 'less'} error" if abs(points) >= 0.05 else "the same error"
    if saving > 0:
        return f"verdict: the cascade costs {pct(saving, default_decimals=0)} less than always {big}, for {change}"
    return f"verdict: the cascade saves nothing over always {big} ({pct(-saving, default_decimals=0)} dearer, {change})"


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return int(text)


JOBS_PER_CORE = 4  # more workers than this only contend; each one imports the definitions (~0.3 GB)


def _jobs(text: str) -> int:
    """--jobs: a whole number from 1 to JOBS_PER_CORE per core (Python forks every worker of a pool at once)."""
    from pipelines.run_pool import default_jobs

    most = JOBS_PER_CORE * default_jobs()
    if _positive(text) > most:
        raise argparse.ArgumentTypeError(f"must be at most {most} ({JOBS_PER_CORE} per CPU core), got {text!r}")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="compass", description=__doc__)
    parser.add_argument("--config", help="YAML source config (default: COMPASS_CONFIG or the embedded data)")
    parser.add_argument("--db", help=f"DuckDB warehouse file (default: {DEFAULT_DB})")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="materialize everything that is missing or out of date")
    run.add_argument("--config", dest="config_sub", help=argparse.SUPPRESS)
    run.add_argument("--multiprocess", action="store_true", help="use the multiprocess executor (4 workers)")
    run.add_argument("-j", "--jobs", type=_jobs, default=None,
                     help="runs executed at once, each in its own process (default: one per CPU core; 1 with --multiprocess)")
    run.add_argument("-v", "--verbose", action="store_true",
                     help="show Dagster's logs on the console (else logs/run.log beside the warehouse)")
    run.set_defaults(func=cmd_run)
    status = sub.add_parser("status", help="tables, row counts, last materialization and data versions")
    status.set_defaults(func=cmd_status)
    oracle = sub.add_parser("oracle", help="a dataset's oracle summary and estimator table (seed 002)")
    oracle.add_argument("--dataset", required=True, help="dataset of raw.query_records, e.g. livecodebench")
    oracle.set_defaults(func=cmd_oracle)
    board = sub.add_parser("leaderboard", help="a scenario leaderboard of a case study, and why the leader wins")
    board.add_argument("--case", required=True)
    board.add_argument("--scenario", required=True, help="a shipped scenario's name (file stem in scenarios/) or a YAML file")
    board.add_argument("--top", type=_positive, default=10, help="rows shown (default 10)")
    board.add_argument("--format", choices=["table", "csv", "json"], default="table")
    board.add_argument("--as-of", dest="as_of", help="YYYY-MM-DD: the leaderboard as of an earlier refresh")
    board.set_defaults(func=cmd_leaderboard)
    rec = sub.add_parser("recommend", help="recommendation for a scenario YAML file (need not be a partition)")
    rec.add_argument("--case", required=True)
    rec.add_argument("--scenario", required=True, help="a shipped scenario's name or the path of a scenario YAML file")
    rec.set_defaults(func=cmd_recommend)
    diff = sub.add_parser("diff", help="what changed on each leaderboard since its previous version, and why")
    diff.add_argument("--case", help="only this case study")
    diff.add_argument("--scenario", help="only this scenario")
    diff.set_defaults(func=cmd_diff)
    report = sub.add_parser("report", help="write the static report site (var/reports/site/index.html)")
    report.add_argument("--out", help="folder of the site (default: var/reports/site)")
    report.set_defaults(func=cmd_report)
    cascade = sub.add_parser("cascade", help="Rational Tuning thresholds of a cascade at one cost sensitivity (seed 001)")
    cascade.add_argument("--dataset", required=True, help="dataset of raw.query_records, e.g. mmlu")
    cascade.add_argument("--models", required=True, help="comma-separated model ids, cheapest first")
    cascade.add_argument("--lambda", dest="lam", type=float, required=True, help="cost sensitivity (error per USD)")
    cascade.add_argument("--copula", choices=["gumbel", "aic"], default="gumbel",
                         help="gumbel: the thesis' Gumbel copula; aic: the AIC-best family per pair")
    cascade.set_defaults(func=cmd_cascade)
    add_route_parser(sub)
    from pipelines.clusters_cli import add_clusters_parser
    from pipelines.matching_cli import add_parser as add_match

    from pipelines.next_evals_cli import add_parser as add_next_evals

    add_clusters_parser(sub)

    add_match(sub)
    add_next_evals(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run a command; a mistake in what was typed or read is one line on stderr and exit code 2, never a traceback
    (COMPASS_DEBUG=1 re-raises, for developers)."""
    from compass.ingest.errors import IngestError

    args = build_parser().parse_args(argv)
    prepare_environment(getattr(args, "config_sub", None) or args.config, args.db)
    try:
        return args.func(args)
    except (UsageError, IngestError, FileNotFoundError) as exc:
        if os.environ.get("COMPASS_DEBUG"):
            raise
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C in a reading command (`compass run` says more itself)
        print("interrupted", file=sys.stderr)
        return 130


def entry() -> NoReturn:
    """The `compass` command: `main`, then exit without tearing down the interpreter. The exit handlers (logging,
    file locks, multiprocessing) run as usual; only the garbage collection of every imported module's objects is
    skipped: ~1 s after importing the definitions (issue 33: `python -c "import pipelines.definitions"` exits in
    4.2-4.8 s, with os._exit in 3.1-4.4 s; 3 runs each, load average 0.7-2.3)."""
    code = main()
    # What a normal exit runs, in its order (CPython 3.x, Py_FinalizeEx): wait for the non-daemon threads (and the
    # thread-level exit hooks of concurrent.futures), the exit handlers, then flush the standard streams (an exit
    # handler may still write to them).
    threading._shutdown()
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    entry()
