"""What the dashboard writes itself, shared by all its processes: sign-in sessions, the
sign-in gate's budgets (dashboard/auth.py `SignInGate`) and the weekly digest's outbox
(dashboard/digest.py). The store stays read-only.

SQLite in the state folder by default (`USAGE_DASHBOARD_STATE`, else ./.dashboard-state;
file `state.sqlite`, mode 0600, WAL: safe for several processes on one host), or any
database SQLAlchemy speaks when `USAGE_DASHBOARD_STATE_URL` is set (PostgreSQL, for
several hosts). Secrets are never in it: a session's token and its sign-in ticket are kept
as sha256 only.

Anything that goes wrong with it (unreachable, damaged, locked for too long) is raised as
`StateUnavailable`: callers refuse the sign-in, or treat the session as not signed in,
never let anyone in unchecked.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
import secrets
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import StaticPool

STATE_ENV: Final = "USAGE_DASHBOARD_STATE"
DEFAULT_STATE: Final = Path(".dashboard-state")
STATE_URL_ENV: Final = "USAGE_DASHBOARD_STATE_URL"
DB_FILE: Final = "state.sqlite"
MEMORY: Final = "sqlite://"  # one process's own (tests, AppTest): nothing shared
TICKET_S: Final = 60.0  # a sign-in ticket is exchanged for the cookie within a minute, once
SLIDE_EVERY_S: Final = 60.0  # a session's expiry moves forward at most once a minute

metadata = sa.MetaData()

sessions = sa.Table(
    "dashboard_sessions",
    metadata,
    sa.Column("sid", sa.String(64), primary_key=True),  # the tab's handle: not a secret
    sa.Column("token_sha256", sa.String(64), unique=True, nullable=True),  # the cookie's
    sa.Column("ticket_sha256", sa.String(64), unique=True, nullable=True),
    sa.Column("ticket_expires", sa.Float, nullable=True),
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("user_id", sa.Text, nullable=True),
    # a student: the sha256 of their key; an administrator: the fingerprint of the
    # password hash they signed in with (None: the demo's button, a one-time code)
    sa.Column("credential", sa.String(64), nullable=True),
    sa.Column("store", sa.Text, nullable=False),
    sa.Column("created", sa.Float, nullable=False),
    sa.Column("expires", sa.Float, nullable=False),
    sa.Column("lifetime_s", sa.Float, nullable=False),
)

# the sign-in gate's state (auth.SignInGate): failures charged per scope, the password
# paces' token buckets, the addresses administrators signed in from, and one row every
# gate decision updates first, which makes the decisions of all processes take turns
gate_charges = sa.Table(
    "dashboard_gate_charges",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("scope", sa.String(32), nullable=False),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("at", sa.Float, nullable=False),
    sa.Index("dashboard_gate_charges_scope", "scope", "name", "at"),
)
gate_paces = sa.Table(
    "dashboard_gate_paces",
    metadata,
    sa.Column("name", sa.String(16), primary_key=True),
    sa.Column("tokens", sa.Float, nullable=False),
    sa.Column("at", sa.Float, nullable=True),
)
gate_known = sa.Table(
    "dashboard_gate_known",
    metadata,
    sa.Column("address", sa.String(200), primary_key=True),
    sa.Column("at", sa.Float, nullable=False),
    sa.Column("seq", sa.BigInteger, nullable=False),  # the turn it was added in: newest last
)
gate_turn = sa.Table(
    "dashboard_gate_turn",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("turn", sa.BigInteger, nullable=False),
)

# the weekly digest (dashboard/digest.py): each week's message per channel, kept until sent;
# one that failed is tried again by the next run, never dropped. No secret is in it: the
# SMTP password and the webhook's URL stay in the environment.
digest_outbox = sa.Table(
    "dashboard_digest_outbox",
    metadata,
    sa.Column("week", sa.String(10), primary_key=True),  # the week's last day, YYYY-MM-DD
    sa.Column("channel", sa.String(16), primary_key=True),  # "email" or "webhook"
    sa.Column("subject", sa.Text, nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("created", sa.Float, nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False),
    sa.Column("last_error", sa.Text, nullable=True),
    sa.Column("sent", sa.Float, nullable=True),
)


class StateUnavailable(Exception):
    """The state database cannot be used now (the reason is in the message, no secret)."""


@dataclass(frozen=True)
class Session:
    """A signed-in session as the state database holds it."""

    sid: str
    role: str
    name: str
    user_id: str | None
    credential: str | None
    store: str
    expires: float
    lifetime_s: float


def state_folder(env: Mapping[str, str]) -> Path:
    """Where the dashboard keeps what it writes itself: USAGE_DASHBOARD_STATE, else
    ./.dashboard-state."""
    return Path(env.get(STATE_ENV) or DEFAULT_STATE)


def state_url(env: Mapping[str, str]) -> str:
    """USAGE_DASHBOARD_STATE_URL, else the SQLite file in the state folder."""
    url = env.get(STATE_URL_ENV, "").strip()
    if url:
        return url
    return f"sqlite:///{(state_folder(env) / DB_FILE).resolve()}"


class StateDB:
    """The dashboard's own small database (see the module's docstring)."""

    def __init__(self, url: str = MEMORY) -> None:
        self.url = url
        self._lock = threading.Lock()  # one decision at a time within the process
        try:
            self.engine = _engine(url)
            _create(self.engine)
        except (sa.exc.SQLAlchemyError, OSError) as exc:
            raise StateUnavailable(_reason(exc)) from None

    @contextmanager
    def turn(self) -> Iterator[Connection]:
        """A transaction that holds the database's turn: the gate's decisions, whatever the
        process, happen one after the other (a row lock in PostgreSQL, the write lock in
        SQLite, taken by the transaction's first statement)."""
        with self._lock:
            try:
                with self.engine.begin() as conn:
                    conn.execute(
                        sa.update(gate_turn).where(gate_turn.c.id == 1).values(turn=gate_turn.c.turn + 1)
                    )
                    yield conn
            except (sa.exc.SQLAlchemyError, OSError) as exc:
                raise StateUnavailable(_reason(exc)) from None

    # --- sessions -------------------------------------------------------------------------

    def open_session(
        self,
        *,
        role: str,
        name: str,
        user_id: str | None,
        credential: str | None,
        store: str,
        lifetime_s: float,
        now: float,
    ) -> tuple[str, str]:
        """A new session: (its sid, the one-time ticket the browser exchanges for the
        cookie). Only the ticket's sha256 is kept; expired sessions are swept here."""
        sid, ticket = secrets.token_hex(16), secrets.token_urlsafe(32)
        with self.turn() as conn:
            conn.execute(sa.delete(sessions).where(sessions.c.expires <= now))
            conn.execute(
                sa.insert(sessions).values(
                    sid=sid,
                    ticket_sha256=digest(ticket),
                    ticket_expires=now + TICKET_S,
                    role=role,
                    name=name,
                    user_id=user_id,
                    credential=credential,
                    store=store,
                    created=now,
                    expires=now + lifetime_s,
                    lifetime_s=lifetime_s,
                )
            )
        return sid, ticket

    def exchange(self, ticket: str, now: float) -> tuple[str, Session] | None:
        """The cookie's token for a ticket, once (a second use, a late or unknown ticket:
        None). The token is returned to be set as the cookie and kept only as its sha256."""
        if not ticket or len(ticket) > 200:
            return None
        token = secrets.token_urlsafe(32)
        hashed = digest(ticket)
        with self.turn() as conn:
            row = conn.execute(sa.select(sessions).where(sessions.c.ticket_sha256 == hashed)).first()
            if row is None or not hmac.compare_digest(str(row.ticket_sha256), hashed):
                return None
            if (row.ticket_expires or 0.0) <= now or row.expires <= now:
                return None
            conn.execute(
                sa.update(sessions)
                .where(sessions.c.sid == row.sid)
                .values(token_sha256=digest(token), ticket_sha256=None, ticket_expires=None)
            )
        return token, _session(row)

    def by_token(self, token: str, now: float) -> Session | None:
        """The session a cookie names, unexpired (its expiry moved forward: sliding)."""
        if not token or len(token) > 200:
            return None
        return self._find(sessions.c.token_sha256 == digest(token), now)

    def by_sid(self, sid: str, now: float) -> Session | None:
        """The session a tab holds, unless it was ended (sign-out elsewhere) or expired."""
        return self._find(sessions.c.sid == sid, now)

    def end(self, sid: str) -> None:
        """Sign-out: the session ends for every tab and cookie that holds it."""
        with self.turn() as conn:
            conn.execute(sa.delete(sessions).where(sessions.c.sid == sid))

    def _find(self, where: sa.ColumnElement[bool], now: float) -> Session | None:
        try:
            with self.engine.connect() as conn:
                row = conn.execute(sa.select(sessions).where(where)).first()
        except (sa.exc.SQLAlchemyError, OSError) as exc:
            raise StateUnavailable(_reason(exc)) from None
        if row is None or row.expires <= now:
            return None
        found = _session(row)
        if now + found.lifetime_s - found.expires >= SLIDE_EVERY_S:
            with self.turn() as conn:
                conn.execute(
                    sa.update(sessions)
                    .where(sessions.c.sid == found.sid)
                    .values(expires=now + found.lifetime_s)
                )
        return found

    # --- the weekly digest's outbox ---------------------------------------------------------

    def queue_digest(self, week: str, channel: str, subject: str, body: str, now: float) -> bool:
        """Keep `week`'s message for `channel` until it is sent; False if it was already."""
        with self.turn() as conn:
            known = conn.execute(
                sa.select(digest_outbox.c.week).where(
                    digest_outbox.c.week == week, digest_outbox.c.channel == channel
                )
            ).first()
            if known is not None:
                return False
            conn.execute(
                sa.insert(digest_outbox).values(
                    week=week, channel=channel, subject=subject, body=body, created=now, attempts=0
                )
            )
            return True

    def digests(self, *, unsent_only: bool = False, limit: int = 20) -> list[dict[str, Any]]:
        """The outbox, newest week first (only what is not sent yet, with `unsent_only`)."""
        query = sa.select(digest_outbox).order_by(digest_outbox.c.week.desc(), digest_outbox.c.channel)
        if unsent_only:
            query = query.where(digest_outbox.c.sent.is_(None))
        try:
            with self.engine.connect() as conn:
                return [dict(row._mapping) for row in conn.execute(query.limit(limit))]
        except (sa.exc.SQLAlchemyError, OSError) as exc:
            raise StateUnavailable(_reason(exc)) from None

    def digest_tried(self, week: str, channel: str, *, error: str | None, now: float) -> None:
        """One attempt at sending: sent (`error` None) or failed, with why."""
        values: dict[str, Any] = {"attempts": digest_outbox.c.attempts + 1, "last_error": error}
        if error is None:
            values["sent"] = now
        with self.turn() as conn:
            conn.execute(
                sa.update(digest_outbox)
                .where(digest_outbox.c.week == week, digest_outbox.c.channel == channel)
                .values(**values)
            )


def _create(engine: Engine, attempts: int = 5) -> None:
    """The tables and the turn row, if missing. Processes starting together race to make
    them (create_all checks, then creates): the loser finds them made and looks again."""
    for attempt in range(attempts):
        try:
            metadata.create_all(engine)
            with engine.begin() as conn:
                if conn.execute(sa.select(gate_turn.c.id)).first() is None:
                    conn.execute(sa.insert(gate_turn).values(id=1, turn=0))
            return
        except (sa.exc.OperationalError, sa.exc.IntegrityError, sa.exc.ProgrammingError) as exc:
            # "table ... already exists", a duplicate turn row: made by another process
            if attempt == attempts - 1 or not _made_meanwhile(exc):
                raise


def _made_meanwhile(exc: sa.exc.DBAPIError) -> bool:
    text = str(exc.orig).lower()
    return "already exists" in text or "unique" in text or "duplicate" in text


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


@functools.cache
def shared(url: str) -> StateDB:
    """The process's StateDB for `url` (made once; a failure is raised again next time)."""
    return StateDB(url)


def _engine(url: str) -> Engine:
    if url == MEMORY:
        return sa.create_engine(url, poolclass=StaticPool, connect_args={"check_same_thread": False})
    parsed = sa.engine.make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return sa.create_engine(url, pool_pre_ping=True, pool_size=2, max_overflow=4)
    if parsed.database:
        path = Path(parsed.database)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # created readable by the dashboard's user only, before SQLite opens it
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    engine = sa.create_engine(url, connect_args={"timeout": 10.0, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA busy_timeout=10000")
        cursor.close()

    return engine


def _session(row: Any) -> Session:
    return Session(
        sid=str(row.sid),
        role=str(row.role),
        name=str(row.name),
        user_id=row.user_id,
        credential=row.credential,
        store=str(row.store),
        expires=float(row.expires),
        lifetime_s=float(row.lifetime_s),
    )


def _reason(exc: BaseException) -> str:
    """What went wrong, without the URL (it may hold a password) or any bound value."""
    if isinstance(exc, sa.exc.DBAPIError) and exc.orig is not None:
        return f"{type(exc.orig).__name__}: {str(exc.orig).splitlines()[0][:200]}"
    return type(exc).__name__
