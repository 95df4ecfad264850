"""The one configuration object: read once from a TOML file and the environment.

Precedence for every setting: command-line flag, then environment, then the TOML file,
then the default documented in docs/configuration.md. Secrets (the database URL with its password,
the master key) come only from flags or the environment, never from the TOML file.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from settings.digest import DigestSettings, digest_settings
from settings.errors import ConfigError
from settings.price_book import Price, load_price_book
from settings.statements import StatementSettings, statement_settings
from settings.toml_file import read_toml

CursorChoice = Literal["auto", "created_at", "startTime"]
Language = Literal["en", "ko"]

DEFAULT_STORE = Path("./data")
DEFAULT_TIMEZONE = "Asia/Seoul"
DEFAULT_CHUNK_ROWS = 20_000
DEFAULT_MAX_LATENESS_HOURS = 24.0
LANGUAGES: tuple[Language, ...] = ("en", "ko")  # each has a catalogue in dashboard/strings.py

log = logging.getLogger("etl")


@dataclass(frozen=True)
class SourceSettings:
    """How the ETL reads `LiteLLM_SpendLogs`."""

    url: str | None = None
    cursor: CursorChoice = "auto"
    # None: 10 minutes with created_at, 120 with startTime (see the store contract).
    overlap_minutes: float | None = None
    max_lateness_hours: float = DEFAULT_MAX_LATENESS_HOURS
    chunk_rows: int = DEFAULT_CHUNK_ROWS


@dataclass(frozen=True)
class NoiseRules:
    """Rows dropped besides LiteLLM's own master-key and health-check rows."""

    master_key_hashes: frozenset[str] = frozenset()
    key_aliases: frozenset[str] = frozenset()
    users: frozenset[str] = frozenset()
    tags: frozenset[str] = frozenset()
    # the keys (aliases or sha256) whose requests `tags` applies to: clients set tags, so a
    # tag alone never makes a student's request noise
    tag_keys: frozenset[str] = frozenset()


@dataclass(frozen=True)
class NodeRule:
    """A GPU node's name and the api_base host:port / deployment ids that reach it."""

    name: str
    api_bases: tuple[str, ...] = ()
    model_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClientRule:
    """A client name for user agents containing any of `contains` (case-insensitive)."""

    name: str
    contains: tuple[str, ...]


@dataclass(frozen=True)
class DashboardSettings:
    """How the dashboard shows the store."""

    timezone: str = DEFAULT_TIMEZONE  # IANA name; the store itself is UTC
    stale_after_minutes: float = 30.0  # warn when the last good ETL run is older
    peers: Literal["anonymous", "named", "hidden"] = "anonymous"  # what students see of others
    language: Language = "en"  # the page's language until a person picks another
    # the Nodes page's prompt-length bands (their edges, prompt tokens) and the p95 up to
    # which a level of concurrency counts as stable (time to first token where most of the
    # level's requests were streamed, latency elsewhere: queries/load_table.sql)
    prompt_bands: tuple[int, ...] = (500, 2000, 8000, 32000)
    stable_p95_ms: float = 3000.0
    # how many names a breakdown shows (clients, models, nodes, users; the user-by-client
    # grid's users and clients; a filter's choices): the rest are folded into one row, so
    # that no data makes a page large (issue 27)
    top_names: int = 20
    grid_names: int = 12
    filter_names: int = 100
    # how long a sign-in lasts unused (each use moves its end forward): an administrator's
    # working day, a student's week (issue 29)
    admin_session_hours: float = 12.0
    student_session_days: float = 7.0


@dataclass(frozen=True)
class Config:
    store: Path = DEFAULT_STORE
    source: SourceSettings = field(default_factory=SourceSettings)
    noise: NoiseRules = field(default_factory=NoiseRules)
    nodes: tuple[NodeRule, ...] = ()
    clients: tuple[ClientRule, ...] = ()
    dashboard: DashboardSettings = field(default_factory=DashboardSettings)
    path: Path | None = None
    # the price book's entries (settings/price_book.py); empty: no "at API prices" figures
    prices: tuple[Price, ...] = ()
    price_book: Path | None = None  # the file they were read from
    digest: DigestSettings = field(default_factory=DigestSettings)  # the weekly digest
    statements: StatementSettings = field(default_factory=StatementSettings)


