"""Reading the report site's pages back (standard library HTML parser): tables, links and scripts."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}  # table id -> rows of cell texts (header row first)
        self.urls: list[str] = []  # every src and href
        self._table: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.urls += [v for k, v in attrs.items() if k in ("src", "href") and v is not None]
        if tag == "table":
            self._table = attrs.get("id") or f"table{len(self.tables)}"
            self.tables[self._table] = []
        elif tag == "tr" and self._table:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[self._table][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text())
    return page


def table_rows(path: Path, table_id: str) -> list[dict[str, str]]:
    """The rows of a table as {heading: cell text}."""
    header, *rows = parse(path).tables[table_id]
    return [dict(zip(header, row)) for row in rows]


def pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))
