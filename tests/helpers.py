"""Helpers for tests: run madeval in-process against an endpoint.

The scripted LLM and the in-process debate are madeval.testing's, the ones plugin authors get.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import subprocess
import sys
import warnings
from pathlib import Path

from madeval.cli.main import main
from madeval.evaluation import run
from madeval.settings.config import DebateConfig, RunSettings
from madeval.testing import ScriptedLLM, debate  # noqa: F401  (the tests import them from here)


def run_quietly(settings: RunSettings):
    """Run madeval in-process without the progress bar; return the result and the printed text."""
    out = io.StringIO()
    result = run(settings, show_progress=False, out=out)
    return result, out.getvalue()


def settings_for(base_url: str, tmp_path, **overrides) -> RunSettings:
    """Run settings against ``base_url`` with one configuration built from the debate keys."""
    debate_keys = set(DebateConfig.__dataclass_fields__)
    debate_options = {k: v for k, v in overrides.items() if k in debate_keys}
    run_options = {k: v for k, v in overrides.items() if k not in debate_keys}
    run_options.setdefault("output_path", str(tmp_path / "run"))
    run_options.setdefault("tasks", ["arith_mc"])
    return RunSettings(base_url=base_url, configurations=[DebateConfig(**debate_options)], **run_options)


def cache_key_record(base_url: str, cache_path: Path) -> dict:
    """What the response cache's keying records (and says on stderr) for the model ``simulator``
    at ``base_url``, with a cache file at ``cache_path``: a client opened and closed around it."""
    from madeval.debate.session import ModelRef
    from madeval.llm.cache import ResponseCache
    from madeval.llm.client import Endpoint, LLMClient
    from madeval.run.cache_key import key_cache

    async def keyed(cache):
        client = LLMClient({"e": Endpoint("e", base_url)})
        try:
            return await key_cache(client, [ModelRef("simulator", "e")], cache)
        finally:
            await client.aclose()

    cache = ResponseCache(cache_path)
    try:
        return asyncio.run(keyed(cache))
    finally:
        cache.close()


def madeval_in_process(*args, cwd=None) -> subprocess.CompletedProcess:
    """``madeval ARGS`` (in ``cwd``) through the command line's entry point, in this process, as
    ``subprocess.run`` reports it: exit status, stdout and stderr. A fresh interpreter per command
    would import madeval, numpy and openai again (1 to 3 s of CPU each time); tests about the process
    itself (signals, kills, start-up imports, installed entry points) start one.

    Nothing is typed on stdin, and warnings reach stderr as in a fresh interpreter (pytest would
    record them instead), so that "one line on stderr" means the same here. An exception that is
    not one of the command line's own exits propagates (in a process it would be a traceback)."""
    out, err = io.StringIO(), io.StringIO()
    status, stdin = 0, sys.stdin
    sys.stdin = io.StringIO()
    try:
        with contextlib.ExitStack() as stack:
            if cwd is not None:
                stack.enter_context(contextlib.chdir(cwd))
            stack.enter_context(contextlib.redirect_stdout(out))
            stack.enter_context(contextlib.redirect_stderr(err))
            stack.enter_context(warnings.catch_warnings())
            _interpreter_warning_filters()
            main([os.fspath(arg) if isinstance(arg, os.PathLike) else str(arg) for arg in args])
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else 1
    finally:
        sys.stdin = stdin
    return subprocess.CompletedProcess(["madeval", *map(str, args)], status, out.getvalue(), err.getvalue())


def _interpreter_warning_filters() -> None:
    """The warning filters and output of a fresh interpreter (its default filters; a warning is
    written to sys.stderr, once per place)."""
    warnings.resetwarnings()
    warnings.simplefilter("default")
    for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
        warnings.simplefilter("ignore", category)  # shown by a fresh interpreter in __main__ only, or never

    def show(message, category, filename, lineno, file=None, line=None):
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))

    warnings.showwarning = show
