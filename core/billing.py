"""The bill: API cost per reply and per month, and what self-hosting costs instead.

Reference: the lesson (Day 36, Part 3 and D5). Prices are USD per million tokens, the
way providers publish them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.api_prices import ApiModel, applicable_tier, lookup
from core.arraymath import Quantity
from core.lengths import RequestLengths
from core.specs import Pricing
from core.units import S_PER_HOUR, TOKENS_PER_MILLION

SECONDS_PER_DAY = 24 * S_PER_HOUR


@dataclass(frozen=True, slots=True)
class ReplyCost:
    """One reply's API bill, split by what is billed; `tier_above_prompt_tokens` names a long-prompt tier paid."""

    input_usd: float
    cached_input_usd: float
    output_usd: float
    cache_write_usd: float = 0.0
    request_usd: float = 0.0  # a provider's fee per request, whatever its tokens
    tier_above_prompt_tokens: int | None = None

    @property
    def total_usd(self) -> float:
        return self.input_usd + self.cached_input_usd + self.cache_write_usd + self.output_usd + self.request_usd


def catalogue_entry(pricing: Pricing) -> ApiModel | None:
    """The catalogue entry whose list prices `pricing` carries unchanged, or None (no API, or typed over)."""
    if pricing.api_model is None:
        return None
    entry = lookup(pricing.api_model)
    return entry if pricing == pricing_of(entry, pricing) else None


def pricing_of(entry: ApiModel, traffic: Pricing | None = None) -> Pricing:
    """An API model's list prices (its base tier) as a Pricing, with `traffic`'s replies and days."""
    rates, base = entry.rates, traffic or Pricing()
    return replace(
        base,
        api_model=entry.id,
        input_usd_per_million_tokens=rates.input_usd_per_million_tokens,
        cached_input_usd_per_million_tokens=rates.cached_input_usd_per_million_tokens
        if rates.cached_input_usd_per_million_tokens is not None
        else rates.input_usd_per_million_tokens,
        output_usd_per_million_tokens=rates.output_usd_per_million_tokens,
        cache_write_usd_per_million_tokens=rates.cache_write_usd_per_million_tokens,
    )


def reply_cost(
    pricing: Pricing,
    prompt_tokens: Quantity,
    output_tokens: Quantity,
    cached_prompt_tokens: Quantity = 0,
    cache_write_tokens: Quantity = 0,
) -> ReplyCost:
    """cost = uncached prompt × input + cached × cached + writes × cache-write + output × output price.

    With an API model's unchanged list prices the reply is billed as the provider bills it
    (`core.api_prices.request_cost`): a prompt above a long-prompt tier's threshold pays the
    tier's rates for the whole request, and a per-request fee is added. Prices typed by hand
    are flat. Vectorised over the reply's length (a tier depends on the prompt alone).
    Example (the lesson, Part 3): 200 prompt and 500 output tokens at $0.50 / $1.50 per
    million → 200 × 0.5e-6 + 500 × 1.5e-6 = $0.000100 + $0.000750 = $0.000850.
    """
    entry = catalogue_entry(pricing)
    if entry is not None and not isinstance(prompt_tokens, int) and entry.tiers:
        raise ValueError(f"{entry.id} has long-prompt tiers: price one prompt length at a time")
    if entry is not None:
        tier = applicable_tier(entry, int(prompt_tokens)) if entry.tiers else None
        rates = entry.rates if tier is None else tier.rates
        tier_above = None if tier is None else tier.above_prompt_tokens
        pricing = pricing_of(replace(entry, rates=rates), pricing)
        request_usd = entry.usd_per_request
    else:
        tier_above, request_usd = None, 0.0
    per_token = 1 / TOKENS_PER_MILLION
    write_price = pricing.cache_write_usd_per_million_tokens
    if write_price is None:
        write_price = pricing.input_usd_per_million_tokens
    return ReplyCost(
        input_usd=(prompt_tokens - cached_prompt_tokens - cache_write_tokens)
        * pricing.input_usd_per_million_tokens
        * per_token,
        cached_input_usd=cached_prompt_tokens * pricing.cached_input_usd_per_million_tokens * per_token,
        output_usd=output_tokens * pricing.output_usd_per_million_tokens * per_token,
        cache_write_usd=cache_write_tokens * write_price * per_token,
        request_usd=request_usd,
        tier_above_prompt_tokens=tier_above,
    )


PROMPT_BINS = 64  # equal-probability bins of a varied prompt, each priced at its midpoint


