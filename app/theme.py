"""One palette for every chart: the same quantity keeps its colour on every page.

Colours are mid-tone so they read on Streamlit's light and dark themes alike
(Okabe–Ito colour-blind-safe hues).
"""

PREFILL = "#0072B2"  # blue
DECODE = "#E69F00"  # orange
MEMORY_BOUND = "#CC79A7"  # purple-pink
COMPUTE_BOUND = "#009E73"  # green
MEASURED = "#56B4E9"  # light blue: simulated or uploaded measurements
FIT = "#D55E00"  # vermillion: a fitted line
CEILING = "#999999"  # grey: limits such as the memory ceiling and the roofline itself
INPUT_COST = PREFILL
OUTPUT_COST = DECODE
CACHED_COST = "#7FB8DA"

# One colour per option on charts that compare several (GPUs on the plan's frontier, the Compare page):
# Okabe-Ito's colour-blind-safe set, in the order the phases and bounds already use it.
SERIES = (PREFILL, DECODE, COMPUTE_BOUND, MEMORY_BOUND, MEASURED, FIT, "#F0E442", CEILING)
BOUND_COLOURS = {"memory": MEMORY_BOUND, "compute": COMPUTE_BOUND}
# A target or a price drawn across the options' lines: dark grey, told apart by its dash, so that it is no
# option's colour (the plan's vermillion target and orange API line read as two more GPUs).
REFERENCE = "#444444"
LABEL_BOX = "rgba(255, 255, 255, 0.85)"  # behind a chart's label that lines run under (a phone's narrow plot)

# Every chart's plotly config: no toolbar (on a phone it covers the legend); drag still zooms
# and a double-click resets.
PLOTLY_CONFIG = {"displayModeBar": False, "displaylogo": False}
