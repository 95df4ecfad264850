"""The doctor's checks of the configuration: the file, the time zone and the source URL.
A broken file is reported, and the other checks go on with the default settings."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import duckdb

from etl import extract
from etl.doctor_report import Check, fail, ok, warn
from settings.config import DEFAULT_STORE, Config, SourceSettings, load_config
from settings.errors import ConfigError
from settings.toml_file import read_toml


def check_config(
    config_file: str | Path | None, source: str | None, store: str | Path | None, env: Mapping[str, str]
) -> tuple[list[Check], Config]:
    """The file, the time zone and the source; the configuration the other checks use."""
    path = config_file or env.get("USAGE_CONFIG") or None
    origin = _source_origin(source, env)
    try:
        config = load_config(path, source=source, store=store, env=env)
    except ConfigError as exc:
        # Go on with the defaults so the database and the store get checked all the same.
        fallback = _fallback_config(path, source, store, env)
        detail = f"{exc} (the checks below use the default settings instead)"
        fix = "correct the setting named (docs/configuration.md lists them all)"
        if str(exc).startswith("configuration file") and "does not exist" in str(exc):
            fix = "pass --config with the right path, or unset USAGE_CONFIG to run without a file"
        return [fail("configuration", detail, fix), check_source(fallback, origin)], fallback
    checks = [_config_ok(config), check_timezone(config.dashboard.timezone), check_source(config, origin)]
    return checks, config


def _config_ok(config: Config) -> Check:
    if config.path is None:
        return ok("configuration", f"no file: every setting has its default; store {config.store}")
    rules = f"{len(config.nodes)} node name(s), {len(config.clients)} client rule(s)"
    return ok("configuration", f"{config.path} is valid: {rules}; store {config.store}")


def _fallback_config(
    path: str | Path | None, source: str | None, store: str | Path | None, env: Mapping[str, str]
) -> Config:
    """The defaults in place of the broken file (but its store, if it names one), with the
    source and store from the flags and environment as load_config takes them."""
    url = source or env.get("LITELLM_DATABASE_URL") or env.get("DATABASE_URL") or None
    folder = store or env.get("USAGE_STORE") or _store_in(path) or DEFAULT_STORE
    return Config(store=Path(folder), source=SourceSettings(url=url))


def _store_in(path: str | Path | None) -> Path | None:
    if not path:
        return None
    try:
        value = read_toml(Path(path), "configuration file").get("store")
    except ConfigError:
        return None
    if not isinstance(value, str) or not value:
        return None
    return Path(value) if Path(value).is_absolute() else Path(path).parent / value


def check_timezone(name: str) -> Check:
    """load_config has checked Python knows the zone; the charts are bucketed by DuckDB."""
    with duckdb.connect() as con:
        known = con.execute("SELECT count(*) FROM pg_timezone_names() WHERE name = ?", [name]).fetchone()
    if not known or not known[0]:
        return warn(
            "time zone",
            f"{name} is known to Python but not to DuckDB, which groups the charts by time",
            "choose another spelling of the zone for dashboard.timezone (or USAGE_TIMEZONE)",
        )
    return ok("time zone", name)


def _source_origin(flag: str | None, env: Mapping[str, str]) -> str:
    """Where the source URL came from, to name it in a fix."""
    if flag:
        return "--source"
    return "LITELLM_DATABASE_URL" if env.get("LITELLM_DATABASE_URL") else "DATABASE_URL"


def check_source(config: Config, origin: str) -> Check:
    if not config.source.url:
        return fail(
            "source",
            "no LiteLLM database configured",
            "pass --source postgresql://user:password@host:5432/litellm or set LITELLM_DATABASE_URL "
            "(the ETL's environment file in the README)",
        )
    try:
        url = extract.parse_source_url(config.source.url)
    except ConfigError as exc:
        return fail("source", str(exc), f"correct {origin}")
    return ok("source", f"{extract.describe_source(url)} (from {origin})")
