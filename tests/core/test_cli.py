"""`python -m core`: the lab, the estimate interface scripts depend on, and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.cli import build_parser, main
from core.cli.reports import JSON_KEYS


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def test_estimate_defaults_are_the_lesson_part3_long_reply(capsys):
    code, out, _ = run_cli(capsys, "estimate", "--json")
    data = json.loads(out)
    assert code == 0
    assert set(JSON_KEYS) <= set(data)
    assert data["ttft_ms"] == pytest.approx(9.3333333, rel=1e-6)  # 2 × 7e9 × 200 / 300e12
    assert data["tpot_ms"] == pytest.approx(7.0)
    assert data["total_ms"] == pytest.approx(3509.3333333, rel=1e-9)  # 9.33 + 500 × 7
    assert data["cost_per_reply_usd"] == pytest.approx(0.00085)
    assert data["monthly_cost_usd"] == pytest.approx(2550.0)
    assert data["decode_bound"] == "memory"
    assert data["machine_balance_flop_per_byte"] == pytest.approx(150.0)
    assert data["decode_intensity_flop_per_byte"] == pytest.approx(1.0)
    assert data["weights_gb"] == pytest.approx(14.0)
    assert data["kv_cache_gb"] == 0 and data["max_batch_that_fits"] is None
    assert data["fits_in_memory"] is True
    assert (data["mbu"], data["mfu"]) == (1.0, 1.0)
    # whole batch: 1 × 500 tokens / 3.50933 s = 142.5 tok/s
    assert data["output_tokens_per_s"] == pytest.approx(500 / 3.5093333, rel=1e-6)


def test_estimate_text_summary(capsys):
    code, out, _ = run_cli(capsys, "estimate")
    assert code == 0
    assert "9.33 ms" in out and "7.00 ms" in out and "3509.33 ms" in out
    assert "$0.000850" in out and "$2,550" in out


def test_real_gpu_gets_calibrated_efficiency_and_ideal_flag_overrides(capsys):
    _, out, _ = run_cli(capsys, "estimate", "--json", "--gpu", "h100-sxm", "--model", "llama-3.1-8b")
    calibrated = json.loads(out)
    assert calibrated["efficiency"] == "typical" and calibrated["mbu"] < 1
    _, out, _ = run_cli(capsys, "estimate", "--json", "--gpu", "h100-sxm", "--model", "llama-3.1-8b", "--ideal")
    ideal = json.loads(out)
    # ideal decode at batch 1: (16.06e9 + KV) / 3.35e12 ≈ 4.8 ms; calibrated is slower
    assert ideal["efficiency"] == "ideal" and ideal["tpot_ms"] == pytest.approx(4.8, abs=0.1)
    assert calibrated["tpot_ms"] > ideal["tpot_ms"]


def test_gpu_numbers_edit_the_gpu_they_start_from(capsys):
    # Numbers without --gpu edit the lesson's toy GPU, which keeps its ideal efficiency.
    _, out, _ = run_cli(capsys, "estimate", "--json", "--bandwidth-gb-s", "1000", "--tflops", "100")
    data = json.loads(out)
    assert data["scenario"]["gpu"] == "toy-gpu" and data["scenario"]["bw"] == "1000"
    assert data["efficiency"] == "ideal"
    # On a real GPU the calibrated defaults stay; only the edited number travels beside the id.
    _, out, _ = run_cli(capsys, "estimate", "--json", "--gpu", "h100-sxm", "--memory-gb", "94")
    data = json.loads(out)
    assert (data["scenario"]["gpu"], data["scenario"]["mem"], data["efficiency"]) == ("h100-sxm", "94", "typical")
    assert "bw" not in data["scenario"]
    _, out, _ = run_cli(capsys, "estimate", "--json", "--bandwidth-gb-s", "1000", "--tflops", "100", "--ideal")
    # toy model, ideal, 1 TB/s: 14e9 / 1e12 = 14 ms per token; balance 100e12 / 1e12 = 100
    data = json.loads(out)
    assert data["tpot_ms"] == pytest.approx(14.0) and data["machine_balance_flop_per_byte"] == pytest.approx(100)


def test_custom_model_and_mbu(capsys):
    _, out, _ = run_cli(
        capsys,
        "estimate",
        "--json",
        "--params-b",
        "14",
        "--mbu",
        "0.5",
        "--output-tokens",
        "10",
    )
    data = json.loads(out)
    # 14e9 × 2 bytes / (2e12 × 0.5) = 28 ms per token
    assert data["tpot_ms"] == pytest.approx(28.0) and data["mbu"] == 0.5


def test_custom_attention_shape_adds_a_kv_cache(capsys):
    _, out, _ = run_cli(
        capsys,
        "estimate",
        "--json",
        "--layers",
        "32",
        "--hidden",
        "4096",
        "--kv-heads",
        "8",
        "--head-dim",
        "128",
        "--prompt-tokens",
        "1000",
        "--output-tokens",
        "1000",
    )
    data = json.loads(out)
    # 2000 tokens × 2 × 32 × 8 × 128 × 2 B = 0.262 GB
    assert data["kv_cache_gb"] == pytest.approx(2000 * 131_072 / 1e9)


def test_self_hosting_that_cannot_run_says_so(capsys):
    # Llama 3.1 70B in 16-bit (141.1 GB of weights) on one 80 GB A100: no price, no break-even.
    argv = ("estimate", "--model", "llama-3.1-70b", "--gpu", "a100-80gb-sxm")
    _, out, _ = run_cli(capsys, *argv, "--json")
    data = json.loads(out)
    assert data["fits_in_memory"] is False
    assert data["self_hosting_problem"].startswith("not possible: Llama 3.1 70B at batch 1 does not fit")
    assert data["self_hosting_usd_per_million_output_tokens"] is None
    assert data["self_hosting_break_even_replies_per_day"] is None
    _, out, _ = run_cli(capsys, *argv)
    assert "self-hosting    not possible: Llama 3.1 70B" in out and "per million" not in out


def test_break_even_beyond_one_fleet_is_not_a_headline(capsys):
    # Llama 3.1 8B on one A100 at batch 1: break-even 70,543 replies/day, capacity 15,344
    # (derived in test_physics.test_break_even_beyond_capacity_is_no_headline).
    argv = ("estimate", "--model", "llama-3.1-8b", "--gpu", "a100-80gb-sxm")
    _, out, _ = run_cli(capsys, *argv, "--json")
    data = json.loads(out)
    assert data["self_hosting_break_even_replies_per_day"] is None
    assert data["self_hosting_capacity_replies_per_day"] == pytest.approx(15_344, rel=1e-3)
    _, out, _ = run_cli(capsys, *argv)
    assert "never breaks even with the API" in out and "70,543" not in out
    _, out, _ = run_cli(capsys, *argv, "--batch", "16")
    assert "breaks even with the API at 70,543 replies/day" in out


def test_per_gpu_memory_with_replicated_kv_heads(capsys):
    # Qwen3-235B-A22B (4 KV heads) in 8-bit on 8 × H100, batch 64 × 16,384 tokens: each GPU
    # holds one KV head, 64 × 16,384 × 94 × 2 × 128 × 2 B = 50.47 GB, + 29.39 GB of weights.
    argv = ("estimate", "--model", "qwen3-235b-a22b", "--gpu", "h100-sxm", "--gpus", "8", "--weight-bits", "8")
    argv += ("--batch", "64", "--prompt-tokens", "16000", "--output-tokens", "384")
    _, out, _ = run_cli(capsys, *argv, "--json")
    data = json.loads(out)
    assert data["kv_replication"] == 2
    assert data["kv_cache_gb_per_gpu"] == pytest.approx(64 * 16_384 * 94 * 2 * 128 * 2 / 1e9)
    assert data["memory_required_gb_per_gpu"] == pytest.approx(79.85, abs=0.01)
    _, out, _ = run_cli(capsys, *argv)
    assert "= 79.85 GB of 80 GB (KV heads replicated 2x" in out


def test_static_batch_and_context_window_are_shown(capsys):
    argv = ("estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--batch", "256")
    _, out, _ = run_cli(capsys, *argv, "--json")
    data = json.loads(out)
    # 256 sequences × 200 prompt tokens, prefilled in one pass
    assert data["prefill_tokens"] == 51_200 and data["context_window_tokens"] == 131_072
    assert data["warnings"] == []
    _, out, _ = run_cli(capsys, *argv)
    assert "one pass over 51,200 tokens: batch 256 x 200 uncached" in out and "warning" not in out
    long = ("estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--prompt-tokens", "1000000")
    code, out, _ = run_cli(capsys, *long, "--json")
    assert code == 0  # a warning, not an error: the estimate still runs
    assert json.loads(out)["warnings"][0].startswith("1,000,000 prompt + 500 reply = 1,000,500 tokens")
    _, out, _ = run_cli(capsys, *long)
    assert "warning: 1,000,000 prompt + 500 reply" in out and "context window of 131,072 tokens" in out


def test_a_tensor_parallel_size_the_engines_refuse_is_warned_and_its_replication_explained(capsys):
    # Llama 3.1 70B on 3 GPUs: 64 query heads do not divide by 3 (a warning, exit 0), and each GPU holds
    # ceil(8 / 3) = 3 of the 8 KV heads: 3 × 3 / 8 = 1.125 copies, not "more GPUs than KV heads".
    argv = ("estimate", "--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--gpus", "3")
    code, out, _ = run_cli(capsys, *argv, "--json")
    data = json.loads(out)
    assert code == 0 and data["kv_replication"] == pytest.approx(1.125)
    assert data["warnings"] == [
        "Llama 3.1 70B's 64 query heads and 8 KV heads do not split evenly over 3 GPUs: vLLM, SGLang and "
        "TensorRT-LLM refuse this tensor-parallel size (these figures give each GPU the busiest share); "
        "1, 2, 4, 8 or 16 GPUs do"
    ]
    _, out, _ = run_cli(capsys, *argv)
    assert "(KV heads replicated 1.125x: the KV heads do not split evenly)" in out
    # Qwen3-235B's 4 KV heads on 8 GPUs: an even split, each head held twice, and no warning.
    _, out, _ = run_cli(capsys, "estimate", "--model", "qwen3-235b-a22b", "--gpu", "h100-sxm", "--gpus", "8")
    assert "(KV heads replicated 2x: more GPUs than KV heads to split)" in out and "warning" not in out


def test_llama_cpp_on_a_gpu_with_its_own_backend_is_noted_not_changed(capsys):
    # --engine takes the id as written; the note names the backend that has this GPU's costs.
    mac = ("estimate", "--model", "qwen3-30b-a3b", "--gpu", "m2-ultra")
    code, out, _ = run_cli(capsys, *mac, "--engine", "llama.cpp", "--json")
    data = json.loads(out)
    assert code == 0 and data["scenario"]["engine"] == "llama.cpp"
    assert data["warnings"] == [
        "on Apple silicon llama.cpp runs as engine llama.cpp-metal; these figures use engine llama.cpp's costs, "
        "fitted for NVIDIA, Intel, AMD Instinct"
    ]
    _, out, _ = run_cli(capsys, *mac, "--engine", "llama.cpp-metal")
    assert "warning" not in out  # the backend the GPU runs: nothing to say
    _, out, _ = run_cli(
        capsys, "estimate", "--model", "qwen3-30b-a3b", "--gpu", "h100-sxm", "--engine", "llama.cpp-radeon"
    )
    assert "warning: on this GPU llama.cpp runs as engine llama.cpp; these figures use engine llama.cpp-radeon's" in out
    _, out, _ = run_cli(capsys, "estimate", "--model", "qwen3-30b-a3b", "--gpu", "m2-ultra", "--engine", "vllm")
    # Other engines have one profile everywhere, so no backend note; vLLM has no Apple GPU backend at all.
    assert [line for line in out.splitlines() if line.startswith("warning")] == [
        "warning: vLLM does not run on Apple silicon's GPUs, and Apple M2 Ultra (76-core GPU, 192GB) is one: these "
        "are its costs on hardware it cannot use"
    ]


@pytest.mark.parametrize(
    ("argv", "option", "range_text"),
    [
        # Each range is the option's own, in the unit the option takes (written by hand from the specs gathered in core/specs.py).
        (["--batch", "0"], "--batch", "from 1 to 1,000,000 requests"),
        (["--batch", "x"], "--batch", "from 1 to 1,000,000 requests"),
        (["--prompt-tokens", "-5"], "--prompt-tokens", "from 1 to 10,000,000 tokens"),
        (["--output-tokens", "1e308"], "--output-tokens", "to 1,000,000 tokens"),
        (["--cached-tokens", "300"], "--cached-tokens", "from 0 to 200 tokens"),
        (["--gpus", "0"], "--gpus", "from 1 to 1,024 GPUs"),
        (["--weight-bits", "nan"], "--weight-bits", "from 1 to 32 bits"),
        (["--kv-bits", "inf"], "--kv-bits", "from 1 to 32 bits"),
        (["--mbu", "1.5"], "--mbu", "from 0.01 to 1"),
        (["--mfu", "0"], "--mfu", "from 0.01 to 1"),
        (["--input-price", "-1"], "--input-price", "from 0 to 10,000 USD per million tokens"),
        (["--output-price", "abc"], "--output-price", "from 0 to 10,000 USD per million tokens"),
        (["--cached-input-price", "1e9"], "--cached-input-price", "to 10,000"),
        (["--replies-per-day", "-1"], "--replies-per-day", "from 0 to 1,000,000,000,000 replies per day"),
        (["--days", "32"], "--days", "from 1 to 31 days"),
        (["--bandwidth-gb-s", "-3", "--gpu", "h100-sxm"], "--bandwidth-gb-s", "from 1 to 1,000,000 GB/s"),
        (["--tflops", "0", "--gpu", "h100-sxm"], "--tflops", "from 0.1 to 1,000,000 TFLOP/s"),
        (["--tflops-8bit", "0", "--gpu", "h100-sxm"], "--tflops-8bit", "from 0.1 to 1,000,000 TFLOP/s"),
        (["--memory-gb", "0", "--gpu", "h100-sxm"], "--memory-gb", "from 0.1 to 100,000 GB"),
        (["--memory-gb", "inf"], "--memory-gb", "from 0.1 to 100,000 GB"),
        (["--params-b", "0"], "--params-b", "from 0.001 to 100,000 billion parameters"),
        (["--params-b", "abc"], "--params-b", "from 0.001 to 100,000 billion parameters"),
        (["--active-params-b", "9", "--model", "llama-3.1-8b"], "--active-params-b", "to 8.03 billion parameters"),
        (["--weight-bits", "9" * 400], "--weight-bits", "from 1 to 32 bits"),
        (["--model", "llama-3.1-8b", "--head-dim", "0"], "--head-dim", "from 1 to 10,000"),
        (["--gpu", "h900"], "--gpu", "a preset id (closest: h200)"),
        (["--gpu", ""], "--gpu", "a preset id (such as toy-gpu)"),
        (["--model", "gpt-9"], "--model", "a preset id (such as toy-7b)"),
        (["--layers", "32"], "--layers", "together"),
        (["--step-overhead-ms", "50000"], "--step-overhead-ms", "from 0 to 10,000 ms"),
    ],
)
def test_bad_values_exit_2_with_one_line_naming_the_option(capsys, argv, option, range_text):
    code, out, err = run_cli(capsys, "estimate", *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1, err  # one line, no usage dump, no traceback
    assert option in err and range_text in err
    assert len(err) < 200  # a 400-digit value is not echoed back whole


def test_unknown_option_and_subcommand_exit_2(capsys):
    assert run_cli(capsys, "estimate", "--gpu-count", "2")[0] == 2
    assert run_cli(capsys, "deploy")[0] == 2  # not a subcommand (serve and plan are)
    code, _, err = run_cli(capsys, "lab", "--predict", "0", "1", "1", "1")
    assert code == 2 and "--predict" in err
    # Which guesses and in what units, not argparse's "invalid float value: 'a'".
    # 5e-324 divided the verdict by zero (a traceback); 1e-300 printed a 300-digit "x too LOW".
    for bad in ("a", "nan", "inf", "-4", "5e-324", "1e-300", "1e300"):
        code, _, err = run_cli(capsys, "lab", "--predict", "7", "3", "1", bad)
        assert code == 2 and err.strip().endswith(
            "argument --predict: each of P1-P4 must be a number from 0.000001 to 1,000,000,000 "
            f"(ms, x, FLOP/byte, x), got {bad!r}"
        )
    # The ends of the range are guesses too: 1e-6 ms against 7 ms is 7,000,000x too low, said in a line.
    code, out, _ = run_cli(capsys, "lab", "--predict", "0.000001", "1e9", "1", "1")
    assert code == 0 and "7000000.0x too LOW" in out and "6666666.7x too HIGH" in out


def test_lab_prints_the_reference_numbers(capsys):
    code, out, _ = run_cli(capsys, "lab")
    assert code == 0
    for number in (
        "23.33 ms",
        "7.00 ms",
        "5621.7 ms",
        "6.999 ms",
        "24.31 ms",
        "3500.00 ms",
        "150x",
        "0.047 ms",
        "99.3%",
        "21,429 tok/s",
        "14.000 ms",
        "361.5 ms",
        "3514.9 ms",
        "$0.000175",
        "$0.000850",
        "9.7x",
        "4.9x",
        "$525",
        "$2,550",
    ):
        assert number in out, number


def test_presets_lists_every_preset_with_its_numbers(capsys):
    from core.presets import gpu_presets, model_presets

    code, out, _ = run_cli(capsys, "presets")
    assert code == 0
    for preset_id in [*gpu_presets(), *model_presets()]:
        assert preset_id in out
    assert "3,350" in out and "989.5" in out  # H100 SXM bandwidth and dense 16-bit TFLOP/s
    # The bits each model ships in, last on its row: DeepSeek-V3's FP8, gpt-oss-120b's bf16 and MXFP4 experts.
    rows = {line.split()[0]: line.split()[-1] for line in out.splitlines() if line.startswith("  ")}
    assert (rows["deepseek-v3"], rows["gpt-oss-120b"], rows["llama-3.1-8b"]) == ("8", "16/4.25", "16")


def test_estimate_serves_a_model_as_it_ships_unless_told(capsys):
    # DeepSeek-V3 on 8 × H200: FP8 weights and maths without --weight-bits; 16 bits only when asked.
    code, out, _ = run_cli(capsys, "estimate", "--model", "deepseek-v3", "--gpu", "h200", "--gpus", "8", "--json")
    assert code == 0 and json.loads(out)["scenario"]["model"] == "deepseek-v3"
    assert json.loads(out)["scenario"]["wbits"] == "8"  # the full form writes the width it resolved
    code, out, _ = run_cli(capsys, "estimate", "--model", "deepseek-v3", "--gpu", "h200", "--gpus", "8")
    assert "weights 8-bit (maths 8-bit)" in out.splitlines()[0]
    code, out, _ = run_cli(
        capsys, "estimate", "--model", "deepseek-v3", "--gpu", "h200", "--gpus", "8", "--weight-bits", "16"
    )
    assert "weights 16-bit (maths 16-bit)" in out.splitlines()[0]


def test_python_dash_m_core_as_a_process():
    """The real entry point: exit codes and no traceback from a separate interpreter."""
    ok = subprocess.run([sys.executable, "-m", "core", "estimate", "--json"], capture_output=True, text=True)
    assert ok.returncode == 0 and json.loads(ok.stdout)["tpot_ms"] == pytest.approx(7.0)
    bad = subprocess.run([sys.executable, "-m", "core", "estimate", "--batch", "-1"], capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "--batch" in bad.stderr


def test_calibrate_load_prints_every_split_per_slice(capsys):
    # The held-out errors of the load model, from the frozen fits (instant; --fit refits).
    code, out, _ = run_cli(capsys, "calibrate", "--load")
    assert code == 0
    for split in ("gpu", "gpu-reverse", "engine", "engine-reverse"):
        assert f'split "{split}"' in out
    assert out.count("meets both targets") == 3 and out.count("misses a target") == 1
    # The first split's overall row: 264 B200 rows judged, TPOT 10.5 %, TTFT 17.6 %.
    assert "  all          all              264       10.5%       17.6%" in out
    assert "tp           TP8" in out and "precision    nvfp4" in out
    assert "vllm: MBU 0.73, MFU 0.50" in out and "per stream 820 us" in out


def _bundled(name: str) -> str:
    """A data file shipped in core/data, as text."""
    return resources.files("core").joinpath("data", name).read_text(encoding="utf-8")


def _copied(tmp_path, text: str) -> str:
    """`text` as a user's own file: its path."""
    mine = tmp_path / "mine.csv"
    mine.write_text(text, encoding="utf-8")
    return str(mine)


