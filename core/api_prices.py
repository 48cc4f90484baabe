"""The API price catalogue: every provider/model's token prices, and what one request costs.

Prices are USD per million tokens, the way providers publish them. They come from
`data/api_prices.json`, which `tools/export_api_prices.py` (`make prices`) writes from
genai-prices' bundled snapshot; this module reads only that file (standard library, no
network), once, on first use. Ids are `provider/model` (`openai/gpt-4o`): the same model id
is sold by several providers at different prices.

How a request is billed (genai-prices' rule, which is the providers'):

- the prompt splits into uncached input, cache reads ("cached input") and cache writes;
  a part without its own price is charged at the input price;
- **tiers are per request**: when one request's prompt — every input token, cached or not,
  cache writes included — is *above* a tier's threshold, that whole request (input, cached
  input, cache writes and output) pays the tier's rates. It is a cliff, not a marginal rate.

So cost is not linear in tokens: price one reply with `request_cost`, then multiply by the
number of replies. Never price a day's or a month's tokens in one call — their sum would
cross every threshold that no single reply crosses.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from core.units import TOKENS_PER_MILLION
from core.validation import check_int, near_matches

DATA_FILE = "api_prices.json"
FORMAT = 1
REQUESTS_PER_THOUSAND = 1e3

_RATE_KEYS = {
    "input_usd_per_mtok": "input_usd_per_million_tokens",
    "output_usd_per_mtok": "output_usd_per_million_tokens",
    "cached_input_usd_per_mtok": "cached_input_usd_per_million_tokens",
    "cache_write_usd_per_mtok": "cache_write_usd_per_million_tokens",
}
_ENTRY_KEYS = {"name", "tiers", "usd_per_thousand_requests", "varies_by_time_of_day", "deprecated", *_RATE_KEYS}


@dataclass(frozen=True, slots=True)
class Rates:
    """The token prices one request pays, USD per million tokens; None = no separate price (the input price applies)."""

    input_usd_per_million_tokens: float
    output_usd_per_million_tokens: float
    cached_input_usd_per_million_tokens: float | None = None
    cache_write_usd_per_million_tokens: float | None = None


@dataclass(frozen=True, slots=True)
class Tier:
    """Rates for a request whose prompt is above `above_prompt_tokens` (cached and cache-write tokens count)."""

    above_prompt_tokens: int
    rates: Rates


@dataclass(frozen=True, slots=True)
class ApiModel:
    """One provider's list prices for one model. `rates` is what a request below every tier pays."""

    id: str
    provider_id: str
    provider_name: str
    model_id: str
    name: str
    rates: Rates
    tiers: tuple[Tier, ...] = ()
    usd_per_request: float = 0.0
    varies_by_time_of_day: bool = False
    deprecated: bool = False

    @property
    def input_usd_per_million_tokens(self) -> float:
        return self.rates.input_usd_per_million_tokens

    @property
    def output_usd_per_million_tokens(self) -> float:
        return self.rates.output_usd_per_million_tokens

    @property
    def cached_input_usd_per_million_tokens(self) -> float | None:
        return self.rates.cached_input_usd_per_million_tokens

    @property
    def cache_write_usd_per_million_tokens(self) -> float | None:
        return self.rates.cache_write_usd_per_million_tokens


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Where the prices come from and when they hold.

    The genai-prices snapshot carries no date of its own: `as_of` is the release date of the
    genai-prices version exported. Prices that change on a date or with the time of day are
    the ones in force at `prices_in_force_at`; `next_scheduled_change` is the first later date
    on which genai-prices knows a listed price changes (then `make prices` should be rerun).
    """

    package: str
    version: str
    as_of: dt.date
    prices_in_force_at: dt.datetime
    next_scheduled_change: dt.date | None


@dataclass(frozen=True, slots=True)
class RequestCost:
    """One request's bill in USD, split by what is billed, and the tier it paid (None: the base rates)."""

    input_usd: float
    cached_input_usd: float
    cache_write_usd: float
    output_usd: float
    request_usd: float
    tier_above_prompt_tokens: int | None

    @property
    def total_usd(self) -> float:
        return self.input_usd + self.cached_input_usd + self.cache_write_usd + self.output_usd + self.request_usd


