"""The meta-router headline at the paper's sizes (seed 003 §4.1, Fig. 1) and its ablations, on the spec's SYNTHETIC
generator with known ψ (spec §4): N = 5,000 queries, D = 50, 500 test queries, gold sizes n from 50 to 1,000 (κ =
n/(n + m) from 0.011), every router paired across Monte Carlo rounds (fresh data each round) against random,
gold-only and preference-only routing with 95 % t-intervals (`compass.router.study.synthetic_comparisons`).

  run   one configuration; its per-round gains go to var/router_headline/<tag>.csv (one process per preset runs
        on its own core). The paper: 200 rounds, 500 trees; `COMPASS_HEAVY=1 compass run` is that design.
  true-delta  why the meta-routers do (not) beat gold-only, beside gold-only and the DR meta-router, same rounds:
        eq. 6 with the TRUE shift Δ(s) in place of Δ̂ (a perfect CATE step: it is then the oracle with preference
        noise, so it tests only eq. 6's second stage); eq. 6 with Δ̂ regressed on the gold rows' c·r − η(s) with
        the TRUE η (no nuisance and no 1/p̂ weights: how well 100 gold rows can give Δ at all); and the DR
        meta-router with the true, constant propensity κ = n/(n + m) in place of the learned p̂.
  table the paired tables of docs/results/router.md from every CSV given.
  ablation  each router of an ablation CSV against the same router of the main CSV, paired over the rounds both
        ran (same generated data, seeds), 95 % t-intervals; CSVs of one tag (pieces of a run) are one configuration.
  ablations  the paper's ablations (i), (iii), (iv) as `compass.router.ablations` runs them (the asset
        router/synthetic_ablations; (iii) in a world with gold labels in rubric points, (iv) d vs 2d of one
        embedding), main first; each configuration's rounds are appended to var/router_headline/<tag>.csv as it ends.
  ablations-table  from `ablations` CSVs: every router against gold-only per configuration and each ablated router
        minus the main one (summary), the differences alone, and the paper's claims about each ablation (§4.1,
        Figs. 2, S3, S4) beside our paired intervals with the stated tolerance.
  served  the served router (`meta_cv`) minus the better single-source router (preference-only or gold-only, the one
        with the larger mean gain over the rounds), paired, per preset and gold size, with issue 46's target (not
        worse beyond its interval), a 0.01 non-inferiority margin, the served router minus the other single-source
        router and how often it chose each member; refuses CSVs of more than one configuration per preset and size.
  positive-control  the one-SE rule's positive control (`synthetic.make_query_dependent_bias`, a world where a CATE
        stage pays): per seed, each member's test gain, the member meta_cv served (paired-SE rule) and the one the
        unpaired rule (the best member's own SE) would have served from the same fold scores; then each router minus
        the better single-source router, paired over seeds, 95 % t-intervals.
  choices  how often the CV-chosen meta-router chose each member (`chosen`, by its criterion) and how often the
        squared-error rule it replaced would have (the least `cv_errors`), from the same out-of-fold predictions.

Usage:
  .venv/bin/python scripts/router_headline.py run TAG --presets B --n-gold 50 100 500 1000 --rounds 20 --trees 50
        [--learner lightgbm] [--normalization none] [--dim 100] [--cate-min-leaf 5] [--routers gold_only ...]
  .venv/bin/python scripts/router_headline.py true-delta TAG --presets B --n-gold 100 --rounds 10 --trees 25
  .venv/bin/python scripts/router_headline.py table var/router_headline/*.csv [--first-rounds 3]
  cd var/router_headline && ../../.venv/bin/python ../../scripts/router_headline.py ablation headline_B_n100.csv ab*.csv
  .venv/bin/python scripts/router_headline.py ablations ablations_A --presets A --n-gold 100 --rounds 10 --trees 25
        [--boosting-rounds 100] [--ablations iii_none iv_d100 i_lightgbm]
  .venv/bin/python scripts/router_headline.py ablations-table var/router_headline/ablations_*.csv
  .venv/bin/python scripts/router_headline.py choices var/router_headline/cv_A*.csv
  .venv/bin/python scripts/router_headline.py served var/router_headline/fig1_*.csv
  .venv/bin/python scripts/router_headline.py positive-control --rounds 5 --trees 6
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import replace  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compass.router.ablations import ABLATIONS, run_ablations, run_configuration  # noqa: E402
from compass.router.evaluation import efficiency_gain, interior_mean  # noqa: E402
from compass.router.learners import LearnerSpec  # noqa: E402
from compass.router.normalize import scale_constant  # noqa: E402
from compass.router.routers import CV_CANDIDATES, fit_router  # noqa: E402
from compass.router.study import (  # noqa: E402
    SYNTHETIC_ROUTERS, ablation_differences, evaluate_synthetic, synthetic_comparisons,
)
from compass.router.synthetic import make_data, make_query_dependent_bias  # noqa: E402

OUT = ROOT / "var" / "router_headline"
NAMES = {"meta_cv_unpaired": "meta (CV-chosen), unpaired rule", "oracle": "oracle", "gold_only": "gold-only", "preference_only": "pref-only", "pooled": "pooled",
         "mean_shift": "mean-shift", "meta_r": "meta (R)", "meta_dr": "meta (DR)", "routellm_mf": "RouteLLM MF",
         "routellm_sw": "RouteLLM SW", "meta_cv": "meta (CV-chosen)", "meta_true_delta": "eq. 6 with true Δ",
         "meta_true_eta": "eq. 6, Δ̂ on gold with true η", "meta_dr_constant_p": "meta (DR), p̂ = κ"}
DECOMPOSITION = ("meta_true_delta", "meta_true_eta", "meta_dr_constant_p")  # the rows of `true-delta`
CONFIG = ["tag", "learner", "normalization", "D", "cate_min_leaf", "trees", "N"]


def run(args: argparse.Namespace) -> None:
    start_cpu, start = time.process_time(), time.time()
    learner = LearnerSpec(args.learner, n_estimators=args.trees)
    result = evaluate_synthetic(tuple(args.presets), tuple(args.n_gold), args.rounds, learner, N=args.n_queries,
                                D=args.dim, cate_min_leaf=args.cate_min_leaf, normalization=args.normalization,
                                seed=args.first_round, routers=tuple(args.routers),
                                progress=lambda i, n: print(f"{args.tag}: {i}/{n}", file=sys.stderr, flush=True))
    save(result.rounds.assign(round=result.rounds["round"] + args.first_round), args)
    print(f"{args.tag}: {time.process_time() - start_cpu:.0f} s CPU (user+sys), {time.time() - start:.0f} s wall, "
          f"load average {os.getloadavg()[0]:.1f} at the end", flush=True)


def true_delta(args: argparse.Namespace) -> None:
    """Eq. 6 with the true Δ: ψ̂ fitted on D_G ∪ {(s′, y + Δ(s′))}, Δ in the normalized units c·ψ − η (Remark 1);
    eq. 6 with Δ̂ fitted on the gold rows alone, target c·r − η(s) with the true η (CATE learner, `--cate-min-leaf`);
    and the DR meta-router with p̂ = κ. Same generated data and seeds as `run` (so it pairs with gold-only and the
    DR meta-router there). Truth enters only the rows named so; the DR meta-router is `evaluate_synthetic`'s."""
    start_cpu = time.process_time()
    learner = LearnerSpec(args.learner, n_estimators=args.trees)
    base = evaluate_synthetic(tuple(args.presets), tuple(args.n_gold), args.rounds, learner, N=args.n_queries,
                              D=args.dim, cate_min_leaf=args.cate_min_leaf, routers=("oracle", "gold_only", "meta_dr"))
    rows = []
    for preset in args.presets:
        for n in args.n_gold:
            for rnd in range(args.rounds):
                d = make_data(n_gs=n, N=args.n_queries, D=args.dim, seed=rnd, preset=preset)
                c = scale_constant(d.r, d.y, "variance")
                spec = LearnerSpec(args.learner, n_estimators=args.trees, seed=rnd)
                cate_spec = replace(spec, min_samples_leaf=args.cate_min_leaf)
                cate = cate_spec.regressor().fit(d.X_g, c * d.r - d.eta_g)
                shifts = {"meta_true_delta": c * (d.eta_p + d.delta_p) - d.eta_p, "meta_true_eta": cate.predict(d.X_p)}
                psi_hat = {name: spec.regressor().fit(np.vstack([d.X_g, d.X_p]), np.concatenate([c * d.r, d.y + shift]))
                           .predict(d.X_test) for name, shift in shifts.items()}
                psi_hat["meta_dr_constant_p"] = fit_router("meta_dr", spec, d.X_g, c * d.r, d.X_p, d.y, cate=cate_spec,
                                                           propensity="constant").psi(d.X_test)
                rows += [{"preset": preset, "router": name, "n_gold": n, "round": rnd,
                          "mean_gain": float(interior_mean(efficiency_gain(est, d.psi_test, seed=rnd)))}
                         for name, est in psi_hat.items()]
    rounds = pd.concat([base.rounds, pd.DataFrame(rows)], ignore_index=True)
    save(rounds, args)
    print(f"{args.tag}: {time.process_time() - start_cpu:.0f} s CPU (user+sys), load average "
          f"{os.getloadavg()[0]:.1f} at the end", flush=True)


