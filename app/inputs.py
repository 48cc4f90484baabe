"""Widgets drawn from the field descriptions, each bound to its URL parameter.

Every input people set is a Streamlit widget with `bind="query-params"`, keyed by its
flat key, so the address bar always holds the view (only values that differ from the
widget's default) and Streamlit writes it with `history.replaceState`: editing an input
adds no browser-history entry, so Back and Forward move one page at a time.

Two of bind's behaviours shape what is here:
- a bound widget that is not drawn on a run loses its URL parameter, and Streamlit
  writes that change (and the value's return, with `persist_state`) with `pushState`,
  one history entry each; so does a page switch when a widget drawn by a page script
  holds a value (its parameter is filtered as another page's, then restored). So every
  bound input is drawn on every run, by the entry script: a page's own inputs in the
  sidebar, the other pages' in an invisible container (`offscreen`).
- bind drops a malformed value and resets an out-of-range one to the default, silently.
  A shared link is therefore read once by our own lenient parser first (`app.link`),
  which warns and clamps, and the cleaned values are what bind then seeds from.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import streamlit as st

from core.fields import Input, shown_value

OFFSCREEN = "offscreen_inputs"
_HIDE = f"<style>.st-key-{OFFSCREEN}{{display:none}}</style>"
Callback = Callable[..., None] | None


def shown_bounds(described: Input) -> tuple[float | None, float | None]:
    """The widget's min and max in its own unit; a bound named after a sibling is checked later."""
    low = None if isinstance(described.low, str) else described.shown_bound(described.low)
    high = (
        None if isinstance(described.high, str) or math.isinf(described.high) else described.shown_bound(described.high)
    )
    cast = int if described.kind is int else float
    return (None if low is None else cast(low)), (None if high is None else cast(high))


_DESCRIBED = object()  # "the description's own default"


def number(
    described: Input,
    default_si: object = _DESCRIBED,
    *,
    on_change: Callback = None,
    args: tuple[Any, ...] = (),
    **layout: Any,
) -> Any:
    """A number input bound to `?key=`; its default (SI) is the description's unless one is given."""
    low, high = shown_bounds(described)
    chosen = described.default if default_si is _DESCRIBED else default_si
    default = shown_value(described, chosen)  # type: ignore[arg-type]
    is_int = described.kind is int
    numbers: dict[str, Any] = {  # one kind (int or float) for all four, as number_input requires
        "min_value": low,
        "max_value": high,
        "value": default,
        "step": int(described.step) if is_int else float(described.step),
    }
    label = layout.pop("label", described.label)
    return st.number_input(
        label,
        format="%d" if is_int else "%g",
        key=described.key,
        help=described.help,
        on_change=on_change,
        args=args,
        bind="query-params",
        **numbers,
        **layout,
    )


def text(described: Input, default: str, *, on_change: Callback = None, **layout: Any) -> str | None:
    return st.text_input(
        described.label,
        value=default,
        max_chars=described.max_chars,
        key=described.key,
        help=described.help,
        on_change=on_change,
        bind="query-params",
        **layout,
    )


AUTO = "auto"  # a choice input's "not set" option (the field is None)


def choice(described: Input, auto: str | None = None, **layout: Any) -> Any:
    """A select over the description's choices, bound to `?key=`; `auto` adds a first option meaning None.

    The options are the values; the link carries the text shown for one: the value itself ("8"), or its
    label where it has one ("Part 3: short and long", which the link reader takes for part3).
    """
    options = ([AUTO] if auto is not None else []) + list(described.choices)
    default = AUTO if described.default is None else str(described.default)
    return st.selectbox(
        described.label,
        options,
        format_func=described.label_of,  # "Part 1: seven replies", not "part1"
        index=options.index(default) if default in options else 0,
        key=described.key,
        help=f"{described.help}" + (f"\n\n{AUTO}: {auto.removeprefix('auto: ')}" if auto else ""),
        bind="query-params",
        **layout,
    )


def toggle(described: Input, value: bool | None = None, **layout: Any) -> bool:
    """A switch bound to `?key=true|false`; its default is `value` (a base's, as `number` takes one), else the description's."""
    default = bool(described.default) if value is None else value
    return st.toggle(
        described.label, value=default, key=described.key, help=described.help, bind="query-params", **layout,
    )  # fmt: skip


def multi(described: Input, **layout: Any) -> list[str]:
    """A list input: a multiselect over its allowed items, bound to `?key=` (one parameter per item).

    The link repeats the key (`?tp=1&tp=2`); core's flat form joins them (`tp=1,2`): `app.link`
    reads both. An empty optional list is its own meaning (`cands`: every priced GPU).
    """
    return st.multiselect(
        described.label,
        list(described.allowed()),
        default=[str(item) for item in described.default],
        key=described.key,
        help=described.help,
        placeholder="all" if described.optional else "choose at least one",
        bind="query-params",
        **layout,
    )


def draw(described: Input, **layout: Any) -> Any:
    """A page input, by kind."""
    if described.is_list:
        return multi(described, **layout)
    if described.kind is bool:
        return toggle(described, **layout)
    if described.kind is str and not described.choices:
        return text(described, described.default or "", **layout)
    if described.choices:
        return choice(described, **layout)
    return number(described, **layout)


def offscreen(described_inputs: Iterable[Input]) -> None:
    """Draw inputs no page shows on this run, out of sight, so their URL parameters stay put."""
    box = st.container(key=OFFSCREEN)
    with box:
        st.html(_HIDE)
        for described in described_inputs:
            draw(described, label_visibility="collapsed")
