"""What the API side costs: token prices (or the catalogue entry they start from) and traffic."""

from __future__ import annotations

from dataclasses import dataclass

from core.fields import described, validate
from core.validation import check_text


@dataclass(frozen=True, slots=True)
class Pricing:
    """API token prices and traffic. Defaults are the lesson's Part 3 (illustrative prices).

    `api_model` ("openai/gpt-4o") names the catalogue entry the prices start from (the
    link's `api=`): its list prices, unless typed over. While they are the catalogue's, a
    reply is billed the provider's way (long-prompt tiers, per-request fees: `core.billing`).
    """

    input_usd_per_million_tokens: float = described(
        0.50, key="pin", kind=float, label="Input ($ / M tokens)", unit="USD per million tokens", low=0, high=1e4,
        step=0.05, flag="--input-price", help="What the API charges per million prompt tokens, USD.",
    )  # fmt: skip
    cached_input_usd_per_million_tokens: float = described(
        0.50, key="pcache", kind=float, label="Cached input ($ / M tokens)", unit="USD per million tokens", low=0,
        high=1e4, step=0.05, flag="--cached-input-price",
        help="Per million prompt tokens read from the provider's prompt cache (a cache hit), USD.",
    )  # fmt: skip
    output_usd_per_million_tokens: float = described(
        1.50, key="pout", kind=float, label="Output ($ / M tokens)", unit="USD per million tokens", low=0, high=1e4,
        step=0.05, flag="--output-price",
        help="Per million output tokens, USD: usually several times the input price.",
    )  # fmt: skip
    replies_per_day: int = described(
        100_000, key="replies", kind=int, label="Replies per day", unit="replies per day", low=0, high=10**12,
        step=1000, flag="--replies-per-day", help="Replies your feature sends per day.",
    )  # fmt: skip
    days_per_month: int = described(
        30, key="days", kind=int, label="Days per month", unit="days", low=1, high=31, flag="--days",
        help="Days billed per month.",
    )  # fmt: skip
    cache_write_usd_per_million_tokens: float | None = described(
        None, key="pwrite", kind=float, label="Cache write ($ / M tokens)", unit="USD per million tokens", low=0,
        high=1e4, step=0.05, flag="--cache-write-price", optional=True,
        help="Per million prompt tokens written to the prompt cache, USD, where the provider charges for it "
        "(empty: the input price).",
    )  # fmt: skip
    # The catalogue entry the prices start from (the link's api=); None: prices typed by hand.
    api_model: str | None = None

    def __post_init__(self) -> None:
        validate(self)
        if self.api_model is not None:
            from core.api_prices import lookup  # the catalogue loads on first use only

            check_text("api_model", self.api_model, 120)
            object.__setattr__(self, "api_model", lookup(self.api_model).id)  # its own spelling