def save(rounds: pd.DataFrame, args: argparse.Namespace) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    name = f"{args.tag}_from{args.first_round}" if getattr(args, "first_round", 0) else args.tag  # `run` only
    rounds.assign(tag=args.tag, learner=args.learner, normalization=args.normalization, D=args.dim,
                  cate_min_leaf=args.cate_min_leaf, trees=args.trees, N=args.n_queries).to_csv(OUT / f"{name}.csv",
                                                                                              index=False)


def cell(mean: float, lo: float, hi: float, distinguishable: bool) -> str:
    return f"{mean:+.3f} ({lo:+.3f}, {hi:+.3f})" + ("*" if distinguishable else "")


def paired_table(rounds: pd.DataFrame) -> pd.DataFrame:
    """One row per configuration, preset, n_gold and router: its gain over random and its paired differences with
    gold-only and preference-only, 'mean (lo, hi)', '*' where the 95 % interval excludes 0."""
    rows = []
    decomposition = rounds["router"].isin(DECOMPOSITION).any()  # true-delta runs: also against the DR meta-router
    baselines = ("random", "gold_only", "preference_only") + (("meta_dr",) if decomposition else ())
    for config, part in rounds.groupby(CONFIG, sort=False):
        comparisons = synthetic_comparisons(part, baselines=baselines)
        for (preset, n_gold, router), sub in comparisons.groupby(["preset", "n_gold", "router"], sort=True):
            cells = {b: cell(m, lo, hi, d) for b, m, lo, hi, d in
                     sub[["baseline", "mean_difference", "lo", "hi", "distinguishable"]].itertuples(index=False)}
            rows.append({"config": config[0], "preset": preset, "n_gold": n_gold, "router": NAMES.get(router, router),
                         "rounds": int(sub["mc_rounds"].iloc[0]), "vs random": cells.get("random"),
                         "vs gold-only": cells.get("gold_only", "–"),
                         "vs pref-only": cells.get("preference_only", "–"),
                         **({"vs meta (DR)": cells.get("meta_dr", "–")} if decomposition else {})})
    order = {name: i for i, name in enumerate(NAMES.values())}
    return pd.DataFrame(rows).sort_values(["preset", "n_gold", "config", "router"],
                                          key=lambda c: c.map(order) if c.name == "router" else c, kind="stable")


