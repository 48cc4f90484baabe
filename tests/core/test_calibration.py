"""The model against published measurements: the split, the fit, and the medians pinned per set and slice."""

from __future__ import annotations

import pytest

from core.calibration import median_absolute_error_pct, percentage_error, predict, slice_errors
from core.engine import ENGINES
from core.engine_fit import fit_profiles, ideal_profiles
from core.measurements import SETS, load
from core.range_calibration import coverage, log_residual


@pytest.fixture(scope="module")
def sets():
    return {name: list(load(name)) for name in SETS}


def test_the_sets_and_their_sources(sets):
    assert {name: len(rows) for name, rows in sets.items()} == {"fit": 246, "validation": 149, "test": 97, "fresh": 72}
    sources = {name: {m.source_id for m in rows} for name, rows in sets.items()}
    assert {name: len(ids) for name, ids in sources.items()} == {"fit": 30, "validation": 16, "test": 8, "fresh": 10}
    # Split by source: no source has rows in two sets.
    for i, one in enumerate(SETS):
        for other in SETS[i + 1 :]:
            assert not sources[one] & sources[other], (one, other)
    for rows in sets.values():
        for m in rows:
            assert len(m.source) > 20 and m.value > 0 and m.published


# Pinned at what `python -m core calibrate` printed when the costs were frozen, + 0.2 points
# of slack for floating-point noise only: a change that makes any slice worse fails here.
PINNED = {
    ("fit", "all", "all"): 18.6,
    ("fit", "batch", "batch 1"): 17.6,
    ("fit", "batch", "batch > 1"): 22.3,
    ("fit", "moe", "MoE"): 15.1,
    ("fit", "bits", "weights < 8 bits"): 29.9,
    ("fit", "engine", "llama.cpp"): 18.2,
    ("fit", "engine", "sglang"): 38.6,
    ("fit", "engine", "trtllm"): 19.3,
    ("fit", "engine", "typical"): 3.9,
    ("fit", "engine", "vllm"): 19.3,
    ("validation", "all", "all"): 18.7,
    ("validation", "batch", "batch 1"): 16.8,
    ("validation", "batch", "batch > 1"): 61.2,
    ("validation", "moe", "MoE"): 49.9,
    ("validation", "bits", "weights < 8 bits"): 15.1,
    ("validation", "engine", "llama.cpp"): 14.5,
    ("validation", "engine", "mlx"): 12.5,
    ("validation", "engine", "sglang"): 21.3,
    ("validation", "engine", "typical"): 20.6,
    ("validation", "engine", "vllm"): 58.5,
    # The test set, looked at once after the structure and the costs were frozen (27.8 % is far
    # from the 12 %: core/data/README.md says where it misses and why).
    ("test", "all", "all"): 27.8,
    ("test", "batch", "batch 1"): 28.0,
    ("test", "batch", "batch > 1"): 26.3,
    ("test", "moe", "MoE"): 27.0,
    ("test", "bits", "weights < 8 bits"): 27.6,
    ("test", "engine", "llama.cpp"): 12.5,
    ("test", "engine", "mlx"): 11.6,
    ("test", "engine", "sglang"): 26.8,
    ("test", "engine", "typical"): 26.3,
    ("test", "engine", "vllm"): 54.6,
    # The fresh set: ten sources gathered after the test set had been seen, judged once on
    # 2026-12-01 with the model as it was (19.0 % overall; still above the 12 %).
    ("fresh", "all", "all"): 19.0,
    ("fresh", "batch", "batch 1"): 21.6,
    ("fresh", "batch", "batch > 1"): 15.6,
    ("fresh", "moe", "MoE"): 22.7,
    ("fresh", "bits", "weights < 8 bits"): 21.4,
    ("fresh", "metric", "tpot_ms"): 7.0,
    ("fresh", "metric", "ttft_ms"): 25.9,
}
# The likely ranges' coverage (share of rows inside their range), pinned from below.
PINNED_COVERAGE = {
    ("validation", "all"): 0.79,
    ("test", "all"): 0.83,
    ("test", "batch 1"): 0.84,
    ("test", "batch > 1"): 0.99,
    ("test", "MoE"): 0.77,
    ("fresh", "all"): 0.75,
}


@pytest.fixture(scope="module")
def medians(sets):
    out = {}
    for name, rows in sets.items():
        errors = [percentage_error(predict(m), m.value) for m in rows]
        out.update({(name, e.slice, e.value): e.median_abs_pct for e in slice_errors(rows, errors)})
    return out


@pytest.mark.parametrize(("key", "pinned_pct"), sorted(PINNED.items()), ids=lambda v: str(v))
def test_median_error_is_pinned(medians, key, pinned_pct):
    assert medians[key] <= pinned_pct + 0.2


@pytest.mark.parametrize(("key", "share"), sorted(PINNED_COVERAGE.items()), ids=lambda v: str(v))
def test_range_coverage_is_pinned(sets, key, share):
    name, group = key
    found = {c.group: c.share for c in coverage(sets[name])}
    assert found[group] >= share


def test_one_row_by_hand(sets):
    # LMDeploy, Llama 2 7B fp16 on an A100 80GB, batch 1, 128 steps after a 1-token prompt, on
    # the typical engine: (13.48e9 B of weights + 64.5 tokens × 524,288 B of KV on average)
    # / (2,039e9 × 0.82) = 8.0824 ms, + 32 layers × 34 µs + 78 µs = 1.166 ms → 9.2485 ms.
    row = sets["fit"][0]
    assert (row.source_id, row.metric, row.value) == ("lmdeploy-a100-fp16", "tpot_ms", 9.998)
    expected = (13.48e9 + 64.5 * 524_288) / (2039e9 * 0.82) * 1e3 + 32 * 0.034 + 0.078
    assert predict(row) == pytest.approx(expected, rel=1e-9)


def test_a_pure_roofline_is_never_slower_than_a_real_server(sets):
    # The ideal machine is an upper bound on speed: every measured time is at least its estimate.
    ideal = ideal_profiles()
    for name in ("fit", "validation"):
        for m in sets[name]:
            assert log_residual(m, predict(m, ideal)) >= -1e-9, m.label


def test_the_engines_beat_a_pure_roofline_by_far(sets):
    for name in ("fit", "validation"):
        assert median_absolute_error_pct(sets[name], ideal_profiles()) > 2.5 * median_absolute_error_pct(sets[name])


def test_refitting_on_the_fit_set_gives_the_shipped_engines(sets):
    # From the neutral start in core.calibration: the shipped costs are exactly the procedure's.
    assert fit_profiles(sets["fit"]) == ENGINES
