"""`python -m core serve` and `plan`: the JSON keys scripts depend on, the numbers behind them,
the text, and bad input (exit 2, one line naming the option and what it allows)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from core.cli.plan_report import CANDIDATE_KEYS
from core.cli.serve_report import JSON_KEYS
from core.closed_loop import closed_loop
from core.lengths import RequestLengths
from core.one_wave import one_wave
from core.scenario import Scenario
from tests.core.test_cli import run_cli

LLAMA_70B = ("--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--gpus", "2", "--weight-bits", "8")
PLAN_70B = ("plan", "--model", "llama-3.1-70b", "--replies-per-day", "2000000", "--engine", "vllm")
# The lesson's toy GPU has no price, by design (it is not a product).
PLAN_SMALL = (
    *PLAN_70B,
    "--candidate-gpus",
    "h100-sxm,l4,toy-gpu",
    "--tensor-parallel",
    "1,4",
    "--weight-precisions",
    "8",
)


def test_serve_at_one_request_is_estimate(capsys) -> None:
    # The lesson's toy, one request in flight: TTFT 2 × 7e9 × 200 / 300e12 = 9.33 ms, TPOT 14e9 / 2e12 = 7 ms,
    # end to end 9.33 + 500 × 7 = 3,509.33 ms; one request every 3.509 s: 500 / 3.50933 = 142.48 tokens/s.
    code, out, _ = run_cli(capsys, "serve", "--json")
    data = json.loads(out)
    assert code == 0 and set(JSON_KEYS) <= set(data)
    assert (data["mode"], data["latencies_are"], data["concurrency"]) == ("closed loop", "means over requests", 1)
    assert data["ttft_ms"] == pytest.approx(28 / 3, rel=1e-9)
    # Closed loop: the percentile keys carry the mean (benchmarks report means).
    assert data["ttft_p50_ms"] == data["ttft_p95_ms"] == data["ttft_p99_ms"] == data["ttft_ms"]
    assert data["tpot_ms"] == pytest.approx(7.0) and data["tokens_per_s_per_user"] == pytest.approx(1000 / 7)
    assert data["e2e_ms"] == pytest.approx(3509 + 1 / 3, rel=1e-9)
    assert data["output_tokens_per_s_per_gpu"] == pytest.approx(500 / 3.5093333, rel=1e-6)
    assert data["total_tokens_per_s_per_gpu"] == pytest.approx(700 / 3.5093333, rel=1e-6)
    # No KV cache in the toy: the engine's sequence limit (1,024) caps the concurrency.
    assert data["max_concurrency_that_fits"] == 1024 and data["load"] == {
        "conc": "",
        "rate": "",
        "prompts": "",
        "lenlow": "1",
    }


def test_serve_closed_loop_obeys_littles_law(capsys) -> None:
    code, out, _ = run_cli(capsys, "serve", *LLAMA_70B, "--engine", "vllm", "--concurrency", "32", "--json")
    data = json.loads(out)
    assert code == 0 and data["engine"] == "vllm"
    # 32 in flight = requests per second × end-to-end seconds; per GPU: rate × 500 tokens / 2 GPUs.
    assert data["requests_per_s"] * data["e2e_ms"] / 1000 == pytest.approx(32, rel=1e-9)
    assert data["output_tokens_per_s_per_gpu"] == pytest.approx(data["requests_per_s"] * 500 / 2)
    assert data["tokens_per_s_per_user"] == pytest.approx(1000 / data["tpot_ms"])


def test_serve_runs_the_benchmark_as_sent_when_told_how_many_requests(capsys) -> None:
    # --num-prompts C at a concurrency of C: one wave (core.one_wave), every request sent at once and
    # none replaced; 10 x C: the steady state with the benchmark's start (1/10 of TTFTs behind a burst).
    argv = ("serve", *LLAMA_70B, "--engine", "vllm", "--prompt-tokens", "4096", "--output-tokens", "128")
    runs = {}
    for prompts in ("", "64", "640"):
        given = ("--num-prompts", prompts) if prompts else ()
        code, out, _ = run_cli(capsys, *argv, "--concurrency", "64", *given, "--json")
        assert code == 0
        runs[prompts] = json.loads(out)
    replica, lengths = Scenario.from_flat(runs[""]["scenario"]).replica(), RequestLengths(4096, 128)
    wave = one_wave(replica, lengths, 64)
    assert runs["64"]["tpot_ms"] == pytest.approx(wave.tpot_s * 1e3) and runs["64"]["num_prompts"] == 64
    assert runs["64"]["ttft_ms"] == pytest.approx(wave.ttft_s * 1e3)
    started = closed_loop(replica, lengths, 64, 10)
    assert (
        runs["640"]["ttft_ms"] == pytest.approx(started.ttft_s * 1e3) and runs["640"]["tpot_ms"] == runs[""]["tpot_ms"]
    )
    # Without replacement prefills the wave's replies stream faster than the steady state's.
    assert runs["64"]["tpot_ms"] < runs[""]["tpot_ms"]
    _, text, _ = run_cli(capsys, *argv, "--concurrency", "64", "--num-prompts", "64")
    assert "one wave: all sent at once, none replaced" in text


def test_serve_open_loop_has_percentiles_and_says_when_it_saturates(capsys) -> None:
    argv = ("serve", *LLAMA_70B, "--engine", "vllm", "--length-low-fraction", "0.8")
    code, out, _ = run_cli(capsys, *argv, "--request-rate", "2", "--json")
    data = json.loads(out)
    assert code == 0 and data["mode"] == "open loop" and data["request_rate_per_s"] == 2
    assert data["ttft_p50_ms"] <= data["ttft_p90_ms"] <= data["ttft_p95_ms"] <= data["ttft_p99_ms"]
    assert data["utilisation"] == pytest.approx(2 / data["capacity_requests_per_s"])
    assert data["mean_in_flight"] == pytest.approx(2 * data["e2e_ms"] / 1000)
    # Far past capacity the queue never empties: latencies are null (JSON has no infinity), still exit 0.
    code, out, _ = run_cli(capsys, *argv, "--request-rate", "1000", "--json")
    data = json.loads(out)
    assert code == 0 and data["ttft_p95_ms"] is None and data["tokens_per_s_per_user"] is None
    # ... while the server still emits at its capacity (it read 0 tokens/s): capacity × the mean reply ÷ GPUs,
    # the reply drawn at 80-100 % of its length (a mean of 0.9 of it).
    capacity, gpus = data["capacity_requests_per_s"], data["gpu_count"]
    assert data["output_tokens_per_s_per_gpu"] == pytest.approx(
        capacity * float(data["scenario"]["out"]) * 0.9 / gpus, rel=1e-9
    )
    _, out, _ = run_cli(capsys, *argv, "--request-rate", "1000")
    assert "the queue grows without end" in out and "what the server emits at its capacity" in out


def test_serve_text(capsys) -> None:
    code, out, _ = run_cli(capsys, "serve", *LLAMA_70B, "--engine", "vllm", "--concurrency", "32")
    assert code == 0
    assert "closed loop: 32 requests in flight" in out and "tokens/s per user" in out and "per GPU" in out
    _, out, _ = run_cli(capsys, "serve", *LLAMA_70B, "--request-rate", "1.5")
    assert "open loop: 1.500 requests/s" in out and "TTFT p50/p90/p95/p99" in out


def test_plan_json(capsys) -> None:
    code, out, _ = run_cli(capsys, *PLAN_SMALL, "--json")
    data = json.loads(out)
    assert code == 0
    # 3 GPUs × 2 sizes × 1 precision = 6 candidates, every one in one list or the other.
    assert len(data["candidates"]) + len(data["failures"]) == 6
    for row in data["candidates"] + data["failures"]:
        assert set(CANDIDATE_KEYS) <= set(row) and "frontier" not in row
    best = data["candidates"][0]
    assert best["problem"] is None and best["ttft_p95_ms"] <= 1000 and best["tokens_per_s_per_user"] >= 30
    assert best["monthly_cost_autoscaled_usd"] <= best["monthly_cost_peak_usd"]
    problems = {(row["gpu"], row["gpus_per_replica"]): row["problem"] for row in data["failures"]}
    assert problems[("h100-sxm", 1)] == "does not fit" and problems[("toy-gpu", 4)] == "no price"
    # The lesson's prices: 200 × $0.50 + 500 × $1.50 per million = $0.00085 a reply × 2,000,000 × 30 = $51,000.
    assert data["api_monthly_usd"] == pytest.approx(51_000)
    # The verdict in words: $51,000 - $27,670 (the best fleet, following the daily curve) = $23,330; sized for
    # the peak all month the fleet is $65,318, $14,318 over the API's: that saving needs the autoscaler.
    assert data["recommendation"].endswith(
        "the API would cost $51,000: self-hosting saves $23,330 a month if it scales with the day; sized for the "
        "peak all month it costs $14,318 more than the API."
    )
    assert best["monthly_cost_peak_usd"] == pytest.approx(65_318, abs=0.5)
    # The goodput (the most a replica may take) beside the peak's share, where the latencies are: the replicas
    # carry the peak, each at most its goodput, and Little's law holds at the peak's share.
    assert best["requests_per_s_per_replica_at_peak"] * best["replicas_at_peak"] == pytest.approx(
        data["peak_requests_per_s"]
    )
    assert best["requests_per_s_per_replica_at_peak"] <= best["requests_per_s_per_replica"]
    assert best["in_flight_per_replica_at_peak"] <= best["concurrency_per_replica"]
    assert data["plan"]["cands"] == "h100-sxm,l4,toy-gpu" and data["scenario"]["replies"] == "2000000"
    _, out, _ = run_cli(capsys, *PLAN_SMALL, "--json", "--frontier")
    frontier = json.loads(out)["candidates"][0]["frontier"]
    assert frontier["concurrency"][-1] == best["max_running_per_replica"]
    assert len(frontier["tokens_per_s_per_user"]) == len(frontier["concurrency"])


def test_the_plan_says_when_the_api_is_cheaper(capsys) -> None:
    # The lesson's 100,000 replies a day bill the API $2,550 a month (200 × $0.50 + 500 × $1.50 per million ×
    # 3,000,000 replies); Llama 3.1 70B's smallest fleet here, 4 H100s around the clock, costs $10,886.
    code, out, _ = run_cli(capsys, "plan", "--model", "llama-3.1-70b", "--engine", "vllm", "--candidate-gpus",
                           "h100-sxm,l4", "--tensor-parallel", "1,4", "--weight-precisions", "8", "--json")  # fmt: skip
    assert code == 0
    assert json.loads(out)["recommendation"].endswith("the API would cost $2,550: the API is $8,336 a month cheaper.")


def test_plan_text_says_the_recommendation_in_words(capsys) -> None:
    code, out, _ = run_cli(capsys, *PLAN_SMALL)
    assert code == 0
    assert (
        "× NVIDIA H100 SXM 80GB in " in out
        and " replicas of 4 GPUs each (tensor parallel), weights in 8-bit, at up to " in out
    )
    assert "a month following the daily curve" in out and "the API would cost $51,000: self-hosting saves" in out
    assert "not ranked (" in out and "does not fit — 70.5 GB of weights exceed the 68.8 GB vLLM may use" in out


def test_serve_counts_in_words(capsys) -> None:
    _, out, _ = run_cli(capsys, "serve", "--concurrency", "1")
    assert "closed loop: 1 request in flight (" in out  # "1 requests"


def test_plan_on_ideal_physics_says_so_in_its_header(capsys) -> None:
    # --ideal runs the lesson's physics (the numbers differ), but the header said "engine: Typical engine".
    _, ideal, _ = run_cli(capsys, "plan", "--ideal")
    _, typical, _ = run_cli(capsys, "plan")
    assert "; engine: ideal physics (on the Typical engine's scheduling), KV cache 16-bit" in ideal.splitlines()[0]
    assert "; engine: Typical engine, KV cache 16-bit" in typical.splitlines()[0]


def test_a_saving_that_needs_the_autoscaler_says_so(capsys) -> None:
    # DeepSeek-V3, 2 M replies a day at gpt-4o's prices: the autoscaled fleet undercuts the API's bill, the
    # fleet sized for the peak all month does not; the verdict gives both ends, the second as their difference.
    code, out, _ = run_cli(capsys, "plan", "--model", "deepseek-v3", "--replies-per-day", "2000000", "--api-model",
                           "openai/gpt-4o", "--json")  # fmt: skip
    data = json.loads(out)
    best, api = data["candidates"][0], data["api_monthly_usd"]
    assert best["monthly_cost_autoscaled_usd"] < api < best["monthly_cost_peak_usd"]
    assert data["recommendation"].endswith(
        f"a month if it scales with the day; sized for the peak all month it costs "
        f"${best['monthly_cost_peak_usd'] - api:,.0f} more than the API."
    )


def test_plan_with_a_gpu_discount_says_so_and_bills_less(capsys) -> None:
    # --gpu-discount 40: the same fleet at 0.6× every self-hosted dollar, the frontier's too; the API unchanged.
    _, out, _ = run_cli(capsys, *PLAN_SMALL, "--json", "--frontier")
    _, cut, _ = run_cli(capsys, *PLAN_SMALL, "--json", "--frontier", "--gpu-discount", "40")
    full, off = json.loads(out)["candidates"][0], json.loads(cut)["candidates"][0]
    assert off["replicas_at_peak"] == full["replicas_at_peak"]
    assert off["monthly_cost_autoscaled_usd"] == pytest.approx(0.6 * full["monthly_cost_autoscaled_usd"])
    assert off["frontier"]["usd_per_million_output_tokens"] == pytest.approx(
        [0.6 * x for x in full["frontier"]["usd_per_million_output_tokens"]]
    )
    assert json.loads(cut)["api_monthly_usd"] == pytest.approx(51_000)
    _, text, _ = run_cli(capsys, *PLAN_SMALL, "--gpu-discount", "40")
    assert "GPU prices: on-demand $/GPU-hour less 40 % (--gpu-discount)" in text


def test_plan_defaults_to_the_typical_engine(capsys) -> None:
    # Without --engine the candidates run the typical engine (auto would be the toy GPU's ideal physics).
    _, out, _ = run_cli(capsys, "plan", "--model", "llama-3.1-8b", "--tensor-parallel", "1", "--json")
    assert json.loads(out)["engine"] == "typical"

    # The efficiency numbers typed edit that engine: --mbu 0.01 was dropped without a word (the same table as
    # without it). At 1 % of 3.35 TB/s, 16.06 GB of weights take 0.48 s a token: too slow for 30 tokens/s.
    argv = ("plan", "--model", "llama-3.1-8b", "--candidate-gpus", "h100-sxm", "--tensor-parallel", "1",
            "--weight-precisions", "16")  # fmt: skip
    _, out, _ = run_cli(capsys, *argv, "--mbu", "0.01", "--json")
    data = json.loads(out)
    assert data["engine"] == "typical" and data["scenario"]["mbu"] == "0.01"
    assert data["candidates"] == [] and data["failures"][0]["problem"] == "too slow to stream"
    assert data["failures"][0]["reason"].startswith("streams 2.07 tokens/s even alone")


@pytest.mark.parametrize(
    ("argv", "option", "allowed"),
    [
        # Each line written from the description of the option (core/load.py, core/plan_spec.py).
        (["serve", "--concurrency", "0"], "--concurrency", "from 1 to 100,000 requests"),
        (["serve", "--concurrency", "many"], "--concurrency", "from 1 to 100,000 requests"),
        (["serve", "--request-rate", "-1"], "--request-rate", "from 0.0001 to 1,000,000 requests/s"),
        (["serve", "--length-low-fraction", "0.01"], "--length-low-fraction", "from 0.05 to 1"),
        (["serve", "--concurrency", "4", "--request-rate", "2"], "--request-rate", "not both"),
        # Scenario options a command does not use are refused, not dropped (serve printed "no prefix-cache hits").
        (["serve", "--batch", "8"], "--batch", "serve does not use it; serve keeps requests in flight"),
        (["serve", "--cached-tokens", "150"], "--cached-tokens", "serve does not use it; the load model has no prefix"),
        (["serve", "--input-price", "9"], "--input-price", "serve does not use it; serve prints no bill"),
        (["plan", "--gpus", "2"], "--gpus", "plan does not use it; the plan tries every size in --tensor-parallel"),
        (["estimate", "--stream-overhead-us", "500"], "--stream-overhead-us", "estimate does not use it; one static"),
        (["plan", "--weight-bits", "8"], "--weight-bits", "plan does not use it; the plan tries every precision"),
        # Only a 4-bit candidate keeps experts narrower than the rest: otherwise it changed nothing, unsaid.
        (
            ["plan", "--model", "gpt-oss-120b", "--expert-weight-bits", "2", "--weight-precisions", "16,8"],
            "--expert-weight-bits",
            "plan does not use it; only its 4-bit candidates keep an expert width: add 4 to --weight-precisions",
        ),
        (
            ["plan", "--model", "gpt-oss-120b", "--expert-weight-bits", "32"],
            "--expert-weight-bits",
            "plan does not use it; it keeps an expert width only narrower than the other weights' 16 bits",
        ),
        # The scenario's GPU and its numbers count only as a candidate: given otherwise they were dropped unsaid.
        (
            ["plan", "--candidate-gpus", "h200", "--gpu", "h100-sxm", "--gpu-price", "0.01"],
            "--gpu",
            "plan does not use it; h100-sxm is not one of the candidate GPUs (add it to --candidate-gpus)",
        ),
        (
            ["plan", "--memory-gb", "90"],
            "--memory-gb",
            "plan does not use it; toy-gpu is not one of the candidate GPUs (it has no price: give it one with --gpu-price)",
        ),
        (["serve", "--num-prompts", "0"], "--num-prompts", "from 1 to 10,000,000 requests"),
        (["serve", "--concurrency", "4", "--num-prompts", "2"], "--num-prompts", "at least the concurrency (4)"),
        (["serve", "--request-rate", "2", "--num-prompts", "8"], "--num-prompts", "empty with a request rate"),
        (["plan", "--tensor-parallel", "3"], "--tensor-parallel", "list of 1, 2, 4, 8, each once"),
        (["plan", "--weight-precisions", "16,2"], "--weight-precisions", "list of 16, 8, 4, each once"),
        (["plan", "--candidate-gpus", "h900"], "--candidate-gpus", "list of the 18 ids such as toy-gpu, h100-sxm"),
        (["plan", "--ttft-percentile", "97"], "--ttft-percentile", "one of 50, 90, 95, 99"),
        (["plan", "--ttft-ms", "0"], "--ttft-ms", "from 1 to 3,600,000 ms"),
        (["plan", "--peak-to-average", "0.5"], "--peak-to-average", "from 1 to 100 x"),
        (["plan", "--tokens-per-s-per-user", "-1"], "--tokens-per-s-per-user", "from 0 to 100,000 tokens/s"),
        (["plan", "--max-concurrency", "0"], "--max-concurrency", "from 1 to 100,000 requests"),
        (["plan", "--min-replicas", "-1"], "--min-replicas", "from 0 to 100,000 replicas"),
        (["plan", "--length-low-fraction", "2"], "--length-low-fraction", "from 0.05 to 1"),
        (["plan", "--replies-per-day", "-1"], "--replies-per-day", "from 0 to 1,000,000,000,000"),
        # The text report has no frontier: the flag was dropped without a word (exit 0, the same output).
        (["plan", "--frontier"], "--frontier", "only with --json"),
    ],
)
def test_bad_values_exit_2_with_one_line_naming_the_option(capsys, argv, option, allowed) -> None:
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1, err  # one line: no usage dump, no traceback
    assert option in err and allowed in err


def test_plan_does_not_take_the_loads_concurrency(capsys) -> None:
    assert run_cli(capsys, "plan", "--concurrency", "4")[0] == 2


def test_serve_and_plan_as_processes() -> None:
    """The real entry point: exit codes and no traceback from a separate interpreter."""
    ok = subprocess.run([sys.executable, "-m", "core", *PLAN_SMALL], capture_output=True, text=True)
    assert ok.returncode == 0 and "the API would cost" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "core", "serve", "--request-rate", "0"], capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "--request-rate" in bad.stderr


@pytest.mark.parametrize("load", [["--concurrency", "64"], ["--request-rate", "3"]])
def test_serve_says_when_nothing_fits_without_infinities(capsys, load) -> None:
    # The toy 7B's 14 GB of weights on a 0.1 GB GPU: no KV cache, so nothing runs. The text printed
    # "TTFT inf ms", "inf% busy"; it now says so in words, and the JSON keeps its nulls.
    code, out, _ = run_cli(capsys, "serve", "--memory-gb", "0.1", *load)
    assert code == 0 and "inf" not in out and "none of which fits the KV cache" in out
    assert "the weights leave no room for a KV cache: nothing can run" in out
    code, out, _ = run_cli(capsys, "serve", "--memory-gb", "0.1", *load, "--json")
    data = json.loads(out)
    assert data["max_concurrency_that_fits"] == 0 and data["ttft_ms"] is None and data["tokens_per_s_per_user"] is None


@pytest.mark.parametrize(
    ("model", "tp", "bits", "fleet"),
    [
        # 1,000 replies a day fit on one replica: "1 × … each a replica of its own … requests each" was said of it.
        ("llama-3.1-8b", "1", "16", "1 × NVIDIA H100 SXM 80GB, weights in 16-bit, at up to 229 requests: $2,722 a month"),
        ("llama-3.1-70b", "4", "8", "4 × NVIDIA H100 SXM 80GB in one replica of 4 GPUs (tensor parallel), weights in "
         "8-bit, at up to 218 requests: $10,886 a month"),
    ],
)  # fmt: skip
def test_a_fleet_of_one_replica_is_said_as_one(capsys, model: str, tp: str, bits: str, fleet: str) -> None:
    # $2,722 = 1 GPU × $3.78/h (the H100 preset) × 24 h × 30 days; $10,886 = 4 × that. Neither autoscales below one.
    code, out, _ = run_cli(capsys, "plan", "--model", model, "--candidate-gpus", "h100-sxm", "--tensor-parallel", tp,
                           "--weight-precisions", bits, "--replies-per-day", "1000")  # fmt: skip
    assert code == 0
    assert fleet in out
