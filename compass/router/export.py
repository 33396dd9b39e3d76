"""A fitted random forest as plain arrays (one row per tree node), and its prediction from those arrays alone:
the fitted router is stored in the warehouse and served by a gateway without pickle or scikit-learn
(issue 14, "Using a router"). scikit-learn's own `tree_` arrays are the source; `forest_predict` is checked
against `RandomForestRegressor.predict` in the tests."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestRegressor

NODE_COLUMNS = ("tree", "node", "left", "right", "feature", "threshold", "value")


def forest_nodes(model: RandomForestRegressor, offset: float = 0.0, slope: float = 1.0) -> pd.DataFrame:
    """Every node of every tree: children (−1 at leaves), split feature and threshold (go left when
    x[feature] <= threshold), and the node's mean target mapped by offset + slope·value (a calibration of the
    forest's output, `routers.calibrate`: the mean over trees of the mapped leaves is the mapped prediction)."""
    frames = []
    for t, est in enumerate(model.estimators_):
        tree = est.tree_
        frames.append(pd.DataFrame({"tree": t, "node": np.arange(tree.node_count), "left": tree.children_left,
                                    "right": tree.children_right, "feature": tree.feature,
                                    "threshold": tree.threshold, "value": offset + slope * tree.value[:, 0, 0]}))
    return pd.concat(frames, ignore_index=True)


def forest_predict(nodes: pd.DataFrame, X: np.ndarray) -> np.ndarray:
    """Mean over trees of the leaf value each row of X falls in (all rows descend a tree together)."""
    X = np.asarray(X, dtype=float)
    rows = np.arange(len(X))
    total = np.zeros(len(X))
    trees = nodes.sort_values(["tree", "node"]).groupby("tree", sort=True)
    for _, tree in trees:
        left, right = tree["left"].to_numpy(), tree["right"].to_numpy()
        feature, threshold = tree["feature"].to_numpy(), tree["threshold"].to_numpy()
        at = np.zeros(len(X), dtype=int)
        while True:
            inner = left[at] >= 0
            if not inner.any():
                break
            go_left = X[rows, np.where(inner, feature[at], 0)] <= threshold[at]
            at = np.where(inner, np.where(go_left, left[at], right[at]), at)
        total += tree["value"].to_numpy()[at]
    return total / trees.ngroups
