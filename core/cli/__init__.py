"""`python -m core`: the cost model on the command line.

Subcommands: `lab` (the lesson's reference run), `estimate` (one scenario, text or
--json), `serve` (one replica of the scenario under a load: requests in flight or arriving
per second), `plan` (the cheapest deployment meeting latency targets at the peak, against
the API's bill), `presets` (the GPU and model data), `calibrate` (the model against
published measurements; `--load` for the load model against measured servers) and `prices`
(the API price catalogue, searched). Every bad value exits with code 2 and one line naming
the option and the allowed range; no traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from core.cli.load_commands import add_plan_parser, add_serve_parser, refuse_unused, run_plan, run_serve
from core.cli.prices import add_prices_arguments
from core.cli.scenario_args import add_scenario_options, scenario_from_args
from core.fields import cut
from core.lesson import PREDICTION_HIGH, PREDICTION_LOW
from core.measurements import SETS

SUBCOMMANDS = ("lab", "estimate", "serve", "plan", "presets", "calibrate", "prices")


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad value in one line (no usage dump) and exits with 2.

    An option given twice is refused (argparse keeps the last: `--batch 2 --batch 3` ran batch 3 without a
    word), and so is an abbreviation (`--prompt 5` was --prompt-tokens, and a new option could change it)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Iterable[str] | None = None, namespace: Any = None) -> tuple[Any, list[str]]:
        args = list(sys.argv[1:] if args is None else args)
        self._refuse_repeats(args)
        return super().parse_known_args(args, namespace)

    def _refuse_repeats(self, args: list[str]) -> None:
        given: dict[str, str] = {}  # dest → the option that gave it (--engine and --eff share one)
        for text in args:
            if text == "--":
                break
            name = text.split("=", 1)[0]
            action = self._option_string_actions.get(name)
            if action is None or action.nargs == 0 or isinstance(action, argparse._AppendAction):
                continue  # a value, a flag (twice is still on), or an option meant to repeat (--set)
            if action.dest in given:
                also = "" if given[action.dest] == name else f" (also as {given[action.dest]})"
                self.error(f"argument {name}: given twice{also}; give it once")
            given[action.dest] = name

    def error(self, message: str) -> NoReturn:
        # One line, short: argparse repeats what was typed ("unrecognized arguments: 999…"), so
        # long words are cut and the line is capped (a 10,000-character value is not echoed whole).
        message = _short_choices(message.replace("\n", " "))
        words = " ".join(cut(word, 40) for word in message.split(" "))
        self.exit(2, cut(f"{self.prog}: error: {words}", 197) + "\n")  # one line under 200 characters, its newline too


_CHOICES = re.compile(r"invalid choice: (.*) \(choose from (.*)\)$")
_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def _short_choices(message: str) -> str:
    """argparse's "(choose from 'a', 'b', …)" without the quotes, runs like fresh2 … fresh29 as one
    range: the whole list fits the one line (it was cut before 'mlx', and after 'fresh8')."""
    found = _CHOICES.search(message)
    if not found:
        return message
    names = [name.strip().strip("'\"") for name in found.group(2).split(",")]
    shown: list[str] = []
    run: list[str] = []  # consecutive stem2, stem3, … being gathered

    def close() -> None:
        shown.extend(run if len(run) < 3 else [f"{run[0]} to {run[-1]}"])
        run.clear()

    for name in names:
        numbered, last = _NUMBERED.match(name), _NUMBERED.match(run[-1]) if run else None
        if numbered and last and numbered[1] == last[1] and int(numbered[2]) == int(last[2]) + 1:
            run.append(name)
            continue
        close()
        run.append(name) if numbered else shown.append(name)
    close()
    return f"{message[: found.start()]}{found.group(1)} is not one of {', '.join(shown)}"


def _prediction(text: str) -> float:
    """One of the lab's four guesses: a number from 1e-6 to 1e9 (argparse said "invalid float value: 'a'"; 5e-324
    divided the verdict by zero, 1e-300 printed a 300-digit "x too LOW")."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not PREDICTION_LOW <= value <= PREDICTION_HIGH:
        raise argparse.ArgumentTypeError(
            f"each of P1-P4 must be a number from 0.000001 to 1,000,000,000 (ms, x, FLOP/byte, x), got {cut(text)!r}"
        )
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m core", description="What it costs, in time and money, to serve an LLM.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    lab = sub.add_parser("lab", help="print the lesson's reference run (Parts 1-3 and the scoreboard)")
    lab.set_defaults(subparser=lab)
    lab.add_argument(
        "--predict",
        nargs=4,
        type=_prediction,
        metavar=("P1", "P2", "P3", "P4"),
        help="your predictions: TPOT ms, output-vs-input x, intensity FLOP/byte, long-vs-short reply x",
    )
    estimate = sub.add_parser("estimate", help="estimate one scenario (the lesson's Part 3 by default)")
    add_scenario_options(estimate)
    estimate.set_defaults(subparser=estimate)
    estimate.add_argument("--json", action="store_true", help="print one JSON object (stable keys)")
    add_serve_parser(sub)
    add_plan_parser(sub)
    sub.add_parser("presets", help="list the GPU and model presets")
    calibrate = sub.add_parser("calibrate", help="compare the calibrated model with published measurements")
    calibrate.set_defaults(subparser=calibrate)
    calibrate.add_argument("--fit", action="store_true", help="refit the engines' costs on the fit set")
    calibrate.add_argument(
        "--set",
        dest="sets",
        action="append",
        choices=SETS,
        help="print only this set (repeatable; default: every set)",
    )
    calibrate.add_argument(
        "--load", action="store_true", help="the load model against measured servers, per held-out split"
    )
    calibrate.add_argument(
        "--serving-file",
        metavar="CSV",
        help="the load model (shipped profiles) against your own measured servers: a CSV in the schema of "
        "core/data/serving_llama-3.1-70b.csv (model, weights, gpu, tp, engine, isl, osl, concurrency, ttft_ms, "
        "tpot_ms); implies --load",
    )
    calibrate.add_argument(
        "--measurements-file",
        metavar="CSV",
        help="the model (shipped profiles) against your own published or measured single requests and static "
        "batches: a CSV with the columns of core/data/measurements_test.csv (core/data/README.md)",
    )
    prices = sub.add_parser("prices", help="list API models' prices per million tokens (SEARCH by provider or name)")
    prices.set_defaults(subparser=prices)
    add_prices_arguments(prices)
    return parser


