"""Errors that end a command with a clear message.

:class:`UsageError` is bad input (unknown names, malformed files, invalid values, an unreachable
endpoint): the CLI prints its one-line message and exits with status 2 before writing anything.
:class:`StorageError` is a run folder that cannot be written (one line, status 1).
"""

from __future__ import annotations


class MadevalError(Exception):
    """Base class for every error madeval raises on purpose."""


class UsageError(MadevalError):
    """Bad input from the user: reported as one line, exit status 2."""


class LLMError(MadevalError):
    """An LLM call failed for good (retries exhausted or a non-retryable HTTP error).

    ``retryable`` is False for what a re-run cannot fix (the endpoint refused the request: 400,
    404, a reply over the size limit...), so that no one is told to run the same command again."""

    def __init__(self, message: str, retryable: bool = True):
        super().__init__(message)
        self.retryable = retryable


class StorageError(MadevalError):
    """The run folder cannot be written (disk full, read-only, too large a file): reported as one
    line, exit status 1; what was written before is kept whole, so the same command resumes."""