def test_calibrate_on_your_own_measured_servers(capsys, tmp_path):
    # --serving-file: the shipped profiles judged on any file in the bundled schema. On the bundled rows
    # themselves it gives the in-sample line of `calibrate --load` (441 rows, TPOT 7.4 %, TTFT 11.2 %).
    bundled = _bundled("serving_llama-3.1-70b.csv")
    code, out, _ = run_cli(capsys, "calibrate", "--serving-file", _copied(tmp_path, bundled))
    assert code == 0 and "against 441 measured points" in out and "nothing is fitted on this file" in out
    assert "  all          all              441        7.4%       11.2%" in out
    # Another preset model, named as people write it, on a GPU given by its preset id: read, and sliced by model.
    header, first, *_ = bundled.splitlines()
    other = first.replace("Llama-3.1-70B", "Llama 3.1 8B").replace(",H100-SXM,", ",h100-sxm,")
    (tmp_path / "8b.csv").write_text(f"{header}\n{other}\n", encoding="utf-8")
    code, out, _ = run_cli(capsys, "calibrate", "--serving-file", str(tmp_path / "8b.csv"))
    assert code == 0 and "model        llama-3.1-8b       1" in out
    # Rows the presets cannot represent are skipped and counted by reason, the rest judged.
    gb200 = first.replace(",B200,", ",GB200,")
    tgi = first.replace(",trtllm,", ",tgi,")
    fp4_on_hopper = first.replace(",B200,", ",H100-SXM,")  # the first row is NVFP4: Blackwell's 4-bit maths
    (tmp_path / "mixed.csv").write_text("\n".join([header, first, gb200, gb200, tgi, fp4_on_hopper]), encoding="utf-8")
    code, out, _ = run_cli(capsys, "calibrate", "--serving-file", str(tmp_path / "mixed.csv"))
    assert code == 0 and "against 1 measured point in" in out
    assert "skipped 4 rows the load model cannot represent" in out
    assert "2 × gpu 'GB200' is not a preset" in out and "engine 'tgi'" in out and "nvfp4 on H100-SXM" in out
    # Names as benchmarks write them are read as presets and said so; an ambiguous GPU names its candidates.
    hub = first.replace("Llama-3.1-70B", "meta-llama/Llama-3.1-70B-Instruct").replace(",B200,", ",NVIDIA B200,")
    trt = hub.replace(",trtllm,", ",TensorRT-LLM,")
    h100 = first.replace(",B200,", ",H100,")
    unknown = first.replace("Llama-3.1-70B", "Llama-3.2-70B")  # no such model: the presets of its size are named
    (tmp_path / "names.csv").write_text("\n".join([header, first, hub, trt, h100, unknown]), encoding="utf-8")
    code, out, _ = run_cli(capsys, "calibrate", "--serving-file", str(tmp_path / "names.csv"))
    assert code == 0 and "against 3 measured points" in out
    assert (
        "1 × model 'Llama-3.2-70B' is not a preset (presets of its size: llama-2-70b, llama-3.1-70b, llama-3.3-70b)"
        in out
    )
    assert "names read as presets" in out and "2 × model 'meta-llama/Llama-3.1-70B-Instruct' as llama-3.1-70b" in out
    assert (
        "2 × gpu 'NVIDIA B200' as b200" in out and "1 × gpu 'H100' is not a preset: write h100-sxm or h100-pcie" in out
    )
    # A GPU named in a 5,000-character cell is read (its preset's words are in it) but never echoed whole:
    # the slice table cuts it to 30 characters, the names read to 40.
    pasted = first.replace(",B200,", ",NVIDIA B200 " + "x" * 5000 + ",")
    (tmp_path / "pasted.csv").write_text("\n".join([header, pasted]), encoding="utf-8")
    code, out, _ = run_cli(capsys, "calibrate", "--serving-file", str(tmp_path / "pasted.csv"))
    (table,) = [line for line in out.splitlines() if line.startswith("  gpu ")]
    assert code == 0 and table.startswith("  gpu          NVIDIA B200 " + "x" * 17 + "… ")
    assert max(len(line) for line in out.splitlines()[1:]) < 200
    # A row without a finite estimate is a miss, said in words with its reason: its slices read ∞,
    # not "inf%". Llama 3.1 405B in fp8 on one H100 (405 GB of weights on 80 GB) does not fit; the
    # first row (70B NVFP4 on 2 × B200, which fits) as an open loop at 500 requests a second arrives far
    # faster than a replica serves it: at 8 in flight each 1,024-token reply takes 0.23 s + 1,024 × 8.9 ms,
    # so it serves 8 ÷ 9.35 s ≈ 0.9 a second, and no concurrency that fits comes near 500.
    row = {**dict(zip(header.split(","), first.split(","), strict=True)), "request_rate": "", "ttft_stat": "mean"}
    big = {**row, "model": "Llama 3.1 405B", "weights": "fp8", "weight_bits": "8", "gpu": "H100-SXM", "tp": "1"}
    flood = {**row, "concurrency": "", "request_rate": "500"}
    (tmp_path / "big.csv").write_text(
        "\n".join([",".join(big), ",".join(big.values()), ",".join(flood.values())]) + "\n", encoding="utf-8"
    )
    code, out, _ = run_cli(capsys, "calibrate", "--serving-file", str(tmp_path / "big.csv"))
    assert code == 0 and "  model        llama-3.1-405b     1           ∞           ∞" in out and "inf" not in out
    assert "1 row cannot run as measured: the weights and one request's KV cache do not fit" in out
    assert "  llama-3.1-405b fp8 on 1 x H100-SXM, trtllm, 1024/1024, C8" in out
    assert "1 row arrive faster than the replica serves them" in out
    assert "  llama-3.1-70b nvfp4 on 2 x B200, trtllm, 1024/1024, 500 req/s" in out


