"""The sign-in gate: lab-wide bounds on checking credentials, kept in the state database
(state/db.py) so that every process of the dashboard spends the same budgets."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from state import db as state_db

# scrypt checks of passwords, lab-wide: 10 at once, then one every 6 s (10 a minute, about
# 0.6 s of one core): a flood delays the right password by seconds, not minutes
PASSWORD_PACE = (10, 6.0)
KNOWN_ADDRESSES = 32


@dataclass(frozen=True)
class Ticket:
    """An attempt admitted by the gate: charged (these rows) until it succeeds."""

    kind: Literal["password", "key"]
    charges: tuple[int, ...]
    at: float
    pace: str | None = None
    address: str | None = None


class SignInGate:
    """Lab-wide bounds on checking credentials, whatever the sessions, processes, addresses
    or timing, that no flood can turn into a lock-out of the right credential. They live
    in the dashboard's state database (dashboard/state_db.py), so that five processes
    give a guesser no more than one:

    - per client address (when one is known) and per account (one student key): failures
      in a sliding window, charged before the check in one turn of the database, so
      concurrent submissions cannot all pass one free place; a success gives its place back;
    - passwords overall: a pace of scrypt checks (a token bucket: `burst` at once, then
      one every `every_s`), which bounds the work and the guessing but only ever delays the
      next check by seconds. Addresses an administrator signed in from (the last
      KNOWN_ADDRESSES) share a pace of their own: a flood from other addresses, forged or
      not, leaves the professor's office its own turn;
    - keys overall: nothing before the check. A key is a hash lookup, cheap to check, and
      a long random string LiteLLM made, beyond guessing: the right one always gets in.
      Failed keys are counted lab-wide afterwards (`failed`), which tells the log a flood
      is on.

    Administrators also have the one-time code (dashboard/one_time_code.py), checked
    before this gate. Every method raises state_db.StateUnavailable when the database
    cannot be used: the sign-in is then refused, never let through unchecked."""

    def __init__(
        self,
        budgets: Mapping[str, tuple[int, float]] | None = None,
        clock: Callable[[], float] = time.time,
        pace: tuple[int, float] = PASSWORD_PACE,
        db: state_db.StateDB | None = None,
    ) -> None:
        self.limits = dict(budgets or DEFAULT_BUDGETS)
        self.clock = clock  # wall time: the processes sharing the database share it
        self.burst, self.every_s = pace
        self.db = db or state_db.StateDB()

    def admit(self, kind: Literal["password", "key"], account: str, address: str | None) -> Ticket | float:
        """A ticket to check one credential, or the seconds until one may be checked."""
        scopes = [(f"{kind}.account", account)] if kind == "key" else []
        if address:
            scopes.append(("address", address))
        with self.db.turn() as conn:
            now = self.clock()
            waits = [self._budget_wait(conn, scope, name, now) for scope, name in scopes]
            pace = None
            if kind == "password":
                known = conn.execute(
                    sa.select(state_db.gate_known.c.address).where(state_db.gate_known.c.address == address)
                )
                pace = "known" if address and known.first() is not None else "all"
                waits.append(self._pace_wait(conn, pace, now))
            wait = max(waits, default=0.0)
            if wait > 0:
                return wait
            charges = tuple(self._charge(conn, scope, name, now) for scope, name in scopes)
            if pace:
                conn.execute(
                    sa.update(state_db.gate_paces)
                    .where(state_db.gate_paces.c.name == pace)
                    .values(tokens=state_db.gate_paces.c.tokens - 1)
                )
            return Ticket(kind, charges, now, pace, address)

    def succeeded(self, ticket: Ticket) -> None:
        with self.db.turn() as conn:
            if ticket.charges:
                conn.execute(
                    sa.delete(state_db.gate_charges).where(state_db.gate_charges.c.id.in_(ticket.charges))
                )
            if ticket.pace:
                paces = state_db.gate_paces
                tokens = conn.execute(sa.select(paces.c.tokens).where(paces.c.name == ticket.pace)).scalar()
                if tokens is not None:
                    given_back = min(float(self.burst), float(tokens) + 1)
                    conn.execute(
                        sa.update(paces).where(paces.c.name == ticket.pace).values(tokens=given_back)
                    )
        if ticket.kind == "password":
            self.known(ticket.address)

    def known(self, address: str | None) -> None:
        """An administrator signed in from `address`: its passwords get the known pace."""
        if not address:
            return
        with self.db.turn() as conn:
            now = self.clock()
            conn.execute(sa.delete(state_db.gate_known).where(state_db.gate_known.c.address == address[:200]))
            known = state_db.gate_known.c
            seq = conn.execute(sa.select(state_db.gate_turn.c.turn)).scalar_one()
            conn.execute(sa.insert(state_db.gate_known).values(address=address[:200], at=now, seq=seq))
            newest = sa.select(known.address).order_by(known.seq.desc()).limit(KNOWN_ADDRESSES)
            conn.execute(sa.delete(state_db.gate_known).where(known.address.not_in(newest.scalar_subquery())))

    def known_addresses(self) -> list[str]:
        with self.db.turn() as conn:
            return [str(a) for a in conn.execute(sa.select(state_db.gate_known.c.address)).scalars()]

    def failed(self, ticket: Ticket) -> bool:
        """Counts a failed key lab-wide; whether that count is now over its budget (a
        flood: worth one line in the log)."""
        if ticket.kind != "key":
            return False
        with self.db.turn() as conn:
            now = self.clock()
            over = self._budget_wait(conn, "key.all", "", now) > 0
            conn.execute(sa.insert(state_db.gate_charges).values(scope="key.all", name="", at=now))
            return not over and self._budget_wait(conn, "key.all", "", now) > 0  # this one filled it

    def reset(self) -> None:
        with self.db.turn() as conn:
            for table in (state_db.gate_charges, state_db.gate_paces, state_db.gate_known):
                conn.execute(sa.delete(table))

    @staticmethod
    def _charge(conn: Connection, scope: str, name: str, now: float) -> int:
        added = conn.execute(sa.insert(state_db.gate_charges).values(scope=scope, name=name[:200], at=now))
        return int(added.inserted_primary_key[0]) if added.inserted_primary_key else 0

    def _budget_wait(self, conn: Connection, scope: str, name: str, now: float) -> float:
        """At most `limit` failures in any `window_s` seconds (a sliding window)."""
        limit, window_s = self.limits[scope]
        charges = state_db.gate_charges.c
        mine = (charges.scope == scope) & (charges.name == name[:200])
        conn.execute(sa.delete(state_db.gate_charges).where(mine & (charges.at <= now - window_s)))
        count, oldest = conn.execute(sa.select(sa.func.count(), sa.func.min(charges.at)).where(mine)).one()
        return 0.0 if count < limit else float(oldest) + window_s - now

    def _pace_wait(self, conn: Connection, name: str, now: float) -> float:
        """The token bucket `name`, refilled to now: 0 when a check may start."""
        row = conn.execute(sa.select(state_db.gate_paces).where(state_db.gate_paces.c.name == name)).first()
        if row is None:
            tokens = float(self.burst)
            conn.execute(sa.insert(state_db.gate_paces).values(name=name, tokens=tokens, at=now))
        else:
            tokens = float(row.tokens)
            if row.at is not None:
                tokens = min(float(self.burst), tokens + max(0.0, now - float(row.at)) / self.every_s)
            conn.execute(
                sa.update(state_db.gate_paces)
                .where(state_db.gate_paces.c.name == name)
                .values(tokens=tokens, at=now)
            )
        return 0.0 if tokens >= 1 - 1e-9 else (1 - tokens) * self.every_s  # 1e-9: sixths summed


# (failures, seconds) per budget: a person who mistypes a few times never meets them; a
# script meets them at once, and then checks one guess per window / failures seconds.
DEFAULT_BUDGETS: Mapping[str, tuple[int, float]] = {
    "key.account": (5, 600.0),  # the same (blocked, mistyped) key again and again
    "key.all": (60, 600.0),  # every student's failures together: counted, never a wait
    "address": (20, 600.0),
}
