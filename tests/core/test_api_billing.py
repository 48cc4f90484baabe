"""A scenario priced from the API catalogue: the link's api=, tiers per reply, prompt caching, overrides."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from core.billing import catalogue_entry, mean_reply_cost_usd, reply_cost
from core.cli import main
from core.estimate import estimate
from core.flat import read_flat
from core.lengths import RequestLengths
from core.plan import plan
from core.plan_spec import Plan
from core.scenario import Scenario


def scenario(**flat: str) -> Scenario:
    return Scenario.from_flat(flat)


def test_an_api_travels_as_its_id_and_its_prices_are_the_catalogues() -> None:
    s = scenario(api="anthropic/claude-haiku-4-5")
    # Anthropic's list prices for claude-haiku-4-5 (genai-prices 0.2.3): $1 in, $0.10 cached, $1.25 write, $5 out.
    p = s.pricing
    assert (p.input_usd_per_million_tokens, p.cached_input_usd_per_million_tokens) == (1.0, 0.1)
    assert (p.cache_write_usd_per_million_tokens, p.output_usd_per_million_tokens) == (1.25, 5.0)
    assert s.to_flat(minimal=True) == {"api": "anthropic/claude-haiku-4-5"}  # the prices are implied
    assert Scenario.from_flat(s.to_flat()) == s and catalogue_entry(p) is not None
    # The lesson's 200 → 500 tokens: 200 × 1e-6 + 500 × 5e-6 = $0.0002 + $0.0025 = $0.0027 a reply.
    assert estimate(s).cost_per_reply_usd == pytest.approx(0.0027, rel=1e-12)


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        # Base rates ($1.25 in, $10 out) up to 200,000 prompt tokens: 200,000 × 1.25e-6 + 500 × 10e-6 = $0.255.
        (200_000, 0.255),
        # One token more and the WHOLE reply pays the tier ($2.50 in, $15 out):
        # 200,001 × 2.5e-6 + 500 × 15e-6 = $0.5000025 + $0.0075 = $0.5075025.
        (200_001, 0.5075025),
    ],
)
def test_a_long_prompt_tier_applies_per_reply(prompt: int, expected: float) -> None:
    result = estimate(scenario(api="google/gemini-2.5-pro", prompt=str(prompt)))
    assert result.cost_per_reply_usd == pytest.approx(expected, rel=1e-12)
    assert result.reply_cost.tier_above_prompt_tokens == (None if prompt == 200_000 else 200_000)
    # The month is that reply × 100,000 replies × 30 days, never a month of tokens priced at once.
    assert result.monthly_cost_usd == pytest.approx(expected * 100_000 * 30, rel=1e-12)


def test_prompt_caching_blends_reads_writes_and_fresh_input() -> None:
    # claude-sonnet-4-5: $3 in, $0.30 cache read, $3.75 cache write, $15 out. A 10,000-token prompt
    # with 8,000 read from the cache and 1,000 written to it, 500 out:
    # 1,000 × 3e-6 + 8,000 × 0.3e-6 + 1,000 × 3.75e-6 + 500 × 15e-6
    # = 0.003 + 0.0024 + 0.00375 + 0.0075 = $0.01665.
    cost = estimate(
        scenario(api="anthropic/claude-sonnet-4-5", prompt="10000", cached="8000", cwrite="1000")
    ).reply_cost
    assert (cost.input_usd, cost.cached_input_usd) == pytest.approx((0.003, 0.0024), rel=1e-12)
    assert (cost.cache_write_usd, cost.output_usd) == pytest.approx((0.00375, 0.0075), rel=1e-12)
    assert cost.total_usd == pytest.approx(0.01665, rel=1e-12)


def test_typed_prices_override_the_catalogue_and_are_flat() -> None:
    s = scenario(api="google/gemini-2.5-pro", pout="12", prompt="250000")
    assert catalogue_entry(s.pricing) is None  # typed over: billed flat at what was typed
    assert s.to_flat(minimal=True) == {"api": "google/gemini-2.5-pro", "prompt": "250000", "pout": "12"}
    # 250,000 × 1.25e-6 (no tier for typed prices) + 500 × 12e-6 = $0.3125 + $0.006 = $0.3185.
    assert estimate(s).cost_per_reply_usd == pytest.approx(0.3185, rel=1e-12)


def test_without_an_api_the_lesson_prices_are_flat() -> None:
    lesson = Scenario.lesson()
    assert lesson.pricing.api_model is None and catalogue_entry(lesson.pricing) is None
    cost = reply_cost(lesson.pricing, 200, 500)
    assert cost.total_usd == pytest.approx(0.00085) and cost.tier_above_prompt_tokens is None


def test_an_unknown_api_is_an_error_with_the_closest_ids() -> None:
    with pytest.raises(ValueError, match=r"^api: unknown API model 'openai/gpt-4p'.*closest: .*openai/gpt-4o"):
        scenario(api="openai/gpt-4p")
    _, parsed, warnings = read_flat({"api": "openai/gpt-4p", "out": "800"}, Scenario)
    assert parsed.pricing.api_model is None and parsed.workload.output_tokens == 800
    assert warnings[0].startswith("Ignored api=openai/gpt-4p: unknown API model")


def test_ids_are_case_insensitive_and_stored_in_the_catalogues_spelling() -> None:
    assert scenario(api="OpenAI/GPT-4o").pricing.api_model == "openai/gpt-4o"


def test_cli_estimate_bills_at_the_catalogue_price_as_genai_prices_does(capsys) -> None:
    from decimal import Decimal

    from genai_prices import Usage, calc_price

    assert main(["estimate", "--api-model", "openai/gpt-4o", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    one = calc_price(Usage(input_tokens=200, output_tokens=500), "gpt-4o", provider_id="openai")
    assert Decimal(str(data["cost_per_reply_usd"])) == pytest.approx(one.total_price)
    assert data["monthly_cost_usd"] == pytest.approx(float(one.total_price) * 100_000 * 30)
    assert (data["api_model"], data["api_prices_overridden"]) == ("openai/gpt-4o", False)
    assert main(["estimate", "--api-model", "openai/gpt-4o", "--output-price", "20", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["api_prices_overridden"] is True


def test_cli_unknown_api_exits_2_naming_the_option_and_the_closest_ids(capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["estimate", "--api-model", "openai/gpt-4p"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1
    assert "--api-model: unknown API model 'openai/gpt-4p'" in err and "openai/gpt-4o" in err


def test_a_reply_length_sweep_keeps_one_tier() -> None:
    import numpy as np

    s = scenario(api="google/gemini-2.5-pro", prompt="250000")
    lengths = np.array([1.0, 500.0, 1000.0])
    swept = reply_cost(s.pricing, 250_000, lengths).total_usd
    single = [reply_cost(s.pricing, 250_000, int(m)).total_usd for m in lengths]
    assert np.allclose(swept, single, rtol=1e-12)
    # A tier depends on the prompt: a sweep over prompt lengths cannot be priced in one call.
    with pytest.raises(ValueError, match="one prompt length at a time"):
        reply_cost(s.pricing, np.array([100.0, 300_000.0]), 500)
    # Without tiers (or with typed prices) it can: gpt-4.1-mini, $0.40 in: 100 and 1,000 prompt tokens.
    flat = scenario(api="openai/gpt-4.1-mini").pricing
    assert np.allclose(reply_cost(flat, np.array([100.0, 1000.0]), 0).total_usd, [4e-5, 4e-4], rtol=1e-12)
    assert replace(flat, output_usd_per_million_tokens=2.0).api_model == "openai/gpt-4.1-mini"


def test_a_varied_prompt_pays_the_tier_for_the_share_above_its_threshold() -> None:
    # Under load prompts vary (uniform on 80-100 % of nominal): a tiered API bills each request by its
    # own prompt. claude-haiku-5-5: $0.10 in / $0.50 out, the whole request at $0.50 / $2.50 above 100,000.
    # Prompts 90,000-112,500 (nominal 112,500 at 80 %), replies 400-500 (mean 450). Of 64 equal-probability
    # bins, those with midpoint above 100,000: (i + 0.5) / 64 > 10,000 / 22,500 → i ≥ 28, 36 of 64.
    # Below: 28/64 of prompts, mean ≈ 90,000 + 0.4375 × 22,500 / 2 = 94,921.9 tokens;
    # above: 36/64, mean ≈ 90,000 + (0.4375 + 0.5625 / 2) × 22,500 = 106,171.9 tokens.
    # 0.4375 × (94,921.9 × 0.1e-6 + 450 × 0.5e-6) + 0.5625 × (106,171.9 × 0.5e-6 + 450 × 2.5e-6)
    # = 0.4375 × $0.0097172 + 0.5625 × $0.0542109 = $0.0042513 + $0.0304936 = $0.034745.
    pricing = scenario(api="anthropic/claude-haiku-5-5").pricing
    lengths = RequestLengths(112_500, 500, 0.8)
    assert mean_reply_cost_usd(pricing, lengths, 0, 0) == pytest.approx(0.034745, rel=1e-4)
    # Every prompt below the threshold: the mean lengths at the base rates (the flat rule, exactly).
    short = RequestLengths(1_000, 500, 0.8)  # 800-1,000 in, 400-500 out: 900 × 0.1e-6 + 450 × 0.5e-6
    assert mean_reply_cost_usd(pricing, short, 0, 0) == pytest.approx(900 * 0.1e-6 + 450 * 0.5e-6, rel=1e-9)


def test_the_plans_api_bill_is_estimates_cache_writes_included() -> None:
    # 1,000 prompt tokens, 50 read from the cache and 100 written to it, 500 out, at claude-haiku-5-5's
    # $0.10 in / $0.01 cached / $0.125 write / $0.50 out: 850 × 0.1e-6 + 50 × 0.01e-6 + 100 × 0.125e-6
    # + 500 × 0.5e-6 = $0.0000850 + $0.0000005 + $0.0000125 + $0.000250 = $0.000348 a reply.
    s = scenario(api="anthropic/claude-haiku-5-5", model="llama-3.1-70b", gpu="h100-sxm", prompt="1000",
                 out="500", cached="50", cwrite="100")  # fmt: skip
    result = plan(s, Plan(gpu_ids=("h100-sxm",), tensor_parallel=(1,), weight_bits=(8,)))
    assert result.api_cost_per_reply_usd == pytest.approx(0.000348, rel=1e-9)
    assert result.api_cost_per_reply_usd == pytest.approx(estimate(s).cost_per_reply_usd, rel=1e-12)
    # Varied lengths on a tiered API plan without a word (it raised "price one prompt length at a time").
    varied = plan(
        s, Plan(gpu_ids=("h100-sxm",), tensor_parallel=(1,), weight_bits=(8,)), RequestLengths(1000, 500, 0.8)
    )
    assert varied.api_cost_per_reply_usd == pytest.approx(0.000348 * 0.9, rel=0.02)