H = "model,weights,gpu,tp,engine,isl,osl,concurrency,ttft_ms,tpot_ms\n"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("model,weights\nfoo,fp8\n", "line 2: no 'engine' column"),
        (
            "model,weights,gpu,tp,engine,isl,osl,concurrency,ttft_ms,tpot_ms\nLlama-3.1-8B,fp8,H100-SXM,one,vllm,1,1,1,1,1\n",
            "line 2: tp must be a whole number ≥ 1, got 'one'",
        ),
        # A zero time divided the error by zero, a NaN printed 'nan%', an infinite one was accepted.
        (f"{H}Llama-3.1-8B,fp8,H100-SXM,1,vllm,1,1,1,1,0\n", "line 2: tpot_ms must be a number above 0, got '0'"),
        (f"{H}Llama-3.1-8B,fp8,H100-SXM,1,vllm,1,1,1,nan,1\n", "line 2: ttft_ms must be a number above 0, got 'nan'"),
        (f"{H}Llama-3.1-8B,fp8,H100-SXM,1,vllm,1,1,1,1,-5\n", "line 2: tpot_ms must be a number above 0, got '-5'"),
        (f"{H}Llama-3.1-8B,fp8,H100-SXM,1,vllm,1,1,inf,1,1\n", "line 2: concurrency must be a whole number ≥ 1"),
        (f"{H}Llama-3.1-8B,fp8\n", "line 2: its cells do not match the header's 10 columns"),
        (f"{H}Llama-3.1-8B,fp8,H100-SXM,1,vllm,1,1,1,1,1,extra\n", "line 2: its cells do not match"),
        (H + '"' + "x" * 200_000 + '"\n', "line 2: field larger than field limit"),
        # The weights' name sets the bits; a contradicting weight_bits cell was ignored without a word.
        (
            "model,weights,weight_bits,gpu,tp,engine,isl,osl,concurrency,ttft_ms,tpot_ms\n"
            "Llama-3.1-8B,nvfp4,7,B200,1,trtllm,1,1,1,1,1\n",
            "line 2: weight_bits 7 contradicts weights nvfp4 (4.5 bits with scales)",
        ),
        (
            "model,weights,gpu,tp,engine,isl,osl,concurrency,ttft_ms,tpot_ms\nGPT-9,fp8,H100-SXM,1,vllm,1,1,1,1,1\n",
            "no row the load model can represent: model 'GPT-9' is not a preset (1 rows)",
        ),
        ("model,weights,gpu,tp,engine,isl,osl,concurrency,ttft_ms,tpot_ms\n", "no row the load model can represent"),
        (
            "model,weights,gpu,tp,engine,isl,osl,concurrency,request_rate,ttft_ms,tpot_ms\n"
            "Llama-3.1-8B,bf16,H100-SXM,1,vllm,100,100,,,1,1\n",
            "line 2: a concurrency (closed loop) or a request_rate (open loop) is needed",
        ),
        (
            "model,weights,gpu,tp,engine,isl,osl,concurrency,request_rate,ttft_ms,tpot_ms\n"
            "Llama-3.1-8B,bf16,H100-SXM,1,vllm,100,100,,0,1,1\n",
            "line 2: request_rate must be a positive number of requests per second, got '0'",
        ),
        # A length of 1e30 was echoed as 1000000000000000019884624838656; a rate beside num_prompts was dropped.
        (
            f"{H}Llama-3.1-8B,fp8,H100-SXM,1,vllm,1e30,1,1,1,1\n",
            "line 2: isl must be a whole number from 1 to 1,000,000,000",
        ),
        (
            "model,weights,gpu,tp,engine,isl,osl,concurrency,request_rate,num_prompts,ttft_ms,tpot_ms\n"
            "Llama-3.1-8B,bf16,H100-SXM,1,vllm,100,100,,2,10,1,1\n",
            "line 2: num_prompts must be empty with a request_rate",
        ),
        (
            "model,weights,gpu,tp,engine,isl,osl,concurrency,request_rate,ttft_ms,tpot_ms\n"
            "Llama-3.1-8B,bf16,H100-SXM,1,vllm,100,100,,1e-9,1,1\n",
            "line 2: request_rate must be from 0.0001 to 1,000,000 requests/s, got '1e-9'",
        ),
        # A length past the load model's stopped the file outside its line's check, under the field's name.
        (
            f"{H}Llama-3.1-8B,fp8,H100-SXM,1,vllm,10000001,1,1,1,1\n",
            "line 2: isl must be a whole number from 1 to 10,000,000, got 10,000,001",
        ),
        # Python's "could not convert string to float: 'abc'" named no column; a p99 TTFT was judged as a mean.
        (
            "model,weights,gpu,tp,engine,isl,osl,concurrency,request_rate,ttft_ms,tpot_ms\n"
            "Llama-3.1-8B,bf16,H100-SXM,1,vllm,100,100,,abc,1,1\n",
            "line 2: request_rate must be a positive number of requests per second, got 'abc'",
        ),
        (
            f"{H[:-1]},length_low_fraction\nLlama-3.1-8B,fp8,H100-SXM,1,vllm,1,1,1,1,1,x\n",
            "line 2: length_low_fraction must be between 0.05 and 1 (1: fixed lengths), got 'x'",
        ),
        (
            f"{H[:-1]},ttft_stat\nLlama-3.1-8B,fp8,H100-SXM,1,vllm,1,1,1,1,1,p99\n",
            "line 2: ttft_stat must be mean or median (p50), got 'p99'",
        ),
        # Engines split attention by head: tp=3 for Llama 3.1 8B's 32 query heads was modelled, run by none.
        (
            f"{H}Llama-3.1-8B,fp8,H100-SXM,3,vllm,1,1,1,1,1\n",
            "line 2: tp 3: 3 GPUs cannot split the model's 32 query heads evenly: no engine runs it",
        ),
        # An empty model cell was read as Llama 3.1 70B without a word.
        (f"{H},fp8,H100-SXM,1,vllm,1,1,1,1,1\n", "line 2: model is empty: give the model's name"),
        # An escape sequence in a GPU's name recoloured the terminal when the report printed it.
        (f"{H}Llama-3.1-8B,fp8,B200\x1b[31mRED,1,trtllm,1,1,1,1,1\n", "line 2: gpu holds a control character"),
    ],
)
def test_a_bad_serving_file_exits_2_naming_the_option_and_the_line(capsys, tmp_path, text, says):
    bad = tmp_path / "bad.csv"
    bad.write_text(text, encoding="utf-8")
    code, out, err = run_cli(capsys, "calibrate", "--serving-file", str(bad))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "--serving-file" in err and says in err
    code, _, err = run_cli(capsys, "calibrate", "--serving-file", str(tmp_path / "missing.csv"))
    assert code == 2 and "cannot be read: no such file" in err


