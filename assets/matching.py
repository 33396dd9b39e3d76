"""CUPID matchmaking (seed 004): every Table 1 method against one simulated user per partition (users/*.yaml).

matching/runs holds one row per (method, seed, round) in matching.runs; matching/summary reads it back and
writes Table 1's shape (cost mean ± sd, rounds to converge, % converged) to matching.summary, with the
regret and cost curves in its metadata and under var/reports/matching/. The user simulator is the LLM-free
metadata judge of spec-004 §5 (the paper's is an LLM), so all of it is simulation.
"""

import dagster as dg

from assets.partitions import user_partitions
from compass.matching.heart import HeartOptions
from compass.matching.plots import curves_figure
from compass.matching.simulate import FEEDBACK_VARIANTS
from compass.matching.study import METHOD_LABELS, METHODS, ROUTER_USD, Session, run_study, summarize
from resources import settings
from resources.matching import token_model, user
from resources.publish import publish_many, save_figure
from resources.warehouse import WarehouseResource

CODE_VERSION = "matching-4"  # 4: two references a person could run (most capable affordable, cheapest meeting the stated wish); the oracle lookup a ceiling
RUNS = dg.AssetKey(["matching", "runs"])
_common = dict(partitions_def=user_partitions, group_name="matching", code_version=CODE_VERSION,
               pool=settings.writer_pool())


class MatchingConfig(dg.Config):
    """Which methods, which language feedback, and HEART-UCB's open choices (compass.matching.heart)."""

    methods: list[str] = list(METHODS)
    feedback: str = "informative"  # one of compass.matching.simulate.FEEDBACK_VARIANTS
    p_flip: float | None = None  # judge noise; None: the user file's judge_noise
    model_inputs: str = "onehot"  # GP inputs: "onehot" (paper's app) or "metadata"
    spread: str = "std"
    normalize_costs: bool = False
    cost_tiebreak: bool = False  # round-1 ties at random (the guide); the paper's cost rule is cupid_cost_tiebreak
    kernel_refit: bool = False  # refit the GP kernel by Laplace evidence once 5 comparisons exist ([C])
    n_objectives: int | None = None  # L latent objectives; None: one per model ([C])
    router_usd: float = ROUTER_USD  # the auxiliary LLM's cost per round, charged to methods that read feedback
    shuffle: bool = True  # each run's pool order shuffled with its seed


@dg.asset(key=RUNS, **_common)
def matching_runs(context: dg.AssetExecutionContext, config: MatchingConfig,
                  warehouse: WarehouseResource) -> dg.MaterializeResult:
    """CUPID §4.1 for one user: each method x seed x round (pair, winner, cost, best so far, feasible)."""
    if config.feedback not in FEEDBACK_VARIANTS or set(config.methods) - set(METHODS):
        raise ValueError(f"feedback must be one of {FEEDBACK_VARIANTS} and methods among {list(METHODS)}")
    wh = warehouse.get()
    the_user, pool = user(context.partition_key, wh)
    options = HeartOptions(model_inputs=config.model_inputs, spread=config.spread, normalize_costs=config.normalize_costs,
                           cost_tiebreak=config.cost_tiebreak, kernel_refit=config.kernel_refit,
                           n_objectives=config.n_objectives)
    session = Session(pool, the_user, token_model().call_cost(pool), options, config.feedback, config.p_flip,
                      config.shuffle, config.router_usd)
    runs, _ = run_study([session], config.methods)
    return publish_many(context, wh, {"matching.runs": runs}, {"user": the_user.name},
                        metadata={"pool": pool.name, "feasible_models": int(the_user.feasible(pool).sum()),
                                  "budget_usd": the_user.budget_usd, "rounds": the_user.rounds})


@dg.asset(key=["matching", "summary"], deps=[RUNS], **_common)
def matching_summary(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Table 1's row block for one user (k_conv = 2), and the regret / cost curves."""
    wh = warehouse.get()
    the_user, _ = user(context.partition_key, wh)
    runs = wh.read("matching.runs", {"user": the_user.name})
    summary = summarize(runs, {the_user.name: the_user.budget_usd})
    figure = save_figure(curves_figure(runs, the_user.budget_usd, the_user.name), "matching", the_user.name)
    shown = summary.assign(method=summary["method"].map(METHOD_LABELS))
    return publish_many(context, wh, {"matching.summary": summary}, {"user": the_user.name},
                        metadata={"table_1": dg.MetadataValue.md(shown.to_markdown(index=False, floatfmt=".3f")),
                                  "curves": figure})


matching_assets = [matching_runs, matching_summary]
