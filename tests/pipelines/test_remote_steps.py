"""Real asset steps where the warehouse is not (resources.stage, issue 44 item 2), without the deploy stack: three case
steps of compass_small run in stage mode with a warehouse path that cannot exist, each asking the warehouse host to
publish what it staged (the host's task, pipelines.stage_publish.publish_on_host, called in-process: no Celery here),
and the warehouse gets the data versions of the local refresh; each step reads its predecessor's rows from the host's
export, never from a pending entry. (compass/rank_bootstrap, which reads another remote step's staged rows, runs remote in
`make deploy-check` only: 27 s of bootstrap at load 9.)"""

from __future__ import annotations

import shutil

import dagster as dg

from assets.compass_inputs import case_benchmarks, imputation_validation
from assets.compass_studies import variance_explained
from assets.partitions import case_partitions
from pipelines.stage_publish import publish_on_host, task_args
from resources import stage as stage_module
from resources.stage import PUBLISHES, Stage
from resources.warehouse import Warehouse, WarehouseResource
from tests.pipelines.conftest import compass_small_env

STEPS = [case_benchmarks, imputation_validation, variance_explained]
TABLES = ["compass.case_benchmarks", "compass.imputation_validation", "compass.variance_explained"]
CASE = "small_open"


def _versions(wh: Warehouse) -> dict[str, list[str]]:
    return {t: wh.data_versions(t, {"case_id": CASE}) for t in TABLES}


def test_remote_case_steps_publish_the_versions_of_a_local_refresh(compass_small_baseline, tmp_path, monkeypatch):
    """Red when the host exports nothing (`Stage.export` a no-op: case_benchmarks finds no raw.models; seen red), and
    when the staged rows are not what the step computed (`StagedWarehouse.write_relation` staging none of the rows:
    the published tables have no data version; seen red), and when a step in stage mode opens the warehouse
    (WarehouseResource.get ignoring COMPASS_STAGE: "FileExistsError: .../not-a-folder"; seen red)."""
    root, _ = compass_small_baseline
    for key, value in compass_small_env(root).items():
        monkeypatch.setenv(key, value)
    expected = _versions(Warehouse(root / "warehouse.duckdb"))
    assert all(v and len(v) == 1 for v in expected.values()), expected
    host = tmp_path / "host" / "warehouse.duckdb"
    host.parent.mkdir()
    shutil.copy(root / "warehouse.duckdb", host)
    stage = tmp_path / "stage"
    stage.mkdir()
    Stage(str(stage)).create_empty()  # the deployment's setup
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(stage))
    monkeypatch.setenv("COMPASS_DB", str(host))
    wh = Warehouse(host)
    with wh.connect() as con:  # the host never had the remote steps' tables; it exports the rest, as its writes do
        for table in TABLES:
            con.execute(f"drop table {table}")
            con.execute(f"drop table if exists history.{table.replace('.', '_')}")
        others = [t for (t,) in con.execute("select table_schema || '.' || table_name from information_schema.tables "
                                            "where table_catalog = 'warehouse'").fetchall()]
        Stage(str(stage)).export(con, others)

    def on_the_host(url: str, entries: list[str]) -> int:  # the host's publish task, as a step asks for it
        with monkeypatch.context() as host_env:
            host_env.delenv("COMPASS_STAGE")
            host_env.setenv("COMPASS_PUBLISH_FROM", str(stage))
            host_env.setenv("COMPASS_DB", str(host))
            return publish_on_host(*task_args(url, entries))

    monkeypatch.setattr(stage_module, "_publisher", on_the_host)
    remote = tmp_path / "remote"
    remote.mkdir()
    (remote / "not-a-folder").write_text("")
    with monkeypatch.context() as step_env:  # a host without the warehouse file
        step_env.delenv("COMPASS_PUBLISH_FROM")
        step_env.setenv("COMPASS_STAGE", str(stage))
        step_env.setenv("COMPASS_DB", str(remote / "not-a-folder" / "warehouse.duckdb"))
        step_env.chdir(remote)
        with dg.DagsterInstance.ephemeral() as instance:
            instance.add_dynamic_partitions(case_partitions.name, [CASE])
            result = dg.materialize(STEPS, partition_key=CASE, instance=instance,
                                    resources={"warehouse": WarehouseResource()})
    assert result.success
    assert sorted(p.name for p in tmp_path.rglob("*.duckdb")) == ["warehouse.duckdb"]  # the host's only
    assert not Warehouse(host).path.with_suffix(".duckdb.wal").exists()
    published = Warehouse(host)
    assert _versions(published) == expected
    assert len(published.read(PUBLISHES)) == len(TABLES) and not list((stage / "pending").iterdir())
