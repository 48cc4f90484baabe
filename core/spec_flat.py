"""The flat form of one standalone spec (a `Load`, a `Plan`): `{key: text}`, like the scenario's.

The scenario's flat form (`core.flat`) composes six specs over presets; a standalone spec is
simpler: its described fields, written in full or only where they differ from the defaults
(`minimal`), read strictly (ValueError whose message starts with the offending key and says
the allowed range or items) or leniently, for links from strangers (never raises: clamps
what is out of range, drops what cannot be read, one warning per problem).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from core.field_lists import list_text, read_list
from core.fields import Input, cut, flat_text, inputs, own_bounds, read_number
from core.lenient import MAX_VALUE_CHARS, SKIP, lenient_value

MAX_LIST_CHARS = 16 * MAX_VALUE_CHARS  # a list of every GPU preset id is ~150 characters


def flat_keys(spec_type: type) -> tuple[str, ...]:
    return tuple(described.key for _, described in inputs(spec_type))


def spec_to_flat(spec: Any, minimal: bool = False) -> dict[str, str]:
    """Every described field as shown-unit text ('' for None); `minimal` drops the defaults.

    Example: Load(concurrency=32) → {"conc": "32", "rate": "", "lenlow": "1"}, minimal {"conc": "32"}.
    """
    default = type(spec)()
    flat: dict[str, str] = {}
    for name, described in inputs(type(spec)):
        value = getattr(spec, name)
        if minimal and value == getattr(default, name):
            continue
        if value is None:
            flat[described.key] = ""
        else:
            flat[described.key] = list_text(value) if described.is_list else flat_text(described, value)
    return flat


def _strict(described: Input, text: str) -> Any:
    if described.is_list:
        return read_list(described, text)
    if text.strip() == "" and described.optional:
        return None
    return read_number(described, text, *own_bounds(described))


def spec_from_flat(spec_type: type, flat: Mapping[str, str]) -> Any:
    """Strict: the flat form → the spec (missing keys take the defaults). Raises ValueError naming the key."""
    for key, value in flat.items():  # text, as `from_flat`'s: {"conc": 3} raised AttributeError
        if not isinstance(key, str):
            raise ValueError(f"parameter names must be text, got {cut(repr(key))}")
        if not isinstance(value, str):
            raise ValueError(f"{cut(key)} must be text, got {type(value).__name__}")
    unknown = sorted(set(flat) - set(flat_keys(spec_type)))
    if unknown:
        raise ValueError(f"unknown parameter(s): {', '.join(cut(k, 20) for k in unknown)}")
    changes = {name: _strict(i, flat[i.key]) for name, i in inputs(spec_type) if i.key in flat}
    try:
        return spec_type(**changes)
    except ValueError as error:
        raise ValueError(keyed(spec_type, str(error))) from None


def keyed(spec_type: type, message: str) -> str:
    """A spec's message names its field ('concurrency must be …'); start it with the key people type."""
    first = message.split(" ", 1)[0].rstrip(",:")
    by_name = dict(inputs(spec_type))
    if first in by_name:
        return f"{by_name[first].key}: {message}"
    return message


def read_spec(spec_type: type, raw: Mapping[str, object]) -> tuple[Any, list[str]]:
    """Lenient: any mapping → (the nearest valid spec, one warning per problem). Never raises.

    Only the spec's own keys are read (a link carries the scenario's beside them). Values out
    of range are clamped, unreadable ones and list items not allowed are dropped; a rule
    across fields (a concurrency and a rate both given) drops the value it names.
    Example: {"tp": "2,3", "peak": "500"} → tp (2,), peak 100 (clamped), two warnings.
    """
    warnings: list[str] = []
    changes: dict[str, Any] = {}
    keys: dict[str, str] = {}
    for name, described in inputs(spec_type):
        if described.key not in raw:
            continue
        text = str(raw[described.key])
        if len(text) > (MAX_LIST_CHARS if described.is_list else MAX_VALUE_CHARS):
            warnings.append(f"Ignored {described.key}: its value is {len(text):,} characters long.")
            continue
        value = lenient_value(described, text, warnings)
        if value is not SKIP:
            changes[name], keys[name] = value, described.key
    while True:
        try:
            return spec_type(**changes), warnings
        except ValueError as error:
            named = str(error).split(" ", 1)[0].rstrip(",:")
            dropped = named if named in changes else next(iter(changes))
            warnings.append(f"Ignored {keys[dropped]}: {error}.")
            del changes[dropped]


class FlatForm:
    """A standalone spec's flat form as its own methods: written, read strictly, read leniently.

    A base for `Load` and `Plan` (frozen dataclasses whose fields are all described).
    """

    __slots__ = ()

    def to_flat(self, minimal: bool = False) -> dict[str, str]:
        return spec_to_flat(self, minimal)

    @classmethod
    def from_flat(cls, values: Mapping[str, str]) -> Self:
        """Strict; raises ValueError starting with the offending key."""
        result: Self = spec_from_flat(cls, values)
        return result

    @classmethod
    def read_flat(cls, raw: Mapping[str, object]) -> tuple[Self, list[str]]:
        """Lenient (links from strangers): the nearest valid spec and one warning per problem."""
        result: tuple[Self, list[str]] = read_spec(cls, raw)
        return result