@pytest.mark.parametrize("option", ["--serving-file", "--measurements-file"])
def test_a_path_that_is_no_file_is_said_in_words(capsys, tmp_path, option):
    # An empty path read as the current folder: "cannot be read (IsADirectoryError)".
    code, out, err = run_cli(capsys, "calibrate", option, "")
    assert (code, out) == (2, "") and f"argument {option}: no file named: give a CSV file's path" in err
    code, _, err = run_cli(capsys, "calibrate", option, str(tmp_path))
    assert code == 2 and " cannot be read: a folder, not a file" in err  # the long path itself is cut
    # A file without end was read whole, until the run was killed: at most 64 MB are read.
    code, _, err = run_cli(capsys, "calibrate", option, "/dev/zero")
    assert code == 2 and "/dev/zero: cannot be read: larger than 64 MB" in err


def test_calibrate_on_your_own_published_measurements(capsys, tmp_path):
    # --measurements-file: the shipped profiles judged on any file in the measurements' schema. The
    # bundled test set through it prints what `--set test` prints for it: 97 rows, 22.1 % overall.
    code, out, _ = run_cli(
        capsys, "calibrate", "--measurements-file", _copied(tmp_path, _bundled("measurements_test.csv"))
    )
    assert code == 0 and "This file: 97 measurements, 8 sources" in out and "Nothing is fitted on this file" in out
    assert "  all     all                       97        8           22.1%" in out


