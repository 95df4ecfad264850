"""Stores whose names would make a page enormous (issue 27): a week of bench/synthetic_store's
lab, as is ("ordinary"), with half its requests from one key sending 100,000 distinct user
agents and models ("wide"), or with requests whose names are a megabyte each ("long").

    .venv/bin/python -m bench.cardinality_store wide   # prints bench/out/cardinality-wide

Written as the ETL writes a store (etl.load.write_day, then etl.rollup), for the
benchmark (bench/cardinality_bench.py) and the tests (tests/test_cardinality.py).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import shutil
from pathlib import Path
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bench.synthetic_store import LAB_ZONE, OUT, Lab, day_table
from etl import rollup
from etl.load import write_day

Kind = Literal["ordinary", "wide", "long"]
KINDS: tuple[Kind, ...] = ("ordinary", "wide", "long")
WIDE_USER = "wide.agent"  # the key that sends every name once
WIDE_KEY = hashlib.sha256(b"sk-cardinality-wide").hexdigest()
ROWS = 200_000  # requests of a store, by default
DISTINCT = 100_000  # the names of each kind the wide key sends
MEGABYTE = 2**20
# two names of a megabyte each that differ only at their end: cut to the same beginning,
# they must stay two names
LONG_NAMES = ("x" * MEGABYTE + "-first", "x" * MEGABYTE + "-second")


def build(
    kind: Kind,
    *,
    rows: int = ROWS,
    distinct: int = DISTINCT,
    days: int = 7,
    end: dt.date | None = None,
    out: Path = OUT,
) -> Path:
    """out/cardinality-<kind>-<rows>: `rows` requests over the `days` UTC days up to `end`
    (default: yesterday); "wide" gives half of them to one key with `distinct` user agents
    (each its own client) and models; "long" adds two requests named LONG_NAMES (user,
    user agent, client, model). Reused when complete."""
    store = out / f"cardinality-{kind}-{rows}-{distinct}"
    if (store / "complete").is_file():
        return store
    building = store.with_name(store.name + ".building")
    shutil.rmtree(building, ignore_errors=True)
    rng = np.random.default_rng(7)
    lab = Lab(rng)
    last = end or dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)  # all of it in the past
    per_day = [rows // days + (1 if i < rows % days else 0) for i in range(days)]
    serial = 0
    for i, n in enumerate(per_day):
        day = last - dt.timedelta(days=days - 1 - i)
        table = day_table(lab, day, n, rng, serial)
        if kind == "wide":
            table = _wide(table, serial, distinct)
        elif kind == "long" and i == days - 1:
            table = _long(table)
        write_day(building, day, table)
        serial += n
    rollup.ensure(building, LAB_ZONE)
    (building / "complete").write_text(f"{kind}: {rows} requests\n")
    shutil.rmtree(store, ignore_errors=True)
    building.rename(store)
    return store


def _wide(table: pa.Table, serial: int, distinct: int) -> pa.Table:
    """Every other request from WIDE_USER's key, each with a name of its own (by its
    serial number, modulo `distinct`): user agent, client and model."""
    n = table.num_rows
    index = np.arange(serial, serial + n)
    theirs = index % 2 == 0
    names = pc.cast(pa.array((index // 2) % distinct), pa.string())
    agent = pc.binary_join_element_wise("agent-", names, "")
    model = pc.binary_join_element_wise("model-", names, "")
    mask = pa.array(theirs)

    def swap(column: str, values: pa.Array) -> None:
        nonlocal table
        position = table.schema.get_field_index(column)
        table = table.set_column(
            position, table.schema.field(column), pc.if_else(mask, values, table.column(column))
        )

    swap("user_agent", pc.binary_join_element_wise(agent, "1.0", "/"))
    swap("client", agent)
    swap("model_group", model)
    swap("original_model_group", model)
    swap("api_key_hash", pa.array([WIDE_KEY] * n))
    swap("key_alias", pa.array(["wide-agent"] * n))
    swap("user_id", pa.array([WIDE_USER] * n))
    swap("user", pa.array([WIDE_USER] * n))
    return table


def _long(table: pa.Table) -> pa.Table:
    """The day's first two requests named LONG_NAMES."""
    n = table.num_rows
    for column in ("user", "user_id", "user_agent", "client", "model_group", "original_model_group"):
        position = table.schema.get_field_index(column)
        values = table.column(column).to_pylist()
        values[0], values[1] = LONG_NAMES
        table = table.set_column(position, table.schema.field(column), pa.array(values[:n], pa.string()))
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=KINDS)
    parser.add_argument("--rows", type=int, default=ROWS)
    args = parser.parse_args()
    print(build(args.kind, rows=args.rows))


if __name__ == "__main__":
    main()
