"""Would fitting the engines' costs on every set, not the fit set alone, predict new sources better?

Every measurement set has now been looked at, so the question is answered the only honest way
left: 5-fold cross-validation over sources (a source's rows always fall in one fold, its fold
sha256(source id) mod 5). Each fold's rows are predicted by costs fitted (`core.engine_fit`,
the shipped structure and loss) on the other four folds; those out-of-fold errors are set beside
the shipped costs' (fitted on `measurements_fit.csv` alone) on the same rows. The comparison that
matters is on the rows outside the fit set, which the shipped costs never saw either.

On 2026-12-02, over fit to fresh7 (982 rows, before fresh8 joined `SETS`): out-of-fold 26.8 % against the shipped 25.9 % on
the 736 rows outside the fit set (validation 29.5 % against 17.8 %, fresh5 39.6 % against
59.3 %), so pooling every set into the fit was not shipped. Again on 2026-12-02 over every set to
fresh16 (1,223 rows): out-of-fold 21.3 % against the shipped 22.1 % on the 977 rows outside the fit set
(validation 30.0 against 18.5 %, fresh16 35.0 against 64.9 %); llama.cpp's own costs
(`core.engine_fit.LATER_FITTED`) are fitted on every set in both columns, so the comparison is of
the rest. A 0.8-point gain, worse on validation: not shipped either.

Run: `python tools/cross_validate.py` (five fits, about 90 s here). Not part of `make test`.
"""

from __future__ import annotations

import hashlib
import statistics

from core.calibration import predict
from core.engine import ENGINES
from core.engine_fit import fit_profiles
from core.measurements import SETS, Measurement, load

FOLDS = 5


def fold_of(measurement: Measurement) -> int:
    return int(hashlib.sha256(measurement.source_id.encode()).hexdigest(), 16) % FOLDS


def main() -> None:
    rows = [(name, m) for name in SETS for m in load(name)]
    out_of_fold: dict[int, float] = {}
    for fold in range(FOLDS):
        profiles = fit_profiles([m for _, m in rows if fold_of(m) != fold])
        for i, (_, m) in enumerate(rows):
            if fold_of(m) == fold:
                out_of_fold[i] = abs(predict(m, profiles) / m.value - 1)
    shipped = {i: abs(predict(m, ENGINES) / m.value - 1) for i, (_, m) in enumerate(rows)}
    print(f"{len(rows)} rows, {FOLDS} folds by source. Median absolute error:")
    print(f"  {'set':<12}{'rows':>6}{'shipped costs':>16}{'out of fold':>14}")
    for name in SETS:
        picked = [i for i, (set_name, _) in enumerate(rows) if set_name == name]
        print(
            f"  {name:<12}{len(picked):>6}{statistics.median(shipped[i] for i in picked):>15.1%}"
            f"{statistics.median(out_of_fold[i] for i in picked):>14.1%}"
        )
    outside = [i for i, (set_name, _) in enumerate(rows) if set_name != "fit"]
    print(
        f"  {'not fit':<12}{len(outside):>6}{statistics.median(shipped[i] for i in outside):>15.1%}"
        f"{statistics.median(out_of_fold[i] for i in outside):>14.1%}"
    )


if __name__ == "__main__":
    main()
