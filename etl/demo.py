"""The demo store: the simulated lab of etl/simulate.py, written through the ETL's own
transform and load, for a first look without a LiteLLM database.

A demo store carries `demo.json` in its root, so the dashboard labels it and the ETL
refuses to write real rows into it; building a demo refuses any directory that is not
empty or a demo already. Demo and real data never share a store."""

from __future__ import annotations

import datetime as dt
import json
import secrets
import shutil
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from contract.store import DEMO_FILE, KEYS_FILE, KEYS_SCHEMA, USERS_FILE, USERS_SCHEMA
from etl import simulate
from etl.load import write_snapshot
from etl.run import ingest_rows
from settings.config import Config
from settings.errors import ConfigError

DAYS = 30
BUDGET_DAYS = 30
# What the lab's administrator would have set: most students $10 a month, the busiest
# ones more, a newcomer less; the professor no budget. Some end up near or over it.
BUDGETS = {"prof.kim": None, "minji.park": 4.0, "junho.lee": 3.0, "seoyeon.choi": 2.5, "marco.rossi": 0.5}
DEFAULT_BUDGET = 5.0
TPM, RPM = 200_000, 60


def is_demo(store: Path) -> bool:
    return (store / DEMO_FILE).is_file()


def demo_key(user_id: str, n: int = 0) -> str:
    """The made-up LiteLLM key of a simulated person (its sha256 is in the demo store):
    safe to show, since it opens nothing but the demo."""
    return f"sk-demo-{user_id}-{n}"


def built_at(store: Path) -> dt.datetime | None:
    """When the demo store was built (None: not a demo store, or unreadable)."""
    try:
        marker = json.loads((store / DEMO_FILE).read_text(encoding="utf-8"))
        return dt.datetime.fromisoformat(marker["built_at"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def build(store: Path, *, now: dt.datetime | None = None, days: float = DAYS, seed: int = 7) -> None:
    """(Re)build the demo store at `store`: simulated spend logs up to `now` through the
    ETL's transform and load, and the keys and users LiteLLM would have. The new demo
    replaces an old one by renaming, so a dashboard reading it never sees half of one."""
    now = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    if store.exists() and not is_demo(store) and any(store.iterdir()):
        raise ConfigError(
            f"{store} holds something other than a demo store; the demo never writes into a real "
            "store. Choose an empty directory (USAGE_DEMO_STORE)."
        )
    store.parent.mkdir(parents=True, exist_ok=True)
    building = store.with_name(f"{store.name}.building-{secrets.token_hex(4)}")
    try:
        building.mkdir()
        # marked first: whatever happens next, this directory never passes for real data
        marker = {"demo": True, "built_at": now.isoformat(), "seed": seed, "days": days}
        (building / DEMO_FILE).write_text(json.dumps(marker), encoding="utf-8")
        spend: dict[str, float] = defaultdict(float)
        window = now - dt.timedelta(days=BUDGET_DAYS / 2)  # halfway through everyone's budget period
        rows = _counting_spend(simulate.simulate(days=days, end=now, seed=seed), spend, since=window)
        ingest_rows(Config(store=building, nodes=simulate.node_rules()), rows)
        write_snapshot(building / KEYS_FILE, _keys(now, spend))
        write_snapshot(building / USERS_FILE, _users(now))
        _swap(building, store)
    finally:
        if building.exists():
            shutil.rmtree(building, ignore_errors=True)


def _swap(new: Path, store: Path) -> None:
    if not store.exists():
        new.rename(store)
        return
    old = store.with_name(f"{store.name}.old-{secrets.token_hex(4)}")
    store.rename(old)
    new.rename(store)
    shutil.rmtree(old, ignore_errors=True)


def _counting_spend(
    rows: Iterable[dict[str, Any]], spend: dict[str, float], *, since: dt.datetime
) -> Iterator[dict[str, Any]]:
    """Pass the rows on, adding up each key's spend since its budget period began, as
    LiteLLM's key table would hold it."""
    naive_since = since.replace(tzinfo=None)
    for row in rows:
        if row["startTime"] >= naive_since:
            spend[row["api_key"]] += float(row.get("spend") or 0.0)
        yield row


def _keys(now: dt.datetime, spend: dict[str, float]) -> pa.Table:
    reset = now + dt.timedelta(days=BUDGET_DAYS / 2)
    rows = []
    for person in simulate.PEOPLE:
        budget = BUDGETS.get(person.user_id, DEFAULT_BUDGET)
        first = person.user_id.split(".", maxsplit=1)[0]
        for n in (0, 1):
            key = simulate.key_hash(person.user_id, n)
            rows.append(
                {
                    "api_key_hash": key,
                    "key_name": f"sk-...{demo_key(person.user_id, n)[-4:]}",
                    "key_alias": f"{first}-{'main' if n == 0 else 'agents'}",
                    "user_id": person.user_id,
                    "team_id": "lab",
                    "spend": round(spend.get(key, 0.0), 6),
                    "max_budget": budget,
                    "budget_duration": f"{BUDGET_DAYS}d" if budget is not None else None,
                    "budget_reset_at": reset if budget is not None else None,
                    "tpm_limit": None if budget is None else TPM,
                    "rpm_limit": None if budget is None else RPM,
                    "expires": None,
                    "blocked": False,
                    "created_at": now - dt.timedelta(days=90),
                    "last_active": now,
                    "snapshot_at": now,
                }
            )
    return pa.Table.from_pylist(rows, schema=KEYS_SCHEMA)


def _users(now: dt.datetime) -> pa.Table:
    rows = [
        {
            "user_id": person.user_id,
            "user_alias": person.user_id.replace(".", " ").title(),
            "user_email": f"{person.user_id}@lab.example.org",
            "user_role": "proxy_admin" if person.user_id == "prof.kim" else "internal_user",
            "spend": None,
            "max_budget": None,
            "budget_duration": None,
            "budget_reset_at": None,
            "tpm_limit": None,
            "rpm_limit": None,
            "created_at": now - dt.timedelta(days=90),
            "snapshot_at": now,
        }
        for person in simulate.PEOPLE
    ]
    return pa.Table.from_pylist(rows, schema=USERS_SCHEMA)
