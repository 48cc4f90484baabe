"""Just enough of a browser tab to drive a Streamlit server over its websocket protocol.

What a Streamlit page in Chromium sends was read off the wire (Playwright, Streamlit 1.67)
and is copied here: the first `rerun_script` carries the address bar's query string and the
page's url path (`page_name`) with no widget states; every later one carries the current
page's `page_script_hash`, the query string the server last published
(`page_info_changed`), the state of every widget on the page (number inputs as
`int_value`/`double_value`, select boxes and radios as the shown option's text) and the
hashes of the large messages the tab has cached, so that the server may send a reference
instead of the message (`ref_hash`), as it does for a browser. The connection carries the
`streamlit` subprotocol, a same-host `Origin` and the cookies an earlier GET of the page
set (a balancer's affinity cookie among them).

Run by run, a `Run` keeps the elements the server sent (by delta path), so a caller can
read a metric or find a widget by its label. Nothing here knows about this app's pages.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import websockets
from load_http import cookie_header, http_get
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ContextInfo
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.WidgetStates_pb2 import WidgetState

STREAM_PATH = "/_stcore/stream"
SUBPROTOCOL = "streamlit"
SERVED_BY = "x-served-by"  # set by deploy/haproxy.cfg: the replica that answered
DEFAULT_MAX_CACHED_MESSAGE_AGE = 2  # Streamlit's global.maxCachedMessageAge; new_session carries the real one
FINISHED = {v: k for k, v in ForwardMsg.ScriptFinishedStatus.items()}


class ProtocolError(RuntimeError):
    """The server did something a browser tab would not accept (or did not answer in time)."""


# --- BackMsg builders (pure) ---------------------------------------------------------------


def context_info(url: str) -> ContextInfo:
    """What Chromium reports about itself on every rerun (headless, UTC, en-US, light theme)."""
    return ContextInfo(
        timezone="UTC", timezone_offset=0, locale="en-US", url=url, is_embedded=False, color_scheme="light"
    )


def first_load_msg(page_name: str, query_string: str, url: str) -> BackMsg:
    """A tab's first message: run the page at this url path ("" for the default page) and query."""
    msg = BackMsg()
    msg.rerun_script.query_string = query_string
    msg.rerun_script.page_name = page_name
    msg.rerun_script.widget_states.SetInParent()
    msg.rerun_script.context_info.CopyFrom(context_info(url))
    return msg


def rerun_msg(
    page_script_hash: str,
    query_string: str,
    widgets: Iterable[WidgetState],
    cached_hashes: Iterable[str],
    url: str,
) -> BackMsg:
    """A rerun after a widget changed: every widget's state, the current page and query, the cached hashes."""
    msg = BackMsg()
    state = msg.rerun_script
    state.query_string = query_string
    state.page_script_hash = page_script_hash
    state.widget_states.SetInParent()
    state.widget_states.widgets.extend(widgets)
    state.cached_message_hashes.extend(cached_hashes)
    state.context_info.CopyFrom(context_info(url))
    return msg


def number_state(widget_id: str, value: float, integer: bool) -> WidgetState:
    """A number input's state as the browser sends it: int_value for integer inputs, else double_value."""
    if integer:
        if value != int(value):
            raise ValueError(f"integer number input {widget_id} cannot take {value!r}")
        return WidgetState(id=widget_id, int_value=int(value))
    return WidgetState(id=widget_id, double_value=float(value))


def is_integer_input(element: NumberInput) -> bool:
    return element.data_type == NumberInput.INT


def browser_widget_state(kind: str, element: Any, held: WidgetState | None = None) -> WidgetState | None:
    """The state a browser tab holds for a widget after a run sent it; None for kinds not modelled.

    As Streamlit's frontend does: a value the server set (`set_value`) wins; otherwise the
    tab keeps the state it already `held`; a widget new to the tab starts at its default.
    The server sends a widget's value only when it sets it (on the first run, or from
    session state), so a tab that forgot its own values would send the defaults back.
    Number inputs hold a number; select boxes and radios the text of the chosen option, or
    nothing (an empty state) when none is chosen.
    """
    if kind == "number_input":
        if element.set_value and element.HasField("value"):
            return number_state(element.id, element.value, is_integer_input(element))
        if held is not None:
            return held
        if element.HasField("default"):
            return number_state(element.id, element.default, is_integer_input(element))
        return WidgetState(id=element.id)
    if kind in ("selectbox", "radio"):
        if element.set_value and element.HasField("raw_value"):
            return WidgetState(id=element.id, string_value=element.raw_value)
        if held is not None:
            return held
        if element.HasField("default") and 0 <= element.default < len(element.options):
            return WidgetState(id=element.id, string_value=element.options[element.default])
        return WidgetState(id=element.id)
    return None


