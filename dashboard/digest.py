"""The weekly digest: the administrators' week at a glance (the Overview's four answers,
in the same sentences: dashboard/glance.py), sent by e-mail through the lab's SMTP server
and/or to a Slack- or Mattermost-compatible incoming webhook, with a link to the page.

    python -m dashboard.digest                 # cron, once a week after an ETL run
    python -m dashboard.digest --week-ending 2026-12-06

Each week's message is kept in the dashboard's own state (state/db.py) per channel until
it is sent: a send that fails (the SMTP server down, the webhook answering 500) is named
in the log and on the ETL status page, and tried again by the next run, never lost. It
goes only where `[digest]` and the environment say (the administrators: it names people
as their page does). Secrets stay in the environment and out of every log line, message
and record: an error names the channel, never the webhook's URL or the password.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import os
import re
import smtplib
import ssl
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from email.message import EmailMessage
from zoneinfo import ZoneInfo

from dashboard import glance
from dashboard.strings import plain, use_language
from queries import pages
from queries.filters import Filters
from queries.runner import StoreReader
from settings.config import Config, load_config
from settings.digest import DigestSettings, secrets_of
from settings.errors import ConfigError
from state import db as state_db

log = logging.getLogger("digest")

SEND_TIMEOUT_S = 20.0
EMAIL, WEBHOOK = "email", "webhook"


@dataclass(frozen=True)
class Message:
    subject: str
    text: str  # plain text: the e-mail
    markdown: str  # the webhook's (Slack and Mattermost read Markdown-like text)


def last_week(now: dt.datetime, zone: str) -> dt.date:
    """The last day (a Sunday) of the last whole week, Monday to Sunday, in `zone`."""
    today = now.astimezone(ZoneInfo(zone)).date()
    return today - dt.timedelta(days=today.weekday() + 1)


def week_filters(last_day: dt.date, zone: str) -> Filters:
    tz = ZoneInfo(zone)
    first = last_day - dt.timedelta(days=6)
    start = dt.datetime.combine(first, dt.time(), tz).astimezone(dt.UTC)
    end = dt.datetime.combine(last_day + dt.timedelta(days=1), dt.time(), tz).astimezone(dt.UTC)
    return Filters(start=start, end=end, tz=zone)


def compose(reader: StoreReader, config: Config, last_day: dt.date) -> Message:
    """The week ending `last_day` at a glance, in the lab's language."""
    zone, settings = config.dashboard.timezone, config.dashboard
    filters = week_filters(last_day, zone)
    with use_language(settings.language):
        data = pages.overview(reader, filters, top_names=settings.top_names, grid_names=settings.grid_names)
        costs = pages.api_cost(reader, filters, top_names=settings.top_names)
        answers = pages.glance(reader, filters) | ({"api_cost_totals": costs["totals"]} if costs else {})
        found = glance.build(data, answers, zone, pages.verdict_window(reader.resolve(filters)))
        first = last_day - dt.timedelta(days=6)
        subject = plain("digest.subject", start=first.isoformat(), end=last_day.isoformat())
        sections = [
            (plain("glance.users.title"), found.users),
            (plain("glance.nodes.title"), found.nodes),
            (plain("glance.api.title"), found.api_cost),
            (plain("glance.budgets.title"), found.budgets),
        ]
        link = config.digest.dashboard_url
        footer = plain("digest.link", url=link) if link else plain("digest.no_link")
        head = plain("digest.head", start=first.isoformat(), end=last_day.isoformat(), zone=zone)
    text = "\n\n".join(
        [
            head,
            *(f"{title}\n" + "\n".join(f"- {_text(line)}" for line in lines) for title, lines in sections),
            footer,
        ]
    )
    markdown = "\n\n".join(
        [
            f"**{_slack(head)}**",
            *(
                f"**{_slack(title)}**\n" + "\n".join(f"- {_slack(line)}" for line in lines)
                for title, lines in sections
            ),
            _slack(footer),
        ]
    )
    return Message(subject, text + "\n", markdown)


def _section(title: str, lines: list[str]) -> str:
    return title + "\n" + "\n".join(f"- {line}" for line in lines)


_ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|~<>$:])")


def _text(line: str) -> str:
    """A glance line (Markdown, its names escaped for Streamlit) as plain text."""
    return _ESCAPED.sub(r"\1", line.replace("**", ""))


def _slack(line: str) -> str:
    """For a webhook: Slack and Mattermost read <...> as links and mentions (<!channel>),
    so the three characters they escape are escaped; Markdown escapes stay (names)."""
    return line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def send_email(settings: DigestSettings, message: Message, password: str | None) -> None:
    mail = EmailMessage()
    mail["Subject"] = message.subject
    mail["From"] = settings.sender or ""
    mail["To"] = ", ".join(settings.to)
    mail.set_content(message.text)
    assert settings.smtp_host is not None
    with smtplib.SMTP(settings.smtp_host, settings.smtp_port, timeout=SEND_TIMEOUT_S) as smtp:
        if settings.starttls:
            smtp.starttls(context=ssl.create_default_context())
        if settings.smtp_user:
            smtp.login(settings.smtp_user, password or "")
        smtp.send_message(mail)


