"""clusters/contexts on one routing dataset (the router fixture's 90 gold queries): the study table, one context per
gold query, and the k the study supports."""

import dagster as dg
import pandas as pd

from assets.clusters import query_contexts
from pipelines.report.pages.clusters import clusters_body
from resources.warehouse import Warehouse, WarehouseResource
from tests.paths import ROOT


def test_contexts_asset_publishes_the_study_and_one_context_per_query(tmp_path, monkeypatch):
    db = tmp_path / "w.duckdb"
    monkeypatch.setenv("COMPASS_DB", str(db))
    monkeypatch.delenv("COMPASS_HEAVY", raising=False)
    labels = pd.read_csv(ROOT / "tests" / "fixtures" / "router" / "route_labels.csv").assign(embedding=None)
    wh = Warehouse(db)
    wh.replace("raw.route_labels", labels)
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("route_dataset", ["arena_small"])
    config = {"ops": {"clusters__contexts": {"config": {"ks": [2, 4], "n_rounds": 3}}}}
    result = dg.materialize([query_contexts], instance=instance, partition_key="arena_small", run_config=config,
                            resources={"warehouse": WarehouseResource()})
    assert result.success
    study = wh.read("clusters.context_study")
    assert set(study["method"]) == {"kmeans", "em_gmm", "global", "random", "per_query_ceiling"}
    assert set(study["k"]) == {2, 4} and (study["n_rounds"] == 3).all() and set(study["dataset"]) == {"arena_small"}
    contexts = wh.read("clusters.query_contexts")
    gold = labels[labels["label_kind"] == "gold"]
    assert sorted(contexts["query_id"]) == sorted(gold["query_id"])
    k = int(contexts["k"].iloc[0])
    assert contexts["context"].nunique() == k and contexts.groupby("context").size().eq(
        contexts.groupby("context")["context_size"].first()).all()
    page = clusters_body(wh)
    assert 'class="verdict"' in page and "Query segments as contexts, arena_small:" in page


def test_figures_asset_reproduces_the_approximation_ordering(tmp_path, monkeypatch):
    """clusters/figures at smoke size: both tables, and Fig. 5.4's ordering (LDA within 10 % far more often than
    C2C). Mutation killed: the "lda" column computed with mode "c2c" in overlap_approximations, red."""
    db = tmp_path / "w.duckdb"
    monkeypatch.setenv("COMPASS_DB", str(db))
    monkeypatch.setenv("COMPASS_SMOKE", "1")
    monkeypatch.delenv("COMPASS_HEAVY", raising=False)
    from assets.clusters import thesis_figures

    assert dg.materialize([thesis_figures], resources={"warehouse": WarehouseResource()}).success
    wh = Warehouse(db)
    approx = wh.read("clusters.overlap_approximation").set_index("method")
    assert approx.loc["lda", "share_within_10pct"] > 0.85 > 0.5 > approx.loc["c2c", "share_within_10pct"]
    difficulty = wh.read("clusters.difficulty")
    assert set(difficulty["shape"]) == {"convex", "distorted"} and difficulty["ami"].between(-1, 1).all()