# --- ForwardMsg side ------------------------------------------------------------------------


class MessageCache:
    """The tab's cache of large messages, as Streamlit's frontend keeps it.

    A message the server marks `cacheable` is kept under its hash; the hashes go back with
    every rerun; a `ref_hash` message is answered from here. An entry not used for more
    than `max_age` finished script runs is dropped.
    """

    def __init__(self, max_age: int = DEFAULT_MAX_CACHED_MESSAGE_AGE) -> None:
        self.max_age = max_age
        self._runs = 0
        self._entries: dict[str, tuple[ForwardMsg, int]] = {}

    def hashes(self) -> list[str]:
        return list(self._entries)

    def resolve(self, msg: ForwardMsg) -> ForwardMsg:
        """The message itself, kept if cacheable; or, for a reference, the cached message it names."""
        if msg.WhichOneof("type") == "ref_hash":
            try:
                cached, _ = self._entries[msg.ref_hash]
            except KeyError:
                raise ProtocolError(
                    f"the server referred to message {msg.ref_hash}, which this tab never cached"
                ) from None
            self._entries[msg.ref_hash] = (cached, self._runs)
            return cached
        if msg.metadata.cacheable and msg.hash:
            self._entries[msg.hash] = (msg, self._runs)
        return msg

    def script_finished(self) -> None:
        self._runs += 1
        for key, (_, seen) in list(self._entries.items()):
            if self._runs - seen > self.max_age:
                del self._entries[key]


@dataclass
class Run:
    """One script run as the tab saw it: its elements by delta path, and what it cost to receive."""

    elapsed_s: float = 0.0
    status: str = ""
    elements: dict[tuple[int, ...], tuple[str, Any]] = field(default_factory=dict)
    query_string: str | None = None  # set when the server published a new one
    page_script_hash: str | None = None
    messages: int = 0
    bytes_received: int = 0

    def add(self, msg: ForwardMsg, path: Iterable[int]) -> None:
        delta = msg.delta
        if delta.WhichOneof("type") == "new_element":
            kind = delta.new_element.WhichOneof("type")
            if kind:
                self.elements[tuple(path)] = (kind, getattr(delta.new_element, kind))

    def of_kind(self, kind: str) -> list[Any]:
        return [element for k, element in self.elements.values() if k == kind]

    def labelled(self, kind: str, label: str) -> list[Any]:
        return [element for element in self.of_kind(kind) if element.label == label]

    def metric_values(self, label: str) -> list[str]:
        return [element.body for element in self.labelled("metric", label)]

    def exceptions(self) -> list[str]:
        return [f"{e.type}: {e.message}" for e in self.of_kind("exception")]

    def widget_states(self, held: Mapping[str, WidgetState]) -> dict[str, WidgetState]:
        """The tab's widget states after this run: the widgets on the page now, given those it `held`."""
        states = {}
        for kind, element in self.elements.values():
            state = browser_widget_state(kind, element, held.get(getattr(element, "id", "")))
            if state is not None:
                states[state.id] = state
        return states


# --- a tab -------------------------------------------------------------------------------------


