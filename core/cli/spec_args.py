"""Command-line options for a standalone spec (`Load`, `Plan`), generated from its field descriptions.

Like the scenario's (`core.cli.scenario_args`): one option per described field, its flag,
unit, range or allowed items and default from the one description; values stay text until
the spec's strict flat reader checks them, so the CLI and a link accept the same values.
"""

from __future__ import annotations

import argparse
from collections.abc import Collection
from typing import TypeVar

from core.field_lists import list_text
from core.fields import Input, flat_text, inputs
from core.spec_flat import spec_from_flat

Spec = TypeVar("Spec")


def _dest(key: str) -> str:
    return f"spec_{key}"


def option_help(described: Input) -> str:
    """The option's help, then in brackets its unit, its allowed items and its default.

    Example: "Memory per GPU, GB: ... (in GB; default 80)". The unit used to follow the help's full stop
    ("(14 GB at 16 bits)., billion parameters")."""
    notes = []
    if described.is_list:
        notes.append(
            ", ".join(described.allowed()) if described.choices_from is None else "see `python -m core presets`"
        )
    if described.unit and not described.is_list:
        notes.append(f"in {described.unit}")
    default = shown_default(described)
    if default is not None:
        notes.append(f"default {default}")
    text = described.help + (f" ({'; '.join(notes)})" if notes else "")
    return text.replace("%", "%%")


def shown_default(described: Input) -> str | None:
    """An input's default as its help and the README's table write it ("as the model ships", "1,2,4,8", "80");
    None where it has none of its own (an empty list, a preset's number)."""
    if described.default_words:
        return described.default_words
    if described.is_list:
        return list_text(described.default) if described.default else None
    return None if described.default is None else flat_text(described, described.default)


def add_spec_options(
    parser: argparse.ArgumentParser, spec_type: type, title: str, only: Collection[str] | None = None
) -> None:
    """One option per described field of `spec_type` (or only the keys in `only`), in one group."""
    group = parser.add_argument_group(title)
    for _, described in inputs(spec_type):
        if only is not None and described.key not in only:
            continue
        metavar = "A,B" if described.is_list else "N" if described.kind is int else "X"
        group.add_argument(described.option, dest=_dest(described.key), metavar=metavar, help=option_help(described))


def spec_flat_from_args(args: argparse.Namespace, spec_type: type) -> dict[str, str]:
    """The options given, as the spec's flat form (exactly as typed)."""
    given = ((i.key, getattr(args, _dest(i.key), None)) for _, i in inputs(spec_type))
    return {key: value for key, value in given if value is not None}


def spec_from_args(args: argparse.Namespace, spec_type: type[Spec]) -> Spec:
    """Build the spec; raises ValueError whose message starts with the offending option."""
    try:
        spec: Spec = spec_from_flat(spec_type, spec_flat_from_args(args, spec_type))
        return spec
    except ValueError as error:
        raise ValueError(with_spec_options(spec_type, str(error))) from None


def with_spec_options(spec_type: type, message: str) -> str:
    """'conc must be …' or 'rate: request_rate_per_s …' → the flag people typed in front."""
    first, _, rest = message.partition(" ")
    key = first.rstrip(":,")
    options = {i.key: i.option for _, i in inputs(spec_type)}
    if key in options:
        return f"{options[key]}{first[len(key) :]} {rest}"
    return message
