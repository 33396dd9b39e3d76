"""Figures of synthetic cluster data sets (thesis Figs. 5.7-5.8). The thesis shows data with more than
two dimensions by t-SNE; we use the first two principal components (deterministic and fast enough for
the default run), and say so in the panel title."""

from __future__ import annotations

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.decomposition import PCA


def datasets_figure(datasets: pd.DataFrame, title: str):
    """One panel per (shape, dataset) of clusters.datasets rows, points coloured by true label."""
    panels = list(datasets.groupby(["shape", "dataset"], sort=True))
    fig, axes = plt.subplots(1, max(len(panels), 1), figsize=(4 * max(len(panels), 1), 4), squeeze=False)
    for ax, ((shape, index), rows) in zip(axes[0], panels):
        X = np.array([json.loads(c) for c in rows["coordinates"]])
        view = "" if X.shape[1] <= 2 else " (PCA)"
        if X.shape[1] > 2:
            X = PCA(n_components=2, random_state=0).fit_transform(X)
        elif X.shape[1] == 1:
            X = np.hstack([X, np.zeros_like(X)])
        ax.scatter(X[:, 0], X[:, 1], c=rows["label"], s=4, cmap="tab20")
        ax.set_title(f"{shape} #{index}{view}", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle(f"{title} (synthetic)", fontsize=10)
    return fig
