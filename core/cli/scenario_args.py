"""Command-line options → one Scenario (the same value the app's sidebar builds).

Every option is generated from its field's description (`core.fields`): its flag, its
unit, its help and its default. The options build the scenario's flat form and
`Scenario.from_flat` reads it, so the CLI, a link and a JSON file accept exactly the same
values, in the same units, with the same ranges. The option set is a public interface:
change it only by adding (`--tflops`, which sets both peaks, is kept for that reason).
"""

from __future__ import annotations

import argparse
import re

from core import presets
from core.cli.spec_args import option_help
from core.fields import cut, inputs
from core.flat_sections import EFFICIENCY_BASES, FIELD_KEYS, INPUTS, SECTIONS, option_of
from core.scenario import Scenario

# Options that are not one field: kept because scripts use them.
LEGACY = {"--tflops": ("flops16", "flops8")}
_GROUPS = {
    "model": "model (a preset, and any numbers you change on it)",
    "gpu": "GPU (a preset, and any numbers you change on it)",
    "precision": "precision",
    "efficiency": "engine and efficiency (default: ideal on the toy GPU, the typical engine on real ones)",
    "workload": "workload",
    "pricing": "money (USD per million tokens) and traffic",
}


def _dest(key: str) -> str:
    return f"field_{key}"


def add_scenario_options(parser: argparse.ArgumentParser) -> None:
    """One option per described field, grouped by spec; values stay text until the flat reader checks them."""
    for section in SECTIONS:
        group = parser.add_argument_group(_GROUPS[section.name])
        if section.name == "model":
            group.add_argument("--model", metavar="ID", help="model preset id (default: the lesson's toy 7B)")
        elif section.name == "gpu":
            group.add_argument("--gpu", metavar="ID", help="GPU preset id (default: the lesson's toy GPU)")
            group.add_argument(
                "--tflops", metavar="X", help="dense peak TFLOP/s at the precision the maths runs in: sets both peaks"
            )
        elif section.name == "pricing":
            group.add_argument(
                "--api-model",
                metavar="PROVIDER/MODEL",
                help="an API's list prices from the catalogue (`python -m core prices`), billed the provider's "
                "way (long-prompt tiers); any price option below overrides it",
            )
        elif section.name == "efficiency":
            for option, text in (
                ("--engine", "the serving engine whose costs the numbers start from, or ideal (the lesson's physics)"),
                ("--eff", argparse.SUPPRESS),  # the older name: a separate option so errors say --engine alone
            ):
                group.add_argument(option, dest="eff", choices=EFFICIENCY_BASES, help=text)
            group.add_argument("--ideal", action="store_true", help="the lesson's physics: same as --engine ideal")
        for _, described_input in inputs(section.spec_type):
            kind = described_input.kind
            metavar = "TEXT" if kind is str else "N" if kind is int else "true|false" if kind is bool else "X"
            group.add_argument(
                described_input.option,
                dest=_dest(described_input.key),
                metavar=metavar,
                help=option_help(described_input),
            )


def flat_from_args(args: argparse.Namespace) -> dict[str, str]:
    """The options given, as the flat form (shown units, exactly as typed)."""
    flat: dict[str, str] = {}
    for base_key, dest in (("model", "model"), ("gpu", "gpu"), ("api", "api_model")):
        value = getattr(args, dest, None)
        if value is not None:
            flat[base_key] = value
    # Two options for one value, given different values: refused, not one of them silently dropped.
    if args.ideal and args.eff not in (None, "ideal"):
        raise ValueError(f"--ideal: it means --engine ideal; give it or --engine {cut(args.eff)}, not both")
    if args.ideal:
        flat["engine"] = "ideal"
    elif args.eff is not None:
        flat["engine"] = args.eff
    if args.tflops is not None:
        both = [INPUTS[key].option for key in LEGACY["--tflops"] if getattr(args, _dest(key)) is not None]
        if both:
            raise ValueError(f"--tflops: it sets both peaks; give it or {' and '.join(both)}, not both")
        flat.update(dict.fromkeys(LEGACY["--tflops"], args.tflops))
    for key in INPUTS:
        value = getattr(args, _dest(key), None)
        if value is not None:
            flat[key] = value
    _derive_query_heads(flat)
    return flat


def _derive_query_heads(flat: dict[str, str]) -> None:
    """hidden ÷ head_dim query heads when the shape is given without them (the usual case)."""
    if "qheads" in flat or ("hidden" not in flat and "headdim" not in flat):
        return
    base = presets.model_base(flat.get("model", presets.TOY_MODEL_ID)) if _known_model(flat) else None
    try:
        hidden = int(flat["hidden"]) if "hidden" in flat else (base.hidden if base else None)
        head_dim = int(flat["headdim"]) if "headdim" in flat else (base.head_dim if base else None)
    except ValueError:
        return  # the flat reader names the bad value
    if hidden and head_dim and hidden >= head_dim > 0:
        flat["qheads"] = str(hidden // head_dim)


def _known_model(flat: dict[str, str]) -> bool:
    chosen = flat.get("model", presets.TOY_MODEL_ID)
    return chosen == "custom" or chosen in presets.model_presets()


def scenario_from_args(args: argparse.Namespace, engine: str | None = None) -> Scenario:
    """Build the Scenario; raises ValueError whose message starts with the offending option.

    `engine`: the engine whose costs the typed efficiency numbers edit, in place of the one the options name
    (the plan searches the typical engine where the lesson's ideal physics is only the default)."""
    try:
        flat = flat_from_args(args)
        if engine is not None:
            flat["engine"] = engine
        return Scenario.from_flat(flat)
    except ValueError as error:
        message = with_options(str(error))
        if args.tflops is not None and all(getattr(args, _dest(k)) is None for k in LEGACY["--tflops"]):
            for key in LEGACY["--tflops"]:
                message = message.replace(INPUTS[key].option, "--tflops")
        raise ValueError(message) from None


_BOUND_KEY = re.compile(r"\((\w+(?:, \w+)*)\)")
# A spec's rule across fields names them as fields ("active_params must be below total_params"): said with
# the flags people type. Only names with an underscore: "experts" or "layers" in a sentence is a word.
_FIELD_NAME = re.compile(
    r"\b(?:" + "|".join(sorted((f for f in FIELD_KEYS if "_" in f), key=len, reverse=True)) + r")\b"
)


def with_options(message: str) -> str:
    """'out must be …' → '--output-tokens must be …': the user sees the flag they typed, and a bound named
    after another field says its flag too ('from 1 to 32 (qheads)' → '(--query-heads)')."""
    message = _BOUND_KEY.sub(
        lambda m: (
            f"({', '.join(option_of(k) for k in m[1].split(', '))})"
            if all(k in INPUTS for k in m[1].split(", "))
            else m[0]
        ),
        message,
    )
    message = _FIELD_NAME.sub(lambda m: option_of(FIELD_KEYS[m[0]]), message)
    first, _, rest = message.partition(" ")
    key = first.rstrip(":,")
    if key in INPUTS and first.endswith(":"):
        return f"{option_of(key)}{first[len(key) :]} {rest}"
    if key in INPUTS and key not in FIELD_KEYS:
        return f"{option_of(key)}{first[len(key) :]} {rest}"
    if key in ("model", "gpu", "engine"):
        return f"--{key}{first[len(key) :]} {rest}"
    if key == "api":
        return f"--api-model{first[len(key) :]} {rest}"
    if key in FIELD_KEYS:  # a spec's own message (field name first)
        return f"{option_of(FIELD_KEYS[key])}: {message}"
    return message
