"""Settings for every test: no test fails on time.

Hypothesis fails an example that runs past its 200 ms deadline by default; on a shared
2-core machine that is a timing assertion, and speed targets live in benchmarks that
print figures, never in tests. So no deadline, for every property test.
"""

from hypothesis import settings

settings.register_profile("untimed", deadline=None)
settings.load_profile("untimed")
