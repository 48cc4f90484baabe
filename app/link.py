"""The link: read once per session (leniently, with warnings), and the share box.

Writing the address bar is Streamlit's job (every input is bound: `app.inputs`). What
bind cannot do is warn: it drops a malformed value and resets an out-of-range one to
the default without a word, and it cannot repair a combination (cached prompt tokens
above the prompt). So on a session's first run, before any widget binds, the query
string goes through core's lenient reader (`core.flat.read_flat`): unknown keys and
unreadable values are dropped, numbers are clamped, combinations repaired, each with a
warning naming the parameter and its range. When that changed anything, the cleaned
query is written back and the script reruns at once: bind seeds widgets from the query
of the run they first appear in, so they start from the cleaned values, and the address
bar shows them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from urllib.parse import parse_qsl, urlencode

import streamlit as st

from app.page_inputs import BY_KEY, MAX_PINNED_CHARS, PINNED_KEY, si_of, text_of
from app.safe import plain
from core.compare import MAX_OPTIONS
from core.fields import cut
from core.flat import MAX_VALUE_CHARS, SKIP, flat_of_json, lenient_value, read_flat
from core.scenario import Scenario
from core.spec_flat import MAX_LIST_CHARS

MAX_JSON_BYTES = 64 * 1024
LIST_KEYS = {key for key, described in BY_KEY.items() if described.is_list}
_READ = "app_link_read"
_NOTICES = "app_link_notices"  # (warnings, the scenario they describe)


def read_page_inputs(raw: Mapping[str, str], warnings: list[str]) -> dict[str, str]:
    """The pages' own parameters, cleaned like the scenario's (defaults left out)."""
    clean: dict[str, str] = {}
    for key, described in BY_KEY.items():
        if key not in raw:
            continue
        if key == PINNED_KEY:  # a link inside the link: read as one, leniently
            pinned, _ = pinned_link(str(raw[key]), warnings)
            if pinned:
                clean[key] = pinned
            continue
        text = str(raw[key])
        longest = MAX_LIST_CHARS if described.is_list else MAX_VALUE_CHARS
        if len(text) > longest:  # said, as the scenario's keys say it: `ttft=500` + 70 spaces + `abc` read 500
            warnings.append(f"Ignored {key}: its value is {len(text):,} characters long.")
            continue
        value = lenient_value(described, text, warnings)
        # At most four options: the select had dropped a fifth without a word.
        if key == "cmp" and isinstance(value, tuple) and len(value) > MAX_OPTIONS:
            dropped = ", ".join(cut(str(option), 30) for option in value[MAX_OPTIONS:])
            warnings.append(f"cmp: at most {MAX_OPTIONS} options; ignored {dropped}.")
            value = value[:MAX_OPTIONS]
        if value is not SKIP and value != described.default and value is not None:
            clean[key] = text_of(described, value)
    return clean


def pinned_link(text: str, warnings: list[str]) -> tuple[str, Scenario | None]:
    """A pinned scenario's link (or just its query) → (its cleaned short query, the scenario); ("", None) if empty.

    Read like any link, leniently: each problem is a warning naming the pinned link's parameter."""
    query = text.strip()[:MAX_PINNED_CHARS].partition("?")[2] or text.strip()[:MAX_PINNED_CHARS]
    if not query:
        return "", None
    pairs = parse_qsl(query, keep_blank_values=True)
    raw = dict(pairs)
    given: dict[str, list[str]] = {}
    for key, value in pairs:
        given.setdefault(key, []).append(value)
    flat, scenario, problems = read_flat(raw, Scenario, other_keys=BY_KEY)
    warnings.extend(f"Pinned scenario: {problem}" for problem in [*repeated(given), *problems])
    # A page's own inputs (sim, options, a pinned link in the pinned link) are not the scenario's: a
    # whole shared link pasted here carried them, and they vanished without a word.
    pages = [key for key in raw if key in BY_KEY and key not in flat]
    if pages:
        named = ", ".join(f"{cut(k, 20)}={cut(str(raw[k]), 20)}" for k in pages[:5])
        warnings.append(
            f"Pinned scenario: ignored {named}{' and more' if len(pages) > 5 else ''}, each a page's own "
            "setting, which a pinned scenario does not hold."
        )
    return pin_query(flat, scenario), scenario


def pin_query(flat: Mapping[str, str], scenario: Scenario) -> str:
    """A pinned scenario's short query. The default scenario's is empty, and an empty pin is none: its
    model keeps it pinned ('Pin this scenario' on the defaults had said "nothing is pinned")."""
    return urlencode(flat) or urlencode({"model": scenario.model.id})


def _query() -> dict[str, str]:
    """The address bar's query as flat text: a list input's repeated key (`tp=1&tp=2`) joined (`tp=1,2`)."""
    raw = st.query_params.to_dict()
    for key in LIST_KEYS & raw.keys():
        raw[key] = ",".join(st.query_params.get_all(key))
    return raw