def ablation_table(main: pd.DataFrame, ablations: list[pd.DataFrame]) -> pd.DataFrame:
    """Per ablation, preset, n_gold and router: the ablated router minus the main one, paired over shared rounds."""
    rows = []
    for ablation in ablations:
        for d in ablation_differences(main, ablation).itertuples(index=False):
            rows.append({"ablation": ablation["tag"].iloc[0], "preset": d.preset, "n_gold": d.n_gold,
                         "router": NAMES.get(d.router, d.router), "rounds": d.mc_rounds,
                         "ablated minus main": cell(d.mean_difference, d.lo, d.hi, d.distinguishable)})
    return pd.DataFrame(rows)


ABLATION_ROUTERS = ("pooled", "preference_only", "gold_only", "mean_shift", "meta_r", "meta_dr")


def paper_ablations(args: argparse.Namespace) -> None:
    start_cpu, start = time.process_time(), time.time()
    OUT.mkdir(parents=True, exist_ok=True)
    done: list[pd.DataFrame] = []

    def save_configuration(configuration: str, rounds: pd.DataFrame) -> None:
        done.append(rounds.assign(configuration=configuration))
        pd.concat(done, ignore_index=True).assign(tag=args.tag, trees=args.trees, N=args.n_queries,
                                                  boosting_rounds=args.boosting_rounds or args.trees).to_csv(
            OUT / f"{args.tag}.csv", index=False)
        print(f"{args.tag}: {configuration} done, {time.process_time() - start_cpu:.0f} s CPU, "
              f"{time.time() - start:.0f} s wall, load average {os.getloadavg()[0]:.1f}", flush=True)

    sizes = (tuple(args.presets), tuple(args.n_gold), args.rounds, args.trees, args.n_queries, args.dim,
             tuple(args.routers))
    if args.without_main:  # to run arms in parallel processes: their rounds pair with a main run of the same sizes
        step = args.chunk_rounds or args.rounds  # round r always runs on seed r, so chunks pair like one run
        for name in args.ablations:
            for first in range(0, args.rounds, step):
                chunk = run_configuration(ABLATIONS[name], *sizes[:2], min(step, args.rounds - first), *sizes[3:],
                                          seed=first, boosting_rounds=args.boosting_rounds)
                save_configuration(name, chunk.assign(round=chunk["round"] + first))
    else:
        run_ablations(*sizes, tuple(args.ablations), boosting_rounds=args.boosting_rounds, progress=save_configuration)


