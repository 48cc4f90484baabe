"""`python -m core prices [SEARCH] [--json]`: the API price catalogue, searched by provider or name."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from core.api_prices import ApiModel, Rates, Snapshot, catalogue, search, snapshot


def add_prices_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "search",
        nargs="*",
        metavar="SEARCH",
        help="words that must all appear in the provider or the model's id or name (none: every model)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object (source and models)")


def _price(value: float | None) -> str:
    """A price with two to six decimals, as many as it needs (2.50, 0.125, 0.0028); '-' when there is none."""
    if value is None:
        return "-"
    whole, _, decimals = f"{value:,.6f}".partition(".")
    return f"{whole}.{decimals.rstrip('0'):0<2}"


def source_line(source: Snapshot) -> str:
    line = (
        f"prices as of {source.as_of} ({source.package} {source.version}), "
        f"in force on {source.prices_in_force_at:%Y-%m-%d} at {source.prices_in_force_at:%H:%M} UTC"
    )
    if source.next_scheduled_change is not None:
        line += f"; genai-prices lists price changes from {source.next_scheduled_change} (then run `make prices`)"
    return line


def _notes(model: ApiModel, with_write: bool) -> str:
    notes = []
    for tier in model.tiers:
        rates = tier.rates
        shown = [rates.input_usd_per_million_tokens, rates.cached_input_usd_per_million_tokens]
        shown += [rates.cache_write_usd_per_million_tokens] if with_write else []
        shown += [rates.output_usd_per_million_tokens]
        notes.append(f"above {tier.above_prompt_tokens:,} prompt tokens: {' / '.join(map(_price, shown))}")
    if model.usd_per_request:
        notes.append(f"+ ${model.usd_per_request:g} per request")
    if model.varies_by_time_of_day:
        notes.append("price depends on the time of day")
    if model.deprecated:
        notes.append("deprecated")
    return "; ".join(notes)


def prices_text(models: tuple[ApiModel, ...], source: Snapshot, query: str) -> str:
    with_write = any(m.cache_write_usd_per_million_tokens is not None for m in models)
    header = ["id", "input", "cached", *(["write"] if with_write else []), "output"]
    rows = []
    for m in models:
        prices = [m.input_usd_per_million_tokens, m.cached_input_usd_per_million_tokens]
        prices += [m.cache_write_usd_per_million_tokens] if with_write else []
        prices += [m.output_usd_per_million_tokens]
        rows.append([m.id, *map(_price, prices), _notes(m, with_write)])
    id_width = max(len(header[0]), *(len(row[0]) for row in rows))
    price_width = max(8, *(len(cell) for row in rows for cell in row[1:-1]))

    def line(cells: list[str], notes: str) -> str:
        text = f"  {cells[0]:<{id_width}}" + "".join(f"{cell:>{price_width + 2}}" for cell in cells[1:])
        return f"{text}   {notes}".rstrip()

    matched = f"matching {query!r}" if query else "in the catalogue"
    lines = [
        f"{len(models):,} API models {matched}; USD per million tokens",
        source_line(source),
        "",
        line(header, "notes (tiers: the whole request pays the tier's rates)"),
    ]
    lines += [line(row[:-1], row[-1]) for row in rows]
    lines += [
        "",
        "cached = cache read; write = cache write; '-' = no separate price (those tokens pay the input price)",
    ]
    return "\n".join(lines) + "\n"


def prices_json(models: tuple[ApiModel, ...], source: Snapshot) -> dict[str, object]:
    return {
        "source": {
            "package": source.package,
            "version": source.version,
            "as_of": source.as_of.isoformat(),
            "prices_in_force_at": source.prices_in_force_at.isoformat(),
            "next_scheduled_change": None
            if source.next_scheduled_change is None
            else source.next_scheduled_change.isoformat(),
        },
        "models": [_model_json(m) for m in models],
    }


def _rates_json(rates: Rates) -> dict[str, float | None]:
    return asdict(rates)


def _model_json(m: ApiModel) -> dict[str, object]:
    """Flat, stable keys (add, never rename): scripts read these."""
    return {
        "id": m.id,
        "provider_id": m.provider_id,
        "provider_name": m.provider_name,
        "model_id": m.model_id,
        "name": m.name,
        **_rates_json(m.rates),
        "usd_per_request": m.usd_per_request,
        "tiers": [{"above_prompt_tokens": t.above_prompt_tokens, **_rates_json(t.rates)} for t in m.tiers],
        "varies_by_time_of_day": m.varies_by_time_of_day,
        "deprecated": m.deprecated,
    }


def run_prices(args: argparse.Namespace) -> str:
    """The text to print; a search that matches nothing is bad input (exit 2, one line)."""
    query = " ".join(args.search).strip()
    models = search(query) if query else catalogue()
    if not models:
        args.subparser.error(f"no API model matches {query!r}; try one word of a provider or model name")
    if args.json:
        return json.dumps(prices_json(models, snapshot()), indent=2) + "\n"
    return prices_text(models, snapshot(), query)
