"""The leaderboard page's "To settle this decision, measure …" section (issue 49; compass.next_evaluations): the
greedy short list with prices and the pick if each came back high or low, and, once measured scores arrived, what
they did to the pick's P(rank 1) and rank interval."""

from __future__ import annotations

import pandas as pd

from compass.mlcompass.next_evaluations_decision import outcome_list, p_wrong_se, short_list
from pipelines.formatting import number, pct, usd
from pipelines.report.html import esc, table
from resources.warehouse import Warehouse

OUTCOME_SHOWN = 3  # outcome evaluations named on the page
SHOWN = 5  # cells on the page (`compass next-evals --k N --budget USD` gives other batches)


def _read(wh: Warehouse, name: str, case_id: str, scenario: str) -> pd.DataFrame:
    return wh.read(name, {"case_id": case_id, "scenario": scenario}) if wh.table_exists(name) else pd.DataFrame()


def _interval(lo: object, hi: object) -> str:
    lo, hi = pd.to_numeric(pd.Series([lo, hi]), errors="coerce")
    return "–" if pd.isna(lo) or pd.isna(hi) else f"{int(lo)}–{int(hi)} (width {int(hi - lo)})"


def answered_text(rows: pd.DataFrame) -> str:
    """What the last measurements did: the cells (predicted vs measured) and the pick before and after."""
    first = rows.iloc[0]
    cells = ", ".join(f"{r.model_id} on {r.benchmark} (predicted {number(r.predicted)}, measured {number(r.measured)})"
                      for r in rows.itertuples())
    return (f'<p id="answered">Measured since the suggestion: {esc(cells)}. The pick before: '
            f"{esc(first.pick_before)}, P(rank 1) {pct(first.p_rank1_before, default_decimals=0)}, 90 % rank interval "
            f"{_interval(first.rank_lo_before, first.rank_hi_before)}; after: {esc(first.pick_after)}, P(rank 1) "
            f"{pct(first.p_rank1_after, default_decimals=0)}, 90 % rank interval "
            f"{_interval(first.rank_lo_after, first.rank_hi_after)}.</p>")


def next_evaluations_section(wh: Warehouse, case_id: str, scenario: str) -> str:
    """The section's HTML; empty before compass.next_evaluations is published."""
    if not wh.table_exists("compass.next_evaluations"):
        return ""
    cells = _read(wh, "compass.next_evaluations", case_id, scenario)
    done = _read(wh, "compass.next_evaluations_answered", case_id, scenario)
    out = '<h2 id="next-evaluations">To settle this decision, measure …</h2>'
    if len(done):
        out += answered_text(done)
    if cells.empty:
        return out + ('<p class="note">Every benchmark of every ranked model is measured or not for sale (votes, '
                      "unpriced agentic runs): nothing to suggest.</p>")
    chosen, wrong = short_list(cells, SHOWN)
    if chosen.empty:
        return out + ('<p class="note">No unmeasured benchmark score is expected to change this decision (expected '
                      "regret drop 0 for every cell).</p>") + outcome_text(cells)
    now = pct(cells["p_wrong_now"].iloc[0], default_decimals=0)  # nothing measured: exact over the nodes
    after = (f", P(wrong pick) {now} → {pct(wrong, p_wrong_se(chosen, None), default_decimals=0)} (± node error "
             "only, bootstrap draws held fixed)" if wrong is not None else "")
    shown = pd.DataFrame({
        "model": chosen["model_id"], "benchmark": chosen["benchmark"], "predicted": chosen["predicted"].map(number),
        "expected regret drop": chosen["expected_reduction"].map(lambda v: number(v, 2)),
        "cost": chosen["cost_usd"].map(usd), "pick if high": chosen["pick_if_high"],
        "pick if low": chosen["pick_if_low"]})
    return (out + f"<p>{len(chosen)} evaluation(s), {usd(chosen['cost_usd'].sum())} in all{after}.</p>"
            + '<p class="note">Unmeasured (model, benchmark) cells of the ranked models, chosen greedily by the '
            "expected drop in the decision's regret (score units) under the rank bootstrap (preposterior analysis: "
            "the cell drawn from its imputation's predictive distribution, a model's cells correlated as its "
            "imputation errors are, the models re-ranked); cost = the benchmark's questions × its tokens per question "
            "(LiveBench's per-task counts where it is a LiveBench task) at the model's token prices; \"pick if "
            "high/low\": the posterior-mean pick if the score came back at its predictive 90th / 10th percentile. "
            "Measured scores dropped into the inbox are picked up by the next refresh, which shows here what they did "
            "to the pick.</p>"
            + table(shown, table_id="next-evaluations") + outcome_text(cells))


def outcome_text(cells: pd.DataFrame) -> str:
    """The outcome evaluations worth most (`outcome_list`): a model's utility measured on the case's own outcome
    data, each valued on its own; empty when none has value."""
    rows = outcome_list(cells, OUTCOME_SHOWN)
    if rows.empty:
        return ""
    listed = "; ".join(f"{r.model_id} (expected regret drop {number(r.expected_reduction, 2)}, {usd(r.cost_usd)}, "
                       f"pick if high {r.pick_if_high}, if low {r.pick_if_low})" for r in rows.itertuples())
    head = rows.iloc[0]
    return (f'<p id="outcome-evaluations">Or evaluate one model\'s outcome directly ({int(head.n_queries)} queries of '
            f"the case's outcome data sets, labelled as the utility is; outcome sd {number(head.outcome_sd, 3)}): "
            f"{esc(listed)}. Each is valued on its own: every model's score moves with the observed one as the "
            "bootstrap's draws covary (a linear-Gaussian update), and it is priced at the case's tokens per "
            "interaction (a floor: no reasoning tokens, no grading).</p>")
