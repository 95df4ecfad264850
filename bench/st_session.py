"""A browser's session of a Streamlit app, without a browser: Streamlit's own WebSocket
protocol (BackMsg protobufs out, ForwardMsg protobufs in), spoken as its frontend speaks it.

What the frontend of streamlit 1.67 does (streamlit/static/static/js/index.*.js) and this
copies:

- A page load: GET the page, then /_stcore/health and /_stcore/host-config (the health
  answer sets the XSRF cookie), then the WebSocket /_stcore/stream with the subprotocols
  ["streamlit", <XSRF token>]; its first rerun_script carries the URL's query string and
  an empty page_script_hash (the default page).
- Every rerun_script carries the value of every widget on the page (WidgetStates), the
  query string, the current page, the browser's context (time zone, locale, URL) and the
  hashes of the messages the browser has cached: the server sends those as references
  (ref_hash). Cached messages expire after `max_cached_message_age` finished runs.
- A widget, when drawn, holds the server's value if it sends one (set_value), else the
  value the browser already had, else its default; after a finished run, the values of
  widgets no longer drawn are dropped. Buttons are triggers: true for one rerun only.
- A form holds back what is typed into it until its submit button, which sends the
  values with the button's trigger.
- A run ends at script_finished; FINISHED_EARLY_FOR_RERUN (st.rerun) is not the end.
  Elements a finished run did not draw again are removed (the frontend's stale nodes).
- A widget drawn inside a fragment (st.fragment; its deltas carry the fragment's id)
  reruns that fragment alone: rerun_script names the fragment, the run ends with
  FINISHED_FRAGMENT_RUN_SUCCESSFULLY, and only that fragment's stale elements go.
- A page change (st.navigation) reruns with the other page's page_script_hash and keeps
  only the values of widgets drawn by the entry script (the page's own are gone).

One module because it is one protocol client, read top to bottom against the frontend
it copies.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import socket
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import websocket
from streamlit.proto.AppPage_pb2 import AppPage
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState, ContextInfo
from streamlit.proto.Delta_pb2 import Delta
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.typing import Origin, Subprotocol

RUN_TIMEOUT_S: Final = 30.0
WIDGET_ID_PREFIX: Final = "$$ID-"  # every widget's id starts so (streamlit's element ids)
XSRF_COOKIE: Final = "_streamlit_xsrf"
FINISHED: Final = ForwardMsg.ScriptFinishedStatus


class SessionBroken(Exception):
    """The session cannot go on: the connection closed, a run never finished, or the
    server referred to a message this browser never had."""


# --- the rendered page ----------------------------------------------------------------


@dataclass
class Node:
    """One element or block on the page, at its delta path."""

    kind: str  # the element's type ("selectbox", "plotly_chart", ...) or "block.<type>"
    proto: Any  # the element's own message (Selectbox, ...) or the Block
    run: int  # the run that last drew it
    script_hash: str  # the script that drew it: the entry script or a page
    fragment_id: str = ""  # the fragment that drew it, if any

    @property
    def widget_id(self) -> str | None:
        value = getattr(self.proto, "id", "")
        return value if isinstance(value, str) and value.startswith(WIDGET_ID_PREFIX) else None

    @property
    def label(self) -> str:
        return str(getattr(self.proto, "label", ""))


class PageModel:
    """What the browser shows: the elements by delta path, as the frontend's tree holds them."""

    def __init__(self) -> None:
        self.nodes: dict[tuple[int, ...], Node] = {}

    def apply(self, path: tuple[int, ...], delta: Delta, run: int, script_hash: str) -> Node | None:
        fragment = delta.fragment_id
        if delta.WhichOneof("type") == "new_element":
            element = delta.new_element.WhichOneof("type")
            if element is None:
                return None
            self._drop_below(path)
            node = Node(element, getattr(delta.new_element, element), run, script_hash, fragment)
        elif delta.WhichOneof("type") == "add_block":
            block = f"block.{delta.add_block.WhichOneof('type') or 'vertical'}"
            old = self.nodes.get(path)
            if old is None or old.kind != block:  # the frontend keeps a same-type block's children
                self._drop_below(path)
            node = Node(block, delta.add_block, run, script_hash, fragment)
        else:
            return None  # transient elements (toasts, spinners) are not part of the page
        self.nodes[path] = node
        return node

    def _drop_below(self, path: tuple[int, ...]) -> None:
        depth = len(path)
        for other in [p for p in self.nodes if len(p) > depth and p[:depth] == path]:
            del self.nodes[other]

    def clear_stale(self, run: int, fragment: str = "") -> None:
        """Drop what `run` did not draw again: anywhere, or, after a fragment's own run,
        only in that fragment."""
        self.nodes = {
            path: node
            for path, node in self.nodes.items()
            if node.run == run or (fragment and node.fragment_id != fragment)
        }

    def of_kind(self, kind: str) -> list[Node]:
        return [self.nodes[path] for path in sorted(self.nodes) if self.nodes[path].kind == kind]

    def find(self, kind: str, *, label: str | None = None, key: str | None = None, form: str = "") -> Node:
        """The first `kind` element with this label (or widget key), in page order;
        LookupError if the page has none, as a person would not find it either."""
        for node in self.of_kind(kind):
            if label is not None and node.label != label:
                continue
            if key is not None and not (node.widget_id or "").endswith(f"-{key}"):
                continue
            if form and getattr(node.proto, "form_id", "") != form:
                continue
            return node
        raise LookupError(f"no {kind} {label or key!r} on the page")

    def has(self, kind: str, *, label: str | None = None, key: str | None = None) -> bool:
        try:
            self.find(kind, label=label, key=key)
        except LookupError:
            return False
        return True

    def widget_ids(self, script_hash: str | None = None) -> set[str]:
        return {
            wid
            for node in self.nodes.values()
            if (wid := node.widget_id) and (script_hash is None or node.script_hash == script_hash)
        }

    def text(self) -> str:
        """Every text the page carries: labels, markdown, metrics, chart specs (their
        labels and hover texts), table cells; one string to search."""
        return "\n".join(text for node in self.nodes.values() for text in texts(node.proto))