# The paper's claims about each ablation (§4.1 "Ablation Studies"; Figs. 2, S4, S3 are curves without numbers or
# intervals): (configuration, router, baselines it is compared with, the side the paper puts it on, the claim, and
# whether it reads against main's ordering: (iii) "do not significantly outperform" gold-only and (iv) "also
# outperform" presuppose Fig. 1's premise that the meta-routers beat those routers in the main run).
PAPER_CLAIMS = [
    ("i_lightgbm", "every router", "itself in the main run", "below",
     "(i) Fig. 2: \"the EGs in Figure 2 are not as high as the EGs in Figure 1\"", False),
    ("i_lightgbm", "meta_r", "every other router", "above",
     "(i) Fig. 2: \"the R-learner-based router consistently outperform[s] other routers\"", False),
    ("iii_none", "meta_r meta_dr", "gold_only", "not above",
     "(iii) Fig. S4: \"the meta-routers do not significantly outperform the router trained via GS data only\"", True),
    ("iii_none", "meta_r meta_dr", "itself in the main run", "below",
     "(iii) implied: \"highlighting the importance of pre-normalization for meta-routers\"", False),
    ("iv_d100", "meta_r meta_dr", "every other router", "above",
     "(iv) Fig. S3: \"the meta-routers also outperform other routers\"", True),
]
OTHER_ROUTERS = ("pooled", "preference_only", "gold_only", "mean_shift")
NOT_TESTABLE = "not testable (main: not above)"
LITERAL_CONTRADICTION = "contradicts literally; main's premise absent"  # significant where the paper says "not"


def verdict(lo: float, hi: float, side: str) -> str:
    """The tolerance: the paper gives a direction, no number; our 95 % paired interval reproduces it when it excludes 0
    on the paper's side, ties when it contains 0, contradicts when it excludes 0 on the other side. A "not above"
    claim (no significant gain) reproduces when the interval lies below 0, contradicts when above, and is "tie (not
    significant)" when it contains 0: a wide interval over 0 cannot tell "no gain" from an undetected one."""
    if side == "not above":
        return "contradicts" if lo > 0 else "reproduces" if hi < 0 else "tie (not significant)"
    if (lo > 0 and side == "above") or (hi < 0 and side == "below"):
        return "reproduces"
    return "tie" if lo <= 0 <= hi else "contradicts"


