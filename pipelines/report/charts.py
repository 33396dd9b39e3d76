"""Interactive charts of the report site (plotly): hover a point to see its model.

Plotly writes each chart as a <div> plus a call into plotly.js; the library itself is written once into the
site (`write_plotly_js`) and referenced relatively, so the pages open from disk with no network.
Knows nothing of the warehouse or of compass: it turns DataFrames into figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

PLOTLY_JS = "assets/plotly.min.js"
LAYOUT = dict(template="plotly_white", margin=dict(l=60, r=20, t=50, b=50), hovermode="closest",
              legend=dict(orientation="h", y=-0.15))


def write_plotly_js(site: Path) -> Path:
    """plotly.js (the version the Python package ships) at site/assets/plotly.min.js, rewritten only when it differs."""
    path = site / PLOTLY_JS
    text = get_plotlyjs()
    if not path.exists() or path.stat().st_size != len(text.encode()):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return path


def figure_div(fig: go.Figure, div_id: str) -> str:
    """The chart's <div> and the script that draws it (plotly.js loaded by the page)."""
    return fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id, default_height="520px",
                       config={"displaylogo": False, "responsive": True})


# Tier colours (plotly's own first colours), shared by a tier's models and its level λ_t.
TIER_COLOURS = ["#636efa", "#ef553b", "#00cc96", "#ab63fa", "#ffa15a", "#19d3f3", "#ff6692"]
# Where labels are placed: the plot area a chart gets on the site (the chart div is 520 px high, its width follows
# the page; narrower than most, so labels placed apart here stay apart wider) and a label's box per character and
# per line of text.
PLOT_PX = (1000.0, 340.0)
LABEL_PX = (6.8, 16.0)
# Arrow lengths (px) and directions (degrees, counter-clockwise from east) tried for a label, nearest first.
LABEL_DISTANCES = (30.0, 50.0, 75.0, 105.0, 140.0)
LABEL_ANGLES = (60.0, 120.0, 30.0, 150.0, 90.0, -60.0, -120.0, -30.0, -150.0, -90.0, 0.0, 180.0)


@dataclass(frozen=True)
class Label:
    """Where a label goes: the arrow's tail (ax, ay px from its point, y down) and which side of the text box
    sits at the tail (plotly's xanchor)."""

    ax: float
    ay: float
    xanchor: str


def _box(x: float, y: float, text: str, xanchor: str) -> tuple[float, float, float, float]:
    """The text box (left, top, right, bottom px) of a label whose tail is at (x, y); lines split by <br>."""
    lines = text.split("<br>")
    width, height = LABEL_PX[0] * max(len(line) for line in lines) + 8, LABEL_PX[1] * len(lines) + 4
    left = {"left": x, "right": x - width}.get(xanchor, x - width / 2)
    return left, y - height / 2, left + width, y + height / 2


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def place_labels(anchors: np.ndarray, texts: Sequence[str], obstacles: np.ndarray,
                 size: tuple[float, float] = PLOT_PX) -> list[Label]:
    """Labels for points `anchors` ((n, 2) px, origin top left): each text box inside the plot area (`size`), clear
    of the labels placed before it and of the labelled points, covering as few `obstacles` (other points, px) as it
    can, nearest first; a greedy placement, first label first. A box that fits nowhere clear takes the place
    inside the plot area overlapping least."""
    placed: list[tuple[float, float, float, float]] = []
    marks = [(x - 5, y - 5, x + 5, y + 5) for x, y in anchors]
    out = []
    for (x, y), text in zip(anchors, texts):
        best, best_score = Label(0.0, -LABEL_DISTANCES[0], "center"), np.inf
        for distance in LABEL_DISTANCES:
            for angle in np.radians(LABEL_ANGLES):
                ax, ay = distance * np.cos(angle), -distance * np.sin(angle)
                xanchor = "left" if ax > 0.3 * distance else "right" if ax < -0.3 * distance else "center"
                box = _box(x + ax, y + ay, text, xanchor)
                if box[0] < 0 or box[1] < 0 or box[2] > size[0] or box[3] > size[1]:
                    continue
                clashes = sum(_overlap(box, other) for other in placed + marks)
                covered = int(np.sum((obstacles[:, 0] > box[0] - 5) & (obstacles[:, 0] < box[2] + 5)
                                     & (obstacles[:, 1] > box[1] - 5) & (obstacles[:, 1] < box[3] + 5)))
                score = (clashes * 1000 + covered) * LABEL_DISTANCES[-1] + distance
                if score < best_score:
                    best, best_score = Label(float(ax), float(ay), xanchor), score
        placed.append(_box(x + best.ax, y + best.ay, text, best.xanchor))
        out.append(best)
    return out