def mean_reply_cost_usd(
    pricing: Pricing, lengths: RequestLengths, cached_tokens: int, cache_write_tokens: int
) -> float:
    """The mean API bill of a reply under load: prompts and replies varied as `lengths` say.

    Tokens are billed linearly, so flat prices take the mean lengths. A catalogue model with
    long-prompt tiers bills each request by its own prompt: the mean over 64 equal-probability
    prompt lengths (each rounded to a whole token), so a threshold inside the range is paid by
    the share of prompts above it. Cached and cache-write tokens come off the prompt first
    (never more than the shortest prompt). Example: flat $1 / $2 per million, nominal 1,000 in and
    500 out at 80-100 % (means 900 and 450) → 900 × 1e-6 + 450 × 2e-6 = $0.0018.
    """
    prompt, output = lengths.mean_prompt_tokens, lengths.mean_output_tokens
    cached = min(cached_tokens, lengths.prompt_tokens_quantile(0))
    writes = min(cache_write_tokens, lengths.prompt_tokens_quantile(0) - cached)
    entry = catalogue_entry(pricing)
    if entry is None or not entry.tiers:
        return reply_cost(pricing, prompt, output, cached, writes).total_usd
    if lengths.low_fraction == 1:
        return reply_cost(pricing, lengths.prompt_tokens, output, cached, writes).total_usd
    bins = [round(lengths.prompt_tokens_quantile((i + 0.5) / PROMPT_BINS)) for i in range(PROMPT_BINS)]
    return sum(reply_cost(pricing, p, output, cached, writes).total_usd for p in bins) / PROMPT_BINS


def monthly_cost_usd(cost_per_reply_usd: Quantity, replies_per_day: Quantity, days_per_month: Quantity) -> Quantity:
    """monthly = per reply × replies per day × days. Example: $0.000850 × 100,000 × 30 = $2,550."""
    return cost_per_reply_usd * replies_per_day * days_per_month


def ratio(long: float, short: float) -> float:
    """How many times `long` is `short` (the lesson's "9.7x the latency, 4.9x the cost")."""
    return long / short


@dataclass(frozen=True, slots=True)
class SelfHosting:
    """Renting the GPUs instead of paying per token, at the scenario's batch size."""

    fleet_usd_per_hour: float
    output_tokens_per_s: float
    replies_per_s: float
    api_cost_per_reply_usd: float

    @property
    def usd_per_million_output_tokens(self) -> float:
        """fleet $/h ÷ (tokens/s × 3600) × 1e6: the whole fleet's rent charged to output tokens."""
        return self.fleet_usd_per_hour / (self.output_tokens_per_s * S_PER_HOUR) * TOKENS_PER_MILLION

    @property
    def cost_per_reply_usd(self) -> float:
        """At full load: the fleet's rent per second ÷ replies it finishes per second."""
        return self.fleet_usd_per_hour / S_PER_HOUR / self.replies_per_s

    @property
    def capacity_replies_per_day(self) -> float:
        return self.replies_per_s * SECONDS_PER_DAY

    @property
    def break_even_replies_per_day(self) -> float:
        """Traffic at which one always-on fleet costs what the API would: fleet $/day ÷ API $/reply.

        Below it the API is cheaper; above it self-hosting is — but only up to the fleet's
        capacity: past capacity the number is no headline (see `reachable_break_even_replies_per_day`).
        Infinite when the API is free.
        """
        if self.api_cost_per_reply_usd == 0:
            return float("inf")
        return self.fleet_usd_per_hour * 24 / self.api_cost_per_reply_usd

    @property
    def breaks_even(self) -> bool:
        """Whether one fleet ever beats the API: the break-even lies within its capacity."""
        return self.break_even_replies_per_day <= self.capacity_replies_per_day

    @property
    def reachable_break_even_replies_per_day(self) -> float | None:
        """The break-even traffic when one fleet can serve it; None when it lies beyond capacity.

        None means renting never pays at this batch: even at full load a reply costs
        `cost_per_reply_usd`, more than the API's. Example: $48 a day against $0.001 a reply
        → 48,000 a day, reachable only by a fleet serving at least that many.
        """
        return self.break_even_replies_per_day if self.breaks_even else None


def self_hosting(
    price_usd_per_gpu_hour: float,
    gpu_count: int,
    batch_size: int,
    output_tokens: int,
    request_time_s: float,
    api_cost_per_reply_usd: float,
) -> SelfHosting:
    """A fleet of `gpu_count` GPUs serving `batch_size` requests at a time, each taking `request_time_s`.

    Example: 1 GPU at $2/h, batch 64, 500-token replies in 5 s → 6,400 tok/s,
    $2 / (6400 × 3600) × 1e6 = $0.087 per million output tokens.
    """
    replies_per_s = batch_size / request_time_s
    return SelfHosting(
        fleet_usd_per_hour=price_usd_per_gpu_hour * gpu_count,
        output_tokens_per_s=replies_per_s * output_tokens,
        replies_per_s=replies_per_s,
        api_cost_per_reply_usd=api_cost_per_reply_usd,
    )
