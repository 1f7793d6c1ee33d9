"""Scoring errors: why a reply could not be scored, collected per unit for its record.

A metric that cannot decide (the math checker's deadline or memory cap, see
:mod:`madeval.metrics.checker`) scores the reply as wrong and calls :func:`note_scoring_error`
with the reason. The scheduler scores each unit inside :func:`collecting_scoring_errors` and writes
the reasons to the record's ``scoring_errors`` list (empty when every score was decided).
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator

_ERRORS: ContextVar[list[str] | None] = ContextVar("scoring_errors", default=None)


def note_scoring_error(reason: str) -> None:
    """Record why a score could not be decided (kept once; dropped outside a collection)."""
    errors = _ERRORS.get()
    if errors is not None and reason not in errors:
        errors.append(reason)


@contextmanager
def collecting_scoring_errors() -> Iterator[list[str]]:
    """Collect the reasons noted in this context (and threads started from it) into a list."""
    errors: list[str] = []
    token = _ERRORS.set(errors)
    try:
        yield errors
    finally:
        _ERRORS.reset(token)