def texts(value: object) -> Iterator[str]:
    """The strings of a protobuf message, recursively; Arrow tables' cells included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, bytes):
        yield from _arrow_texts(value)
    elif callable(fields := getattr(value, "ListFields", None)):  # a message
        for _, item in fields():
            yield from texts(item)
    elif isinstance(value, Iterable):  # repeated fields
        for item in value:
            yield from texts(item)


def _arrow_texts(data: bytes) -> Iterator[str]:
    import pyarrow as pa

    try:
        table = pa.ipc.open_stream(data).read_all()
    except (pa.ArrowInvalid, OSError):
        return  # bytes that are no Arrow table (images and the like): no text
    for column in table.columns:
        yield from (str(value) for value in column.to_pylist())
    yield from (str(name) for name in table.column_names)


# --- what the browser keeps ------------------------------------------------------------


class MessageCache:
    """The frontend's ForwardMsg cache: cacheable messages by hash, dropped once unused
    for more than `max_age` finished runs; their hashes go with every rerun."""

    def __init__(self) -> None:
        self._messages: dict[str, tuple[bytes, int]] = {}
        self._runs = 0

    def resolve(self, msg: ForwardMsg, raw: bytes) -> ForwardMsg:
        if msg.WhichOneof("type") == "ref_hash":
            cached = self._messages.get(msg.ref_hash)
            if cached is None:
                raise SessionBroken(f"the server referred to a message never received ({msg.ref_hash})")
            self._messages[msg.ref_hash] = (cached[0], self._runs)
            full = ForwardMsg()
            full.ParseFromString(cached[0])
            full.metadata.CopyFrom(msg.metadata)  # where it goes now: the reference's path
            return full
        if msg.metadata.cacheable and msg.hash:
            self._messages[msg.hash] = (self._messages.get(msg.hash, (raw, 0))[0], self._runs)
        return msg

    def hashes(self) -> list[str]:
        return list(self._messages)

    def run_finished(self, max_age: int) -> None:
        self._runs += 1
        kept = {h: (raw, run) for h, (raw, run) in self._messages.items() if self._runs - run <= max_age}
        self._messages = kept


def string_state(widget_id: str, value: str) -> WidgetState:
    return WidgetState(id=widget_id, string_value=value)


def strings_state(widget_id: str, values: Iterable[str]) -> WidgetState:
    state = WidgetState(id=widget_id)
    state.string_array_value.data.extend(values)
    return state


def trigger_state(widget_id: str) -> WidgetState:
    return WidgetState(id=widget_id, trigger_value=True)


def _choice(widget: Any) -> WidgetState | None:  # selectbox, radio: the option's label
    if widget.set_value:
        return string_state(widget.id, widget.raw_value) if widget.HasField("raw_value") else None
    if widget.HasField("default") and widget.options:
        return string_state(widget.id, widget.options[widget.default])
    return None


def _choices(widget: Any) -> WidgetState:  # multiselect: the options' labels
    if widget.set_value:
        return strings_state(widget.id, widget.raw_values)
    return strings_state(widget.id, (widget.options[i] for i in widget.default))


def _segments(widget: Any) -> WidgetState:  # segmented control, pills: the options' labels
    if widget.set_value:
        return strings_state(widget.id, widget.raw_values)
    return strings_state(widget.id, (widget.options[i].content for i in widget.default))


def _text(widget: Any) -> WidgetState | None:
    if widget.set_value:
        return string_state(widget.id, widget.value) if widget.HasField("value") else None
    return string_state(widget.id, widget.default) if widget.HasField("default") else None


def _checkbox(widget: Any) -> WidgetState:
    return WidgetState(id=widget.id, bool_value=widget.value if widget.set_value else widget.default)


def _dates(widget: Any) -> WidgetState:
    return strings_state(widget.id, widget.value if widget.set_value else widget.default)


# The widgets whose value the frontend holds from the moment they are drawn; the others
# (buttons, charts' selections) hold one only once a person acts on them.
DRAWN_VALUE = {
    "selectbox": _choice,
    "radio": _choice,
    "multiselect": _choices,
    "button_group": _segments,
    "text_input": _text,
    "text_area": _text,
    "checkbox": _checkbox,
    "date_input": _dates,
}


class Widgets:
    """The frontend's WidgetStateManager: the value of each widget on the page."""

    def __init__(self) -> None:
        self.states: dict[str, WidgetState] = {}

    def drawn(self, node: Node) -> None:
        rule = DRAWN_VALUE.get(node.kind)
        wid = node.widget_id
        if rule is None or wid is None or (wid in self.states and not node.proto.set_value):
            return
        state = rule(node.proto)
        if state is None:
            self.states.pop(wid, None)
        else:
            self.states[wid] = state

    def hold(self, state: WidgetState) -> None:
        self.states[state.id] = state

    def keep_only(self, ids: set[str]) -> None:
        self.states = {wid: state for wid, state in self.states.items() if wid in ids}

    def message(self, *extra: WidgetState, only: set[str] | None = None) -> WidgetStates:
        merged = {wid: s for wid, s in self.states.items() if only is None or wid in only}
        merged.update((s.id, s) for s in extra)
        return WidgetStates(widgets=list(merged.values()))


