"""The store a load test reads, built once under bench/out/ (git-ignored) from the ETL
benchmark's PostgreSQL database of N synthetic requests (bench/synthetic.py: students
student00..student39, whose keys are sk-key-0..sk-key-39).

    .venv/bin/python -m bench.load_store --rows 1000000    # prints bench/out/store-1000000
    .venv/bin/python -m bench.load --store bench/out/store-1000000 --headless -u 50 -r 10 -t 180s

An existing database usage_bench_<rows> is only read (another benchmark may be using it;
bench/etl_bench.py's prepare() would delete the rows its last run added), a missing one is
made by prepare(). The ETL itself builds the store (`python -m etl run --source URL
--store DIR`), into a directory renamed once the run is complete, so an interrupted
build leaves nothing that passes for a store.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from bench.etl_bench import REPO, etl, prepare
from bench.load import is_store
from tests.litellm_db import admin, url_for

OUT = REPO / "bench" / "out"


def database(rows: int) -> str:
    """The URL of usage_bench_<rows>, made if it does not exist (and only then)."""
    name = f"usage_bench_{rows}"
    with admin() as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
    return url_for(name) if exists else prepare(rows, reuse=True)


def build(rows: int, out: Path = OUT) -> Path:
    """bench/out/store-<rows>, built by the ETL unless it is there already."""
    store = out / f"store-{rows}"
    if is_store(store):
        print(f"reusing {store}")
        return store
    url = database(rows)
    building = out / f"store-{rows}.building"
    shutil.rmtree(building, ignore_errors=True)  # left by a build that was interrupted
    building.parent.mkdir(parents=True, exist_ok=True)
    print(f"building {store} from {url.rsplit('/', 1)[-1]} with the ETL (a minute or more per million rows)")
    measured = etl(url, building, "store for the load test")
    building.rename(store)
    print(f"{measured.summary} ({measured.seconds:.0f} s, peak RSS {measured.peak_rss_mb:.0f} MB)")
    return store


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000, help="requests in the database (default 1M)")
    args = parser.parse_args()
    print(build(args.rows).relative_to(REPO))


if __name__ == "__main__":
    main()