def _rates(raw: dict[str, Any], where: str) -> Rates:
    try:
        return Rates(**{_RATE_KEYS[key]: float(value) for key, value in raw.items() if key in _RATE_KEYS})
    except TypeError as error:
        raise ValueError(f"{where}: needs input and output prices ({error})") from None


def _entry(key: str, raw: dict[str, Any], providers: dict[str, str]) -> ApiModel:
    unknown = set(raw) - _ENTRY_KEYS
    if unknown:
        raise ValueError(f"{DATA_FILE}: {key}: unknown keys {sorted(unknown)}")
    provider_id, _, model_id = key.partition("/")
    if provider_id not in providers or not model_id:
        raise ValueError(f"{DATA_FILE}: {key!r} is not 'provider/model' with a known provider")
    tiers = tuple(Tier(int(tier["above_prompt_tokens"]), _rates(tier, f"{key} tier")) for tier in raw.get("tiers", ()))
    return ApiModel(
        id=key,
        provider_id=provider_id,
        provider_name=providers[provider_id],
        model_id=model_id,
        name=str(raw["name"]),
        rates=_rates(raw, key),
        tiers=tiers,
        usd_per_request=float(raw.get("usd_per_thousand_requests", 0)) / REQUESTS_PER_THOUSAND,
        varies_by_time_of_day=bool(raw.get("varies_by_time_of_day", False)),
        deprecated=bool(raw.get("deprecated", False)),
    )


@cache
def _load() -> tuple[Snapshot, dict[str, ApiModel]]:
    text = resources.files("core").joinpath("data", DATA_FILE).read_text(encoding="utf-8")
    document = json.loads(text)
    if document.get("format") != FORMAT:
        raise ValueError(f"{DATA_FILE}: format {document.get('format')!r}, expected {FORMAT}; run `make prices`")
    source = document["source"]
    next_change = source["next_scheduled_change"]
    snapshot = Snapshot(
        package=source["package"],
        version=source["version"],
        as_of=dt.date.fromisoformat(source["released"]),
        prices_in_force_at=dt.datetime.fromisoformat(source["prices_in_force_at"]),
        next_scheduled_change=None if next_change is None else dt.date.fromisoformat(next_change),
    )
    providers = document["providers"]
    models = {key: _entry(key, raw, providers) for key, raw in sorted(document["models"].items())}
    return snapshot, models


def snapshot() -> Snapshot:
    """The source of the catalogue: genai-prices version, its release date ("as of") and the pricing instant."""
    return _load()[0]


def catalogue() -> tuple[ApiModel, ...]:
    """Every API model with token prices, sorted by id."""
    return tuple(_load()[1].values())


@cache
def ids() -> tuple[str, ...]:
    """Every API model's id, sorted: built once (a select of them is drawn on every rerun of every page)."""
    return tuple(_load()[1])


@cache
def _ids_by_lowercase() -> dict[str, str]:
    return {key.lower(): key for key in _load()[1]}


def closest_ids(model_id: str, count: int = 5) -> list[str]:
    """Ids that look like `model_id` (case-insensitive): the same model at other providers first, then near spellings."""
    ids = _ids_by_lowercase()
    wanted = model_id.strip().lower()
    same_model = [lowered for lowered in ids if wanted in (lowered.partition("/")[2], lowered.rpartition("/")[2])]
    return [ids[lowered] for lowered in near_matches(wanted, list(ids), count, first=same_model)]


def lookup(model_id: str) -> ApiModel:
    """The entry for `provider/model` (case-insensitive), or a ValueError naming it and the closest ids.

    Example: `lookup("openai/gpt-4o").input_usd_per_million_tokens` is 2.5 (genai-prices 0.2.3);
    `lookup("openai/gpt-4p")` raises "unknown API model 'openai/gpt-4p'; closest: openai/gpt-4o, ...".
    """
    models = _load()[1]
    key = model_id if model_id in models else _ids_by_lowercase().get(model_id.strip().lower())
    if key is not None:
        return models[key]
    suggestions = closest_ids(model_id)
    hint = f"closest: {', '.join(suggestions)}" if suggestions else "search with `python -m core prices WORD`"
    raise ValueError(f"unknown API model {model_id!r} (ids are provider/model); {hint}")


