"""Write core/data/api_prices.json: every API model's token prices from genai-prices' bundled snapshot.

    python tools/export_api_prices.py [--date YYYY-MM-DD] [--output PATH]     (or: make prices)

`core` may import nothing but the standard library and numpy, so it cannot read
genai-prices itself; this generator turns the snapshot that ships inside the installed
genai-prices wheel into a small JSON file that ships inside `core`. Only the bundled data
is read (`get_snapshot()`, never `UpdatePrices`): nothing is downloaded, here or at run
time. tests/core/test_api_prices.py re-exports and compares, so bumping genai-prices
without running `make prices` fails a test.

What is kept, per provider/model (the key is `provider/model`: ids repeat across providers):

- the standard prices (no price variant: no batch, flex or priority tier) in force on
  `--date` at 12:00 UTC. A few prices change on a date (StartDateConstraint) and DeepSeek's
  change with the time of day (TimeOfDateConstraint, peak/off-peak): the date and the fixed
  hour make the export reproducible, the entry says `varies_by_time_of_day`, and the file
  records the next date on which a scheduled price change takes effect;
- input, cached input (genai-prices' cache read), cache write (the default, 5-minute, write)
  and output in USD per million tokens, and a per-request fee where there is one (Perplexity);
- tiers: genai-prices gives each price its own `TieredPrices(base, tiers=[Tier(start, price)])`
  and picks, per request, the highest tier whose `start` is *below* the request's
  `input_tokens` (the whole prompt: uncached + cache read + cache write), then charges ALL of
  that price's tokens at it (a cliff, not marginal). Every tiered price of a model is
  written out at each threshold that any of them has, so one request above a threshold pays
  one consistent set of rates.

Left out: models without both an input and an output token price (image, audio, speech,
embeddings), and prices that are not per text token (audio and image tokens, web searches,
the 1-hour cache write).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections.abc import Sequence
from decimal import Decimal
from importlib.metadata import version
from pathlib import Path
from typing import Any

from genai_prices import types
from genai_prices.data_snapshot import get_snapshot

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "core" / "data" / "api_prices.json"
FORMAT = 1

# The bundled snapshot carries no date of its own, so the release date of the genai-prices
# version stands in as "prices as of". From the upload-time of the wheel in PyPI's simple
# index. A new version needs its line here: the export stops and says so.
RELEASE_DATES = {"0.2.3": "2026-11-10"}

# The time of day at which prices are read: DeepSeek's peak/off-peak prices depend on it.
PRICED_AT_HOUR_UTC = 12

# genai-prices price key -> the key written to the file (USD per million tokens).
TOKEN_PRICES = {
    "input_mtok": "input_usd_per_mtok",
    "cache_read_mtok": "cached_input_usd_per_mtok",
    "cache_write_mtok": "cache_write_usd_per_mtok",
    "output_mtok": "output_usd_per_mtok",
}
REQUEST_PRICE = "requests_kcount"  # USD per thousand requests


def _number(value: Decimal) -> int | float:
    """A price as a JSON number: 10 rather than 10.0, and the shortest float that round-trips."""
    return int(value) if value == value.to_integral_value() else float(value)


def price_at(price: Decimal | types.TieredPrices, prompt_tokens: int) -> Decimal:
    """The rate one request with `prompt_tokens` input tokens pays, exactly as genai-prices picks it.

    Mirrors `genai_prices.types.calc_unit_price`: the highest tier with `prompt_tokens > start`.
    """
    if not isinstance(price, types.TieredPrices):
        return price
    for tier in reversed(price.tiers):
        if prompt_tokens > tier.start:
            return tier.price
    return price.base


def _rates(prices: dict[str, Decimal | types.TieredPrices], prompt_tokens: int) -> dict[str, int | float]:
    return {TOKEN_PRICES[key]: _number(price_at(price, prompt_tokens)) for key, price in prices.items()}


def _constraints(model: types.ModelInfo) -> list[object]:
    return [] if isinstance(model.prices, types.ModelPrice) else [c.constraint for c in model.prices]


def model_entry(model: types.ModelInfo, at: dt.datetime) -> dict[str, Any] | None:
    """One model's entry in the file, or None when it has no input and output token price."""
    standard = model.get_prices(at)
    prices = {key: getattr(standard, key) for key in TOKEN_PRICES if getattr(standard, key) is not None}
    if "input_mtok" not in prices or "output_mtok" not in prices:
        return None
    entry: dict[str, Any] = {"name": model.name or model.id, **_rates(prices, 0)}
    thresholds = sorted(
        {tier.start for price in prices.values() if isinstance(price, types.TieredPrices) for tier in price.tiers}
    )
    if thresholds:
        # Just above each threshold every tiered price has moved to the tier it reaches there.
        entry["tiers"] = [{"above_prompt_tokens": start, **_rates(prices, start + 1)} for start in thresholds]
    per_request = getattr(standard, REQUEST_PRICE)
    if per_request is not None:
        if isinstance(per_request, types.TieredPrices):
            raise ValueError(f"{model.id}: tiered per-request prices are not supported")
        entry["usd_per_thousand_requests"] = _number(per_request)
    if any(isinstance(c, types.TimeOfDateConstraint) for c in _constraints(model)):
        entry["varies_by_time_of_day"] = True
    if model.deprecated:
        entry["deprecated"] = True
    return entry


