"""Every user-facing string of the dashboard, by key."""

from __future__ import annotations

EN: dict[str, str] = {
    "title": "LLM usage",
    "status.header": "Store",
    "status.requests": "Requests stored",
    "status.users": "Users",
    "status.first": "Oldest request",
    "status.last": "Newest request",
    "status.last_ok_run": "Last successful ETL run",
    "status.failed_run": "The last ETL run failed: {error}",
    "status.timezone": "Times in {tz}.",
    "status.pages_pending": (
        "The usage pages (cards, tokens, nodes, users, clients) are not built yet; "
        "this page shows what the store holds."
    ),
    "empty.title": "The store is empty",
    "empty.body": (
        "No requests have been copied from LiteLLM yet. Run the ETL once against LiteLLM's "
        "database, then reload this page:"
    ),
}


def t(key: str, **values: object) -> str:
    text = EN[key]
    return text.format(**values) if values else text
