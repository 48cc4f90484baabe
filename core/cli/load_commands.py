"""`python -m core serve` and `python -m core plan`: their options and what they run.

Both take every `estimate` scenario option (generated from the scenario's descriptions);
`serve` adds the `Load` options, `plan` the `Plan` options and the Load's length variation.
Bad values take estimate's path: exit 2, one line naming the option and its range.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from core.cli.scenario_args import _dest, add_scenario_options, scenario_from_args
from core.cli.spec_args import add_spec_options, spec_from_args
from core.fields import inputs
from core.flat_sections import INPUTS
from core.load import Load
from core.plan_spec import Plan
from core.scenario import Scenario


def add_serve_parser(sub: Any) -> None:
    serve = sub.add_parser("serve", help="one replica of the scenario under a load (closed or open loop)")
    add_scenario_options(serve)
    add_spec_options(serve, Load, "load (give --concurrency or --request-rate; neither: one request in flight)")
    serve.add_argument("--json", action="store_true", help="print one JSON object (stable keys)")
    serve.set_defaults(subparser=serve)


def add_plan_parser(sub: Any) -> None:
    plan = sub.add_parser("plan", help="the cheapest deployment meeting TTFT and tokens/s targets at the peak")
    add_scenario_options(plan)
    add_spec_options(plan, Plan, "plan: the peak, the targets, the candidates")
    add_spec_options(plan, Load, "request lengths", only=("lenlow",))
    plan.add_argument("--json", action="store_true", help="print one JSON object: ranked candidates and failures")
    plan.add_argument("--frontier", action="store_true", help="with --json: each candidate's concurrency sweep")
    plan.set_defaults(subparser=plan)


_NO_BILL = "serve prints no bill (estimate and plan do)"
# Scenario options a command takes (they share estimate's list) but does not use: given, they are refused,
# never silently dropped (`serve --cached-tokens 150` printed "no prefix-cache hits").
UNUSED = {
    "serve": {
        "batch": "serve keeps requests in flight, not one static batch: use --concurrency",
        "cached": "the load model has no prefix-cache hits",
        "cwrite": "the load model has no prefix cache to write",
        **dict.fromkeys(("pin", "pcache", "pout", "pwrite", "replies", "days", "usdh", "api"), _NO_BILL),
    },
    "estimate": {
        "streamoverhead": "one static batch never pays it: only the load model does (serve, plan)",
    },
    "plan": {
        "batch": "the plan sizes each replica's requests in flight itself: cap them with --max-concurrency",
        "gpus": "the plan tries every size in --tensor-parallel",
        "wbits": "the plan tries every precision in --weight-precisions",
        "cbits": "each candidate's maths follow its weights (--weight-precisions)",
    },
}


def refuse_unused(args: argparse.Namespace, command: str) -> None:
    """ValueError naming the first scenario option `command` takes but does not use, if one was given."""
    for key, why in UNUSED[command].items():
        given = args.api_model if key == "api" else getattr(args, _dest(key), None)
        if given is not None:
            option = "--api-model" if key == "api" else INPUTS[key].option
            raise ValueError(f"{option}: {command} does not use it; {why}")


def _refuse_a_gpu_not_searched(args: argparse.Namespace, scenario: Scenario, spec: Plan) -> None:
    """The scenario's GPU (and its edited numbers) only count when it is a candidate: given otherwise, it was
    dropped without a word (`--gpu h100-sxm --gpu-price 0.01 --candidate-gpus h200` ranked h200 alone)."""
    from core.candidates import candidate_gpus
    from core.specs import GPU

    typed = (["--gpu"] if args.gpu is not None else []) + [
        described.option for _, described in inputs(GPU) if getattr(args, _dest(described.key), None) is not None
    ]
    if typed and scenario.gpu.id not in {gpu.id for gpu in candidate_gpus(scenario, spec)}:
        raise ValueError(
            f"{typed[0]}: plan does not use it; {scenario.gpu.id} is not one of the candidate GPUs "
            + ("(add it to --candidate-gpus)" if spec.gpu_ids else "(it has no price: give it one with --gpu-price)")
        )


def _refuse_an_expert_width_not_kept(args: argparse.Namespace, scenario: Scenario, spec: Plan) -> None:
    """`--expert-weight-bits` counts in a plan only where a 4-bit candidate keeps experts narrower than the
    rest (`core.candidates.expert_split`): given otherwise, it changed nothing without a word."""
    from core.candidates import expert_split

    if getattr(args, _dest("ebits"), None) is None:
        return
    if expert_split(scenario.precision) is None:
        raise ValueError(
            f"--expert-weight-bits: plan does not use it; it keeps an expert width only narrower than the other "
            f"weights' {scenario.precision.weight_bits:g} bits"
        )
    if 4 not in spec.weight_bits:
        raise ValueError("--expert-weight-bits: plan does not use it; only its 4-bit candidates keep an expert "
                         "width: add 4 to --weight-precisions")  # fmt: skip


def _parsed(args: argparse.Namespace, spec_type: type, typical_engine: bool = False) -> tuple[Scenario, Any, Load]:
    """The scenario, the spec and the load; a bad value exits 2 with one line naming its option."""
    try:
        refuse_unused(args, args.command)
        load = spec_from_args(args, Load)
        scenario = scenario_from_args(args)
        if typical_engine:
            from core.compare import fleet_engine_id  # the price catalogue's module: only for a plan

            # The plan's candidates are real GPUs: the lesson's ideal physics left on automatic (the
            # default toy GPU's) searches on the typical engine instead, as the app's plan does, with
            # the efficiency numbers typed applied to it (--mbu 0.01 was dropped without a word).
            engine_id = fleet_engine_id(scenario, engine_chosen=args.eff is not None or bool(args.ideal))
            if engine_id != scenario.efficiency.label:
                scenario = scenario_from_args(args, engine=engine_id)
        spec: Any = spec_from_args(args, spec_type)
        if typical_engine:
            _refuse_a_gpu_not_searched(args, scenario, spec)
            _refuse_an_expert_width_not_kept(args, scenario, spec)
        return scenario, spec, load
    except ValueError as error:
        args.subparser.error(f"argument {error}")  # exits 2
        raise  # not reached: argparse's error() exits


def run_serve(args: argparse.Namespace) -> str:
    from core.cli.serve_report import serve_json, serve_text
    from core.load import serve

    scenario, _, load = _parsed(args, Load)
    result = serve(scenario, load)
    if args.json:
        return json.dumps(serve_json(scenario, load, result), indent=2) + "\n"
    return serve_text(scenario, load, result)


def run_plan(args: argparse.Namespace) -> str:
    from core.cli.plan_report import plan_json, plan_text
    from core.plan import plan

    if args.frontier and not args.json:  # the text has no frontier: the flag was dropped without a word
        args.subparser.error("argument --frontier: only with --json (the text report has no frontier)")
    scenario, spec, load = _parsed(args, Plan, typical_engine=True)
    result = plan(scenario, spec, load.lengths(scenario.workload))
    if args.json:
        return json.dumps(plan_json(result, frontier=args.frontier), indent=2) + "\n"
    return plan_text(result)