def search(text: str) -> tuple[ApiModel, ...]:
    """Entries whose provider id or name, model id or name contain every word of `text` (case-insensitive).

    An empty `text` matches everything. Example: `search("Anthropic sonnet")` holds
    anthropic/claude-sonnet-4-5, and the same model resold as aws/global.anthropic.claude-sonnet-4-5-20250929-v1:0
    and openrouter/anthropic/claude-sonnet-4.5 (their model ids name Anthropic).
    """
    words = text.lower().split()
    return tuple(
        m for m in _load()[1].values() if all(word in f"{m.id} {m.provider_name} {m.name}".lower() for word in words)
    )


def applicable_tier(model: ApiModel, prompt_tokens: int) -> Tier | None:
    """The highest tier whose threshold the prompt is above (strictly), or None for the base rates.

    Example: gemini-2.5-pro's tier starts above 200,000 prompt tokens, so a 200,000-token
    prompt pays the base rates and a 200,001-token prompt pays the tier's.
    """
    for tier in reversed(model.tiers):
        if prompt_tokens > tier.above_prompt_tokens:
            return tier
    return None


def request_cost(
    model: ApiModel,
    prompt_tokens: int,
    output_tokens: int,
    cached_prompt_tokens: int = 0,
    cache_write_tokens: int = 0,
) -> RequestCost:
    """What ONE request costs: uncached × input + cached × cached-input + writes × cache-write + output × output rate.

    `prompt_tokens` is the whole prompt; `cached_prompt_tokens` (cache reads) and
    `cache_write_tokens` are parts of it. The rates are the request's tier's (see
    `applicable_tier`), decided by this request's `prompt_tokens` alone — so price one reply
    and multiply by the number of replies; never pass a month's tokens in one call.

    Example (google/gemini-2.5-pro: $1.25 input, $0.125 cached, $10 output; above 200k
    prompt tokens $2.50 / $0.25 / $15): 10,000 prompt tokens of which 2,000 cached, 1,000
    output → 8,000 × 1.25e-6 + 2,000 × 0.125e-6 + 1,000 × 10e-6 = $0.01 + $0.00025 + $0.01
    = $0.02025. A 250,000-token prompt (none cached) with the same reply pays the tier:
    250,000 × 2.5e-6 + 1,000 × 15e-6 = $0.625 + $0.015 = $0.64.
    """
    check_int("prompt_tokens", prompt_tokens, 0)
    check_int("output_tokens", output_tokens, 0)
    check_int("cached_prompt_tokens", cached_prompt_tokens, 0)
    check_int("cache_write_tokens", cache_write_tokens, 0)
    if cached_prompt_tokens + cache_write_tokens > prompt_tokens:
        raise ValueError(
            f"cached_prompt_tokens + cache_write_tokens must be <= prompt_tokens ({prompt_tokens:,}), "
            f"got {cached_prompt_tokens:,} + {cache_write_tokens:,}"
        )
    tier = applicable_tier(model, prompt_tokens)
    rates = model.rates if tier is None else tier.rates
    input_rate = rates.input_usd_per_million_tokens
    cached_rate = (
        input_rate if rates.cached_input_usd_per_million_tokens is None else rates.cached_input_usd_per_million_tokens
    )
    write_rate = (
        input_rate if rates.cache_write_usd_per_million_tokens is None else rates.cache_write_usd_per_million_tokens
    )
    per_token = 1 / TOKENS_PER_MILLION
    return RequestCost(
        input_usd=(prompt_tokens - cached_prompt_tokens - cache_write_tokens) * input_rate * per_token,
        cached_input_usd=cached_prompt_tokens * cached_rate * per_token,
        cache_write_usd=cache_write_tokens * write_rate * per_token,
        output_usd=output_tokens * rates.output_usd_per_million_tokens * per_token,
        request_usd=model.usd_per_request,
        tier_above_prompt_tokens=None if tier is None else tier.above_prompt_tokens,
    )