def export(on: dt.date) -> dict[str, Any]:
    """The whole file as a dict: prices in force on `on` at 12:00 UTC."""
    package_version = version("genai-prices")
    if package_version not in RELEASE_DATES:
        raise SystemExit(
            f"genai-prices {package_version} has no release date in {Path(__file__).name}: add it to RELEASE_DATES "
            "(the upload-time of its wheel on PyPI)"
        )
    at = dt.datetime.combine(on, dt.time(PRICED_AT_HOUR_UTC), tzinfo=dt.UTC)
    providers: dict[str, str] = {}
    models: dict[str, dict[str, Any]] = {}
    scheduled: set[dt.date] = set()
    for provider in get_snapshot().providers:
        for model in provider.models:
            entry = model_entry(model, at)
            if entry is None:
                continue
            key = f"{provider.id}/{model.id}"
            if key in models:
                raise ValueError(f"{key} appears twice in the snapshot")
            models[key] = entry
            providers[provider.id] = provider.name
            scheduled |= {
                c.start_date
                for c in _constraints(model)
                if isinstance(c, types.StartDateConstraint) and c.start_date > on
            }
    return {
        "format": FORMAT,
        "source": {
            "package": "genai-prices",
            "version": package_version,
            "released": RELEASE_DATES[package_version],
            "prices_in_force_at": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "next_scheduled_change": min(scheduled).isoformat() if scheduled else None,
        },
        "providers": dict(sorted(providers.items())),
        "models": dict(sorted(models.items())),
    }


def render(document: dict[str, Any]) -> str:
    """Compact and deterministic: sorted keys, no spaces, one model per line (so a price bump is a one-line diff)."""

    def dumps(value: object) -> str:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    head = {key: value for key, value in document.items() if key not in ("providers", "models")}
    lines = [dumps(head)[:-1] + ",", f'"providers":{dumps(document["providers"])},', '"models":{']
    models = list(document["models"].items())
    lines += [
        f"{dumps(key)}:{dumps(entry)}{',' if i < len(models) - 1 else ''}" for i, (key, entry) in enumerate(models)
    ]
    lines.append("}}")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--date",
        type=dt.date.fromisoformat,
        default=dt.datetime.now(dt.UTC).date(),
        help="take the prices in force on this UTC date, at 12:00 UTC (default: today)",
    )
    parser.add_argument("--output", type=Path, default=OUTPUT, help=f"where to write (default: {OUTPUT})")
    args = parser.parse_args(argv)
    document = export(args.date)
    args.output.write_text(render(document), encoding="utf-8")
    tiered = sum("tiers" in entry for entry in document["models"].values())
    print(
        f"wrote {args.output}: {len(document['models'])} models from {len(document['providers'])} providers "
        f"({tiered} tiered), genai-prices {document['source']['version']}, "
        f"prices in force at {document['source']['prices_in_force_at']}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