def claims_table(rounds: pd.DataFrame) -> pd.DataFrame:
    """Each of the paper's claims per preset: our paired difference(s) with 95 % t-intervals and the verdict. A claim
    read against main's ordering is "not testable" for a (router, baseline) pair that main does not put above, or
    "contradicts literally" when our interval excludes 0 against the paper's side all the same."""
    rows = []
    main_rounds = rounds[rounds["configuration"] == "main"]
    for configuration, router, against, side, claim, needs_main_above in PAPER_CLAIMS:
        part = rounds[rounds["configuration"] == configuration]
        if part.empty:
            continue
        if against == "itself in the main run":
            table = ablation_differences(main_rounds, part).assign(baseline="main")
        else:
            others = OTHER_ROUTERS + (("meta_dr",) if router == "meta_r" else ())
            baselines = others if against == "every other router" else (against,)
            table = synthetic_comparisons(part, baselines=baselines)
            main_table = synthetic_comparisons(main_rounds, baselines=baselines).set_index(
                ["preset", "n_gold", "router", "baseline"])
        chosen = table if router == "every router" else table[table["router"].isin(router.split())]
        for d in chosen.sort_values(["preset", "router", "baseline"]).itertuples(index=False):
            result = verdict(d.lo, d.hi, side)
            if needs_main_above:
                key = (d.preset, d.n_gold, d.router, d.baseline)
                in_main = main_table.loc[key] if key in main_table.index else None
                if in_main is None or verdict(in_main["lo"], in_main["hi"], "above") != "reproduces":
                    result = LITERAL_CONTRADICTION if result == "contradicts" else NOT_TESTABLE
            rows.append({"claim": claim, "preset": d.preset, "router": NAMES.get(d.router, d.router),
                         "against": "main run" if d.baseline == "main" else NAMES.get(d.baseline, d.baseline),
                         "rounds": d.mc_rounds, "ours": cell(d.mean_difference, d.lo, d.hi, d.distinguishable),
                         "verdict": result})
    return pd.DataFrame(rows)


def summary_table(rounds: pd.DataFrame) -> pd.DataFrame:
    """Per preset and router, paired over rounds: main against gold-only, and each ablation against main and against
    gold-only (what Figs. 2, S3 and S4 compare), 'mean (lo, hi)', '*' where the 95 % interval excludes 0."""
    main_rounds = rounds[rounds["configuration"] == "main"]
    columns = {}
    for configuration, part in rounds.groupby("configuration", sort=False):
        label = "main" if configuration == "main" else f"({configuration.split('_')[0]})"
        table = synthetic_comparisons(part, baselines=("gold_only",))
        columns[f"{label} − gold-only"] = table
        if configuration != "main":
            columns[f"{label} − main"] = ablation_differences(main_rounds, part).assign(baseline="main")
    rows: dict[tuple, dict] = {}
    for name, table in columns.items():
        for d in table.itertuples(index=False):
            row = rows.setdefault((d.preset, d.router), {"preset": d.preset, "router": NAMES.get(d.router, d.router)})
            row[name] = cell(d.mean_difference, d.lo, d.hi, d.distinguishable)
    order = {name: i for i, name in enumerate(NAMES)}
    keys = sorted(rows, key=lambda k: (k[0], order.get(k[1], 99)))
    first = ["main − gold-only"] + [f"({tag}) − {against}" for tag in ("iii", "iv", "i")
                                    for against in ("main", "gold-only")]
    table = pd.DataFrame([rows[k] for k in keys]).fillna("–")
    return table[["preset", "router"] + [c for c in first if c in table]]


def mismatched_sizes(rounds: pd.DataFrame) -> str | None:
    """Why the configurations of `ablations` CSVs do not pair (None if they do): trees, N and D must agree across
    configurations, and boosting_rounds within (i) (its other arms ignore it); a pair of arms of different sizes
    would read a size change as the ablation's effect."""
    for column in ("trees", "N", "D"):
        if column in rounds:
            values = rounds.groupby("configuration")[column].unique()
            if rounds[column].nunique(dropna=False) > 1:
                found = "; ".join(f"{c}: {', '.join(map(str, v))}" for c, v in values.items())
                return f"column {column} differs across configurations ({found}); pair runs of one size"
    if "boosting_rounds" in rounds:
        lightgbm = rounds.loc[rounds["configuration"] == "i_lightgbm", "boosting_rounds"]
        if lightgbm.nunique(dropna=False) > 1:
            return (f"column boosting_rounds differs within i_lightgbm ({', '.join(map(str, lightgbm.unique()))}); "
                    "pair runs of one size")
    return None


def rounds_line(rounds: pd.DataFrame) -> str:
    counts = rounds.groupby(["configuration", "preset"])["round"].nunique()
    return "Rounds: " + "; ".join(f"{c} {p}: {n}" for (c, p), n in counts.items())


