"""Issue 42, item 1: a release served upstream lands in its place. The real embedded catalog (scores without
LiveBench, prices, models), LiveBench's newest 2026-06-25 release served on 127.0.0.1, the shipped frontier case with
its benchmark rule (a structural utility, so no per-query data is needed) and `pure_capability`. A second refresh
serves the same release plus one invented model whose row is the best row's +3 on every task, as the issue's
`kimi-k4-max-effort` was, and a price for it no higher than that row's model's.

What must hold: the refresh ends without a failure; the new model ranks at or above every model it dominates; the
measures keep their meaning (Tucker congruence of each measure's loadings with its namesake's >= 0.95); and the rest of
the board does not reorder beyond its noise (each former top-10 model's rank among the old models stays inside its
former 90 % rank interval)."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
import yaml

from resources.warehouse import Warehouse
from tests.live.server import serve
from tests.live.world import LIVEBENCH_URL, serve_livebench
from tests.paths import ROOT
from tests.pipelines.helpers import run_refresh, throwaway_instance

NEW_MODEL, NEW_ID = "kimi-k4-max-effort", "kimi-k4"
CASE, SCENARIO = "frontier_api", "pure_capability"
MIN_CONGRUENCE = 0.95


def _world(folder, base_url: str) -> dict[str, str]:
    """Config, case and scenario folders of the world under `folder`; returns the environment they need."""
    data = ROOT / "data"
    scores = pd.read_parquet(data / "benchmark_scores.parquet")
    scores[scores["source"] != "livebench"].to_parquet(folder / "benchmark_scores.parquet")
    (folder / "release.csv").write_text(  # the invented model's catalog row, as a team's own models file gives it
        f"model_id,display_name,organization,open_weights\n{NEW_ID},Kimi K4,moonshotai,false\n")
    (folder / "prices.csv").write_text(  # the invented model's list price: the dominated model's or lower
        "model_id,provider,input_usd_per_mtok,output_usd_per_mtok,blended_usd_per_mtok,source,as_of\n"
        f"{NEW_ID},moonshotai,10.0,50.0,20.0,release_test,2026-08-22\n")
    (folder / "config.yaml").write_text(f"""replace_defaults: true
sources:
  - {{table: models, path: {data}/models.parquet}}
  - {{table: models, path: {folder}/release.csv}}
  - {{table: model_aliases, path: {data}/model_aliases.parquet}}
  - {{table: model_costs, path: {data}/model_costs.parquet}}
  - {{table: model_costs, path: {folder}/prices.csv}}
  - {{table: benchmark_scores, path: {folder}/benchmark_scores.parquet}}
  - connector: livebench
    url: {base_url}{LIVEBENCH_URL}
""")
    case = yaml.safe_load((ROOT / "cases" / f"{CASE}.yaml").read_text())
    case["utility"] = {"source": "weights", "weights": {"C1": 0.5, "C2": 0.5}}
    for sub in ("cases", "scenarios"):
        (folder / sub).mkdir()
    (folder / "cases" / f"{CASE}.yaml").write_text(yaml.safe_dump(case))
    shutil.copy(ROOT / "scenarios" / f"{SCENARIO}.yaml", folder / "scenarios")
    return {"COMPASS_CASES": str(folder / "cases"), "COMPASS_SCENARIOS": str(folder / "scenarios")}


def _release(site) -> str:
    """Add the invented model to the served table: the row with the best task mean, +3 on every task (capped at 100).
    Returns the spelling of the row it copies."""
    path = site / LIVEBENCH_URL
    table = pd.read_csv(path).set_index("model")
    best = table.mean(axis=1).idxmax()
    table.loc[NEW_MODEL] = (table.loc[best] + 3.0).clip(upper=100.0)
    table.reset_index().to_csv(path, index=False)
    return best


def _board(folder) -> pd.DataFrame:
    wh = Warehouse(folder / "warehouse.duckdb")
    board = wh.read("compass.leaderboards", {"case_id": CASE, "scenario": SCENARIO}).set_index("model_id")
    ranks = wh.read("compass.rank_uncertainty", {"case_id": CASE, "scenario": SCENARIO}).set_index("model_id")
    return board.join(ranks[["rank_lo", "rank_hi"]])


def _loadings(folder) -> pd.DataFrame:
    frame = Warehouse(folder / "warehouse.duckdb").read("compass.loadings", {"case_id": CASE})
    return frame.pivot(index="benchmark", columns="factor", values="loading").fillna(0.0)


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory):
    """(board, loadings) before the release, (board, loadings) after it, the refresh reports, the copied model."""
    tmp = tmp_path_factory.mktemp("release")
    site, folder = tmp / "site", tmp / "home"
    folder.mkdir()
    serve_livebench(site, "2026-08-22")
    with serve(site) as server:
        env = _world(folder, server.url())
        with pytest.MonkeyPatch.context() as mp, throwaway_instance(mp, folder, folder / "config.yaml", env) as inst:
            first = run_refresh(inst)
            before = _board(folder), _loadings(folder)
            copied = _release(site)
            second = run_refresh(inst)
            after = _board(folder), _loadings(folder)
    return before, after, (first, second), copied


def test_the_refreshes_end_without_a_failure(refreshed):
    *_, (first, second), _ = refreshed
    for report in (first, second):
        assert not report.failed and not report.source_failures, report.errors


def test_the_release_ranks_at_or_above_every_model_it_dominates(refreshed):
    _, (board, _), _, copied = refreshed
    from compass.ingest.canonical import canonical_id

    dominated = canonical_id(copied)
    assert NEW_ID in board.index, f"{NEW_ID} is not on the {SCENARIO} board"
    assert board.at[NEW_ID, "rank"] <= board.at[dominated, "rank"], (
        f"{NEW_ID} (rank {board.at[NEW_ID, 'rank']}) below {dominated} (rank {board.at[dominated, 'rank']}), "
        "which it beats on every LiveBench task at the same price")


def test_the_measures_keep_their_meaning(refreshed):
    (_, old), (_, new), _, _ = refreshed
    shared = old.index.intersection(new.index)
    for factor in old.columns:
        assert factor in new.columns, f"measure {factor} vanished after one release"
        a, b = old.loc[shared, factor].to_numpy(), new.loc[shared, factor].to_numpy()
        phi = float(a @ b / np.sqrt((a @ a) * (b @ b)))
        assert phi >= MIN_CONGRUENCE, f"{factor}: Tucker congruence {phi:.3f} with the previous loadings"


def test_the_rest_of_the_board_does_not_reorder_beyond_its_noise(refreshed):
    (old, _), (new, _), _, _ = refreshed
    rest = new.drop(index=NEW_ID, errors="ignore")
    rank_among_old = rest["rank"].rank(method="min")
    top = old.sort_values("rank").head(10)
    moved = {m: (int(rank_among_old[m]), int(top.at[m, "rank_lo"]), int(top.at[m, "rank_hi"]))
             for m in top.index if not top.at[m, "rank_lo"] <= rank_among_old.get(m, np.inf) <= top.at[m, "rank_hi"]}
    assert not moved, f"former top-10 models outside their 90 % rank interval (new rank, lo, hi): {moved}"