# --- a click on a Plotly chart ----------------------------------------------------------


def bar_click(figure: dict[str, Any], index: int, curve: int = 0) -> str:
    """The selection state the frontend sends for a click on bar `index` of trace `curve`
    (st.plotly_chart with on_select): plotly.js's event point in snake_case, as JSON."""
    trace = figure["data"][curve]
    point: dict[str, Any] = {
        "curve_number": curve,
        "point_number": index,
        "point_index": index,
        "x": trace["x"][index],
        "y": trace["y"][index],
    }
    if "customdata" in trace:
        point["customdata"] = trace["customdata"][index]
    selection = {"selection": {"points": [point], "point_indices": [index], "box": [], "lasso": []}}
    return json.dumps(selection, separators=(",", ":"))  # JSON.stringify's spacing


# --- the session ------------------------------------------------------------------------


@dataclass(frozen=True)
class Browser:
    """What the browser tells the server about itself (ContextInfo)."""

    timezone: str = "Asia/Seoul"
    locale: str = "en-US"
    color_scheme: str = "light"

    def context(self, url: str) -> ContextInfo:
        offset = dt.datetime.now(ZoneInfo(self.timezone)).utcoffset() or dt.timedelta()
        return ContextInfo(
            timezone=self.timezone,
            timezone_offset=-int(offset.total_seconds() // 60),  # JavaScript's getTimezoneOffset()
            locale=self.locale,
            url=url,
            is_embedded=False,
            color_scheme=self.color_scheme,
        )


@dataclass(frozen=True)
class Rerun:
    """What one rerun sends: every widget's value, the page's script, and the fragment
    that runs alone, if any."""

    widgets: WidgetStates
    page_hash: str
    fragment: str = ""


class Tab:
    """One browser tab on the app, without its connection: the page it shows, its widgets'
    values, its message cache, the app's pages. The sessions below carry the messages:
    they send what a person's action prepares (a Rerun) and feed back what arrives.
    `errors` holds what went wrong in the last run (exceptions shown on the page, a page
    not found); `received` counts the bytes the server sent."""

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float = RUN_TIMEOUT_S,
        browser: Browser = Browser(),
        headers: Mapping[str, str] | None = None,
        cookies: dict[str, str] | None = None,
    ) -> None:
        parts = urlsplit(url)
        self.headers = dict(headers or {})  # sent with the WebSocket's handshake (e.g. X-Forwarded-For)
        # the browser's cookies for this host, sent with every request as a browser does
        # (a proxy's route cookie keeps the tab on one process); a jar passed in is kept
        # by the caller and outlives the tab (the same browser reloading the page)
        self.cookies = cookies if cookies is not None else {}
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.base = f"http://{parts.netloc}"
        self.timeout_s = timeout_s
        self.browser = browser
        self.page = PageModel()
        self.widgets = Widgets()
        self.cache = MessageCache()
        self.query_string = ""
        self.pages: list[AppPage] = []
        self.page_hash = ""
        self.page_path = ""
        self.main_hash = ""
        self.errors: list[str] = []
        self.received = 0
        self._max_age = 2
        self._run = 0
        self._fragment = ""  # the fragment the last rerun asked for, if only one

    def current_page(self) -> str:
        return next((p.page_name for p in self.pages if p.page_script_hash == self.page_hash), "")

    # --- what a person does: the rerun it sends ---

    def _rerun(self, *extra: WidgetState, fragment: str = "") -> Rerun:
        return Rerun(self.widgets.message(*extra), self.page_hash, fragment)

    def _choose(self, label: str, option: str) -> Rerun:
        node = self._find_any(("selectbox", "radio"), label)
        if option not in node.proto.options:
            raise LookupError(f"{label!r} has no option {option!r}")
        self.widgets.hold(string_state(node.proto.id, option))
        return self._rerun()

    def _segment(self, label: str, option: str) -> Rerun:
        node = self.page.find("button_group", label=label)
        if option not in [o.content for o in node.proto.options]:
            raise LookupError(f"{label!r} has no option {option!r}")
        self.widgets.hold(strings_state(node.proto.id, [option]))
        return self._rerun(fragment=node.fragment_id)

    def _click(self, label: str) -> Rerun:
        button = self.page.find("button", label=label)
        return self._rerun(trigger_state(button.proto.id), fragment=button.fragment_id)

    def _submit(self, fields: dict[str, str], button: str) -> Rerun:
        inputs = [self._find_any(("text_input", "text_area"), label) for label in fields]
        form = inputs[0].proto.form_id
        submitter = self.page.find("button", label=button, form=form)
        for node, value in zip(inputs, fields.values(), strict=True):
            self.widgets.hold(string_state(node.proto.id, value))
        return self._rerun(trigger_state(submitter.proto.id))

    def _select_on_chart(self, node: Node, selection: str) -> Rerun:
        self.widgets.hold(string_state(node.proto.id, selection))
        return self._rerun(fragment=node.fragment_id)

    def _goto(self, page_name: str) -> Rerun:
        page = next((p for p in self.pages if p.page_name == page_name), None)
        if page is None:
            raise LookupError(f"no page {page_name!r} in the navigation")
        keep = self.page.widget_ids(self.main_hash)  # the entry script's widgets stay
        return Rerun(self.widgets.message(only=keep), page.page_script_hash)

    def _find_any(self, kinds: tuple[str, ...], label: str) -> Node:
        for kind in kinds:
            if self.page.has(kind, label=label):
                return self.page.find(kind, label=label)
        raise LookupError(f"no {' or '.join(kinds)} {label!r} on the page")

    # --- the protocol ---

    def _stream_url(self) -> str:
        return f"ws://{self.host}:{self.port}/_stcore/stream"

    def _subprotocols(self, token: str) -> list[str]:
        return ["streamlit", *([token] if token else [])]

    def _handshake_headers(self, token: str) -> dict[str, str]:
        jar = self.cookies | ({XSRF_COOKIE: token} if token else {})
        return self.headers | ({"Cookie": _cookie_header(jar)} if jar else {})

    def _request(self, target: str) -> bytes:
        """A plain HTTP/1.1 GET (what the browser fetches before the WebSocket)."""
        cookie = f"Cookie: {_cookie_header(self.cookies)}\r\n" if self.cookies else ""
        head = f"GET {target} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n{cookie}Connection: close\r\n\r\n"
        return head.encode("ascii")

    def _answered(self, answer: bytes, target: str) -> dict[str, str]:
        """The cookies an HTTP answer sets, kept in the jar; SessionBroken unless 200 OK."""
        cookies = _cookies(answer, target)
        self.cookies.update(cookies)
        return cookies

    def _rerun_script(self, rerun: Rerun) -> bytes:
        """The BackMsg of a rerun, as the frontend sends it; the run's errors start empty."""
        path = f"/{self.page_path}" if self.page_path else "/"
        url = f"{self.base}{path}" + (f"?{self.query_string}" if self.query_string else "")
        state = ClientState(
            query_string=self.query_string,
            page_script_hash=rerun.page_hash,
            page_name="",
            widget_states=rerun.widgets,
            fragment_id=rerun.fragment,
            cached_message_hashes=self.cache.hashes(),
            context_info=self.browser.context(url),
        )
        self.errors = []
        self._fragment = rerun.fragment
        return bytes(BackMsg(rerun_script=state).SerializeToString())

    def _receive(self, raw: bytes) -> bool:
        """Apply one ForwardMsg to the page; True when it ends the run."""
        self.received += len(raw)
        msg = ForwardMsg()
        msg.ParseFromString(raw)
        return self._handle(self.cache.resolve(msg, raw))

    def _handle(self, msg: ForwardMsg) -> bool:
        """Apply one message to the page; True when it ends the run."""
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            self._new_run(msg)
        elif kind == "delta":
            self._delta(msg)
        elif kind == "page_info_changed":
            self.query_string = msg.page_info_changed.query_string
        elif kind == "navigation":
            self._navigation(msg)
        elif kind == "page_not_found":
            self.errors.append(f"page not found: {msg.page_not_found.page_name!r}")
        elif kind == "session_event":
            event = msg.session_event
            if event.WhichOneof("type") == "script_compilation_exception":
                self.errors.append(f"script does not compile: {event.script_compilation_exception.message}")
        elif kind == "script_finished":
            return self._finished(msg.script_finished)
        return False

    def _navigation(self, msg: ForwardMsg) -> None:
        self.pages = list(msg.navigation.app_pages)
        self.page_hash = msg.navigation.page_script_hash
        shown = (p.url_pathname for p in self.pages if p.page_script_hash == self.page_hash)
        self.page_path = next(shown, "")

    def _new_run(self, msg: ForwardMsg) -> None:
        self._run += 1
        session = msg.new_session
        self.main_hash = session.main_script_hash
        self.page_hash = session.page_script_hash or self.page_hash
        self._max_age = session.config.max_cached_message_age

    def _delta(self, msg: ForwardMsg) -> None:
        path = tuple(msg.metadata.delta_path)
        node = self.page.apply(path, msg.delta, self._run, msg.metadata.active_script_hash)
        if node is None:
            return
        if node.kind == "exception":
            self.errors.append(f"exception on the page: {node.proto.type}: {node.proto.message}".strip())
        self.widgets.drawn(node)

    def _finished(self, status: int) -> bool:
        if status == FINISHED.FINISHED_EARLY_FOR_RERUN:
            return False  # st.rerun(): the next run follows at once
        if status == FINISHED.FINISHED_WITH_COMPILE_ERROR:
            self.errors.append("the script did not compile")
            return True
        if status == FINISHED.FINISHED_SUCCESSFULLY:
            self.page.clear_stale(self._run)
            self.widgets.keep_only(self.page.widget_ids())
        elif status == FINISHED.FINISHED_FRAGMENT_RUN_SUCCESSFULLY:
            self.page.clear_stale(self._run, self._fragment)
            self.widgets.keep_only(self.page.widget_ids())
        self.cache.run_finished(self._max_age)
        return True