def repeated(values: Mapping[str, list[str]]) -> list[str]:
    """One warning per key given more than once that takes one value: the last is used (the CLI refuses
    `--batch 2 --batch 3`; `?batch=2&batch=3` computed with 3 without a word)."""
    return [
        f"{cut(key, 20)} is given {len(given)} times ({', '.join(cut(v, 20) for v in given[:4])}"
        f"{', …' if len(given) > 4 else ''}): using the last, {cut(given[-1], 20)}."
        for key, given in values.items()
        if key not in LIST_KEYS and len(given) > 1
    ]


def _bar(flat: Mapping[str, str]) -> dict[str, str | list[str]]:
    """Flat text as the address bar holds it: a list input as one parameter per item (what bind reads)."""
    return {key: text.split(",") if key in LIST_KEYS else text for key, text in flat.items()}


def clean_link(raw: Mapping[str, str]) -> tuple[dict[str, str], Scenario, list[str]]:
    """Pure: any query → (the cleaned query, the scenario it holds, one warning per problem)."""
    flat, scenario, warnings = read_flat(raw, Scenario, other_keys=BY_KEY)
    pages = read_page_inputs(raw, warnings)
    return {**flat, **pages}, scenario, warnings


def read_once() -> None:
    """First run of a session: clean the address bar's query before any widget binds to it."""
    if st.session_state.get(_READ):
        return
    st.session_state[_READ] = True
    clean, scenario, warnings = clean_link(_query())
    twice = repeated({key: st.query_params.get_all(key) for key in st.query_params})
    st.session_state[_NOTICES] = (tuple(twice + warnings), scenario)
    bar = {key: st.query_params.get_all(key) if key in LIST_KEYS else value
           for key, value in st.query_params.to_dict().items()}  # fmt: skip
    # A list given comma-separated (core's form) is rewritten one item per parameter too, a repeated key once.
    if twice or _bar(clean) != bar:
        st.query_params.from_dict(_bar(clean))
        st.rerun()  # no widget has bound yet: the next run seeds them all from the cleaned query


def note(scenario: Scenario, warnings: list[str]) -> None:
    """Remember a loaded file's warnings; they show until the scenario is changed."""
    st.session_state[_NOTICES] = (tuple(warnings), scenario)


def show_warnings(current: Scenario) -> None:
    warnings, loaded = st.session_state.get(_NOTICES, ((), None))
    if warnings and loaded == current:
        for text in warnings:
            st.warning(plain(text, 300), icon=":material/link_off:")


def parse_json(data: bytes) -> tuple[dict[str, str] | None, Scenario | None, list[str]]:
    """A downloaded scenario file → (cleaned flat form, Scenario, warnings), or (None, None, [why])."""
    if len(data) > MAX_JSON_BYTES:
        return None, None, [f"The file is {len(data):,} bytes; a scenario file is under {MAX_JSON_BYTES:,}."]
    if not data.strip():
        return None, None, ["The file is empty: download a scenario with 'Download scenario (JSON)'."]
    try:
        # Numbers kept as their text: a 5,000-digit one is past Python's int conversion limit (it read
        # "not JSON"), and the flat form reads text anyway, saying which value is too long or out of range.
        objects: list[list[tuple[str, object]]] = []  # each object's pairs, innermost first: json keeps a key's last

        def kept(items: list[tuple[str, object]]) -> dict[str, object]:
            objects.append(items)
            return dict(items)

        obj = json.loads(
            data.decode("utf-8-sig"), parse_int=str, parse_float=str, parse_constant=str, object_pairs_hook=kept
        )
    except (ValueError, RecursionError):
        return None, None, ["The file is not JSON: download a scenario with 'Download scenario (JSON)'."]
    if not isinstance(obj, dict):
        return None, None, ["The file must hold one JSON object of parameter: value pairs."]
    flat, warnings = flat_of_json(obj)
    clean, scenario, more = clean_link(flat)
    pairs: dict[str, list[str]] = {}
    for key, value in objects[-1]:  # the file's own object (the outermost is parsed last)
        pairs.setdefault(key, []).append(value if isinstance(value, str) else json.dumps(value))
    return clean, scenario, repeated(pairs) + warnings + more


def share_query(scenario: Scenario, page_values: Mapping[str, object]) -> str:
    """`?model=…&out=1000`: the scenario's short form and every page input that is not its default."""
    query = scenario.to_flat(minimal=True)
    for key, held in page_values.items():
        described = BY_KEY[key]
        value = si_of(described, held)  # the widget holds shown units, option text, a list of item text
        if value is not None and value != described.default:
            query[key] = text_of(described, value)
    return "?" + urlencode(_bar(query), doseq=True) if query else ""


def share_box(scenario: Scenario, page_path: str) -> None:
    """The absolute link to this page and view (`page_path` where the request's URL is unknown), and the JSON."""
    page_values = {key: st.session_state.get(key) for key in BY_KEY}
    url = (st.context.url or page_path) + share_query(scenario, page_values)
    st.caption("Link to this exact page and view (copy button at the right of the box):")
    st.code(url, language=None, wrap_lines=True)
    st.download_button(
        "Download scenario (JSON)",
        json.dumps(scenario.to_flat(), indent=2),
        file_name="scenario.json",
        mime="application/json",
        icon=":material/download:",
        on_click="ignore",
    )
