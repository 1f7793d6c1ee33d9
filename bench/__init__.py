"""madeval's benchmark: is the harness ever the reason a run is slow?

Run ``python -m bench`` (``python -m bench --smoke`` for the tiny CI version). It starts the
simulator in its own process with a fixed latency and measures, for a configurable workload:
wall time, calls per second, mean and peak calls in flight, the best time any harness could reach
(the bound), harness CPU per call at zero latency, peak memory and output bytes per item as the
item count grows, and an identical re-run from the cache. Results print as a table and are
written as JSON for comparison across commits.
"""
