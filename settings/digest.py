"""The weekly digest's settings (`[digest]` in usage.toml; dashboard/digest.py sends it).
Its secrets come from the environment only, and are read when a digest is sent, never
kept in the configuration object: the SMTP password (USAGE_SMTP_PASSWORD) and the
incoming webhook's URL (USAGE_DIGEST_WEBHOOK: a Slack- or Mattermost-compatible one,
whose URL is its secret)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from settings.errors import ConfigError

SMTP_PASSWORD_ENV: Final = "USAGE_SMTP_PASSWORD"  # noqa: S105  the variable's name, not a password
WEBHOOK_ENV: Final = "USAGE_DIGEST_WEBHOOK"
KEYS = frozenset({"to", "from", "smtp_host", "smtp_port", "smtp_user", "starttls", "dashboard_url"})
_ADDRESS = re.compile(r"^[^@\s<>,;]+@[^@\s<>,;]+$")


@dataclass(frozen=True)
class DigestSettings:
    """Where the administrators' week at a glance goes: e-mail to `to` through the lab's
    SMTP server, and/or the webhook of the environment."""

    to: tuple[str, ...] = ()
    sender: str | None = None
    smtp_host: str | None = None
    smtp_port: int = 587
    smtp_user: str | None = None
    starttls: bool = True
    dashboard_url: str | None = None  # the link in the digest

    @property
    def email(self) -> bool:
        return bool(self.to and self.smtp_host)


def digest_settings(table: Any) -> DigestSettings:
    """`[digest]`, checked: every address one address, a port a port, the link http(s)."""
    if not isinstance(table, dict):
        raise ConfigError("digest must be a table: [digest]")
    unknown = set(table) - KEYS
    if unknown:
        raise ConfigError(f"unknown setting digest.{sorted(unknown)[0]}; known: {', '.join(sorted(KEYS))}")
    to = table.get("to", [])
    if isinstance(to, str):
        to = [to]
    if not isinstance(to, list) or not all(isinstance(a, str) and _ADDRESS.match(a) for a in to):
        raise ConfigError(
            f'digest.to must be e-mail addresses, such as ["professor@lab.example"], not {to!r}'
        )
    host = table.get("smtp_host")
    if to and not isinstance(host, str):
        raise ConfigError("digest.to is set but digest.smtp_host is not: the lab's SMTP server is needed")
    sender = table.get("from", None)
    if to and not (isinstance(sender, str) and _ADDRESS.match(sender)):
        raise ConfigError(f"digest.from must be the address the digest is sent from, not {sender!r}")
    port = table.get("smtp_port", 587)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise ConfigError(f"digest.smtp_port must be a port number, not {port!r}")
    url = table.get("dashboard_url")
    if url is not None and not (isinstance(url, str) and url.startswith(("https://", "http://"))):
        raise ConfigError(f"digest.dashboard_url must be the dashboard's http(s) address, not {url!r}")
    starttls = table.get("starttls", True)
    if not isinstance(starttls, bool):
        raise ConfigError(f"digest.starttls must be true or false, not {starttls!r}")
    user = table.get("smtp_user")
    return DigestSettings(
        to=tuple(to),
        sender=sender,
        smtp_host=host,
        smtp_port=port,
        smtp_user=user if isinstance(user, str) else None,
        starttls=starttls,
        dashboard_url=url,
    )


def secrets_of(env: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(the SMTP password, the webhook URL) from the environment, when a digest is sent."""
    return env.get(SMTP_PASSWORD_ENV) or None, env.get(WEBHOOK_ENV) or None
