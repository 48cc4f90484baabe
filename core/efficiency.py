"""Named efficiencies: the lesson's ideal machine and the defaults calibrated on real hardware.

The calibrated values are fitted by `python -m core calibrate --fit` on the training
set `core/data/calibration_train.csv` (the published measurements the project was given)
and checked on `core/data/calibration_holdout.csv`, which they were not fitted on.
"""

from __future__ import annotations

from core.specs import Efficiency

IDEAL = Efficiency(label="ideal", mbu=1.0, mfu=1.0, step_overhead_s=0.0, allreduce_latency_s=0.0)

# Fitted on calibration_train.csv (see `python -m core calibrate`).
CALIBRATED = Efficiency(
    label="calibrated",
    mbu=0.83,
    mfu=0.6,
    step_overhead_s=2.0e-3,
    allreduce_latency_s=30e-6,
)

NAMED = {IDEAL.label: IDEAL, CALIBRATED.label: CALIBRATED}


def default_efficiency(gpu_id: str) -> Efficiency:
    """Ideal only for the lesson's toy GPU; every real or custom GPU gets the calibrated defaults."""
    from core.presets import TOY_GPU_ID

    return IDEAL if gpu_id == TOY_GPU_ID else CALIBRATED
