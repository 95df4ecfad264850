"""Every user-facing string of the dashboard, by key."""

from __future__ import annotations

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
    # cards
    "card.spend_usd": "Spend",
    "card.requests": "Requests",
    "card.total_tokens": "Tokens",
    "card.cache_hit_rate": "Cache hit rate",
    "card.success_rate": "Success rate",
    "card.latency_p50_ms": "Median latency",
    "card.vs_previous": "The change is against the {days} before.",
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
    "panel.matrix": "Who uses which client",
    "panel.models": "Models",
    "highlight.active": "Highlighting **{who}**.",
    "highlight.clear": "Clear highlight",
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
    "panel.budget": "Your budget",
    "budget.key": "your key",
    "budget.no_keys": "LiteLLM's key list has no key of yours yet (the next ETL run copies it).",
    "budget.used": "{key}: {spend} of {budget} used ({share}), {left} left",
    "budget.unlimited": "{key}: {spend} spent, no budget set",
    "budget.resets": "resets {when} (every {every})",
    "budget.limits": "limits: {limits}",
    "budget.no_limits": "no rate limits",
    "budget.user": "Your personal budget across keys: {spend} of {budget}",
    # administrator budget table
    "budgets.summary": "**{keys}** keys: **{over}** over budget, **{near}** above 80 %.",
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
    "signin.submit": "Sign in",
    "signin.wait": "Too many failed attempts: try again in {seconds} s.",
    "signin.no_admin": (
        "No administrator password is configured. Run `python -m dashboard.auth hash-password` "
        "and put its line into `.streamlit/secrets.toml` (see the README)."
    ),
    "signin.refused.format": "That is not a LiteLLM key: they start with sk-.",
    "signin.refused.unknown": "The lab's LiteLLM does not know this key.",
    "signin.refused.blocked": "This key is blocked in LiteLLM. Ask the lab's administrator.",
    "signin.refused.expired": "This key has expired. Ask the lab's administrator for a new one.",
    "signin.refused.password": "Wrong password.",
    # the nodes page
    "page.nodes": "Nodes",
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
    "axis.ttft": "Milliseconds",
    "axis.latency": "Milliseconds",
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
}


def t(key: str, /, **values: object) -> str:
    text = EN[key]
    return text.format(**values) if values else text