def _file_report(args: argparse.Namespace, option: str, report: Callable[[str], str], path: str) -> str:
    """`report(path)`, or exit 2 with one line naming `option` when the file cannot be read or used."""
    parser: _Parser = args.subparser
    try:
        return report(path)
    except ValueError as error:
        # The file's name is cut, not its problem: a 200-character name hid the line, the column and the range.
        problem, name = str(error), Path(path).name
        if problem.startswith(name):
            problem = cut(name, 30) + problem[len(name) :]
        parser.error(f"argument {option}: {problem}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "lab":
        from core.cli.lab_text import render_lab
        from core.lesson import REFERENCE_PREDICTIONS, lab_run

        guesses = tuple(args.predict) if args.predict else REFERENCE_PREDICTIONS  # each checked by _prediction
        sys.stdout.write(render_lab(lab_run(guesses)))
    elif args.command == "estimate":
        from core.cli.reports import estimate_json, estimate_text
        from core.estimate import estimate

        try:
            refuse_unused(args, "estimate")
            scenario = scenario_from_args(args)
        except ValueError as error:
            args.subparser.error(f"argument {error}")
        result = estimate(scenario)
        if args.json:
            sys.stdout.write(json.dumps(estimate_json(result), indent=2) + "\n")
        else:
            sys.stdout.write(estimate_text(result))
    elif args.command == "serve":
        sys.stdout.write(run_serve(args))
    elif args.command == "plan":
        sys.stdout.write(run_plan(args))
    elif args.command == "presets":
        from core.cli.reports import presets_text

        sys.stdout.write(presets_text())
    elif args.command == "calibrate" and args.measurements_file is not None:
        from core.cli.calibration_report import file_text

        if args.sets or args.fit or args.load or args.serving_file is not None:
            args.subparser.error(
                "argument --measurements-file: not allowed with --set, --fit, --load or --serving-file"
            )

        sys.stdout.write(_file_report(args, "--measurements-file", file_text, args.measurements_file))
    elif args.command == "calibrate" and args.serving_file is not None:
        from core.cli.load_report import file_calibration_text

        if args.sets or args.fit:  # the shipped profiles judge a file; nothing is fitted or chosen there
            args.subparser.error("argument --serving-file: not allowed with --set or --fit")
        sys.stdout.write(_file_report(args, "--serving-file", file_calibration_text, args.serving_file))
    elif args.command == "calibrate" and args.load:
        from core.cli.load_report import load_calibration_text

        if args.sets:  # --set picks single-request sets; the load model's splits are by GPU and engine
            args.subparser.error("argument --load: not allowed with --set (its splits are by GPU and by engine)")
        sys.stdout.write(load_calibration_text(fit=args.fit))
    elif args.command == "calibrate":
        from core.cli.calibration_report import calibration_text

        sys.stdout.write(calibration_text(fit=args.fit, sets=tuple(args.sets or ())))
    elif args.command == "prices":
        from core.cli.prices import run_prices

        sys.stdout.write(run_prices(args))
    return 0
