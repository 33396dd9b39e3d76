"""The size of the synthetic studies: heavy wins, then smoke, else light; run config fields win over the size."""

import pytest

from assets.router import SyntheticRouterConfig
from resources import settings


@pytest.mark.parametrize(("heavy", "smoke", "size"), [(None, None, "light"), (None, "1", "smoke"), ("1", "1", "heavy"),
                                                      ("1", None, "heavy"), ("0", "0", "light")])
def test_synthetic_study_size(monkeypatch, heavy, smoke, size):
    for name, value in (("COMPASS_HEAVY", heavy), ("COMPASS_SMOKE", smoke)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    assert settings.synthetic_study_size() == size


def test_run_config_fields_win_over_the_size_and_heavy_is_the_papers_rounds(monkeypatch):
    monkeypatch.setenv("COMPASS_SMOKE", "1")
    monkeypatch.delenv("COMPASS_HEAVY", raising=False)
    assert SyntheticRouterConfig().sizes() == {"n_gold": [100], "mc_rounds": 1, "n_queries": 900, "dim": 10,
                                               "n_estimators": 10}
    assert SyntheticRouterConfig(mc_rounds=3).sizes()["mc_rounds"] == 3
    monkeypatch.setenv("COMPASS_HEAVY", "1")
    assert SyntheticRouterConfig().sizes()["mc_rounds"] == 200  # the paper's rounds


def test_figures_and_the_run_log_live_beside_the_warehouse_whatever_the_working_folder(tmp_path, monkeypatch):
    """Issue 43: run from another folder, `compass run` wrote var/logs/ and var/reports/ there."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from resources.publish import save_figure

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("COMPASS_DB", str(tmp_path / "home" / "warehouse.duckdb"))
    save_figure(plt.figure(), "oracle", "curve")
    assert (tmp_path / "home" / "reports" / "oracle" / "curve.png").exists()
    assert settings.log_dir() == tmp_path / "home" / "logs"
    assert list(elsewhere.iterdir()) == []
