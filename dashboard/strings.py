"""Every user-facing string of the dashboard, by key, in English (here) and Korean
(dashboard/strings_ko.py); `t(key, **values)` picks the session's language.

One module because it is a catalogue, one entry per line in the page's order: a translator
reads one language in one file (Korean: dashboard/strings_ko.py, with the same keys).
"""

from __future__ import annotations

import logging
import numbers
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Literal

from streamlit.runtime.scriptrunner import get_script_run_ctx

from dashboard.strings_ko import KO
from dashboard.untrusted import Markdown, markdown

Language = Literal["en", "ko"]
LANGUAGES: tuple[Language, ...] = ("en", "ko")
LANGUAGE_NAMES: dict[Language, str] = {"en": "English", "ko": "한국어"}  # each in its own language
LANGUAGE_KEY = "lang"  # the session's language in st.session_state (set by dashboard/language.py)

EN: dict[str, str] = {
    "title": "LLM usage",
    "subtitle": "Who uses the lab's models, how much, through which tool, on which node.",
    # sidebar
    "filters.header": "Filters",
    "filters.range": "Time range",
    "range.24h": "Last 24 hours",
    "range.7d": "Last 7 days",
    "range.30d": "Last 30 days",
    "range.month": "This month",
    "range.custom": "Custom",
    "filters.days": "Days",
    "filters.timezone": "Time zone",
    "filters.users": "Users",
    "filters.models": "Models",
    "filters.nodes": "GPU nodes",
    "filters.clients": "Clients",
    "filters.all": "All",
    "filters.notice": "Ignored from the link: {notice}",
    "filters.not_here": "This page shows the present state: the time range and the filters apply to "
    "Overview and Nodes, and are kept for them.",
    # cards
    "card.spend_usd": "Spend",
    "card.requests": "Requests",
    "card.total_tokens": "Tokens",
    "card.cache_hit_rate": "Cache hit rate",
    "card.success_rate": "Success rate",
    "card.latency_p50_ms": "Median latency",
    "card.month_to_date": "{period}, month to date",
    "card.vs": "vs {period}",
    "card.period": "{start} – {end}",
    "card.not_compared": (
        "No change shown: the period before ({period}) holds too few requests to compare with "
        "(requests: {n})."
    ),
    "card.mine": "{who}: {value}",
    "card.mine_share": "{who}: {value} ({share} of all)",
    # panels
    "panel.tokens": "Tokens over time",
    "panel.tokens.help": (
        "Prompt tokens split into cached and uncached; completion tokens into answer and reasoning."
    ),
    "panel.cache": "Prompt caching",
    "panel.requests": "Requests over time",
    "panel.nodes": "GPU nodes",
    "panel.users": "Users",
    "panel.users.hint": (
        "Click a bar to highlight that person everywhere on the page; click it again to clear."
    ),
    "panel.clients": "Clients",
    "panel.matrix": "Requests by user and client",
    "panel.models": "Models",
    "highlight.active": "Highlighting **{who}**.",
    "highlight.clear": "Clear highlight",
    "users.split": "Split by client",
    "users.not_split": "clients not broken down",
    "users.by": "Bars show",
    "users.by.spend": "Spend",
    "users.by.tokens": "Tokens",
    "users.by.requests": "Requests",
    # series and axes
    "kind.uncached_prompt_tokens": "Uncached prompt",
    "kind.cached_tokens": "Cached prompt",
    "kind.answer_tokens": "Answer",
    "kind.reasoning_tokens": "Reasoning",
    "series.successes": "Succeeded",
    "series.failures": "Failed",
    "series.cache_hit_rate": "Cache hit rate",
    "series.cached": "Cached",
    "series.uncached": "Uncached",
    "series.everyone": "Everyone",
    "series.rest": "Everyone else",
    "axis.tokens": "Tokens",
    "axis.requests": "Requests",
    "axis.share": "Share",
    "measure.requests": "Requests",
    "measure.tokens": "Tokens",
    "measure.spend": "Spend",
    "hover.share": "share",
    # freshness and empty states
    "fresh.caption": "Newest request {newest} · last ETL run {run} · times in {tz}",
    "fresh.stale": (
        "The last successful ETL run finished {age} ago (expected every few minutes): is the cron "
        "job running? Recent requests may be missing."
    ),
    "fresh.failed": "The last ETL run failed: {error}",
    "fresh.failed_student": (
        "The last copy from the lab's LiteLLM failed ({when}); the newest request shown is from "
        "{newest}. The lab's administrator can see why."
    ),
    "fresh.stale_student": (
        "The data was last updated {age} ago: your most recent requests may not be shown yet."
    ),
    "fresh.incomplete": (
        "Part of the data could not be read and is left out of this page; the lab's administrator "
        "can see which."
    ),
    "fresh.damaged": (
        "These store files could not be read and are left out of every page: {files}. Run "
        "`python -m etl doctor` for what to do; the ETL replaces a day file when it next writes that day."
    ),
    "fresh.never": "never",
    "fresh.reload_failed": "The newest data could not be read ({error}); showing the data read before.",
    "empty.title": "The store is empty",
    "empty.body": (
        "No requests have been copied from LiteLLM yet. Run the ETL once against LiteLLM's "
        "database, then reload this page:"
    ),
    "empty.range": "No requests in this range and selection.",
    # peers and budgets (students)
    "panel.peers": "You among everyone",
    "panel.peers.anonymous": "Everyone else appears as a letter, largest first; only you see your name.",
    "panel.peers.named": "Everyone's totals, by name, as the lab has chosen to share them.",
    "panel.peers.hidden": "The lab keeps everyone's usage private; only yours is shown.",
    "peers.you": "You",
    "names.other": "other {n}",
    "panel.budget": "Your budget",
    "chart.so_far.day": "today so far",
    "chart.so_far.hour": "this hour so far",
    "glance.more": "and {count} more",
    "glance.tokens": "{tokens} tokens",
    "glance.users.title": "Who used the most",
    "glance.users.none": "No requests in this range.",
    "glance.users.line": "**{user}** {amount}, {share}, mostly {client} ({client_share})",
    "glance.users.line_no_client": "**{user}** {amount}, {share}",
    "glance.nodes.title": "How the nodes serve",
    "glance.nodes.window": "{start} – {end}, against the {days} days before",
    "glance.nodes.none": "No node served a request in these days or the ones before.",
    "glance.nodes.down": (
        "**{node}** is down: nothing served in these days, {before} requests in the days before"
    ),
    "glance.nodes.failing": "**{node}** is failing: {rate} of {requests} requests failed ({failures})",
    "glance.nodes.ttft_peers": (
        "**{node}** is slow on {model}: first token p95 {value} against {other} on the other nodes ({times}x)"
    ),
    "glance.nodes.ttft_before": (
        "**{node}** is slow on {model}: first token p95 {value} against {other} in the days before ({times}x)"
    ),
    "glance.nodes.speed_peers": "**{node}** is slow on {model}: {value} against {other} on the other nodes",
    "glance.nodes.speed_before": "**{node}** is slow on {model}: {value} against {other} in the days before",
    "glance.nodes.good": "good: {nodes}",
    "glance.nodes.all_good": "All good: {nodes}",
    "glance.nodes.too_few": "too few requests to judge (under {least}): {nodes}",
    "glance.api.title": "What it would cost at API prices",
    "glance.api.no_prices": "No price book: no API prices to compare with (`prices.toml`).",
    "glance.api.nothing_priced": "None of this range's models has an API price in the price book.",
    "glance.api.line": (
        "**{api}** at API prices; the lab's own accounting (LiteLLM's spend) says "
        "**{spend}**: API prices are **{ratio}x** of it."
    ),
    "glance.api.line_no_spend": "**{api}** at API prices; LiteLLM counts no spend for these requests.",
    "glance.api.unpriced": "{requests} requests of models without a price are not in it.",
    "glance.budgets.title": "Budgets that need attention",
    "glance.budgets.no_keys": "No key list copied yet: no budgets to check.",
    "glance.budgets.none": "No key has a budget.",
    "glance.budgets.fine": "All {keys} budgets are within their limits and last until their reset.",
    "glance.budgets.over": "Over budget: {keys}",
    "glance.budgets.over_key": "{key} {spend} of {budget}",
    "glance.budgets.at_risk": "At risk: {keys}",
    "glance.budgets.runs_out": "{key} runs out {when}, before its reset {reset}",
    "glance.budgets.runs_out_no_reset": "{key} runs out {when}",
    "glance.budgets.near": "{key} {share} used",
    "glance.refused.budget": "Refused for budget in this range: {keys}",
    "glance.refused.rate": "Refused for a rate limit in this range: {keys}",
    "budget.level.none": "no budget",
    "budget.level.ok": "within budget",
    "budget.level.near": "at risk",
    "budget.level.over": "over budget",
    "budgets.level": "Status",
    "budget.key": "your key",
    "budget.no_keys": "LiteLLM's key list has no key of yours yet (the next ETL run copies it).",
    "budget.used": "{key}: {spend} of {budget} used ({share}), {left} left",
    "budget.unlimited": "{key}: {spend} spent, no budget set",
    "budget.period_since": "LiteLLM's count since {start}, not the range of the cards below",
    "budget.period_all": "LiteLLM's count since the key was made, not the range of the cards below",
    "budget.resets": "resets {when} (every {every})",
    "budget.limits": "limits: {limits}",
    "budget.no_limits": "no rate limits",
    "budget.user": "Your personal budget across keys: {spend} of {budget}",
    # budget forecasts (dashboard/forecasts.py): the pace is the last 7 days'
    "forecast.runs_out": (
        "At this pace ({per_day} a day) it runs out around {when}, {ahead} before its reset on {reset}."
    ),
    "forecast.runs_out_no_reset": (
        "At this pace ({per_day} a day) it runs out around {when}; it does not reset."
    ),
    "forecast.lasts": "At this pace ({per_day} a day) it lasts until its reset on {reset}.",
    "forecast.spent": "It is used up until its reset on {reset}.",
    "forecast.spent_no_reset": "It is used up, and it does not reset.",
    "forecast.reset_due": "Its reset was due on {reset}; LiteLLM resets it at its next budget check.",
    "forecast.idle": "No spend in the last 7 days: nothing to forecast from.",
    "forecast.no_budget": "No budget to run out.",
    "forecast.lasts_no_reset": "At this pace ({per_day} a day) it lasts more than a century.",
    "forecast.invalid": "LiteLLM's budget for this key cannot be read ({setting}): no forecast.",
    "forecast.invalid_person": "Your own budget in LiteLLM cannot be read ({setting}): no forecast.",
    "forecast.period_unread": (
        "Its budget period in LiteLLM ({setting}) cannot be read: the pace is the last 7 days'."
    ),
    "forecast.status.invalid": "budget not understood",
    "forecast.problem.budget": "budget {setting}",
    "forecast.problem.spend": "spend {setting}",
    "forecast.problem.period": "period {setting}",
    "budgets.unreadable": "Settings in LiteLLM that cannot be read (no forecast from them): {keys}.",
    "budgets.and_more": "and {count} more",
    "forecast.status.runs_out": "runs out before the reset",
    "forecast.status.lasts": "lasts until the reset",
    "forecast.status.spent": "used up",
    "forecast.status.reset_due": "reset overdue",
    "forecast.status.idle": "no recent spend",
    "forecast.status.no_budget": "no budget",
    "budgets.pace": "Per day",
    "budgets.forecast": "At this pace",
    "budgets.runs_out": "Runs out",
    "budgets.every": "Every",
    "budgets.pace_note": (
        "At this pace: each key's spend a day over the last 7 days (or since its budget last reset), "
        "and whether its budget lasts until LiteLLM resets it."
    ),
    "student.no_requests": (
        "No requests of yours have been copied from LiteLLM yet: your charts appear after your first one."
    ),
    "matrix.cell": "Requests {requests} · tokens {tokens} · spend {spend}",
    "matrix.none": "no requests",
    # rate limits (dashboard/limits.py): the week before the key list was copied
    "limits.busiest": "Busiest minute in the last 7 days: {parts}.",
    "limits.and": " and ",
    "limits.peak_tpm": "{value} tokens ({share} of the TPM limit)",
    "limits.peak_rpm": "{value} requests ({share} of the RPM limit)",
    "limits.refused": (
        "LiteLLM refused {n} of these requests in the last 7 days for a rate limit{kinds}; "
        "the last at {when}."
    ),
    "limits.kinds": " ({kinds})",
    "limits.kind.tpm": "{n} over tokens per minute",
    "limits.kind.rpm": "{n} over requests per minute",
    "limits.kind.parallel": "{n} over parallel requests",
    "limits.elsewhere": "{n} of them by a limit of your user or team, not of this key.",
    "limits.title": "Rate limits, last 7 days: the keys nearest their limits first",
    "limits.peak_tokens": "Busiest minute, tokens",
    "limits.peak_requests": "Busiest minute, requests",
    "limits.refused_col": "Refused",
    "limits.last_refused": "Last refused",
    "limits.note": (
        "A minute is a clock minute (UTC). LiteLLM counts tokens of successful requests less cached prompt "
        "tokens, and every request, refused ones too; its 60-second window starts at a request, so a key "
        "can be refused in a minute below 100 %."
    ),
    # API-equivalent cost (dashboard/api_cost.py), with a price book only
    "api.title": "At API prices",
    "api.help": (
        "What these requests would have cost on a commercial API, at the reference prices of the "
        "lab's price book (per million tokens: uncached input, cached input, output; reasoning is output). "
        "Failed requests cost nothing, as in LiteLLM."
    ),
    "api.card": "At API prices",
    "api.same_spend": "Spend of the same requests",
    "api.ratio": "API prices against spend",
    "api.times": "{value}x",
    "api.caption": "Prices from the price book, taken {taken}; a price change applies from its day (UTC).",
    "api.unpriced": (
        "Requests not priced (their model has no price in the price book), not counted above: {n}. "
        "Models and requests: {models}."
    ),
    "api.not_priced": "not priced",
    "api.by.by_model": "By model",
    "api.by.by_client": "By client",
    "api.by.by_user": "By user",
    "api.by.by_node": "By node",
    "api.col.model": "Model",
    "api.col.client": "Client",
    "api.col.user": "User",
    "api.col.node": "Node",
    "api.col.reference": "Priced as",
    "api.col.requests": "Requests",
    "api.col.spend": "Spend",
    "api.col.api_cost": "At API prices",
    "api.col.unpriced": "Not priced",
    "budgets.people": "People's own budgets, across their keys",
    # administrator budget table
    "budgets.summary": (
        "**{keys}** keys: **{over}** over budget, **{near}** at risk (80 % used, or "
        "running out before their reset)."
    ),
    "budgets.refused": "Refused (7 d)",
    "budgets.refused_help": (
        "Requests LiteLLM refused this key for a spent budget (BudgetExceededError: the key's, its "
        "user's or its team's) in the 7 days before the key list was copied."
    ),
    "budgets.key": "Key",
    "budgets.user": "User",
    "budgets.spend": "Spend",
    "budgets.budget": "Budget",
    "budgets.used": "Used",
    "budgets.left": "Left",
    "budgets.resets": "Resets",
    "budgets.last_active": "Last request",
    "budgets.blocked": "Blocked",
    "budgets.expires": "Expires",
    "budgets.note": (
        "Spend and budgets as LiteLLM counts them (its key list, copied by the last ETL run). Times in {tz}."
    ),
    # pages, sign-in and sign-out
    "page.overview": "Overview",
    "page.budgets": "Budgets",
    "page.my_usage": "My usage",
    "role.admin": "administrator",
    "role.student": "student",
    "signout.who": "Signed in as **{who}** ({role})",
    "signout.button": "Sign out",
    "signin.title": "Sign in",
    "signin.subtitle": (
        "Students: your LiteLLM key shows your own usage and budget. Administrators: your password."
    ),
    "signin.student": "Student",
    "signin.admin": "Administrator",
    "signin.key": "Your LiteLLM key",
    "signin.key.help": (
        "The sk-... key you use for the lab's models. Only its fingerprint (sha256) is checked; "
        "the key itself is never stored."
    ),
    "signin.password": "Password",
    "signin.password.help": (
        "Or a one-time code: on the server, `python -m dashboard.auth one-time-code` prints one "
        "(valid for ten minutes, once). It gets in even while others are refused."
    ),
    "signin.submit": "Sign in",
    "signin.wait": "Too many failed attempts: try again in {seconds} s.",
    "signin.no_admin_demo": "In this demo, enter as the administrator with the button above.",
    "signin.no_admin": (
        "No administrator password is configured. Run `python -m dashboard.auth hash-password` "
        "and put its line into `.streamlit/secrets.toml` (see the README)."
    ),
    "signin.refused.format": "That is not a LiteLLM key: they start with sk-.",
    "signin.refused.unknown": (
        "The lab's LiteLLM does not accept this key. If it should, ask the lab's administrator."
    ),
    "signin.password_revoked": (
        "You were signed out: the administrators' password was changed, or your sign-in removed."
    ),
    "signin.key_revoked": (
        "You were signed out: the lab's LiteLLM no longer accepts the key you signed in with."
    ),
    "signin.refused.password": "Wrong password.",
    "progress.computing": (
        "Computing the figures of {days} days of requests: the first view of a range after a "
        "restart or a new ETL run reads the store; the next ones are at once."
    ),
    "signin.state_down": (
        "Sign-in is not possible right now: the dashboard cannot read its own records of "
        "sessions. Try again in a minute; if it lasts, tell the lab's administrator."
    ),
    # the nodes page
    "page.nodes": "Nodes",
    "nodes.verdicts": "Each node's verdict",
    "nodes.verdicts.help": (
        "A node is judged over the last 7 days of the range, against the other nodes serving the "
        "same model, else against its own 7 days before: slow when its time to first token p95 is at least "
        "twice theirs and 1 s longer, or its median output speed at most half; failing when 10 % "
        "of its requests (and at least 5) failed; down when it served nothing while it did before; "
        "too few to judge under 30 requests (20 streamed for speed)."
    ),
    "nodes.tab.table": "Nodes and models",
    "nodes.tab.load": "Load",
    "nodes.tab.speed": "Speed over time",
    "nodes.tab.bands": "Prompt length",
    "nodes.tab.cache": "Prefix caching",
    "nodes.tab.routing": "Routing",
    "nodes.tab.failures": "Failures",
    "nodes.table": "Per GPU node",
    "nodes.models": "Per model",
    "nodes.table.help": (
        "Time to first token and output speed count streamed requests only; output speed leaves out "
        "answers too short to time (fewer than 16 tokens, or under 200 ms after the first token)."
    ),
    "nodes.concurrency": "Requests in flight",
    "nodes.concurrency.help": (
        "Per node: the most requests running at once in each period (lines), from each request's "
        "start and end; a request running across periods counts in each."
    ),
    "nodes.saturation": "Latency against requests in flight",
    "nodes.saturation.help": (
        "Median latency of the requests that started while this many were running on their node "
        "(themselves included): where the line climbs, the node saturates."
    ),
    "nodes.speed": "Output speed over time",
    "nodes.ttft": "Time to first token over time",
    "nodes.failures": "Failures by error class",
    "nodes.mine": "{who}'s requests",
    "axis.in_flight": "Requests in flight",
    "axis.tps": "Tokens/s",
    "axis.ttft": "Time to first token",
    "axis.latency": "Latency",
    "axis.failures": "Failed requests",
    "col.node": "Node",
    "col.model": "Model",
    "col.requests": "Requests",
    "col.share": "Share",
    "col.failure_rate": "Failed",
    "col.ttft_p50_ms": "TTFT p50",
    "col.ttft_p95_ms": "TTFT p95",
    "col.output_tps_p50": "Speed p50",
    "col.output_tps_p95": "Speed p95",
    "col.speed_too_short": "Too short",
    "col.latency_p50_ms": "Latency p50",
    "col.latency_p95_ms": "Latency p95",
    "col.prompt_p50": "Prompt p50",
    "col.prompt_p95": "Prompt p95",
    # download
    "download.header": "Download this view",
    "download.users": "Users (CSV)",
    "download.series": "Over time (CSV)",
    "download.nodes": "Nodes (CSV)",
    "download.clients": "Users by client (CSV)",
    "download.models": "Models (CSV)",
    # the language switch (the choices are each language's own name: LANGUAGE_NAMES)
    "language.label": "Language",
    # card tooltips (the same words as the metric catalogue, contract/measures.py)
    "card.spend_usd.help": "Cost as LiteLLM priced it, in USD.",
    "card.requests.help": "Requests in the range, failed ones included.",
    "card.total_tokens.help": "Prompt and completion tokens.",
    "card.cache_hit_rate.help": "Cached prompt tokens over all prompt tokens.",
    "card.success_rate.help": "Successful requests over all requests.",
    "card.latency_p50_ms.help": "Median end-to-end request time.",
    # units and dates (dashboard/format.py); {value} is a number already formatted
    "unit.ms": "{value} ms",
    "unit.s": "{value} s",
    "unit.min": "{value} min",
    "unit.h": "{value} h",
    "unit.d": "{value} d",
    "unit.tok_s": "{value} tok/s",
    "unit.percent": "{value} %",
    "unit.pp": "{value} pp",
    "change.new": "new",
    "period.s": "{n}s",
    "period.m": "{n}m",
    "period.h": "{n}h",
    "period.d": "{n}d",
    "period.mo": "{n}mo",
    "date.minute": "{year}-{month:02d}-{day:02d} {hour:02d}:{minute:02d}",
    "date.day": "{year}-{month:02d}-{day:02d}",
    # a day of this year where space is short (a card's compared period): without the
    # year ("vs 2026-11-24 – 2026-11-30" was cut off in a card at 1280 px)
    "date.day_this_year": "{abbr} {day}{year!s:.0}{month!s:.0}",  # year and month written as nothing
    # table cells: numbers and dates are written by format.py (dashboard/tables.py); a
    # progress bar takes only a printf format
    "colfmt.percent": "%.1f %%",  # a progress bar's 0-100 share: 61.0 %, as format.percent
    "col.tpm": "TPM",
    "col.rpm": "RPM",
    # chart hover texts ({value} and {node} are Plotly fields such as %{y:,})
    "hover.tokens": "{value} tokens",
    "hover.requests": "{value} requests",
    "hover.failures_on": "{value} on {node}",
    "failures.unknown": "unknown",
    # Plotly date axes (d3 time formats): month and day, the hour only below a day
    "axis.date.hour": "%H:%M<br>%b %-d",
    "axis.date.day": "%b %-d",
    "axis.date.month": "%b %Y",
    "axis.date.year": "%Y",
    "axis.date.hover": "%b %-d, %Y %H:%M",
    "axis.date.hover_day": "%b %-d, %Y",
    # peers as the store names them for a student: "You", "Student A"
    "peers.student": "Student {letter}",
    # what a link asked for that cannot be shown (dashboard/view_state.py)
    "notice.range": "range={value} is not one of {choices}; showing 7d",
    "notice.custom": (
        "a custom range needs from= and to= as dates (YYYY-MM-DD), from before to, "
        "at most {days} days; showing 7d"
    ),
    "notice.tz": "tz={value} is not a time zone such as Asia/Seoul; showing {default}",
    "notice.unknown": "no {dimension} {values} in the data; ignored",
    "notice.highlight": "highlight={value} is not a user in the data; nothing highlighted",
    "notice.by": "by={value} is not one of {choices}; showing spend",
    "notice.lang": "lang={value} is not one of {choices}; ignored",
    # operations: demo, ETL status
    "demo.banner": (
        "**Demo data**: a simulated lab (13 people, three GPU nodes), not anyone's real usage. "
        "Set LITELLM_DATABASE_URL to see your own lab."
    ),
    "demo.building": "Building the demo lab: simulated spend logs through the ETL...",
    "demo.signin": (
        "Enter as the administrator, or sign in as a simulated student with one of the made-up keys below."
    ),
    "demo.as_admin": "Enter the demo as the administrator",
    "demo.student_keys": "Simulated students' keys (paste one under Student):",
    "page.etl_status": "ETL status",
    "col.prompt_tokens": "Prompt tokens",
    "col.cached_tokens": "Cached tokens",
    "col.cache_hit_rate": "Cache hit rate",
    "col.note": "Note",
    "axis.cache_hit_rate": "Cache hit rate",
    "col.node_model": "Node · model",
    "col.band": "Prompt length",
    "axis.band": "Prompt length (tokens)",
    "col.in_flight": "In flight",
    "col.latency_avg_ms": "Latency mean",
    "col.requests_per_s": "Requests/s",
    "col.within_target": "p95 ≤ {target}",
    "unit.per_s": "{value}/s",
    "nodes.own_only": (
        "Your own requests only: how the nodes served you. Requests in flight, shares and the load "
        "table count your requests, not everyone's."
    ),
    "value.unknown": "unknown",
    "value.unknown_model": "unknown model",
    "serving.none": "No requests in this range.",
    "serving.cache": "Prefix caching per node and model",
    "serving.cache.help": (
        "Cached prompt tokens over prompt tokens: how much of each prompt the server found in its "
        "prefix cache. A model that reports no cached tokens at all cannot be told apart from one "
        'that does not report them: it reads "not reported", never 0 %. The chart sums each model\'s'
        " tokens over the nodes that report them; a bucket without prompts is a gap."
    ),
    "serving.cache.left_out": "Not in the chart, reporting no cached tokens: {models}",
    "serving.cache.not_reported": "none reported",
    "serving.cache.mine": "{who}'s hit rate",
    "serving.cache.uncached_repeats": "repeated prompts, no hit",
    "serving.cache.flagged": (
        "Some models received repeated long prompts (one key, 10 or more requests averaging 1,000+ "
        "prompt tokens) yet reported no cached token. Either prefix caching is off for them, or "
        "their cache block is too large for the prompts (as with some hybrid/Mamba architectures), "
        "or the server does not report cached tokens."
    ),
    "serving.bands": "Latency by prompt length",
    "serving.bands.help": (
        "Requests grouped by prompt tokens. Time to first token counts streamed requests only. A "
        "line that climbs steeply to the right is a node or model that slows with long prompts "
        "(prefill), often the first limit a coding agent's long prompts hit."
    ),
    "serving.bands.measure": "Measure",
    "serving.load": "Load table",
    "serving.load.help": (
        "Each level of concurrency: how many requests the node had in flight when a request started"
        " (itself included). Requests/s: the requests that started at that level per second the "
        "node spent at it. The stable concurrency is the highest level up to which p95 stays "
        "within {target}: the time to first token's where most of a level's requests were "
        "streamed, the latency's elsewhere."
    ),
    "serving.load.all_models": "All models",
    "serving.load.stable": "Stable up to **{level}** requests in flight ({measures} within {target}).",
    "serving.load.none_stable": (
        "Over {target} from the lowest level on: {measure} is {value} at {level} in flight."
    ),
    "serving.load.judged": (
        "A level where most requests were streamed is held to {target} by its TTFT p95 (a long "
        "answer takes long however soon it starts); any other by its latency p95."
    ),
    "serving.load.measure.ttft_p95_ms": "TTFT p95",
    "serving.load.measure.latency_p95_ms": "latency p95",
    "serving.load.and": " and ",
    "serving.load.short.ttft_p95_ms": "TTFT",
    "serving.load.short.latency_p95_ms": "latency",
    "serving.load.ok": "yes ({measure})",
    "serving.load.over": "over ({measure})",
    "serving.load.download": "Load table (CSV)",
    "axis.requests_share": "Share of requests",
    "series.failed": "failed requests",
    "nodes.failed_hover": "{node}: {n} failed",
    "col.failures": "Failed",
    "col.routing_known": "Routing known",
    "col.fallback_requests": "Via fallback",
    "col.retried_requests": "Retried",
    "col.retries": "Retries",
    "col.fell_back_from": "Asked for",
    "col.overhead_p50_ms": "LiteLLM overhead p50",
    "col.overhead_p95_ms": "LiteLLM overhead p95",
    "serving.routing": "Routing: how the proxy spread the load",
    "serving.routing.help": (
        "Each node's share of the requests in each bucket; a cross marks failed requests on a node."
        " A node that goes down drops towards 0 while its backups rise. The table counts what "
        "LiteLLM's router did: requests served by a fallback model group (and the group asked for),"
        " retries within a group, and the time spent in LiteLLM itself (non-streamed successes "
        "only; a slow proxy otherwise looks like a slow node). Rows from LiteLLM before 1.100 do "
        "not record routing: they count as unknown, not 0."
    ),
    "serving.routing.unknown": (
        "No request in this range records its routing (LiteLLM before 1.100, or failures before routing)."
    ),
    "serving.overhead": "Time spent in LiteLLM itself, per node",
    "serving.overhead.help": (
        "How long LiteLLM held each request besides waiting for the node: authentication, budgets, "
        "routing, logging. LiteLLM times it only for non-streamed successful requests; a node "
        "without timed requests shows a dash."
    ),
    "status.title": "ETL status",
    "status.no_runs": (
        "The ETL has not run yet. Schedule `python -m etl run` (see the README's cron line or deploy/)."
    ),
    "status.last_failed": "The last ETL run failed: {error}",
    "status.last_ok": "Last successful run",
    "status.ago": "{age} ago",
    "status.runs_24h": "Runs, last 24 h",
    "status.failed_n": "{n} failed",
    "status.rows_24h": "Requests copied by the last 24 h of runs",
    "status.rows_24h.help": (
        "Requests the ETL wrote in runs that finished in the last 24 hours, whenever they were "
        "made: a first run or a full refresh copies older requests too, so this can exceed the "
        "requests made in those 24 hours (the nodes table below counts those)."
    ),
    "status.noise_24h": "Noise dropped, last 24 h",
    "status.noise_help": (
        "LiteLLM's own calls: {master_key} master key, {health_check} health check, {rule} by rule"
    ),
    "status.sources": "Sources",
    "status.source": "LiteLLM database",
    "status.no_source": "none read yet (demo or imported rows)",
    "status.cursor_column": "Cursor",
    "status.cursor": "Copied up to",
    "status.newest_request": "Newest request",
    "status.newest_ingested": "Newest copy",
    "status.refresh_pending": (
        "A --full-refresh started and did not finish: run `python -m etl run --full-refresh` again."
    ),
    "status.nodes": "GPU nodes: newest request",
    "status.node": "Node",
    "status.requests_24h": "Requests, last 24 h",
    "status.failures_24h": "Failures, last 24 h",
    "status.runs": "Recent runs",
    "status.started": "Started",
    "status.status": "Status",
    "status.run.ok": "ok",
    "status.run.failed": "failed",
    "status.mode": "Mode",
    "status.mode.incremental": "incremental",
    "status.mode.full_refresh": "full refresh",
    "status.seconds": "Took",
    "status.rows_read": "Rows read",
    "status.rows_written": "Written",
    "status.duplicates": "Duplicates skipped",
    "status.dropped_master_key": "Master key",
    "status.dropped_health_check": "Health check",
    "status.dropped_by_rule": "By rule",
    "status.malformed": "Malformed",
    "status.kept_noise_tagged": "Noise-tagged, kept",
    "status.noise_tagged": (
        "{n} request(s) in the last 24 h came from user keys but carried a noise tag (LiteLLM's "
        "health-check tag, or one of noise.tags). Clients set tags themselves, so they were kept "
        "as usage; a tag rule applies only to the keys noise.tag_keys names."
    ),
    "status.left_out": "Left out by each run",
    "status.error": "Error",
    "status.runs_note": "Newest first, at most the last {limit} runs (etl_runs.parquet); times in {tz}.",
    "adoption.show": "Adoption by client",
    "adoption.help": (
        "Each client's active users (people with at least one request) per day, week or "
        "month of the range, and when each person first used each client."
    ),
    "adoption.period": "Per",
    "adoption.day": "day",
    "adoption.week": "week (from Monday)",
    "adoption.month": "month",
    "adoption.axis": "Active users",
    "adoption.people": "people",
    "adoption.other": "Other clients",
    "adoption.first_use": "First use of each client (everything stored, not only this range)",
    "adoption.col.client": "Client",
    "adoption.col.user": "User",
    "adoption.col.first_used": "First used",
    "adoption.col.requests": "Requests since",
    "digest.subject": "LLM usage, week of {start} to {end}",
    "digest.head": "The week at a glance: {start} to {end} ({zone})",
    "digest.link": "Open the dashboard: {url}",
    "digest.no_link": "Open the dashboard for the detail.",
    "status.digest": "Weekly digest",
    "status.digest_waiting": (
        "{n} digest message(s) not sent yet; the next run of `python -m dashboard.digest` "
        "tries again. Last error: {error}"
    ),
    "status.digest_untried": "not tried yet",
    "status.digest.week": "Week ending",
    "status.digest.channel": "Channel",
    "status.digest.sent": "Sent",
    "status.digest.attempts": "Attempts",
    "status.digest.last_error": "Last error",
    "page.statements": "Statements",
    "statements.title": "Monthly statements",
    "statements.intro": (
        "Per person, key and client: requests, tokens by kind, what LiteLLM booked and "
        "the cost at API prices, month by month in the lab's time zone. A closed month's "
        "statement was written once and never changes; requests of a closed month that "
        "arrive later are listed on the next closed month as adjustments."
    ),
    "statements.month": "Month",
    "statements.closed_label": "{month} (closed)",
    "statements.open_label": "{month} (open, draft)",
    "statements.closed": "{month} is closed: these are its figures as of {when}, and they never change.",
    "statements.open": (
        "{month} is open: a draft from the data as it is now, which may still change "
        "until the month is closed."
    ),
    "statements.open_admin": (
        "{month} is open: a draft from the data as it is now. Once the month is over, "
        "close it with `python -m etl close-month {month}`; its statement then never "
        "changes."
    ),
    "statements.empty": "No requests in {month}.",
    "statements.lines": "Lines",
    "statements.adjustments": "Adjustments",
    "statements.adjustments_help": (
        "Requests of an earlier, closed month that arrived after it was closed: counted "
        "here, never added to that month's statement."
    ),
    "statements.all_months": "All months",
    "statements.requests": "Requests",
    "statements.tokens": "Tokens",
    "statements.spend": "Spend (LiteLLM)",
    "statements.api_cost": "At API prices",
    "statements.api_cost_help": (
        "At the price book's price in force on each request's day; requests of a model "
        "without a price are left out."
    ),
    "statements.not_priced": "not priced",
    "statements.status_closed": "closed",
    "statements.status_open": "open",
    "statements.csv": "Download CSV",
    "statements.printable": "Download printable page",
    "statements.printable_help": "An HTML page laid out for A4: open it and print it from the browser.",
    "statements.doc_title": "Usage statement {month}",
    "statements.doc_closed": "Closed: these figures never change.",
    "statements.doc_draft": "Draft: the month is not closed, its figures may still change.",
    "statements.col.of_month": "Of month",
    "statements.col.user": "User",
    "statements.col.key_alias": "Key",
    "statements.col.key_name": "Key (LiteLLM)",
    "statements.col.team_id": "Team",
    "statements.col.client": "Client",
    "statements.col.requests": "Requests",
    "statements.col.prompt_uncached_tokens": "Prompt (uncached)",
    "statements.col.prompt_cached_tokens": "Prompt (cached)",
    "statements.col.completion_tokens": "Completion",
    "statements.col.reasoning_tokens": "of which reasoning",
    "statements.col.spend_usd": "Spend",
    "statements.col.api_cost_usd": "At API prices",
    "statements.col.budget_used": "Of the key's budget",
    "statements.col.budget_used.help": (
        "The month's spend as a share of the key's budget as LiteLLM has it now; a budget "
        "that resets within the month (30 days, a week) can show more than 100 %."
    ),
    "statements.total": "Total",
    "statements.col.month": "Month",
    "statements.col.status": "Status",
    "statements.col.closed_at": "Closed",
    "statements.col.adjustment_requests": "Late requests listed",
}