@pytest.mark.parametrize(
    ("text", "says"),
    [
        # 37 columns, 2 given: 35 missing, 3 named and 32 more.
        ("model,metric\nfoo,tpot_ms\n", "lacks the columns source_id, model_id, params_b and 32 more"),
        (
            lambda rows: (
                rows[0] + "\n" + rows[1].replace(",tpot_ms,", ",speed,").replace(",output_tokens_per_s,", ",speed,")
            ),
            "line 2: unknown metric 'speed'",
        ),
        (lambda rows: rows[0] + "\n", "has no rows"),
        (b"\xff\xfe", "cannot be read: not UTF-8 text (save it as UTF-8 CSV)"),
        # A zero divided the error by zero, an infinite datasheet figure overflowed, a NaN printed 'nan%'.
        (lambda rows: _with(rows, "value", "0"), "line 2: value must be a number above 0, got '0'"),
        (lambda rows: _with(rows, "value", "nan"), "line 2: value must be a number above 0, got 'nan'"),
        (lambda rows: _with(rows, "bandwidth_gb_s", "1e400"), "line 2: bandwidth_gb_s must be a number above 0"),
        (lambda rows: _with(rows, "tflops_16", "inf"), "line 2: tflops_16 must be a number above 0, got 'inf'"),
        (lambda rows: _with(rows, "batch", "two"), "line 2: batch must be a whole number ≥ 1, got 'two'"),
        (lambda rows: rows[0] + "\na,b,c\n", "line 2: its cells do not match the header's 37 columns"),
        # 1e300 GB/s is finite, its bytes per second are not: round() raised OverflowError (a traceback).
        (
            lambda rows: _with(rows, "bandwidth_gb_s", "1e300"),
            "line 2: bandwidth_gb_s must be a number from 0.000001 to 1,000,000,000,000,000, got '1e300'",
        ),
        (lambda rows: _with(rows, "params_b", "1e300"), "line 2: params_b must be a number from 0.000001 to"),
        # Past core's own range a spec's check spoke SI ("memory_bytes must be >= 100,000,000"): now the
        # file's column and unit (GPU memory 1e8..1e14 bytes = 0.1..100,000 GB; 1..1,024 GPUs).
        (
            lambda rows: _with(rows, "memory_gb", "0.001"),
            "line 2: memory_gb must be >= 0.1 and <= 100,000, got '0.001'",
        ),
        (
            lambda rows: _with(rows, "tflops_16", "1e7"),
            "line 2: tflops_16 must be >= 0.1 and <= 1,000,000, got '1e7'",
        ),
        (
            lambda rows: _with(rows, "n_gpus", "5000"),
            "line 2: n_gpus must be a whole number >= 1 and <= 1,024, got '5000'",
        ),
        # The cell as written, not rounded: batch 1,000,001 had been echoed as 'got 1,000,000'.
        (
            lambda rows: _with(rows, "batch", "1000001"),
            "line 2: batch must be a whole number >= 1 and <= 1,000,000, got '1000001'",
        ),
        # A measured time of 1e-300 ms printed a 300-digit error.
        (lambda rows: _with(rows, "value", "1e-300"), "line 2: value must be a number from 0.000001 to"),
        # An escape sequence reached the terminal raw in the report ("\x1b[2J" clears it).
        (lambda rows: _with(rows, "engine", "vllm\x1b[31m"), "line 2: engine holds a control character"),
        # A header cell past the csv module's field limit: a _csv.Error traceback (the rows' were caught).
        (lambda rows: '"' + "a" * 200_000 + '"\n', "line 1: field larger than field limit"),
    ],
)
def test_a_bad_measurements_file_exits_2_naming_the_option(capsys, tmp_path, text, says):
    rows = _bundled("measurements_test.csv").splitlines()
    bad = tmp_path / "bad.csv"
    if isinstance(text, bytes):
        bad.write_bytes(text)
    else:
        bad.write_text(text(rows) if callable(text) else text, encoding="utf-8")
    code, out, err = run_cli(capsys, "calibrate", "--measurements-file", str(bad))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "--measurements-file" in err and says in err