def choice_table(rounds: pd.DataFrame) -> pd.DataFrame:
    """Per preset and n_gold: rounds in which meta_cv chose each member, by its criterion (the paired one-SE rule
    since issue 46's third review), by the one-SE rule with the best member's own SE, by the largest routing gain
    without the one-SE rule and by least squared error (the earlier rules, on the same out-of-fold ψ̂)."""
    cv = rounds[(rounds["router"] == "meta_cv") & rounds["chosen"].notna()]
    by_error = cv["cv_errors"].map(lambda text: min((errors := json.loads(text)), key=errors.__getitem__))
    by_gain = cv["cv_scores"].map(lambda text: max((scores := json.loads(text)), key=scores.__getitem__))
    has_se = "cv_score_se" in cv and cv["cv_score_se"].notna().all()  # CSVs from before b65e6c6 lack it: no row
    unpaired = ([unpaired_choice(json.loads(a), json.loads(b)) for a, b in zip(cv["cv_scores"], cv["cv_score_se"])]
                if has_se else None)
    rules = (("routing gain (now)", "chosen"), ("one SE unpaired", "unpaired"), ("largest routing gain", "by_gain"),
             ("squared error", "by_error"))
    rows = []
    for (preset, n_gold), part in cv.assign(by_error=by_error, by_gain=by_gain, unpaired=unpaired).groupby(
            ["preset", "n_gold"]):
        for rule, column in (r for r in rules if has_se or r[1] != "unpaired"):
            counts = part[column].value_counts()
            rows.append({"preset": preset, "n_gold": n_gold, "rule": rule, "rounds": len(part),
                         **{NAMES.get(m, m): int(counts.get(m, 0)) for m in CV_CANDIDATES}})
    return pd.DataFrame(rows)


def unpaired_choice(scores: dict[str, float], score_se: dict[str, float]) -> str:
    """The one-SE rule before issue 46's third review: within one SE of the best member's own fold scores."""
    best = max(scores, key=scores.__getitem__)
    return next(name for name in CV_CANDIDATES if scores[name] >= scores[best] - score_se[best])


def positive_control(args: argparse.Namespace) -> None:
    rows = []
    for seed in range(args.rounds):
        d, spec = make_query_dependent_bias(seed=seed), LearnerSpec(n_estimators=args.trees, seed=seed)
        cate = replace(spec, min_samples_leaf=args.cate_min_leaf)
        routers = {name: fit_router(name, spec, d.X_g, d.r, d.X_p, d.y, **({"cate": cate} if "meta" in name else {}))
                   for name in (*CV_CANDIDATES, "meta_cv")}
        gains = {name: float(interior_mean(efficiency_gain(router.psi(d.X_test), d.psi_test, seed=seed)))
                 for name, router in routers.items()}
        served = routers["meta_cv"]
        before = unpaired_choice(served.cv_scores, served.cv_score_se)
        rows += [{"preset": "query-dependent bias", "n_gold": len(d.r), "round": seed, "router": name,
                  "mean_gain": gain, "chosen": served.chosen if name == "meta_cv" else None,
                  "unpaired": before if name == "meta_cv" else None} for name, gain in gains.items()]
        rows.append({"preset": "query-dependent bias", "n_gold": len(d.r), "round": seed, "router": "meta_cv_unpaired",
                     "mean_gain": gains[before]})
    rounds = pd.DataFrame(rows)
    served = rounds[rounds["router"] == "meta_cv"]
    for rule, column in (("paired SE (served)", "chosen"), ("unpaired SE (before)", "unpaired")):
        print(f"Chosen by the {rule} rule, seeds 0-{args.rounds - 1}: " + ", ".join(
            f"{NAMES[m]} {n}" for m, n in served[column].value_counts().items()))
    means = rounds.groupby("router")["mean_gain"].mean()
    better = max(SINGLE_SOURCE, key=means.__getitem__)
    table = synthetic_comparisons(rounds, baselines=("random", better))
    print(pd.DataFrame([{"router": NAMES.get(name, name), "rounds": int(sub["mc_rounds"].iloc[0]),
                         **{("vs random" if b == "random" else f"vs {NAMES[better]}"): cell(m, lo, hi, dd) for b, m, lo,
                            hi, dd in sub[["baseline", "mean_difference", "lo", "hi", "distinguishable"]]
                            .itertuples(index=False) if name != b}} for name, sub in table.groupby("router", sort=False)])
          .fillna("–").to_markdown(index=False))
    direct = synthetic_comparisons(rounds, baselines=("meta_cv_unpaired",)).set_index("router").loc["meta_cv"]
    print(f"\nServed gain, paired rule minus unpaired rule, paired over seeds 0-{args.rounds - 1}: "
          + cell(direct.mean_difference, direct.lo, direct.hi, direct.distinguishable))


