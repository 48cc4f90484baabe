"""Unit conversions between the human units of data files and the CLI, and SI.

Inside `core` every quantity is SI (bytes, seconds, FLOP, FLOP/s, USD) and carries
its unit in its name. Human units (GB, TB/s, TFLOP/s, ms, USD per million tokens)
appear only where people type or read them: preset files, the CLI and the app's
formatting module. These constants are the one place the factors live.
"""

BYTES_PER_GB = 1e9  # decimal gigabytes, as GPU datasheets quote them
FLOP_PER_TFLOP = 1e12
PARAMS_PER_BILLION = 1e9
S_PER_MS = 1e-3
S_PER_US = 1e-6
S_PER_HOUR = 3600.0
TOKENS_PER_MILLION = 1e6
BITS_PER_BYTE = 8