def _with(rows: list[str], column: str, value: str) -> str:
    """The header and the first row of a measurements file, one cell replaced."""
    import csv
    import io

    header, first = next(csv.reader([rows[0]])), next(csv.reader([rows[1]]))
    first[header.index(column)] = value
    out = io.StringIO()
    csv.writer(out).writerows([header, first])
    return out.getvalue()


def test_a_measurements_file_saved_by_excel_reads(capsys, tmp_path):
    # Excel's "CSV UTF-8" starts with a byte-order mark: the file was said to lack its first column, source_id.
    rows = _bundled("measurements_test.csv")
    marked = tmp_path / "excel.csv"
    marked.write_bytes(b"\xef\xbb\xbf" + rows.encode("utf-8"))
    code, out, _ = run_cli(capsys, "calibrate", "--measurements-file", str(marked))
    assert code == 0 and "This file: 97 measurements, 8 sources" in out


@pytest.mark.parametrize("other", [["--set", "test"], ["--fit"], ["--load"], ["--serving-file", "x.csv"]])
def test_a_measurements_file_is_judged_alone(capsys, other):
    # It judges the shipped profiles on the file only: an option it would silently drop is refused.
    code, out, err = run_cli(capsys, "calibrate", "--measurements-file", "mine.csv", *other)
    assert code == 2 and out == "" and "not allowed with --set, --fit, --load or --serving-file" in err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        # Each printed the same report as without the option: --fit and --set were silently dropped.
        (["--serving-file", "x.csv", "--fit"], "argument --serving-file: not allowed with --set or --fit"),
        (["--serving-file", "x.csv", "--set", "test"], "argument --serving-file: not allowed with --set or --fit"),
        (["--load", "--set", "test"], "argument --load: not allowed with --set (its splits are by GPU and by engine)"),
    ],
)
def test_a_serving_file_and_the_load_report_refuse_what_they_would_drop(capsys, argv, says):
    code, out, err = run_cli(capsys, "calibrate", *argv)
    assert code == 2 and out == "" and says in err


