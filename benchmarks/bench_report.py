"""Report site generation (issue 16): target under 20 s for the default graph, site under 15 MB.

Times `pipelines.report.site.build_site` on the warehouse of `make run` (COMPASS_DB, else
var/warehouse.duckdb) into a temporary folder, and, as a baseline measured in the same run, reading
the tables the site shows (every leaderboard as shown, and each study table) without rendering them.
Prints the best-of-3 wall times of a whole site (each into a new folder), their ratio, the pages and the site's
size, and, for information, a rebuild with no table changed (only the pages rewritten every time).

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
    """The baseline: what the site reads, nothing rendered (on one connection, as the site reads)."""
    with wh.reading():
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
        sites = iter(range(REPEATS))  # every timed build writes a new folder: the whole site, none of it kept
        ours = min(timeit.repeat(lambda: build_site(wh, Path(tmp) / f"site{next(sites)}"), number=1, repeat=REPEATS))
        site = Path(tmp) / "site0"
        size = sum(p.stat().st_size for p in site.rglob("*") if p.is_file()) / 2**20
        again = timeit.default_timer()
        kept = build_site(wh, site)  # nothing changed: only the pages rewritten every time
        again = timeit.default_timer() - again
    base = min(timeit.repeat(lambda: read_only(wh), number=1, repeat=REPEATS))
    ok = ours < TARGET_SECONDS and size < MAX_MEGABYTES
    print(f"report site: {ours:.2f} s for {len(kept.pages)} pages, {size:.1f} MB; reading its tables alone: {base:.2f} s "
          f"(ratio {ours / base:.1f}); target < {TARGET_SECONDS:.0f} s and < {MAX_MEGABYTES:.0f} MB: "
          f"{'OK' if ok else 'MISSED'}; a rebuild with no table changed: {again:.2f} s "
          f"({len(kept.rewritten)} pages rewritten)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
