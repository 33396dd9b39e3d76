"""Interactive charts of the report site (plotly): hover a point to see its model.

Plotly writes each chart as a <div> plus a call into plotly.js; the library itself is written once into the
site (`write_plotly_js`) and referenced relatively, so the pages open from disk with no network.
Knows nothing of the warehouse or of compass: it turns DataFrames into figures.
"""

from __future__ import annotations

from pathlib import Path

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


def capability_cost(models: pd.DataFrame, frontier: pd.DataFrame, levels: pd.DataFrame, title: str) -> go.Figure:
    """Every model at (normalized cost, capability), one colour per Pareto tier, efficient models ringed; the
    fitted frontier curve and the tier levels it envelops. `models`: cost, capability, tier, pareto_efficient,
    hover; `frontier`: cost, capability; `levels`: tier, cost, level."""
    fig = go.Figure()
    for tier, group in models.groupby("tier", sort=True):
        fig.add_trace(go.Scatter(
            x=group["cost"], y=group["capability"], mode="markers", name=f"tier {tier}", text=group["hover"],
            hovertemplate="%{text}<extra></extra>",
            marker=dict(size=9, line=dict(width=[2.5 if e else 0.5 for e in group["pareto_efficient"]],
                                          color="#111"))))
    fig.add_trace(go.Scatter(x=frontier["cost"], y=frontier["capability"], mode="lines", name="CES frontier c0·c^d",
                             line=dict(color="#d62728", width=2), hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=levels["cost"], y=levels["level"], mode="markers", name="tier level λ_t at c_t",
                             text=[f"tier {t}" for t in levels["tier"]], hovertemplate="%{text}: λ_t %{y:.3f}<extra></extra>",
                             marker=dict(symbol="diamond", size=11, color="#d62728")))
    top = 1.15 * max(models["capability"].max(), levels["level"].max())  # the curve runs far above the models
    fig.update_layout(title=title, xaxis=dict(title="normalized cost (log)", type="log"),
                      yaxis=dict(title="capability F_X(x) (CES index)", range=[0, top]), **LAYOUT)
    return fig


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