# --- any argument list: exit 0, or exit 2 with one short line; never an exception ------------------


_OPTIONS = [
    action.option_strings[0]
    for action in build_parser()._subparsers._group_actions[0].choices["estimate"]._actions  # type: ignore[union-attr]
    if action.option_strings and action.option_strings[0] not in ("-h", "--help")
]
_VALUES = (
    st.sampled_from(
        [
            "abc",
            "",
            "0",
            "-1",
            "1e400",
            "1e1000000",
            "inf",
            "nan",
            "9" * 400,
            "x" * 10_000,
            "1.5",
            "8",
            "h100-sxm",
            "custom",
            "\x00",
        ]
    )
    | st.text(max_size=20)
    | st.integers(-(10**30), 10**30).map(str)
    | st.floats().map(repr)
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_OPTIONS), _VALUES), max_size=6), st.booleans())
def test_any_argument_list_exits_0_or_2_with_one_short_line(pairs, as_json):
    import contextlib
    import io

    argv = ["estimate", *[item for option, value in pairs for item in (option, value)]]
    argv += ["--json"] if as_json else []
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as stop:
            code = stop.code
    if code == 0:
        assert out.getvalue() and not err.getvalue()
        if as_json:
            json.loads(out.getvalue())  # well-formed, numpy values included
    else:
        assert code == 2, (argv, code)
        message = err.getvalue()
        assert message.count("\n") == 1 and len(message) < 200, (argv, message)
        assert "Traceback" not in message


def test_the_launches_overlap_switch_takes_true_or_false(capsys):
    # Llama 3.1 8B on one H100, typical engine: with the switch on, its 32 × 30 µs of launches are the
    # host's and hide behind the 5.45 ms of reading: TPOT = reading + 68 µs per sequence, 0.96 ms less.
    code, on, _ = run_cli(capsys, "estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--engine", "typical",
                          "--launches-overlap", "true", "--json")  # fmt: skip
    assert code == 0
    code, off, _ = run_cli(capsys, "estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--engine", "typical",
                           "--json")  # fmt: skip
    assert code == 0
    assert json.loads(off)["tpot_ms"] - json.loads(on)["tpot_ms"] == pytest.approx(32 * 0.030, rel=1e-9)
    # 1/0, yes/no, on/off are switches as people type them; anything else is refused naming the words.
    assert run_cli(capsys, "estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--engine", "typical",
                   "--launches-overlap", "1", "--json")[1] == on  # fmt: skip
    code, out, err = run_cli(capsys, "estimate", "--launches-overlap", "maybe")
    assert (code, out) == (2, "") and len(err.strip().splitlines()) == 1
    assert "--launches-overlap must be true or false (or 1/0, yes/no, on/off), got 'maybe'" in err


def test_a_host_bound_reply_says_so_in_text_and_json(capsys):
    # Llama 3.1 8B on one H100 under HF transformers: every step waits on 32 × 1.17 = 37.44 ms of host
    # launches; the GPU's own step is memory-bound. The typical engine has no host floor: 0, false.
    args = ("estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--engine", "hf-transformers")
    code, out, _ = run_cli(capsys, *args)
    assert code == 0
    assert "37.44 ms   host-bound (every step waits on the host's launches; the GPU alone memory-bound)" in out
    code, out, _ = run_cli(capsys, *args, "--json")
    data = json.loads(out)
    assert (data["decode_host_bound"], data["decode_bound"]) == (True, "memory")
    assert data["host_ms_per_step"] == pytest.approx(37.44, rel=1e-12)
    code, out, _ = run_cli(capsys, "estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--json")
    assert (json.loads(out)["decode_host_bound"], json.loads(out)["host_ms_per_step"]) == (False, 0.0)


