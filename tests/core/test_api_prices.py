"""The API price catalogue (issue 10 §1): genai-prices' prices and rules, shipped inside core.

genai-prices is imported here only as the reference to check against (core never imports
it). Hand-derived goldens use genai-prices 0.2.3's list prices; a bump that changes them
fails here on purpose — check the new price against the provider's page, then update.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import socket
import subprocess
import sys
from importlib import resources
from importlib.metadata import version

import pytest
from genai_prices import Usage, calc_price
from genai_prices.data_snapshot import get_snapshot

from core import api_prices
from core.api_prices import applicable_tier, catalogue, lookup, request_cost, search, snapshot
from tests.core.test_cli import run_cli
from tools.export_api_prices import RELEASE_DATES, export, render

WELL_KNOWN = (
    "openai/gpt-4o",
    "openai/gpt-4.1-mini",
    "anthropic/claude-haiku-4-5",
    "anthropic/claude-sonnet-4-5",
    "google/gemini-2.5-pro",
    "perplexity/sonar",  # a per-request fee on top of tokens
    "deepseek/deepseek-chat",  # peak/off-peak: both sides priced at the file's instant
)
# (prompt, output, cached, cache write): plain; a cache hit; hit + write; past a 200k tier with a hit.
USAGES = ((1_000, 500, 0, 0), (10_000, 1_000, 2_000, 0), (10_000, 1_000, 2_000, 3_000), (250_000, 1_000, 50_000, 0))


def reference(model_id: str, prompt: int, output: int, cached: int = 0, write: int = 0):
    """What genai-prices charges for one request, at the instant the shipped prices were taken."""
    provider_id, _, model_ref = model_id.partition("/")
    usage = Usage(input_tokens=prompt, output_tokens=output, cache_read_tokens=cached, cache_write_tokens=write)
    return calc_price(usage, model_ref, provider_id=provider_id, genai_request_timestamp=snapshot().prices_in_force_at)


# --- the catalogue is genai-prices' ----------------------------------------------------------


@pytest.mark.parametrize("usage", USAGES, ids=lambda u: "/".join(map(str, u)))
@pytest.mark.parametrize("model_id", WELL_KNOWN)
def test_well_known_models_cost_what_genai_prices_says(model_id, usage):
    prompt, output, cached, write = usage
    theirs = reference(model_id, *usage)
    ours = request_cost(lookup(model_id), prompt, output, cached, write)
    assert theirs.model.id == lookup(model_id).model_id  # calc_price resolved the same model
    assert ours.total_usd == pytest.approx(float(theirs.total_price), rel=1e-12)
    assert ours.output_usd == pytest.approx(float(theirs.output_price), rel=1e-12)
    prompt_side = ours.input_usd + ours.cached_input_usd + ours.cache_write_usd
    assert prompt_side == pytest.approx(float(theirs.input_price), rel=1e-12)
    assert ours.total_usd > 0


def test_every_entry_costs_what_genai_prices_says_on_both_sides_of_every_tier():
    # Each model with cache reads and writes, then at and just above each of its thresholds:
    # the exporter's tier table and request_cost against genai-prices' own ModelInfo.calc_price.
    entries = {m.id: m for m in catalogue()}
    at = snapshot().prices_in_force_at
    checked, mismatches = 0, []
    for provider in get_snapshot().providers:
        for model in provider.models:
            entry = entries.get(f"{provider.id}/{model.id}")
            if entry is None:
                continue
            cases = [(1_000, 200, 300, 100)]
            for tier in entry.tiers:
                cases += [(tier.above_prompt_tokens, 200, 0, 0), (tier.above_prompt_tokens + 1, 200, 5_000, 100)]
            for prompt, output, cached, write in cases:
                usage = Usage(
                    input_tokens=prompt, output_tokens=output, cache_read_tokens=cached, cache_write_tokens=write
                )
                theirs = float(model.calc_price(usage, provider, genai_request_timestamp=at).total_price)
                ours = request_cost(entry, prompt, output, cached, write).total_usd
                checked += 1
                if ours != pytest.approx(theirs, rel=1e-12, abs=1e-15):
                    mismatches.append((entry.id, prompt, ours, theirs))
    assert mismatches == []
    assert checked > len(entries)  # every entry once, plus two cases per tier


def test_models_without_token_prices_are_left_out():
    at = snapshot().prices_in_force_at
    priced = {
        f"{p.id}/{m.id}"
        for p in get_snapshot().providers
        for m in p.models
        if m.get_prices(at).input_mtok is not None and m.get_prices(at).output_mtok is not None
    }
    ids = {m.id for m in catalogue()}
    assert ids == priced
    assert "openai/gpt-4o" in ids and "openai/tts-1" not in ids  # tts-1 is priced per character


def test_ids_are_the_catalogues_ids_in_its_order():
    # The sidebar's API select lists ids() (built once); the catalogue is sorted by id, so both are.
    listed = api_prices.ids()
    assert listed == tuple(m.id for m in catalogue())
    assert list(listed) == sorted(listed) and len(set(listed)) == len(listed) > 1_000


def test_shipped_file_is_a_fresh_export_of_the_installed_genai_prices():
    # Bumping genai-prices without `make prices` fails here. Re-exported for the date the file
    # was made, so the test does not depend on today's date.
    shipped = resources.files("core").joinpath("data", "api_prices.json").read_text(encoding="utf-8")
    on = snapshot().prices_in_force_at.date()
    assert shipped == render(export(on)), "core/data/api_prices.json is stale: run `make prices`"
    assert render(export(on)) == render(export(on))  # deterministic


def test_snapshot_names_the_installed_genai_prices_and_its_release_date():
    source = snapshot()
    assert source.version == version("genai-prices")
    # The bundled snapshot has no date; genai-prices 0.2.3's wheel was uploaded to PyPI on 2026-11-10.
    assert source.as_of == dt.date.fromisoformat(RELEASE_DATES[source.version])
    assert RELEASE_DATES["0.2.3"] == "2026-11-10"
    # Prices are read at noon UTC of the export day (DeepSeek's depend on the hour).
    assert (source.prices_in_force_at.hour, source.prices_in_force_at.tzinfo) == (12, dt.UTC)
    assert source.next_scheduled_change is None or source.next_scheduled_change > source.prices_in_force_at.date()


def test_well_known_list_prices():
    # genai-prices 0.2.3, USD per million tokens: input, cached input, cache write, output.
    expected = {
        "openai/gpt-4o": (2.5, 1.25, None, 10),
        "openai/gpt-4.1-mini": (0.4, 0.1, None, 1.6),
        "anthropic/claude-haiku-4-5": (1, 0.1, 1.25, 5),  # cache read 0.1x, write 1.25x input
        "anthropic/claude-sonnet-4-5": (3, 0.3, 3.75, 15),
        "google/gemini-2.5-pro": (1.25, 0.125, None, 10),
    }
    for model_id, prices in expected.items():
        m = lookup(model_id)
        got = (
            m.input_usd_per_million_tokens,
            m.cached_input_usd_per_million_tokens,
            m.cache_write_usd_per_million_tokens,
            m.output_usd_per_million_tokens,
        )
        assert got == prices, model_id
    assert lookup("anthropic/claude-sonnet-4-5").provider_name == "Anthropic"
    assert lookup("anthropic/claude-sonnet-4-5").name == "Claude Sonnet 4.5"


# --- the tier rule, by hand --------------------------------------------------------------------


def test_tier_applies_to_the_whole_request_strictly_above_the_threshold():
    gemini = lookup("google/gemini-2.5-pro")  # base 1.25 / 0.125 / 10; above 200,000: 2.50 / 0.25 / 15
    at = request_cost(gemini, 200_000, 1_000)
    above = request_cost(gemini, 200_001, 1_000)
    # 200,000 is not above 200,000: 200,000 × 1.25e-6 + 1,000 × 10e-6 = 0.25 + 0.01 = $0.26
    assert at.tier_above_prompt_tokens is None
    assert at.total_usd == pytest.approx(0.26, rel=1e-12)
    # one token more and every token pays the tier: 200,001 × 2.5e-6 + 1,000 × 15e-6 = 0.5000025 + 0.015
    assert above.tier_above_prompt_tokens == 200_000
    assert above.total_usd == pytest.approx(0.5150025, rel=1e-12)
    for prompt, cost in ((200_000, at), (200_001, above)):
        assert cost.total_usd == pytest.approx(float(reference(gemini.id, prompt, 1_000).total_price), rel=1e-12)


def test_cached_tokens_count_towards_the_threshold():
    gemini = lookup("google/gemini-2.5-pro")
    # 150,000 uncached + 60,000 cached = 210,000 > 200,000, so the tier: 150,000 × 2.5e-6 + 60,000 × 0.25e-6
    # + 1,000 × 15e-6 = 0.375 + 0.015 + 0.015 = $0.405 (at base rates it would be 0.1875 + 0.0075 + 0.01).
    cost = request_cost(gemini, 210_000, 1_000, cached_prompt_tokens=60_000)
    assert cost.tier_above_prompt_tokens == 200_000
    assert (cost.input_usd, cost.cached_input_usd, cost.output_usd) == pytest.approx((0.375, 0.015, 0.015))
    assert cost.total_usd == pytest.approx(float(reference(gemini.id, 210_000, 1_000, 60_000).total_price))


def test_two_tiers_pick_the_highest_one_passed():
    qwen = lookup("openrouter/qwen/qwen3.7-flash")  # input 0.03; above 32,000: 0.10; above 256,000: 0.20
    assert [t.above_prompt_tokens for t in qwen.tiers] == [32_000, 256_000]
    # 32,000 × 0.03e-6 = 0.00096; 32,001 × 0.1e-6 = 0.0032001; 256,001 × 0.2e-6 = 0.0512002 (no output)
    cases = (
        (32_000, None, 0.00096),
        (32_001, 32_000, 0.0032001),
        (256_000, 32_000, 0.0256),
        (256_001, 256_000, 0.0512002),
    )
    for prompt, tier, usd in cases:
        cost = request_cost(qwen, prompt, 0)
        assert (cost.tier_above_prompt_tokens, cost.total_usd) == (tier, pytest.approx(usd, rel=1e-12)), prompt
        assert applicable_tier(qwen, prompt) == (None if tier is None else qwen.tiers[tier == 256_000])


def test_price_one_reply_then_multiply_never_a_month_in_one_call():
    gemini = lookup("google/gemini-2.5-pro")
    # 1,000 replies of 1,000 prompt + 100 output tokens. One reply: 1,000 × 1.25e-6 + 100 × 10e-6
    # = 0.00125 + 0.001 = $0.00225, so 1,000 replies cost $2.25.
    assert request_cost(gemini, 1_000, 100).total_usd * 1_000 == pytest.approx(2.25, rel=1e-12)
    # Their tokens summed into one "request" cross the 200k tier that no reply crosses:
    # 1e6 × 2.5e-6 + 1e5 × 15e-6 = 2.5 + 1.5 = $4.00 — 78 % too much.
    assert request_cost(gemini, 1_000_000, 100_000).total_usd == pytest.approx(4.0, rel=1e-12)


# --- prompt caching, by hand ------------------------------------------------------------------


def test_cache_hits_and_writes_blend_at_their_own_prices():
    haiku = lookup("anthropic/claude-haiku-4-5")  # 1 input, 0.1 cache read, 1.25 cache write, 5 output
    # 10,000-token prompt: 60 % cache hit (6,000), 1,000 written to the cache, 3,000 plain; 500 out.
    # 3,000 × 1e-6 + 6,000 × 0.1e-6 + 1,000 × 1.25e-6 + 500 × 5e-6 = 0.003 + 0.0006 + 0.00125 + 0.0025 = $0.00735
    cost = request_cost(haiku, 10_000, 500, cached_prompt_tokens=6_000, cache_write_tokens=1_000)
    parts = (cost.input_usd, cost.cached_input_usd, cost.cache_write_usd, cost.output_usd, cost.request_usd)
    assert parts == pytest.approx((0.003, 0.0006, 0.00125, 0.0025, 0.0), rel=1e-12)
    assert cost.total_usd == pytest.approx(0.00735, rel=1e-12)
    # Without the cache the same request is 10,000 × 1e-6 + 0.0025 = $0.0125.
    assert request_cost(haiku, 10_000, 500).total_usd == pytest.approx(0.0125, rel=1e-12)


def test_tokens_without_their_own_price_pay_the_input_price():
    gpt4o = lookup("openai/gpt-4o")  # 2.5 input, 1.25 cached, no cache-write price
    # 5,000 plain × 2.5e-6 + 4,000 cached × 1.25e-6 + 1,000 written × 2.5e-6 = 0.0125 + 0.005 + 0.0025 = $0.02
    cost = request_cost(gpt4o, 10_000, 0, cached_prompt_tokens=4_000, cache_write_tokens=1_000)
    assert (cost.input_usd, cost.cached_input_usd, cost.cache_write_usd) == pytest.approx((0.0125, 0.005, 0.0025))
    assert cost.total_usd == pytest.approx(float(reference(gpt4o.id, 10_000, 0, 4_000, 1_000).total_price))
    sonar = lookup("perplexity/sonar")  # 1 input, no cached price, 1 output, $12 per 1,000 requests
    # 1,000 × 1e-6 (500 of them cached, same price) + 1,000 × 1e-6 + 0.012 = $0.014
    assert request_cost(sonar, 1_000, 1_000, cached_prompt_tokens=500).total_usd == pytest.approx(0.014, rel=1e-12)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((100, 10, 80, 30), "cached_prompt_tokens + cache_write_tokens must be <= prompt_tokens (100), got 80 + 30"),
        ((-1, 10), "prompt_tokens must be a whole number >= 0"),
        ((100, 1.5), "output_tokens must be a whole number >= 0"),
        ((100, 10, -5), "cached_prompt_tokens must be a whole number >= 0"),
    ],
)
def test_bad_token_counts_are_rejected_by_name(args, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        request_cost(lookup("openai/gpt-4o"), *args)


# --- finding a model --------------------------------------------------------------------------


def test_lookup_is_exact_or_case_insensitive():
    assert lookup("openai/gpt-4o").model_id == "gpt-4o"
    assert lookup("OpenAI/GPT-4o").id == "openai/gpt-4o"
    assert lookup("avian/meta-llama-3.1-8b-instruct").id == "avian/Meta-Llama-3.1-8B-Instruct"  # ids keep their case
    # model ids may hold a slash themselves: the provider is what comes before the first one
    resold = lookup("openrouter/google/gemini-2.5-pro")
    assert (resold.provider_id, resold.model_id, resold.provider_name) == (
        "openrouter",
        "google/gemini-2.5-pro",
        "OpenRouter",
    )


def test_lookup_of_a_typo_names_it_and_suggests_the_closest_ids():
    with pytest.raises(ValueError) as raised:
        lookup("anthropic/claude-haiku-4.5")  # Anthropic's id has a hyphen: claude-haiku-4-5
    message = str(raised.value)
    assert message.startswith("unknown API model 'anthropic/claude-haiku-4.5'")
    assert "anthropic/claude-haiku-4-5" in message.split("closest: ")[1].split(", ")
    with pytest.raises(ValueError, match=r"closest: openai/gpt-4o, "):
        lookup("gpt-4o")  # no provider: the same model id at each provider comes first
    with pytest.raises(ValueError, match="search with `python -m core prices WORD`"):
        lookup("qqqqqqqqqqqq")


def test_search_is_case_insensitive_over_provider_id_and_name():
    sonnets = search("Sonnet")
    assert "anthropic/claude-sonnet-4-5" in {m.id for m in sonnets}
    assert all("sonnet" in f"{m.id} {m.name}".lower() for m in sonnets)
    both = {m.id for m in search("OPENAI gpt-4o")}
    assert {"openai/gpt-4o", "openrouter/openai/gpt-4o"} <= both and "openai/gpt-4.1-mini" not in both
    assert "openai/gpt-4o" in {m.id for m in search("openai/gpt-4o")}  # a full id finds itself
    assert {m.provider_id for m in search("Microsoft Azure")} == {"azure"}  # the provider's name
    assert search("") == catalogue() and search("zzzqqq") == ()


# --- no network ------------------------------------------------------------------------------


def _no_network(*args, **kwargs):
    raise OSError("network blocked by the test")


def test_catalogue_and_cli_work_with_sockets_blocked(monkeypatch, capsys):
    for name in ("socket", "create_connection", "getaddrinfo"):
        monkeypatch.setattr(socket, name, _no_network)
    with pytest.raises(OSError, match="blocked"):
        socket.socket()  # the block is real
    api_prices._load.cache_clear()  # read the file again, under the block
    api_prices._ids_by_lowercase.cache_clear()
    assert len(catalogue()) > 1_000
    assert request_cost(lookup("openai/gpt-4o"), 1_000, 1_000).total_usd == pytest.approx(0.0125)  # 0.0025 + 0.01
    code, out, _ = run_cli(capsys, "prices", "gpt-4.1-mini", "--json")
    assert code == 0 and "openai/gpt-4.1-mini" in [m["id"] for m in json.loads(out)["models"]]


def test_core_never_loads_genai_prices():
    probe = (
        "import contextlib, io, sys; import core.cli\n"
        "with contextlib.redirect_stdout(io.StringIO()): code = core.cli.main(['prices', 'gpt-4o'])\n"
        "print(code, 'genai_prices' in sys.modules, 'pydantic' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False)
    assert result.stdout.split() == ["0", "False", "False"], result.stderr


# --- the command line ------------------------------------------------------------------------


def test_cli_lists_matches_with_prices_tiers_and_the_date(capsys):
    code, out, err = run_cli(capsys, "prices", "gemini-2.5-pro")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "5 API models matching 'gemini-2.5-pro'; USD per million tokens"
    assert lines[1].startswith(
        f"prices as of 2026-11-10 (genai-prices 0.2.3), in force on {snapshot().prices_in_force_at:%Y-%m-%d}"
    )
    row = next(line for line in lines if line.split()[:1] == ["google/gemini-2.5-pro"])
    # input, cached, write ('-': none), output, then the 200k tier in the same order
    assert row.split()[1:5] == ["1.25", "0.125", "-", "10.00"]
    assert row.endswith("above 200,000 prompt tokens: 2.50 / 0.25 / - / 15.00")


def test_cli_json_and_an_empty_search_lists_everything(capsys):
    code, out, _ = run_cli(capsys, "prices", "--json")
    data = json.loads(out)
    assert code == 0 and len(data["models"]) == len(catalogue())
    assert data["source"]["as_of"] == "2026-11-10" and data["source"]["version"] == "0.2.3"
    sonnet = next(m for m in data["models"] if m["id"] == "anthropic/claude-sonnet-4-5")
    assert (sonnet["input_usd_per_million_tokens"], sonnet["cached_input_usd_per_million_tokens"]) == (3, 0.3)
    assert (sonnet["cache_write_usd_per_million_tokens"], sonnet["output_usd_per_million_tokens"]) == (3.75, 15)
    # Anthropic's long-context tier doubles input and cache prices and takes output to 1.5x.
    assert sonnet["tiers"] == [
        {
            "above_prompt_tokens": 200_000,
            "input_usd_per_million_tokens": 6,
            "output_usd_per_million_tokens": 22.5,
            "cached_input_usd_per_million_tokens": 0.6,
            "cache_write_usd_per_million_tokens": 7.5,
        }
    ]
    code, text, _ = run_cli(capsys, "prices")
    assert text.splitlines()[0] == f"{len(catalogue()):,} API models in the catalogue; USD per million tokens"


def test_cli_notes_request_fees_and_time_of_day_prices(capsys):
    _, out, _ = run_cli(capsys, "prices", "perplexity", "sonar")
    assert "+ $0.012 per request" in next(line for line in out.splitlines() if line.split()[:1] == ["perplexity/sonar"])
    _, out, _ = run_cli(capsys, "prices", "deepseek/deepseek-chat")
    row = next(line for line in out.splitlines() if line.split()[:1] == ["deepseek/deepseek-chat"])
    assert row.endswith("price depends on the time of day")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["prices", "zzzqqq"], "python -m core prices: error: no API model matches 'zzzqqq'"),
        (["prices", "--bogus"], "error: unrecognized arguments: --bogus"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(capsys, argv, message):
    code, out, err = run_cli(capsys, *argv)
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and message in err