SINGLE_SOURCE = ("preference_only", "gold_only")
MARGIN = 0.01  # the non-inferiority margin of issue 46's second review, in units of the efficiency gain


def served_table(rounds: pd.DataFrame) -> pd.DataFrame:
    """Per preset and n_gold: meta_cv minus the better of preference-only and gold-only (larger mean gain over the
    rounds), paired over rounds, 95 % t-interval. Issue 46's target ("not worse than the better beyond its
    interval") is met when the interval reaches 0 or above; the margin column asks more: the lower bound above −0.01.
    The better router is picked on the rounds it is tested on, so meta_cv minus the other single-source router is
    shown too. `chosen` counts meta_cv's members over the rounds. Rounds of one configuration only
    (`mixed_configurations`)."""
    rows = []
    for (preset, n_gold), part in rounds.groupby(["preset", "n_gold"], sort=True):
        means = part.groupby("router")["mean_gain"].mean()
        better, other = sorted(SINGLE_SOURCE, key=means.__getitem__, reverse=True)
        comparisons = synthetic_comparisons(part, baselines=("random", better, other)).set_index(["router", "baseline"])
        served, single, d, d_other = (comparisons.loc[key] for key in (
            ("meta_cv", "random"), (better, "random"), ("meta_cv", better), ("meta_cv", other)))
        counts = part.loc[part["router"] == "meta_cv", "chosen"].value_counts()
        rows.append({"preset": preset, "n_gold": n_gold, "rounds": d.mc_rounds,
                     "served vs random": cell(served.mean_difference, served.lo, served.hi, served.distinguishable),
                     "better single source": NAMES[better],
                     "its gain vs random": cell(single.mean_difference, single.lo, single.hi, single.distinguishable),
                     "served − better": cell(d.mean_difference, d.lo, d.hi, d.distinguishable),
                     "not worse beyond interval": "met" if d.hi >= 0 else "not met",
                     f"lower bound > −{MARGIN}": "met" if d.lo > -MARGIN else "not met",
                     "served − other": cell(d_other.mean_difference, d_other.lo, d_other.hi, d_other.distinguishable),
                     "chosen": ", ".join(f"{NAMES[m]} {counts[m]}" for m in CV_CANDIDATES if m in counts)})
    return pd.DataFrame(rows)


def mixed_configurations(rounds: pd.DataFrame) -> str | None:
    """Why rounds cannot go into `served_table` (None if they can): per preset and n_gold, one configuration (the
    CONFIG columns; pieces of one run share its tag), each router's round once, and meta_cv with both single-source
    routers present."""
    for (preset, n_gold), part in rounds.groupby(["preset", "n_gold"], sort=True):
        where = f"preset {preset}, n_gold {n_gold}"
        for column in (c for c in CONFIG if c in part):
            if part[column].nunique(dropna=False) > 1:
                return (f"{where}: column {column} has {', '.join(map(str, part[column].unique()))}; "
                        "give the CSVs of one configuration")
        repeated = part[part.duplicated(["router", "round"])]
        if not repeated.empty:
            return f"{where}: router {repeated['router'].iloc[0]} has round {repeated['round'].iloc[0]} twice"
        missing = [name for name in ("meta_cv",) + SINGLE_SOURCE if name not in set(part["router"])]
        if missing:
            return f"{where}: no rounds of {', '.join(missing)}"
    return None