def sha256_hex(secret: str) -> str:
    """LiteLLM's `hash_token`: the hex sha256 of the key's UTF-8 text."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def load_config(
    path: str | Path | None = None,
    *,
    source: str | None = None,
    store: str | Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Config:
    """Build the configuration from the TOML file, the environment and explicit flags."""
    env = os.environ if env is None else env
    path = path or env.get("USAGE_CONFIG") or None
    data: dict[str, Any] = {}
    config_path: Path | None = None
    if path:
        config_path = Path(path)
        data = read_toml(config_path, f"configuration file {config_path}")
    _reject_unknown(
        data,
        {"store", "source", "noise", "nodes", "clients", "dashboard", "price_book", "digest", "statements"},
        "",
    )

    store_path = _store_path(store, env, data.get("store"), config_path)
    source_settings = _source(data.get("source", {}), source, env)
    noise = _noise(data.get("noise", {}), env)
    nodes = tuple(_node(i, n) for i, n in enumerate(_table_list(data, "nodes")))
    clients = tuple(_client(i, c) for i, c in enumerate(_table_list(data, "clients")))
    price_book = _price_book_path(env, data.get("price_book"), config_path)
    return Config(
        store=store_path,
        source=source_settings,
        noise=noise,
        nodes=nodes,
        clients=clients,
        dashboard=_dashboard(data.get("dashboard", {}), env),
        path=config_path,
        prices=load_price_book(price_book) if price_book else (),
        price_book=price_book,
        digest=digest_settings(data.get("digest", {})),
        statements=statement_settings(data.get("statements", {})),
    )


def _store_path(
    flag: str | Path | None, env: Mapping[str, str], value: Any, config_path: Path | None
) -> Path:
    if flag:
        return Path(flag)
    if env.get("USAGE_STORE"):
        return Path(env["USAGE_STORE"])
    if value is None:
        return DEFAULT_STORE
    return _path_in_file(value, config_path, "store must be a directory path (a string)")


def _price_book_path(env: Mapping[str, str], value: Any, config_path: Path | None) -> Path | None:
    """USAGE_PRICE_BOOK, else price_book in the file (relative to the file); none: None."""
    if env.get("USAGE_PRICE_BOOK"):
        return Path(env["USAGE_PRICE_BOOK"])
    if value is None:
        return None
    return _path_in_file(value, config_path, "price_book must be the path of a price book file (a string)")


def _path_in_file(value: Any, config_path: Path | None, wrong: str) -> Path:
    """A path the file names; a relative one is relative to the file, so that cron and
    systemd find it whatever their working directory."""
    if not isinstance(value, str) or not value:
        raise ConfigError(wrong)
    p = Path(value)
    return p if p.is_absolute() or config_path is None else config_path.parent / p


def _source(table: Any, flag: str | None, env: Mapping[str, str]) -> SourceSettings:
    table = _table(table, "source")
    if "url" in table:
        raise ConfigError(
            "source.url is not read from the configuration file because it carries the "
            "database password: pass --source or set LITELLM_DATABASE_URL"
        )
    _reject_unknown(table, {"cursor", "overlap_minutes", "max_lateness_hours", "chunk_rows"}, "source.")
    url = flag or env.get("LITELLM_DATABASE_URL") or env.get("DATABASE_URL") or None
    cursor = table.get("cursor", "auto")
    if cursor not in ("auto", "created_at", "startTime"):
        raise ConfigError(f'source.cursor must be "auto", "created_at" or "startTime", not {cursor!r}')
    overlap = table.get("overlap_minutes")
    if overlap is not None:
        overlap = _number(overlap, "source.overlap_minutes", minimum=0)
    lateness = _number(
        table.get("max_lateness_hours", DEFAULT_MAX_LATENESS_HOURS),
        "source.max_lateness_hours",
        minimum=0,
    )
    chunk_rows = table.get("chunk_rows", DEFAULT_CHUNK_ROWS)
    if not isinstance(chunk_rows, int) or isinstance(chunk_rows, bool) or chunk_rows < 100:
        raise ConfigError(f"source.chunk_rows must be an integer of at least 100, not {chunk_rows!r}")
    return SourceSettings(
        url=url,
        cursor=cursor,
        overlap_minutes=overlap,
        max_lateness_hours=lateness,
        chunk_rows=chunk_rows,
    )


def _noise(table: Any, env: Mapping[str, str]) -> NoiseRules:
    table = _table(table, "noise")
    if "master_key" in table:
        raise ConfigError(
            "noise.master_key is a secret and is not read from the configuration file: set "
            "LITELLM_MASTER_KEY, or put its sha256 in noise.master_key_sha256"
        )
    _reject_unknown(table, {"master_key_sha256", "key_aliases", "users", "tags", "tag_keys"}, "noise.")
    hashes = {h.lower() for h in _strings(table.get("master_key_sha256", []), "noise.master_key_sha256")}
    for h in hashes:
        if len(h) != 64 or any(c not in "0123456789abcdef" for c in h):
            raise ConfigError("noise.master_key_sha256 entries must be 64 hex digits (a sha256)")
    if env.get("LITELLM_MASTER_KEY"):
        hashes.add(sha256_hex(env["LITELLM_MASTER_KEY"]))
    if table.get("tags") and not table.get("tag_keys"):
        log.warning(
            "noise.tags drops tagged requests only from the keys noise.tag_keys names, and it "
            "names none: no request is dropped by its tags (clients set tags themselves)"
        )
    return NoiseRules(
        master_key_hashes=frozenset(hashes),
        key_aliases=frozenset(_strings(table.get("key_aliases", []), "noise.key_aliases")),
        users=frozenset(_strings(table.get("users", []), "noise.users")),
        tags=frozenset(_strings(table.get("tags", []), "noise.tags")),
        tag_keys=frozenset(_strings(table.get("tag_keys", []), "noise.tag_keys")),
    )


def _dashboard(table: Any, env: Mapping[str, str]) -> DashboardSettings:
    table = _table(table, "dashboard")
    _reject_unknown(
        table,
        {
            "timezone",
            "stale_after_minutes",
            "peers",
            "language",
            "prompt_bands",
            "stable_p95_ms",
            *NAME_LIMITS,
            *SESSION_LIMITS,
        },
        "dashboard.",
    )
    timezone = env.get("USAGE_TIMEZONE") or table.get("timezone", DEFAULT_TIMEZONE)
    try:
        ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError, TypeError):
        raise ConfigError(
            f"dashboard.timezone {timezone!r} is not an IANA time zone such as Asia/Seoul"
        ) from None
    stale = _number(table.get("stale_after_minutes", 30.0), "dashboard.stale_after_minutes", minimum=1)
    peers = table.get("peers", "anonymous")
    if peers not in ("anonymous", "named", "hidden"):
        raise ConfigError(f'dashboard.peers must be "anonymous", "named" or "hidden", not {peers!r}')
    language = env.get("USAGE_LANGUAGE") or table.get("language", "en")
    if language not in LANGUAGES:
        raise ConfigError(f'dashboard.language must be "en" or "ko", not {language!r}')
    bands = table.get("prompt_bands", list(DashboardSettings.prompt_bands))
    if (
        not isinstance(bands, list)
        or not bands
        or any(isinstance(b, bool) or not isinstance(b, int) or b <= 0 for b in bands)
        or bands != sorted(set(bands))
    ):
        raise ConfigError(
            "dashboard.prompt_bands must be prompt-token edges going up, such as [500, 2000, 8000], "
            f"not {bands!r}"
        )
    target = _number(table.get("stable_p95_ms", 3000.0), "dashboard.stable_p95_ms", minimum=1)
    return DashboardSettings(
        timezone=timezone,
        stale_after_minutes=stale,
        peers=peers,
        language=language,
        prompt_bands=tuple(bands),
        stable_p95_ms=target,
        **{
            name: _count(table.get(name, getattr(DashboardSettings, name)), f"dashboard.{name}")
            for name in NAME_LIMITS
        },
        admin_session_hours=_number(
            table.get("admin_session_hours", 12.0), "dashboard.admin_session_hours", minimum=0.01
        ),
        student_session_days=_number(
            table.get("student_session_days", 7.0), "dashboard.student_session_days", minimum=0.01
        ),
    )


SECTIONS = {"store", "source", "noise", "nodes", "clients", "dashboard", "price_book", "digest", "statements"}
NAME_LIMITS = ("top_names", "grid_names", "filter_names")
SESSION_LIMITS = ("admin_session_hours", "student_session_days")


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10_000:
        raise ConfigError(f"{where} must be a whole number from 1 to 10000, not {value!r}")
    return value


def _node(i: int, table: Any) -> NodeRule:
    where = f"nodes[{i}]"
    table = _table(table, where)
    _reject_unknown(table, {"name", "api_base", "model_id"}, f"{where}.")
    name = table.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{where}.name must be a non-empty string")
    api_bases = tuple(_strings(_listify(table.get("api_base", [])), f"{where}.api_base"))
    model_ids = tuple(_strings(_listify(table.get("model_id", [])), f"{where}.model_id"))
    if not api_bases and not model_ids:
        raise ConfigError(f"{where} ({name}) needs api_base or model_id to match requests")
    return NodeRule(name=name.strip(), api_bases=api_bases, model_ids=model_ids)


def _client(i: int, table: Any) -> ClientRule:
    where = f"clients[{i}]"
    table = _table(table, where)
    _reject_unknown(table, {"name", "contains"}, f"{where}.")
    name = table.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{where}.name must be a non-empty string")
    contains = tuple(s.lower() for s in _strings(_listify(table.get("contains", [])), f"{where}.contains"))
    if not contains or not all(contains):
        raise ConfigError(f"{where} ({name}) needs a non-empty contains = [...]")
    return ClientRule(name=name.strip(), contains=contains)


def _table(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where} must be a table")
    return value


def _table_list(data: dict[str, Any], key: str) -> list[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise ConfigError(f"{key} must be an array of tables: [[{key}]]")
    return value


def _listify(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


def _strings(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of strings")
    return list(value)


# above any sensible minutes, hours or milliseconds here; inf, nan or 1e308 would overflow
# the run's date arithmetic with a traceback
MAX_NUMBER = 1_000_000


def _number(value: Any, where: str, *, minimum: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not minimum <= value <= MAX_NUMBER:
        raise ConfigError(
            f"{where} must be a number of at least {minimum:g} and at most {MAX_NUMBER:,}, not {value!r}"
        )
    return float(value)


def _reject_unknown(table: dict[str, Any], known: set[str], prefix: str) -> None:
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigError(
            f"unknown setting {prefix}{unknown[0]} in the configuration file "
            f"(known here: {', '.join(sorted(known))})"
        )
