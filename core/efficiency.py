"""Named efficiencies: the lesson's ideal machine and the defaults calibrated on real hardware.

The calibrated values are fitted by `python -m core calibrate --fit` on
`core/data/calibration_train.csv`, and judged on measurements from other sources:
`calibration_validation.csv` (looked at while choosing which knobs the model needs) and
`calibration_test.csv` (collected after the defaults were frozen). See `core/data/README.md`.
"""

from __future__ import annotations

from core.specs import Efficiency

IDEAL = Efficiency(
    label="ideal", mbu=1.0, mfu=1.0, step_overhead_s=0.0, sequence_overhead_s=0.0, allreduce_latency_s=0.0
)

# Fitted by `python -m core calibrate --fit` on calibration_train.csv (24 rows, 4 sources).
# Median absolute error: 3.3 % on those, 13.5 % on validation (20 rows, 8 other sources),
# 11.1 % on test (24 rows, 6 more sources, gathered after these values were frozen).
CALIBRATED = Efficiency(
    label="calibrated",
    mbu=0.85,
    mfu=0.56,
    step_overhead_s=2.5e-3,
    sequence_overhead_s=14e-6,
    allreduce_latency_s=24e-6,
)

NAMED = {IDEAL.label: IDEAL, CALIBRATED.label: CALIBRATED}


def default_efficiency(gpu_id: str) -> Efficiency:
    """Ideal only for the lesson's toy GPU; every real or custom GPU gets the calibrated defaults."""
    from core.presets import TOY_GPU_ID

    return IDEAL if gpu_id == TOY_GPU_ID else CALIBRATED