def send_webhook(url: str, message: Message) -> None:
    body = json.dumps({"text": message.markdown}).encode("utf-8")
    request = urllib.request.Request(  # noqa: S310  the lab's configured https webhook
        url, data=body, headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=SEND_TIMEOUT_S) as answer:  # noqa: S310
        answer.read()


def why(exc: BaseException, channel: str) -> str:
    """What went wrong, without a secret: an HTTP status, an SMTP reply code, or the kind
    of error (a webhook's URL, which is its secret, never appears)."""
    if isinstance(exc, urllib.error.HTTPError):
        return f"the webhook answered HTTP {exc.code}"
    if isinstance(exc, smtplib.SMTPResponseException):
        return f"the SMTP server answered {exc.smtp_code}"
    if isinstance(exc, urllib.error.URLError):
        return f"the webhook could not be reached ({type(exc.reason).__name__})"
    name = "the SMTP server" if channel == EMAIL else "the webhook"
    return f"{name} could not be reached ({type(exc).__name__})"


def run(config: Config, env: Mapping[str, str], now: dt.datetime, last_day: dt.date | None = None) -> int:
    """Queue the week's message for each channel configured, then send every message not
    sent yet (this week's and earlier failures). 0: all sent; 75: one or more failed and
    are kept for the next run."""
    password, webhook = secrets_of(env)
    channels = ([EMAIL] if config.digest.email else []) + ([WEBHOOK] if webhook else [])
    if not channels:
        raise ConfigError(
            "no digest to send: set [digest] to, from and smtp_host in the configuration file, "
            "and/or the webhook's URL in the environment (USAGE_DIGEST_WEBHOOK)"
        )
    state = state_db.shared(state_db.state_url(env))
    week = last_day or last_week(now, config.dashboard.timezone)
    reader = StoreReader(
        config.store, zone=config.dashboard.timezone, prices=config.prices, share_results=False
    )
    message = compose(reader, config, week)
    for channel in channels:
        body = message.text if channel == EMAIL else message.markdown
        if state.queue_digest(week.isoformat(), channel, message.subject, body, now.timestamp()):
            log.info("the digest of the week ending %s is queued for %s", week, channel)
    failed = 0
    for row in reversed(state.digests(unsent_only=True, limit=100)):  # the oldest first
        if row["channel"] not in channels:
            continue  # a channel no longer configured: kept, named on the status page
        stored = Message(row["subject"], row["body"], row["body"])
        try:
            if row["channel"] == EMAIL:
                send_email(config.digest, stored, password)
            else:
                assert webhook is not None
                send_webhook(webhook, stored)
        except (OSError, smtplib.SMTPException, urllib.error.URLError) as exc:
            failed += 1
            reason = why(exc, row["channel"])
            state.digest_tried(row["week"], row["channel"], error=reason, now=time.time())
            log.error(
                "the digest of the week ending %s was not sent by %s: %s; the next run tries again",
                row["week"],
                row["channel"],
                reason,
            )
        else:
            state.digest_tried(row["week"], row["channel"], error=None, now=time.time())
            log.info("the digest of the week ending %s was sent by %s", row["week"], row["channel"])
    return 75 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m dashboard.digest",
        description="Send the administrators' week at a glance ([digest] in the configuration file; "
        "the SMTP password in USAGE_SMTP_PASSWORD, a webhook's URL in USAGE_DIGEST_WEBHOOK). "
        "A message that cannot be sent is kept and tried again by the next run (exit code 75).",
    )
    parser.add_argument(
        "--week-ending", metavar="YYYY-MM-DD", help="the week's last day (default: last Sunday)"
    )
    parser.add_argument("--store", metavar="DIR", help="the store directory (default: env USAGE_STORE)")
    parser.add_argument(
        "--config", metavar="FILE", help="TOML configuration file (default: env USAGE_CONFIG)"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(format="digest: %(levelname)s: %(message)s", level=logging.INFO, stream=sys.stderr)
    try:
        config = load_config(args.config, store=args.store)
        last_day = dt.date.fromisoformat(args.week_ending) if args.week_ending else None
        return run(config, os.environ, dt.datetime.now(dt.UTC), last_day)
    except ValueError as exc:
        log.error("--week-ending must be a date, YYYY-MM-DD: %s", exc)
        return 2
    except ConfigError as exc:
        log.error("%s", exc)
        return exc.exit_code
    except state_db.StateUnavailable as exc:
        log.error("the dashboard's state cannot be used, nothing was sent: %s", exc)
        return 1


if __name__ == "__main__":
    sys.exit(main())
