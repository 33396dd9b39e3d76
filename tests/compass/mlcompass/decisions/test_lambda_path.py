"""The λ path: who leads Score(m; λ) = Û(m) - λ c(m) for every λ >= 0, against brute force on a λ grid."""

import numpy as np
import pandas as pd
import pytest

from compass.mlcompass.recommend import sort_by_score
from compass.mlcompass.scenarios import lambda_path


def _leader(u: pd.Series, c: pd.Series, lam: float) -> str:
    table = pd.DataFrame({"model_id": u.index, "score": u.to_numpy() - lam * c.to_numpy(), "cost": c.to_numpy()})
    return str(sort_by_score(table)["model_id"].iloc[0])


@pytest.mark.parametrize("seed", range(15))
def test_path_matches_the_leader_at_every_lambda(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    ids = [f"m{i:02d}" for i in range(n)]
    u = pd.Series(rng.integers(0, 8, n) / 8 if seed % 3 == 0 else rng.uniform(size=n), index=ids)  # ties too
    c = pd.Series(rng.integers(0, 6, n) / 6 if seed % 3 == 0 else rng.uniform(size=n), index=ids)
    path = lambda_path(u, c)
    assert path["lambda_from"].iloc[0] == 0 and np.isinf(path["lambda_to"].iloc[-1])
    assert (path["lambda_from"].iloc[1:].to_numpy() == path["lambda_to"].iloc[:-1].to_numpy()).all()
    assert (np.diff(path["cost"].to_numpy()) < 0).all()  # each switch goes to a cheaper model
    for row in path.itertuples():
        hi = row.lambda_to if np.isfinite(row.lambda_to) else row.lambda_from + 10
        for lam in np.linspace(row.lambda_from, hi, 7)[1:-1]:  # strictly inside the segment
            assert _leader(u, c, lam) == row.model_id, (lam, row)


def test_known_three_model_path():
    u = pd.Series({"big": 0.9, "mid": 0.7, "small": 0.3})
    c = pd.Series({"big": 0.5, "mid": 0.1, "small": 0.0})
    path = lambda_path(u, c)
    assert list(path["model_id"]) == ["big", "mid", "small"]
    assert path["lambda_to"].iloc[:2].to_numpy() == pytest.approx([0.5, 4.0])  # 0.2/0.4 and 0.4/0.1


def test_a_model_never_on_top_is_skipped_and_empty_input_gives_no_rows():
    u = pd.Series({"a": 1.0, "dominated": 0.5, "b": 0.8})
    c = pd.Series({"a": 1.0, "dominated": 0.9, "b": 0.2})
    assert "dominated" not in set(lambda_path(u, c)["model_id"])
    assert lambda_path(pd.Series(dtype=float), pd.Series(dtype=float)).empty
