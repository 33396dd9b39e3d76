"""Report site generation (issue 16): target under 20 s for the default graph, site under 15 MB.

Times `pipelines.report.site.build_site` on the warehouse of `make run` (COMPASS_DB, else
var/warehouse.duckdb) into a temporary folder, and, as a baseline measured in the same run, reading
the tables the site shows (every leaderboard as shown, and each study table) without rendering them.
Prints the best-of-3 wall times, their ratio, the pages and the site's size.

    .venv/bin/python benchmarks/bench_report.py
"""

import sys
import tempfile
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout this file is in, first

from pipelines.report.site import SLICES, build_site, live_boards  # noqa: E402
from resources import readers  # noqa: E402
from resources.warehouse import Warehouse  # noqa: E402

TARGET_SECONDS, MAX_MEGABYTES, REPEATS = 20.0, 15.0, 3


def read_only(wh: Warehouse) -> None:
    """The baseline: what the site reads, nothing rendered."""
    live_boards(wh)
    for table in [s.table for s in SLICES] + ["compass.leaderboard_changes", "compass.lambda_path", "compass.costs"]:
        readers.published(wh, table)
    readers.source_freshness(wh)
    readers.table_counts(wh)


def main() -> int:
    wh = Warehouse()  # COMPASS_DB, else var/warehouse.duckdb (run from the checkout, like `make bench`)
    if not wh.table_exists("compass.leaderboards"):
        print(f"no leaderboards in {wh.path}: run `make run` first")
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        pages: list[str] = []
        ours = min(timeit.repeat(lambda: pages.extend(build_site(wh, site)), number=1, repeat=REPEATS))
        size = sum(p.stat().st_size for p in site.rglob("*") if p.is_file()) / 2**20
    base = min(timeit.repeat(lambda: read_only(wh), number=1, repeat=REPEATS))
    ok = ours < TARGET_SECONDS and size < MAX_MEGABYTES
    print(f"report site: {ours:.2f} s for {len(set(pages))} pages, {size:.1f} MB; reading its tables alone: {base:.2f} s "
          f"(ratio {ours / base:.1f}); target < {TARGET_SECONDS:.0f} s and < {MAX_MEGABYTES:.0f} MB: "
          f"{'OK' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