@pytest.mark.parametrize("flag", ["--mname", "--gname"])
def test_a_bad_name_is_refused_under_the_flag_typed(capsys, flag):
    # A model's and a GPU's names are both the field `name`: the message named --gname for either.
    code, out, err = run_cli(capsys, "estimate", flag, "x" * 61)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert f"argument {flag}: name must be non-empty printable text of at most 60 characters" in err


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        # The message names several fields; the one typed leads (it named --kv-latent-dim, and --layers).
        (["--model", "custom", "--sliding-window", "4096"], "--sliding-window"),
        (["--model", "custom", "--kv-latent-dim", "512"], "--kv-latent-dim"),
        (["--model", "llama-3.1-8b", "--head-dim", ""], "--head-dim"),
        (["--model", "custom", "--layers", "32"], "--layers"),
    ],
)
def test_a_rule_between_fields_is_refused_under_the_flag_typed(capsys, argv, flag):
    code, out, err = run_cli(capsys, "estimate", *argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert f"error: argument {flag}: " in err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        # Two options for one value: the second was silently dropped.
        (
            ["estimate", "--tflops", "100", "--tflops-16bit", "200"],
            "argument --tflops: it sets both peaks; give it or --tflops-16bit, not both",
        ),
        (
            ["estimate", "--ideal", "--engine", "vllm"],
            "argument --ideal: it means --engine ideal; give it or --engine vllm, not both",
        ),
        # ',,,' read as "every GPU": only a blank list is empty.
        (
            ["plan", "--candidate-gpus", ",,,"],
            "argument --candidate-gpus must be a comma-separated list of the 18 ids such as",
        ),
        (["plan", "--candidate-gpus", "h100-sxm,,h200"], "got 'h100-sxm,,h200'"),
        # A list of choices is whole on the one line (it was cut before mlx and after fresh8).
        (
            ["estimate", "--engine", ""],
            "argument --engine: '' is not one of auto, ideal, typical, vllm, trtllm, sglang, llama.cpp, llama.cpp-metal, llama.cpp-radeon, mlx, hf-transformers\n",
        ),
        # A typed bound under a value kept from the preset names the option typed, in its unit (it named
        # --kv-heads, and --active-params-b in parameters).
        (
            ["estimate", "--model", "llama-3.1-8b", "--query-heads", "7"],
            "argument --query-heads must be at least 8 (--kv-heads), got '7'",
        ),
        (
            ["estimate", "--model", "mixtral-8x7b", "--params-b", "12"],
            "argument --params-b must be at least 12.88 billion parameters (--active-params-b), got '12'",
        ),
        # A bound of two fields names both flags: cache writes ≤ prompt − cached.
        (
            ["estimate", "--cached-tokens", "150", "--cache-write-tokens", "100"],
            "from 0 to 50 tokens (--prompt-tokens, --cached-tokens), got '100'",
        ),
        # A bound named after another field says that field's flag, not its link key "(qheads)".
        (["estimate", "--model", "llama-3.1-8b", "--kv-heads", "64"], "from 1 to 32 (--query-heads), got '64'"),
        (
            ["calibrate", "--set", "x"],
            "argument --set: 'x' is not one of fit, validation, test, fresh, fresh2 to fresh29\n",
        ),
    ],
)
def test_conflicting_or_garbled_options_exit_2_saying_so(capsys, argv, says):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and len(err) < 200
    assert says in err


@pytest.mark.parametrize("option", ["--batch", "--params-b", "--bandwidth-gb-s", "--prompt-tokens"])
def test_a_number_past_decimals_own_limit_is_out_of_range_not_a_traceback(capsys, option):
    # 1e1000000 is past Decimal's default exponent limit (999,999): the unit conversion raised decimal.Overflow.
    code, out, err = run_cli(capsys, "estimate", "--model", "custom", option, "1e1000000")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert f"argument {option} must be " in err and "got '1e1000000'" in err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        # argparse keeps the last of two: `--batch 2 --batch 3` ran batch 3 without a word.
        (["estimate", "--batch", "2", "--batch", "3"], "argument --batch: given twice; give it once"),
        (["estimate", "--batch=2", "--batch", "3"], "argument --batch: given twice; give it once"),
        (["estimate", "--engine", "vllm", "--eff", "sglang"], "argument --eff: given twice (also as --engine)"),
        (["serve", "--concurrency", "4", "--concurrency", "8"], "argument --concurrency: given twice"),
        # An abbreviation is not an option: --prompt was --prompt-tokens until an option --prompt-x came along.
        (["estimate", "--prompt", "5"], "unrecognized arguments: --prompt 5"),
    ],
)
def test_an_option_given_twice_or_abbreviated_is_refused(capsys, argv, says):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert says in err


def test_options_meant_to_repeat_still_do(capsys):
    code, out, _ = run_cli(capsys, "calibrate", "--set", "fit", "--set", "test")  # --set is an append option
    assert code == 0 and "fit set" in out and "test set" in out
    assert run_cli(capsys, "estimate", "--json", "--json")[0] == 0  # a flag twice is still on


def test_the_estimate_header_says_the_maths_precision(capsys):
    # NVFP4 on a B200: 4.5 bits stored (scales included), 4-bit maths; the header showed only the 4.5.
    _, out, _ = run_cli(capsys, "estimate", "--gpu", "b200", "--weight-bits", "4.5", "--compute-bits", "4")
    assert ", weights 4.5-bit (maths 4-bit), KV 16-bit, " in out.splitlines()[0]
    _, out, _ = run_cli(capsys, "estimate", "--gpu", "h100-sxm", "--weight-bits", "8")
    assert ", weights 8-bit (maths 8-bit), " in out.splitlines()[0]  # the default for 8-bit weights: W8A8


def test_the_same_value_twice_is_not_a_conflict(capsys):
    code, out, _ = run_cli(capsys, "estimate", "--ideal", "--engine", "ideal", "--json")
    # The lesson's toy: 14 GB of weights read per token at 2 TB/s = 7 ms, ideal physics.
    assert code == 0 and json.loads(out)["tpot_ms"] == pytest.approx(7.0, rel=1e-12)


def test_more_experts_per_token_than_the_active_share_holds_is_said_in_billions(capsys):
    # Mixtral 8x7B: 46.70 B total, 12.88 B active; 7 of 8 experts per token would need at least
    # 46.70 × 7 / 8 = 40.86 B active. Said in billions, as --active-params-b takes them.
    code, _, err = run_cli(capsys, "estimate", "--model", "mixtral-8x7b", "--experts-per-token", "7")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "= 40.86 billion (7 routed experts), got 12.88 billion" in err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        # A rule across fields named them as fields ("active_params", "experts_per_token", "weight_bits"): now
        # the flags that fix it. Mixtral with 3 experts, 2 a token: active ≥ 46.70 × 2 ÷ 3 = 31.13 billion.
        (
            ["--model", "mixtral-8x7b", "--experts", "3"],
            "--active-params-b must be ≥ total × --experts-per-token ÷ experts = 31.13 billion (2 routed experts)",
        ),
        (
            ["--model", "llama-3.1-8b", "--experts", "8", "--experts-per-token", "2"],
            "--active-params-b must be below --params-b (8.03 billion) for a mixture of experts",
        ),
        (["--compute-bits", "4", "--gpu", "b200"], "--compute-bits 4 multiplies 4-bit weights: set --weight-bits to 4"),
    ],
)
def test_a_rule_across_fields_names_the_flags(capsys, argv, says):
    code, _, err = run_cli(capsys, "estimate", *argv)
    assert code == 2 and says in err and "_" not in err.split("error: ", 1)[1]
