"""A few well-known API models' token prices, from genai-prices' bundled (offline) snapshot.

Only the data shipped inside the installed package is read: no network, never
`UpdatePrices`. Tiered prices (e.g. dearer above 200k prompt tokens) use their base
tier, the price an ordinary request pays. A missing cached-input price means the
provider gives no caching discount, so it is the input price.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from importlib.metadata import PackageNotFoundError, version

# (provider id, model id) as genai-prices names them: a curated handful, not the catalogue.
CURATED: tuple[tuple[str, str], ...] = (
    ("openai", "gpt-4o"),
    ("openai", "gpt-4o-mini"),
    ("openai", "gpt-4.1"),
    ("openai", "gpt-4.1-mini"),
    ("openai", "gpt-5"),
    ("openai", "gpt-5-mini"),
    ("anthropic", "claude-opus-4-1"),
    ("anthropic", "claude-sonnet-4-5"),
    ("anthropic", "claude-haiku-4-5"),
    ("google", "gemini-2.5-pro"),
    ("google", "gemini-2.5-flash"),
    ("google", "gemini-2.5-flash-lite"),
    ("deepseek", "deepseek-chat"),
    ("mistral", "mistral-small-latest"),
    ("groq", "llama-3.1-8b-instant"),
    ("groq", "llama-3.3-70b-versatile"),
)


@dataclass(frozen=True, slots=True)
class ApiPrice:
    """One model's list prices in USD per million tokens."""

    label: str
    input_usd_per_million_tokens: float
    cached_input_usd_per_million_tokens: float
    output_usd_per_million_tokens: float


def base_price(price: object) -> float | None:
    """A Decimal, or a tiered price's base tier, as a float; None when there is no price."""
    if price is None:
        return None
    base = getattr(price, "base", price)
    return float(base) if isinstance(base, Decimal | int | float) else None


@cache
def api_prices() -> tuple[ApiPrice, ...]:
    """The curated models that have token prices in the snapshot; () without genai-prices."""
    try:
        from genai_prices.data_snapshot import get_snapshot
    except ImportError:
        return ()
    now = dt.datetime.now(dt.UTC)
    providers = {p.id: p for p in get_snapshot().providers}
    found = []
    for provider_id, model_id in CURATED:
        provider = providers.get(provider_id)
        model = next((m for m in provider.models if m.id == model_id), None) if provider else None
        if provider is None or model is None:
            continue
        prices = model.get_prices(now)
        pin, pout = base_price(prices.input_mtok), base_price(prices.output_mtok)
        if pin is None or pout is None:
            continue
        cached = base_price(prices.cache_read_mtok)
        label = f"{provider.name} · {model_id}"
        found.append(ApiPrice(label, pin, pin if cached is None else cached, pout))
    return tuple(found)


@cache
def snapshot_version() -> str:
    """Which genai-prices release the prices come from (shown beside them as the 'as of')."""
    try:
        return f"genai-prices {version('genai-prices')}"
    except PackageNotFoundError:
        return "genai-prices"