def _to_px(cost: pd.Series, capability: pd.Series, x_range: tuple[float, float], top: float) -> np.ndarray:
    """(normalized cost, capability) -> px of PLOT_PX (log x over `x_range` in log10, y from 0 to `top`)."""
    x = (np.log10(cost.to_numpy(float)) - x_range[0]) / (x_range[1] - x_range[0]) * PLOT_PX[0]
    y = (1 - capability.to_numpy(float) / top) * PLOT_PX[1]
    return np.column_stack([x, y])


def capability_cost(models: pd.DataFrame, curve: pd.DataFrame, levels: pd.DataFrame, labels: pd.DataFrame,
                    top: float, names: Mapping[str, str], title: str) -> go.Figure:
    """Every model at (normalized cost, capability), one colour per Pareto tier, efficient models ringed; each
    tier's level λ_t at its tier cost c_t, the points the frontier was fitted on; the fitted curve (solid over the
    tier costs, dashed beyond) ending at the chart's ceiling `top`; `labels` named with arrows placed apart.
    `models`: cost, capability, tier, pareto_efficient, hover; `curve`: cost, capability, fitted; `levels`: tier,
    cost, level; `labels`: text, cost, capability; `names`: legend names of "levels", "curve" and "ringed"."""
    fig = go.Figure()
    colour = {t: TIER_COLOURS[i % len(TIER_COLOURS)] for i, t in enumerate(sorted(models["tier"].unique()))}
    for tier, group in models.groupby("tier", sort=True):
        rings = [2.5 if e else 0.5 for e in group["pareto_efficient"]]
        fig.add_trace(go.Scatter(x=group["cost"], y=group["capability"], mode="markers", name=f"tier {tier}",
                                 text=group["hover"], hovertemplate="%{text}<extra></extra>",
                                 marker=dict(size=9, color=colour[tier], line=dict(width=rings, color="#111"))))
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=names["ringed"], hoverinfo="skip",
                             marker=dict(size=9, color="#fff", line=dict(width=2.5, color="#111"))))
    fig.add_trace(go.Scatter(x=levels["cost"], y=levels["level"], mode="markers", name=names["levels"],
                             text=[f"tier {t}" for t in levels["tier"]],
                             hovertemplate="%{text}: λ_t %{y:.3f} at c_t %{x:.3g}<extra></extra>",
                             marker=dict(symbol="diamond", size=15, line=dict(width=2, color="#111"),
                                         color=[colour.get(t, "#777") for t in levels["tier"]])))
    for part, dash, shown in _curve_parts(curve):
        fig.add_trace(go.Scatter(x=part["cost"], y=part["capability"], mode="lines", name=names["curve"],
                                 legendgroup="curve", showlegend=shown, hoverinfo="skip",
                                 line=dict(color="#d62728", width=2.5, dash=dash)))
    costs = pd.concat([models["cost"], levels["cost"]])
    costs = costs[costs > 0]  # a log axis
    x_range = (float(np.log10(costs.min())) - 0.1, float(np.log10(costs.max())) + 0.1)
    drawn = pd.concat([models[["cost", "capability"]], levels.rename(columns={"level": "capability"}),
                       curve])[["cost", "capability"]]  # what a label should not cover
    placed = place_labels(_to_px(labels["cost"], labels["capability"], x_range, top), list(labels["text"]),
                          _to_px(drawn["cost"], drawn["capability"], x_range, top))
    for row, label in zip(labels.itertuples(index=False), placed):
        fig.add_annotation(x=np.log10(row.cost), y=row.capability, text=row.text, ax=label.ax, ay=label.ay,
                           xanchor=label.xanchor, align="left", showarrow=True, arrowhead=0, arrowwidth=1,
                           arrowcolor="#444", font=dict(size=11, color="#111"), bgcolor="rgba(255,255,255,0.85)")
    fig.update_layout(title=title, xaxis=dict(title="normalized cost (log)", type="log", range=list(x_range)),
                      yaxis=dict(title="capability F_X(x) (CES index)", range=[0, top]), **LAYOUT)
    return fig


def _curve_parts(curve: pd.DataFrame) -> list[tuple[pd.DataFrame, str, bool]]:
    """(points, line dash, in the legend) of the frontier: solid where `fitted` (between the tier costs), dashed
    on either side (a gap between the two dashed pieces); sharing the end points, so the line is unbroken."""
    fitted = curve[curve["fitted"]]
    if fitted.empty:
        return [(curve, "dash", True)]
    gap = pd.DataFrame({"cost": [np.nan], "capability": [np.nan]})
    beyond = pd.concat([curve[curve["cost"] <= fitted["cost"].min()], gap,
                        curve[curve["cost"] >= fitted["cost"].max()]])
    return [(fitted, "solid", True), (beyond, "dash", False)]