def checked_rounds(args: argparse.Namespace, problem: Callable[[pd.DataFrame], str | None]) -> pd.DataFrame:
    """The rounds of `args.csv`, or one line on stderr and exit 2 when `problem` names what is wrong with them."""
    rounds = pd.concat([pd.read_csv(path) for path in args.csv], ignore_index=True)
    mismatch = problem(rounds)
    if mismatch:
        print(f"error: {args.command}: {mismatch}", file=sys.stderr)
        sys.exit(2)
    return rounds


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for command in ("run", "true-delta"):
        add_run_arguments(sub.add_parser(command))
    sub.choices["run"].add_argument(
        "--first-round", type=int, default=0, help="run rounds K .. K + rounds − 1 (the same data and seeds as those "
        "rounds of a longer run; saved as TAG_fromK.csv, so a long run can be split into pieces that `table` joins)")
    table = sub.add_parser("table")
    table.add_argument("csv", nargs="+")
    table.add_argument("--first-rounds", type=int, help="only rounds 0 .. N − 1 (to pair a short run with a long one)")
    sub.add_parser("ablation").add_argument("csv", nargs="+")
    ablations = sub.add_parser("ablations")
    add_run_arguments(ablations, routers=ABLATION_ROUTERS, n_gold=[100])
    ablations.add_argument("--ablations", nargs="+", default=["iii_none", "iv_d100", "i_lightgbm"],
                           choices=sorted(ABLATIONS))
    ablations.add_argument("--boosting-rounds", type=int, help="(i)'s LightGBM rounds (default: --trees)")
    ablations.add_argument("--without-main", action="store_true", help="only the ablations (main in another CSV)")
    ablations.add_argument("--chunk-rounds", type=int, help="with --without-main: save after every this many rounds")
    sub.add_parser("ablations-table").add_argument("csv", nargs="+")
    sub.add_parser("choices").add_argument("csv", nargs="+")
    sub.add_parser("served").add_argument("csv", nargs="+")
    control = sub.add_parser("positive-control")
    control.add_argument("--rounds", type=int, default=5)
    control.add_argument("--trees", type=int, default=6)
    control.add_argument("--cate-min-leaf", type=int, default=20)
    args = parser.parse_args(argv)
    if args.command == "table":
        rounds = pd.concat([pd.read_csv(path) for path in args.csv], ignore_index=True)
        if args.first_rounds:
            rounds = rounds[rounds["round"] < args.first_rounds]
        print(paired_table(rounds).to_markdown(index=False))
    elif args.command == "ablations-table":
        rounds = checked_rounds(args, mismatched_sizes)
        ablated = [part.assign(tag=tag) for tag, part in rounds.groupby("configuration") if tag != "main"]
        differences = ablation_table(rounds[rounds["configuration"] == "main"], ablated)
        print(rounds_line(rounds), "", summary_table(rounds).to_markdown(index=False), "",
              differences.to_markdown(index=False), "",
              claims_table(rounds).to_markdown(index=False), sep="\n")
    elif args.command == "ablation":
        main_rounds, *pieces = (pd.read_csv(path) for path in args.csv)
        ablations = [part for _, part in pd.concat(pieces, ignore_index=True).groupby("tag", sort=False)]
        print(ablation_table(main_rounds, ablations).to_markdown(index=False))
    elif args.command == "choices":
        print(choice_table(pd.concat([pd.read_csv(path) for path in args.csv], ignore_index=True))
              .to_markdown(index=False))
    elif args.command == "served":
        print(served_table(checked_rounds(args, mixed_configurations)).to_markdown(index=False))
    else:
        {"run": run, "true-delta": true_delta, "ablations": paper_ablations,
         "positive-control": positive_control}[args.command](args)


def add_run_arguments(r: argparse.ArgumentParser, routers: tuple[str, ...] = SYNTHETIC_ROUTERS,
                      n_gold: list[int] | None = None) -> None:
    r.add_argument("tag")
    r.add_argument("--presets", nargs="+", default=["A", "B"])
    r.add_argument("--n-gold", nargs="+", type=int, default=n_gold or [50, 100, 500, 1000])
    r.add_argument("--rounds", type=int, default=20)
    r.add_argument("--trees", type=int, default=50)
    r.add_argument("--n-queries", type=int, default=5000)
    r.add_argument("--dim", type=int, default=50)
    r.add_argument("--learner", default="random_forest")
    r.add_argument("--normalization", default="variance")
    r.add_argument("--cate-min-leaf", type=int, default=50)
    r.add_argument("--routers", nargs="+", default=list(routers))


if __name__ == "__main__":
    main(sys.argv[1:])
