"""The progress bar redraws as calls finish (throttled), not only when a unit finishes."""

from __future__ import annotations

import io

from madeval.llm.client import ClientStats
from madeval.run.progress import Progress


def one_call(stats: ClientStats) -> None:
    stats.started()
    stats.calls += 1
    stats.completion_tokens += 5
    stats.finished()


def test_finished_calls_redraw_the_bar_at_most_four_times_a_second():
    stats, now, out = ClientStats(), [100.0], io.StringIO()
    progress = Progress(10, 0, stats, file=out, clock=lambda: now[0])
    one_call(stats)
    assert "calls=1 " in progress.bar.postfix and "calls=1 " in out.getvalue()
    now[0] += 0.2  # within a quarter second of the last redraw: counted, not drawn
    one_call(stats)
    assert "calls=1 " in progress.bar.postfix and "calls=2 " not in out.getvalue()
    now[0] += 0.05
    one_call(stats)
    assert "calls=3 cached=0 shared=0 tokens=15" in progress.bar.postfix and "calls=3 " in out.getvalue()
    assert progress.bar.n == 0  # no unit finished: only the counts and the clock moved
    progress.close()
    assert stats.listener is None


def test_a_disabled_bar_does_not_listen():
    stats = ClientStats()
    progress = Progress(10, 0, stats, enabled=False)
    one_call(stats)
    assert stats.listener is None
    progress.close()
