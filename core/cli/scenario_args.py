"""`python -m core estimate` options → one Scenario (the same value the app's sidebar builds).

The option set is a public interface that scripts depend on: change it only by adding.
Human units are converted to SI here, once.
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from core import presets
from core.efficiency import IDEAL, default_efficiency
from core.scenario import Scenario
from core.specs import CUSTOM_ID, GPU, Model, Precision, Pricing, Workload
from core.units import BYTES_PER_GB, FLOP_PER_TFLOP, PARAMS_PER_BILLION

# Which option a core field's error message belongs to, so the user sees the flag they typed.
OPTION_FOR_FIELD = {
    "memory_bandwidth_bytes_per_s": "--bandwidth-gb-s",
    "peak_flops_16bit_per_s": "--tflops",
    "peak_flops_8bit_per_s": "--tflops",
    "memory_bytes": "--memory-gb",
    "total_params": "--params-b",
    "active_params": "--active-params-b",
    "layers": "--layers",
    "hidden": "--hidden",
    "kv_heads": "--kv-heads",
    "head_dim": "--head-dim",
    "query_heads": "--hidden",
    "weight_bits": "--weight-bits",
    "kv_bits": "--kv-bits",
    "prompt_tokens": "--prompt-tokens",
    "output_tokens": "--output-tokens",
    "batch_size": "--batch",
    "cached_prompt_tokens": "--cached-tokens",
    "gpu_count": "--gpus",
    "mbu": "--mbu",
    "mfu": "--mfu",
    "input_usd_per_million_tokens": "--input-price",
    "cached_input_usd_per_million_tokens": "--cached-input-price",
    "output_usd_per_million_tokens": "--output-price",
    "replies_per_day": "--replies-per-day",
    "days_per_month": "--days",
}


def number_or_text(text: str) -> int | float | str:
    """Parse a number; leave anything else as text so the spec's own check names the range.

    The specs validate every field ("batch_size must be a whole number >= 1 and <= 1e+06,
    got 'x'"), so the CLI never repeats their ranges.
    """
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text if len(text) <= 40 else text[:40] + "..."


def add_scenario_options(parser: argparse.ArgumentParser) -> None:
    gpu = parser.add_argument_group("GPU (a preset, or custom numbers; any number makes a custom GPU)")
    gpu.add_argument("--gpu", metavar="ID", help="GPU preset id (default: the lesson's toy GPU); see `presets`")
    gpu.add_argument("--bandwidth-gb-s", type=number_or_text, metavar="X", help="peak memory bandwidth, GB/s")
    gpu.add_argument(
        "--tflops", type=number_or_text, metavar="X", help="dense peak TFLOP/s at the precision the maths runs in"
    )
    gpu.add_argument("--memory-gb", type=number_or_text, metavar="X", help="memory per GPU, GB")
    gpu.add_argument("--gpus", type=number_or_text, default=1, metavar="N", help="tensor-parallel GPUs (default 1)")
    model = parser.add_argument_group("model (a preset, or custom numbers)")
    model.add_argument("--model", metavar="ID", help="model preset id (default: the lesson's 7B toy model)")
    model.add_argument("--params-b", type=number_or_text, metavar="X", help="total parameters, billions")
    model.add_argument(
        "--active-params-b", type=number_or_text, metavar="X", help="active parameters per token, billions"
    )
    for flag, what in (
        ("--layers", "layers"),
        ("--hidden", "hidden size"),
        ("--kv-heads", "KV heads"),
        ("--head-dim", "head dimension"),
    ):
        model.add_argument(flag, type=number_or_text, metavar="N", help=what)
    model.add_argument(
        "--weight-bits", type=number_or_text, default=16.0, metavar="X", help="bits per weight (default 16)"
    )
    model.add_argument(
        "--kv-bits", type=number_or_text, default=16.0, metavar="X", help="bits per KV-cache element (default 16)"
    )
    work = parser.add_argument_group("workload")
    work.add_argument(
        "--prompt-tokens", type=number_or_text, default=200, metavar="N", help="prompt tokens (default 200)"
    )
    work.add_argument(
        "--output-tokens", type=number_or_text, default=500, metavar="M", help="output tokens (default 500)"
    )
    work.add_argument("--batch", type=number_or_text, default=1, metavar="B", help="concurrent sequences (default 1)")
    work.add_argument(
        "--cached-tokens",
        type=number_or_text,
        default=0,
        metavar="N",
        help="prompt tokens served from cache (default 0)",
    )
    eff = parser.add_argument_group("efficiency (default: ideal on the toy GPU, calibrated on real ones)")
    eff.add_argument("--ideal", action="store_true", help="the lesson's physics: MBU = MFU = 1, no overheads")
    eff.add_argument("--mbu", type=number_or_text, metavar="X", help="memory-bandwidth utilisation, 0-1")
    eff.add_argument("--mfu", type=number_or_text, metavar="X", help="compute utilisation, 0-1")
    money = parser.add_argument_group("money (USD per million tokens)")
    money.add_argument("--input-price", type=number_or_text, default=0.50, metavar="X", help="default 0.50")
    money.add_argument("--cached-input-price", type=number_or_text, default=0.50, metavar="X", help="default 0.50")
    money.add_argument("--output-price", type=number_or_text, default=1.50, metavar="X", help="default 1.50")
    money.add_argument("--replies-per-day", type=number_or_text, default=100_000, metavar="N", help="default 100000")
    money.add_argument("--days", type=number_or_text, default=30, metavar="N", help="days per month (default 30)")


def _gpu(args: argparse.Namespace, precision: Precision) -> GPU:
    base = presets.gpu(args.gpu or presets.TOY_GPU_ID)
    custom = {"bandwidth_gb_s": args.bandwidth_gb_s, "tflops": args.tflops, "memory_gb": args.memory_gb}
    if all(value is None for value in custom.values()):
        return base
    if args.gpu is None and (args.bandwidth_gb_s is None or args.tflops is None):
        raise ValueError("--bandwidth-gb-s and --tflops: a custom GPU without --gpu needs both")
    changes: dict[str, object] = {
        "id": CUSTOM_ID,
        "name": f"Custom GPU (from {base.name})" if args.gpu else "Custom GPU",
    }
    if args.bandwidth_gb_s is not None:
        changes["memory_bandwidth_bytes_per_s"] = round(args.bandwidth_gb_s * BYTES_PER_GB)
    if args.tflops is not None:
        flops = round(args.tflops * FLOP_PER_TFLOP)
        if args.gpu is None:  # nothing to keep: one figure serves both widths
            changes.update(peak_flops_16bit_per_s=flops, peak_flops_8bit_per_s=flops)
        else:
            changes["peak_flops_8bit_per_s" if precision.math_bits == 8 else "peak_flops_16bit_per_s"] = flops
    if args.memory_gb is not None:
        changes["memory_bytes"] = round(args.memory_gb * BYTES_PER_GB)
    return replace(base, **changes)  # type: ignore[arg-type]


def _model(args: argparse.Namespace) -> Model:
    base = presets.model(args.model or presets.TOY_MODEL_ID)
    shape = {"layers": args.layers, "hidden": args.hidden, "kv_heads": args.kv_heads, "head_dim": args.head_dim}
    if args.params_b is None and args.active_params_b is None and all(v is None for v in shape.values()):
        return base
    changes: dict[str, object] = {"id": CUSTOM_ID, "name": f"Custom model (from {base.name})"}
    if args.params_b is not None:
        changes["total_params"] = round(args.params_b * PARAMS_PER_BILLION)
        if args.active_params_b is None and not base.is_moe:
            changes["active_params"] = changes["total_params"]
    if args.active_params_b is not None:
        changes["active_params"] = round(args.active_params_b * PARAMS_PER_BILLION)
    given = {key: value for key, value in shape.items() if value is not None}
    if given and not base.has_attention_shape and len(given) < len(shape):
        missing = ", ".join(f"--{k.replace('_', '-')}" for k in shape if k not in given)
        raise ValueError(f"{missing}: an attention shape needs --layers, --hidden, --kv-heads and --head-dim together")
    changes.update(given)
    if given:
        hidden, head_dim = changes.get("hidden", base.hidden), changes.get("head_dim", base.head_dim)
        if not base.has_attention_shape or "hidden" in given or "head_dim" in given:
            changes["query_heads"] = max(1, int(hidden) // int(head_dim))  # type: ignore[call-overload]
    return replace(base, **changes)  # type: ignore[arg-type]


def scenario_from_args(args: argparse.Namespace) -> Scenario:
    """Build the Scenario; raises ValueError whose message starts with the offending option."""
    try:
        precision = Precision(weight_bits=args.weight_bits, kv_bits=args.kv_bits)
        gpu = _gpu(args, precision)
        efficiency = IDEAL if args.ideal else default_efficiency(gpu.id)
        if args.mbu is not None or args.mfu is not None:
            efficiency = replace(
                efficiency,
                label="custom",
                mbu=efficiency.mbu if args.mbu is None else args.mbu,
                mfu=efficiency.mfu if args.mfu is None else args.mfu,
            )
        return Scenario(
            model=_model(args),
            gpu=gpu,
            precision=precision,
            efficiency=efficiency,
            workload=Workload(
                prompt_tokens=args.prompt_tokens,
                output_tokens=args.output_tokens,
                batch_size=args.batch,
                cached_prompt_tokens=args.cached_tokens,
                gpu_count=args.gpus,
            ),
            pricing=Pricing(
                input_usd_per_million_tokens=args.input_price,
                cached_input_usd_per_million_tokens=args.cached_input_price,
                output_usd_per_million_tokens=args.output_price,
                replies_per_day=args.replies_per_day,
                days_per_month=args.days,
            ),
        )
    except ValueError as error:
        message = str(error)
        if message.startswith("-"):
            raise
        field = message.split(" ", 1)[0]
        option = OPTION_FOR_FIELD.get(field)
        if option is None and field in ("gpu", "model"):
            option = f"--{field}"
        raise ValueError(f"{option}: {message}" if option else message) from None