def _cookie_header(jar: Mapping[str, str]) -> str:
    return "; ".join(f"{name}={value}" for name, value in jar.items())


def _cookies(answer: bytes, target: str) -> dict[str, str]:
    """The cookies of an HTTP answer; SessionBroken unless it is 200 OK."""
    head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    status = head[0].split(" ")
    if len(status) < 2 or status[1] != "200":
        raise SessionBroken(f"GET {target}: {head[0]!r}")
    headers = (line.split(":", 1) for line in head[1:] if ":" in line)
    cookies = [value.split(";", 1)[0].strip() for name, value in headers if name.lower() == "set-cookie"]
    pairs = (cookie.split("=", 1) for cookie in cookies if "=" in cookie)
    return {name.strip(): value for name, value in pairs}


class BrowserSession(Tab):
    """A tab over asyncio (websockets). `open()` loads the page; every other action reruns
    the script the way the frontend does and returns the seconds until script_finished;
    a broken connection or a run that never finishes raises SessionBroken."""

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float = RUN_TIMEOUT_S,
        browser: Browser = Browser(),
        headers: Mapping[str, str] | None = None,
        cookies: dict[str, str] | None = None,
    ) -> None:
        super().__init__(url, timeout_s=timeout_s, browser=browser, headers=headers, cookies=cookies)
        self._ws: ClientConnection | None = None

    async def open(self, query_string: str = "") -> float:
        """Load the page as a browser does; seconds from the first request to the end of
        the first run."""
        began = time.monotonic()
        self.query_string = query_string
        await self._get("/" + (f"?{query_string}" if query_string else ""))
        health, _ = await asyncio.gather(self._get("/_stcore/health"), self._get("/_stcore/host-config"))
        token = health.get(XSRF_COOKIE, "")
        try:
            self._ws = await asyncio.wait_for(self._connect(token), self.timeout_s)
        except (OSError, InvalidHandshake, TimeoutError) as exc:
            raise SessionBroken(f"WebSocket: {exc!r}") from exc
        await self._timed(Rerun(self.widgets.message(), ""))  # the default page
        return time.monotonic() - began

    async def _connect(self, token: str) -> ClientConnection:
        return await connect(
            self._stream_url(),
            subprotocols=[Subprotocol(p) for p in self._subprotocols(token)],
            origin=Origin(self.base),
            additional_headers=self._handshake_headers(token),
            max_size=None,  # a page's charts can exceed the default 1 MiB
            open_timeout=self.timeout_s,
        )

    async def _get(self, target: str) -> dict[str, str]:
        try:
            opening = asyncio.open_connection(self.host, self.port)
            reader, writer = await asyncio.wait_for(opening, self.timeout_s)
            writer.write(self._request(target))
            answer = await asyncio.wait_for(reader.read(), self.timeout_s)
            writer.close()
            await writer.wait_closed()
        except (OSError, TimeoutError) as exc:
            raise SessionBroken(f"GET {target}: {exc!r}") from exc
        return self._answered(answer, target)

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
            self._ws = None

    # --- what a person does ---

    async def rerun(self, *extra: WidgetState, fragment: str = "") -> float:
        """The script (or only `fragment`) again with the widgets' values (plus `extra`,
        e.g. a trigger)."""
        return await self._timed(self._rerun(*extra, fragment=fragment))

    async def choose(self, label: str, option: str) -> float:
        """Pick `option` in the selectbox or radio labelled `label`."""
        return await self._timed(self._choose(label, option))

    async def segment(self, label: str, option: str) -> float:
        """Click `option` of the segmented control (or pills) labelled `label`."""
        return await self._timed(self._segment(label, option))

    async def click(self, label: str) -> float:
        return await self._timed(self._click(label))

    async def submit(self, fields: dict[str, str], button: str) -> float:
        """Type into a form's text inputs, then press its submit button: the values and
        the button's trigger go together."""
        return await self._timed(self._submit(fields, button))

    async def select_on_chart(self, node: Node, selection: str) -> float:
        """A selection on a Plotly chart drawn with on_select (see bar_click)."""
        return await self._timed(self._select_on_chart(node, selection))

    async def goto(self, page_name: str) -> float:
        """Open another page from the navigation."""
        return await self._timed(self._goto(page_name))

    # --- the protocol ---

    async def _timed(self, rerun: Rerun) -> float:
        began = time.monotonic()
        if self._ws is None:
            raise SessionBroken("not connected")
        try:
            await self._ws.send(self._rerun_script(rerun))
            async with asyncio.timeout(self.timeout_s):
                while not self._receive(await self._ws.recv(decode=False)):
                    pass
        except TimeoutError as exc:
            raise SessionBroken(f"no script_finished within {self.timeout_s:g} s") from exc
        except ConnectionClosed as exc:
            raise SessionBroken(f"disconnected: {exc}") from exc
        return time.monotonic() - began


