"""Slicing measured rows for an error report: the whole set, then each value of each named key."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

Item = TypeVar("Item")


def slice_groups(
    items: Iterable[Item],
    slices: Mapping[str, Callable[[Any], object]],
    of: Callable[[Item], Any] = lambda item: item,
    value_order: Callable[[str], Any] = str,
) -> list[tuple[str, str, list[Item]]]:
    """(slice, value, items) for ("all", "all"), then every value of every slice in `slices` order.

    Each slice's key is called on `of(item)` (the measurement an item stands for); a key that
    gives None leaves the item out of that slice. Values are shown as text and sorted by
    `value_order` within a slice. Example: rows at batch 1, 8 and 1 with
    {"batch": lambda m: f"b{m.batch}"} → ("all", "all", 3 rows), ("batch", "b1", 2),
    ("batch", "b8", 1).
    """
    groups: dict[tuple[str, str], list[Item]] = defaultdict(list)
    for item in items:
        groups[("all", "all")].append(item)
        subject = of(item)
        for name, key in slices.items():
            value = key(subject)
            if value is not None:
                groups[(name, str(value))].append(item)
    order = ["all", *slices]
    ordered = sorted(groups.items(), key=lambda kv: (order.index(kv[0][0]), value_order(kv[0][1])))
    return [(name, value, group) for (name, value), group in ordered]
