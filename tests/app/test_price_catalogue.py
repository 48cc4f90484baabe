"""The offline price list (app/price_catalogue.py): genai-prices' bundled snapshot, no network."""

from __future__ import annotations

import math
import socket
from decimal import Decimal
from types import SimpleNamespace

import pytest

from app import price_catalogue


def test_the_curated_models_have_finite_prices_from_the_snapshot(monkeypatch: pytest.MonkeyPatch) -> None:
    price_catalogue.api_prices.cache_clear()

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the price list must not touch the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    prices = price_catalogue.api_prices()
    assert len(prices) >= 10
    for price in prices:
        values = (price.input_usd_per_million_tokens, price.cached_input_usd_per_million_tokens,
                  price.output_usd_per_million_tokens)  # fmt: skip
        assert all(math.isfinite(v) and 0 <= v <= 1000 for v in values), price
        assert price.cached_input_usd_per_million_tokens <= price.input_usd_per_million_tokens
    labels = [p.label for p in prices]
    assert len(set(labels)) == len(labels)
    # gpt-4o-mini's list price: $0.15 in, $0.075 cached, $0.60 out per million.
    mini = next(p for p in prices if p.label == "OpenAI · gpt-4o-mini")
    assert (mini.input_usd_per_million_tokens, mini.cached_input_usd_per_million_tokens,
            mini.output_usd_per_million_tokens) == (0.15, 0.075, 0.6)  # fmt: skip


def test_tiered_prices_use_the_base_tier_and_missing_prices_are_none() -> None:
    tiered = SimpleNamespace(base=Decimal("3"), tiers=[SimpleNamespace(start=200_000, price=Decimal("6"))])
    assert price_catalogue.base_price(tiered) == 3.0
    assert price_catalogue.base_price(Decimal("0.5")) == 0.5
    assert price_catalogue.base_price(None) is None


def test_a_provider_without_cache_pricing_bills_cached_tokens_at_the_input_price() -> None:
    # Groq lists no cached-input price for Llama 3.3 70B: no caching discount.
    llama = next(p for p in price_catalogue.api_prices() if p.label == "Groq · llama-3.3-70b-versatile")
    assert llama.cached_input_usd_per_million_tokens == llama.input_usd_per_million_tokens