class SyncBrowserSession(Tab):
    """A tab over blocking sockets (websocket-client), the same actions as BrowserSession
    without `await`: what Locust's users drive, since under gevent's monkey-patching each
    blocking call lets the other users' greenlets run."""

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float = RUN_TIMEOUT_S,
        browser: Browser = Browser(),
        headers: Mapping[str, str] | None = None,
        cookies: dict[str, str] | None = None,
    ) -> None:
        super().__init__(url, timeout_s=timeout_s, browser=browser, headers=headers, cookies=cookies)
        self._ws: websocket.WebSocket | None = None

    def open(self, query_string: str = "") -> float:
        """Load the page as a browser does; seconds from the first request to the end of
        the first run."""
        began = time.monotonic()
        self.query_string = query_string
        self._get("/" + (f"?{query_string}" if query_string else ""))
        token = self._get("/_stcore/health").get(XSRF_COOKIE, "")
        self._get("/_stcore/host-config")
        try:
            self._ws = websocket.create_connection(
                self._stream_url(),
                timeout=self.timeout_s,
                subprotocols=self._subprotocols(token),
                origin=self.base,
                header=self._handshake_headers(token),
            )
        except (OSError, websocket.WebSocketException) as exc:
            raise SessionBroken(f"WebSocket: {exc!r}") from exc
        self._timed(Rerun(self.widgets.message(), ""))  # the default page
        return time.monotonic() - began

    def _get(self, target: str) -> dict[str, str]:
        try:
            with socket.create_connection((self.host, self.port), timeout=self.timeout_s) as conn:
                conn.sendall(self._request(target))
                chunks = []
                while chunk := conn.recv(65536):
                    chunks.append(chunk)
        except OSError as exc:  # TimeoutError included
            raise SessionBroken(f"GET {target}: {exc!r}") from exc
        return self._answered(b"".join(chunks), target)

    def close(self) -> None:
        if self._ws is not None:
            with contextlib.suppress(OSError, websocket.WebSocketException):  # broken already
                self._ws.close(timeout=1.0)
            self._ws = None

    # --- what a person does ---

    def rerun(self, *extra: WidgetState, fragment: str = "") -> float:
        return self._timed(self._rerun(*extra, fragment=fragment))

    def choose(self, label: str, option: str) -> float:
        return self._timed(self._choose(label, option))

    def segment(self, label: str, option: str) -> float:
        return self._timed(self._segment(label, option))

    def click(self, label: str) -> float:
        return self._timed(self._click(label))

    def submit(self, fields: dict[str, str], button: str) -> float:
        return self._timed(self._submit(fields, button))

    def select_on_chart(self, node: Node, selection: str) -> float:
        return self._timed(self._select_on_chart(node, selection))

    def goto(self, page_name: str) -> float:
        return self._timed(self._goto(page_name))

    # --- the protocol ---

    def _timed(self, rerun: Rerun) -> float:
        began = time.monotonic()
        deadline = began + self.timeout_s
        if self._ws is None:
            raise SessionBroken("not connected")
        try:
            self._ws.send_binary(self._rerun_script(rerun))
            while True:
                self._ws.settimeout(max(deadline - time.monotonic(), 0.001))
                opcode, data = self._ws.recv_data()
                if opcode == websocket.ABNF.OPCODE_CLOSE:
                    raise SessionBroken("disconnected: the server closed the connection")
                if opcode == websocket.ABNF.OPCODE_BINARY and self._receive(data):
                    break
        except websocket.WebSocketTimeoutException as exc:
            raise SessionBroken(f"no script_finished within {self.timeout_s:g} s") from exc
        except (OSError, websocket.WebSocketException) as exc:
            raise SessionBroken(f"disconnected: {exc!r}") from exc
        return time.monotonic() - began
