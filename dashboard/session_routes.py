"""Sign-ins that outlast a reload: the HTTP side (see dashboard/sessions.py for the page's).

One route, `POST <base>/api/session`, served by Streamlit's own server (st.App):
- `{"ticket": ...}`: a fresh sign-in's one-time ticket, exchanged once for the session's
  cookie (HttpOnly, SameSite=Strict, Secure when the page is served over HTTPS, scoped to
  the app's path). The token exists in the clear only in that response;
- `{"end": true}`: sign-out; the session the cookie names ends and the cookie is dropped.

Anything else (no custom header, a bad body, an unknown, used or late ticket) gets the
same bare 403 and no cookie: no hint of which part was wrong. Nothing here is logged
beyond the outcome.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from dashboard.sessions import COOKIE, HEADER, ROUTE, database, route_path
from state import db as state_db

log = logging.getLogger("dashboard.auth")

COOKIE_MAX_AGE_S = 30 * 86400  # the browser's bound; the server's sliding expiry decides
MAX_BODY = 1024
NO_STORE = {"Cache-Control": "no-store"}


def routes(base_url_path: str) -> list[Route]:
    """The route, under the app's base path (server.baseUrlPath)."""
    return [Route(route_path(base_url_path), _session, methods=["POST"])]


async def _session(request: Request) -> Response:
    body = await _body(request)
    if body is None:
        return _refused()
    try:
        if body.get("end") is True:
            return _end(request)
        ticket = body.get("ticket")
        exchanged = database().exchange(ticket, time.time()) if isinstance(ticket, str) else None
    except state_db.StateUnavailable as exc:
        log.error("session route: the state database failed (%s)", exc)
        return Response(status_code=503, headers=NO_STORE)
    if exchanged is None:
        return _refused()
    token, _ = exchanged
    response = Response(status_code=204, headers=NO_STORE)
    response.set_cookie(
        COOKIE,
        token,
        max_age=COOKIE_MAX_AGE_S,
        path=_cookie_path(request),
        secure=_https(request),
        httponly=True,
        samesite="strict",
    )
    return response


async def _body(request: Request) -> dict[str, Any] | None:
    """The request's JSON object, if it is one of ours (the custom header: a form on
    another site cannot send it) and small."""
    if request.headers.get(HEADER) != "1":
        return None
    raw = await request.body()
    if len(raw) > MAX_BODY:
        return None
    try:
        body = json.loads(raw)
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def _end(request: Request) -> Response:
    """Sign-out: the session the cookie names ends; the cookie goes."""
    token = request.cookies.get(COOKIE)
    if token:
        found = database().by_token(token, time.time())
        if found is not None:
            database().end(found.sid)
    response = Response(status_code=204, headers=NO_STORE)
    response.delete_cookie(COOKIE, path=_cookie_path(request), httponly=True, samesite="strict")
    return response


def _cookie_path(request: Request) -> str:
    """The app's path: the route's own, less its last part."""
    return request.url.path.removesuffix(ROUTE) or "/"


def _https(request: Request) -> bool:
    """Served over HTTPS: directly, or behind a proxy whose X-Forwarded-Proto uvicorn
    believes (FORWARDED_ALLOW_IPS), which makes the scheme https here."""
    return request.url.scheme == "https"


def _refused() -> Response:
    return Response(status_code=403, headers=NO_STORE)