class Session:
    """One browser tab: GET the page (keeping its cookies), open the websocket, run the page."""

    def __init__(self, base_url: str, page_name: str, query_string: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.page_name = page_name
        self.query_string = query_string
        self.cookies: dict[str, str] = {}
        self.served_by: list[str] = []  # the balancer's X-Served-By for each websocket opened
        self.cache = MessageCache()
        self.page_script_hash = ""
        self.widgets: dict[str, WidgetState] = {}
        self.last: Run | None = None
        self._ws: Any = None

    @property
    def url(self) -> str:
        return f"{self.base_url}/{self.page_name}"

    async def open(self, timeout_s: float = 30) -> None:
        page = await http_get(self.base_url, f"/{self.page_name}" + (f"?{self.query_string}" if self.query_string else ""),
                              self.cookies, timeout_s)  # fmt: skip
        if page.status != 200:
            raise ProtocolError(f"GET /{self.page_name} answered {page.status}")
        self.cookies.update(page.cookies())
        where = urlsplit(self.base_url)
        headers = {"Cookie": cookie_header(self.cookies)} if self.cookies else {}
        self._ws = await asyncio.wait_for(
            websockets.connect(
                f"ws://{where.netloc}{STREAM_PATH}",
                subprotocols=[SUBPROTOCOL],
                origin=f"{where.scheme}://{where.netloc}",
                additional_headers=headers,
                max_size=None,
                open_timeout=timeout_s,
                ping_interval=None,  # the server pings; the client answers without pinging back
            ),
            timeout_s,
        )
        served = self._ws.response.headers.get(SERVED_BY)
        if served:
            self.served_by.append(served)

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
            self._ws = None

    async def load(self, timeout_s: float = 60) -> Run:
        return await self._run(first_load_msg(self.page_name, self.query_string, self.url), timeout_s)

    def number_input(self, label: str) -> NumberInput:
        """The one number input with this label on the last run's page (ProtocolError if not exactly one)."""
        if self.last is None:
            raise ProtocolError("no page loaded yet")
        found = self.last.labelled("number_input", label)
        if len(found) != 1:
            seen = sorted({e.label for e in self.last.of_kind("number_input")})
            raise ProtocolError(f"{len(found)} number inputs labelled {label!r} on the page (number inputs: {seen})")
        return found[0]

    def number_value(self, label: str) -> float | None:
        """The value this tab holds for the number input with this label (None when it is empty)."""
        state = self.widgets.get(self.number_input(label).id)
        kind = state.WhichOneof("value") if state is not None else None
        return None if kind is None else float(getattr(state, kind))

    async def set_number(self, label: str, value: float, timeout_s: float = 60) -> Run:
        """Type a value into the number input with this label and wait for the rerun to finish."""
        element = self.number_input(label)
        widgets = {**self.widgets, element.id: number_state(element.id, value, is_integer_input(element))}
        msg = rerun_msg(self.page_script_hash, self.query_string, widgets.values(), self.cache.hashes(), self.url)
        return await self._run(msg, timeout_s)

    async def _run(self, msg: BackMsg, timeout_s: float) -> Run:
        run = Run()
        start = time.perf_counter()
        await self._ws.send(msg.SerializeToString())
        try:
            await asyncio.wait_for(self._receive(run), timeout_s)
        except TimeoutError:
            raise ProtocolError(f"no script_finished within {timeout_s:.0f} s") from None
        run.elapsed_s = time.perf_counter() - start
        self.last = run
        self.widgets = run.widget_states(self.widgets)
        if run.query_string is not None:
            self.query_string = run.query_string
        if run.page_script_hash:
            self.page_script_hash = run.page_script_hash
        return run

    async def _receive(self, run: Run) -> None:
        while True:
            try:
                raw = await self._ws.recv()
            except websockets.ConnectionClosed as closed:
                raise ProtocolError(f"websocket closed by the server ({closed})") from None
            run.messages += 1
            run.bytes_received += len(raw)
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            kind = msg.WhichOneof("type")
            if kind in ("delta", "ref_hash"):
                run.add(self.cache.resolve(msg), msg.metadata.delta_path)
            elif kind == "page_info_changed":
                run.query_string = msg.page_info_changed.query_string
            elif kind == "navigation":
                run.page_script_hash = msg.navigation.page_script_hash
            elif kind == "new_session":
                age = msg.new_session.config.max_cached_message_age
                self.cache.max_age = age or self.cache.max_age
            elif kind == "script_finished":
                self.cache.script_finished()
                run.status = FINISHED.get(msg.script_finished, str(msg.script_finished))
                if run.status == "FINISHED_EARLY_FOR_RERUN":
                    run.elements.clear()  # st.rerun() (the app cleaning a link): the page is drawn again at once
                    continue
                return
