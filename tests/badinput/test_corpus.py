"""Every corpus entry through `compass run --config`: one line naming file, row and column, exit 2, no trace,
and the warehouse byte-identical; the accepted edge cases load. (Issue 17: bad-input corpus.)"""


import numpy as np
import pytest

from compass.ingest.ingest import ingest_table
from compass.ingest.load import load_config
from compass.ingest.schemas import RAW_TABLES
from pipelines.cli import main
from tests.badinput.corpus import CORPUS
from tests.pipelines.conftest import TINY_CONFIG, tiny_copy
from tests.pipelines.helpers import assert_same_tables, snapshot, use_folder


def _config(case, folder):
    """The tiny fixture's config plus this case's source entry."""
    text = TINY_CONFIG.read_text().replace("path: ", f"path: {TINY_CONFIG.parent}/").encode()
    path = case.write(folder)
    if case.config_text is not None:
        text += case.config_text if isinstance(case.config_text, bytes) else case.config_text.encode()
    else:
        text += f"  - {{table: {case.table}, path: {path}}}\n".encode()
    config = folder / "config.yaml"
    config.write_bytes(text)
    return config


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    work = tiny_copy(tmp_path_factory, tmp_path_factory.mktemp("corpus") / "tiny")
    with pytest.MonkeyPatch.context() as mp:
        use_folder(mp, work, TINY_CONFIG, {})
        yield work / "warehouse.duckdb", snapshot(work / "warehouse.duckdb"), mp


@pytest.mark.parametrize("case", [c for c in CORPUS if not c.accepted], ids=lambda c: c.id)
def test_rejected(case, baseline, tmp_path, capsys):
    db, before, _ = baseline
    config = _config(case, tmp_path)
    capsys.readouterr()
    assert main(["run", "--config", str(config)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith("error: rejected input, warehouse unchanged: ")
    named = case.names or (config.name if case.config_text is not None and case.id != "config_missing_file" else case.name)
    assert named in err or "/nonexistent/" in err, err
    if case.where is not None:
        row, column = case.where
        assert f"row {row if row is not None else '-'}," in err and f"column {column or '-'}:" in err, err
    assert_same_tables(before, snapshot(db))


@pytest.mark.parametrize("case", [c for c in CORPUS if c.accepted], ids=lambda c: c.id)
def test_accepted(case, tmp_path):
    sources = [s for s in load_config(_config(case, tmp_path)) if s.path.name == case.name]
    lookup = {m: m for m in ("gpt-4o", "llama-3.1-70b-instruct")}
    frame = ingest_table(case.table, sources, None if case.table == "models" else lookup)
    first = RAW_TABLES[case.table].columns[0].name
    assert len(frame) >= 1 and frame.columns[0] == first and not frame[first].str.startswith("\ufeff").any()
    if case.table == "route_labels":
        assert np.stack(frame["embedding"]).tolist() == [[0.1, 0.2], [0.3, 0.4]]