CATALOGUES: dict[Language, dict[str, str]] = {"en": EN, "ko": KO}

log = logging.getLogger("dashboard.strings")
_REPORTED: set[tuple[str, str]] = set()  # missing texts already logged, once each

# A language forced for the current thread (tests, scripts): see use_language().
_FORCED: ContextVar[Language | None] = ContextVar("dashboard_language", default=None)


def current_language() -> Language:
    """The language of the session this code runs for.

    Streamlit runs each session's script (and each rerun of a fragment) in a thread that
    carries that session's ScriptRunContext, so the context, not a global, says whose
    language to use: two people reading the page at once each get their own, and a
    fragment rerunning alone still finds its session's choice in session_state. Without
    a context (tests, `python -m`, a helper thread) the text is English.
    """
    forced = _FORCED.get()
    if forced is not None:
        return forced
    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None:
        return "en"
    try:
        chosen = ctx.session_state[LANGUAGE_KEY]
    except (KeyError, AttributeError, RuntimeError):  # not chosen yet, or the session is closing
        return "en"
    return chosen if chosen in LANGUAGES else "en"


@contextmanager
def use_language(language: Language) -> Iterator[None]:
    """Format and translate in `language` inside the block, in this thread only."""
    token = _FORCED.set(language)
    try:
        yield
    finally:
        _FORCED.reset(token)


