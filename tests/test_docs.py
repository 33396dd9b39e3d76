"""The README is the front door and docs/ the reference: every relative link in them resolves, every docs page is
one click from the README, and the README stays short with the two commands first."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)\s]+)\)")
PAGES = [ROOT / "README.md", ROOT / "deploy" / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def relative_links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)  # code blocks hold no links
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    broken = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(target)
        elif anchor and resolved.suffix == ".md":
            slugs = {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
                     for h in re.findall(r"^#+ (.*)$", resolved.read_text(), flags=re.M)}
            if anchor not in slugs:
                broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)}: broken links {broken}"


def test_every_docs_page_is_one_click_from_the_readme():
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in relative_links(ROOT / "README.md")}
    pages = set((ROOT / "docs").glob("*.md")) | {ROOT / "deploy" / "README.md"}
    assert not sorted(str(p.relative_to(ROOT)) for p in pages if p.resolve() not in linked)


def test_every_results_page_is_in_the_results_index():
    linked = {(ROOT / "docs" / t).resolve() for t in relative_links(ROOT / "docs" / "results.md")}
    assert not sorted(p.name for p in (ROOT / "docs" / "results").glob("*.md") if p.resolve() not in linked)


def test_the_readme_is_short_and_opens_with_the_two_commands():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 200
    first_block = "\n".join(lines[:8])
    assert "make run" in first_block and "make test" in first_block