def lambda_path(path: pd.DataFrame, title: str) -> go.Figure:
    """The leader as cost sensitivity λ grows: one horizontal segment per [lambda_from, lambda_to) and model
    (the last, unbounded segment is drawn to twice the last finite λ)."""
    finite = path["lambda_to"].replace(float("inf"), float("nan"))
    end = 2 * float(finite.max()) if finite.notna().any() else 1.0
    fig = go.Figure()
    for row in path.itertuples(index=False):
        hi = end if row.lambda_to == float("inf") else row.lambda_to
        fig.add_trace(go.Scatter(x=[row.lambda_from, hi], y=[row.model_id, row.model_id], mode="lines+markers",
                                 line=dict(width=6), name=row.model_id, showlegend=False,
                                 hovertemplate=f"{row.model_id}: λ in [{row.lambda_from:.4g}, {row.lambda_to:.4g})"
                                               "<extra></extra>"))
    fig.update_layout(title=title, xaxis=dict(title="cost sensitivity λ"), yaxis=dict(title="leader"),
                      **{**LAYOUT, "margin": dict(l=220, r=20, t=50, b=50)})
    return fig


def points_with_intervals(frame: pd.DataFrame, x: str, y: str, label: str, title: str, lo: str | None = None,
                          hi: str | None = None, group: str | None = None, log_x: bool = False) -> go.Figure:
    """Labelled points (hover shows `label`), optional vertical intervals [lo, hi], one trace per `group`."""
    fig = go.Figure()
    for name, part in (frame.groupby(group, sort=True) if group else [("", frame)]):
        error = dict(type="data", symmetric=False, array=part[hi] - part[y], arrayminus=part[y] - part[lo]) \
            if lo and hi else None
        fig.add_trace(go.Scatter(x=part[x], y=part[y], mode="markers", name=str(name), text=part[label],
                                 error_y=error, marker=dict(size=9), hovertemplate=f"%{{text}}<br>{x} %{{x:.4g}}<br>"
                                 f"{y} %{{y:.4g}}<extra></extra>"))
    fig.update_layout(title=title, xaxis=dict(title=x, type="log" if log_x else "linear"), yaxis=dict(title=y),
                      showlegend=bool(group), **LAYOUT)
    return fig


def curves(frame: pd.DataFrame, x: str, y: str, group: str, title: str, log_x: bool = False) -> go.Figure:
    """One line per `group` (e.g. one error-cost curve per cascade)."""
    fig = go.Figure()
    for name, part in frame.groupby(group, sort=True):
        part = part.sort_values(x)
        fig.add_trace(go.Scatter(x=part[x], y=part[y], mode="lines+markers", name=str(name), marker=dict(size=4),
                                 hovertemplate=f"{name}<br>{x} %{{x:.4g}}<br>{y} %{{y:.4g}}<extra></extra>"))
    fig.update_layout(title=title, xaxis=dict(title=x, type="log" if log_x else "linear"), yaxis=dict(title=y), **LAYOUT)
    return fig


def curves_with_bands(frame: pd.DataFrame, x: str, y: str, lo: str, hi: str, group: str, title: str,
                      x_title: str, y_title: str, reference: float | None = None) -> go.Figure:
    """One line per `group` with its shaded interval [lo, hi]; axes titled in words; an optional horizontal
    reference line (e.g. 0 = random routing)."""
    fig = go.Figure()
    palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
    for i, (name, part) in enumerate(frame.groupby(group, sort=False)):
        part, colour = part.sort_values(x), palette[i % len(palette)]
        fig.add_trace(go.Scatter(x=pd.concat([part[x], part[x][::-1]]), y=pd.concat([part[hi], part[lo][::-1]]),
                                 fill="toself", fillcolor=colour, opacity=0.15, line=dict(width=0), hoverinfo="skip",
                                 showlegend=False, legendgroup=str(name)))
        fig.add_trace(go.Scatter(x=part[x], y=part[y], mode="lines+markers", name=str(name), legendgroup=str(name),
                                 line=dict(color=colour), marker=dict(size=4),
                                 hovertemplate=f"{name}<br>{x_title} %{{x:.0%}}<br>{y_title} %{{y:.3f}}<extra></extra>"))
    if reference is not None:
        fig.add_hline(y=reference, line=dict(color="#777", dash="dot"))
    fig.update_layout(title=title, xaxis=dict(title=x_title, tickformat=".0%"), yaxis=dict(title=y_title), **LAYOUT)
    return fig