def t(key: str, /, **values: object) -> str:  # a Markdown: another t() takes it as it is
    """The text for `key` in the session's language, `{name}` fields filled from `values`.
    A key the Korean catalogue lacks falls back to English with a logged warning (the page
    stays up; tests/test_dashboard_strings.py keeps the two complete); a key English lacks
    is a bug and raises KeyError.

    Every text field is escaped for Markdown (names come from the data and the URL, and
    Streamlit reads Markdown in almost every text it shows), so no page can forget it;
    a field that is Markdown already (another t(), a number from dashboard/format.py, or
    `markdown(...)`) goes in as it is, and so do numbers. For a destination that does not
    read Markdown (a table's header), plain() fills the fields as given."""
    return Markdown(plain(key, **{name: _markdown_field(value) for name, value in values.items()}))


def _markdown_field(value: object) -> object:
    if isinstance(value, Markdown | numbers.Number):
        return value
    return markdown(value)


def plain(key: str, /, **values: object) -> str:
    """The text for `key` with its fields as given: for a table header or a chart (the
    figure builders escape for Plotly), never for Markdown."""
    language = current_language()
    text = CATALOGUES[language].get(key)
    if text is None:
        text = EN[key]
        if (language, key) not in _REPORTED:
            _REPORTED.add((language, key))
            log.warning("no %s text for %r: showing the English one", language, key)
    return text.format(**values) if values else text
