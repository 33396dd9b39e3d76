"""Static HTML for the report site: pages, navigation and sortable tables, with nothing fetched at view time.

Knows nothing of the warehouse or of compass: it turns titles, text and DataFrames into markup.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping, Sequence

import pandas as pd

from pipelines.formatting import number

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2330;background:#fafbfc}
header{background:#1d2330;color:#fff;padding:.6em 1.2em}header a{color:#cfe3ff;margin-right:1em;text-decoration:none}
main{padding:1em 1.5em;max-width:1300px}h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em}
table{border-collapse:collapse;font-size:.86em;margin:.5em 0 1em}th,td{border:1px solid #d8dde6;padding:.25em .5em}
th{background:#eef1f6;text-align:left}th.sortable{cursor:pointer}th.sortable:after{content:" \\2195";color:#889}
td.num{text-align:right;font-variant-numeric:tabular-nums}tr:nth-child(even) td{background:#f4f6f9}
#leaderboard td:last-child{min-width:22em}
.verdict{font-size:1.1em;background:#eef6ee;border-left:4px solid #2e7d32;padding:.6em 1em}
.note{color:#556;font-size:.9em}.chart{width:100%;max-width:1100px;height:520px}
"""

# Click a header of a table with class "sortable" to sort by that column (numbers by data-value, else text).
SORTER = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, col) {
    th.classList.add("sortable");
    th.addEventListener("click", function () {
      var body = table.tBodies[0], rows = Array.from(body.rows);
      var asc = th.dataset.order !== "asc";
      th.dataset.order = asc ? "asc" : "desc";
      function key(row) {
        var cell = row.cells[col], v = cell.dataset.value;
        return v === undefined ? cell.textContent : (v === "" ? NaN : parseFloat(v));
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (typeof x === "number" || typeof y === "number") {
          if (isNaN(x)) return 1; if (isNaN(y)) return -1;
          return asc ? x - y : y - x;
        }
        return asc ? String(x).localeCompare(y) : String(y).localeCompare(x);
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


def esc(text: object) -> str:
    return html.escape(str(text))


def verdict(text: str) -> str:
    """The page's answer in plain words, first on a study page (class `verdict`, so tests and tools find it)."""
    return f'<p class="verdict">{esc(text)}</p>'


def link(href: str, text: str) -> str:
    return f'<a href="{esc(href)}">{esc(text)}</a>'


def _number(value: float, digits: int) -> str:
    """`digits` decimals, or `digits` significant digits below 0.001; never scientific notation."""
    if value != 0 and abs(value) < 1e-3:
        return number(value, digits)
    return f"{value:,.0f}" if abs(value) >= 1e6 else f"{value:,.{digits}f}"


def _cell(value: object, digits: int, shown: Callable[[object], str] | None = None) -> str:
    """A table cell; numbers are right-aligned and carry their exact value for the sorter; `shown` formats a number
    for people (e.g. pipelines.formatting.usd) while the sorter keeps the value."""
    if value is None or (not isinstance(value, (str, bool)) and pd.isna(value)):
        return "<td></td>"
    if shown is not None and isinstance(value, (int, float)) and not isinstance(value, bool):
        return f'<td class="num" data-value="{value!r}">{esc(shown(value))}</td>'
    if isinstance(value, bool):
        return f"<td>{'yes' if value else 'no'}</td>"
    if isinstance(value, int):
        return f'<td class="num" data-value="{value}">{value:,d}</td>'
    if isinstance(value, float):
        return f'<td class="num" data-value="{value!r}">{_number(value, digits)}</td>'
    return f"<td>{esc(value)}</td>"


def table(frame: pd.DataFrame, sortable: bool = False, digits: int = 4, html_columns: Sequence[str] = (),
          table_id: str | None = None, formats: Mapping[str, Callable[[object], str]] | None = None) -> str:
    """An HTML table of `frame`; `html_columns` hold markup (links) and are not escaped; `formats` maps a column to
    how its numbers are shown (the sorter keeps their values)."""
    formats = formats or {}
    if frame.empty:
        return '<p class="note">(no rows)</p>'
    attrs = (f' id="{esc(table_id)}"' if table_id else "") + (' class="sortable"' if sortable else "")
    head = "".join(f"<th>{esc(c)}</th>" for c in frame.columns)
    rows = []
    for record in frame.itertuples(index=False):
        cells = []
        for col, value in zip(frame.columns, record):
            value = value.item() if hasattr(value, "item") else value  # numpy scalars -> Python
            cells.append(f"<td>{value}</td>" if col in html_columns else _cell(value, digits, formats.get(col)))
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table{attrs}><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def page(title: str, body: str, nav: Sequence[tuple[str, str]], depth: int = 0, scripts: Sequence[str] = ()) -> str:
    """A complete page. `nav` is (href from the site root, label); `depth` is how many folders below the root
    the page sits, so every link and script stays relative (the site opens from disk)."""
    up = "../" * depth
    links = "".join(link(up + href, label) for href, label in nav)
    tags = "".join(f'<script src="{esc(up + s)}"></script>' for s in scripts)
    return (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{esc(title)}</title>"
            f"<style>{CSS}</style>{tags}</head><body><header>{links}</header><main><h1>{esc(title)}</h1>{body}"
            f"</main><script>{SORTER}</script></body></html>")
