"""Helpers for tests: run madeval in-process against an endpoint.

The scripted LLM and the in-process debate are madeval.testing's, the ones plugin authors get.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
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


#: The fork server of :class:`MadevalForks`: imports what a run imports, then forks one child per
#: request line; the child becomes ``madeval ARGS`` and ends as that process would (its exit status,
#: an uncaught exception's traceback on stderr, atexit handlers run).
_FORK_SERVER = r"""
import json, os, sys
import madeval.cli.main, madeval.cli.run_cmd, madeval.evaluation, madeval.leaderboard.table
import madeval.llm.aiohttp_transport, madeval.llm.openai_transport
for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "wait":
        print(json.dumps(os.waitpid(request["pid"], 0 if request["block"] else os.WNOHANG)), flush=True)
        continue
    pid = os.fork()
    if pid:
        print(pid, flush=True)
        continue
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    for fd, path in ((0, os.devnull), (1, request["stdout"]), (2, request["stderr"])):
        opened = os.open(path, os.O_RDONLY if fd == 0 else os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdin = open(0, closefd=False)
    sys.argv = ["madeval", *request["args"]]
    madeval.cli.main.main(request["args"])
    raise SystemExit(0)
"""


class MadevalForks:
    """Start ``madeval ARGS`` processes for tests whose point is the process (a hang killed, its
    peak memory, hostile input that must not take the test down) at a fraction of a fresh
    interpreter's cost: each is forked from one server that imported madeval and what a run loads
    once (a fresh ``python -m madeval`` run spends about a second of CPU importing them).

    A child is a separate process like any other: its own pid, memory and exit status, killable;
    it differs from a fresh interpreter only in what is already imported (so a test about start-up
    imports or a fresh interpreter must not use it)."""

    def __init__(self):
        root = str(Path(__file__).resolve().parents[1])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
        self._server = subprocess.Popen([sys.executable, "-c", _FORK_SERVER], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, env=env)

    def _ask(self, request: dict) -> str:
        self._server.stdin.write(json.dumps(request) + "\n")
        self._server.stdin.flush()
        answer = self._server.stdout.readline()
        if not answer:
            raise RuntimeError(f"the fork server ended (exit {self._server.wait()})")
        return answer

    def start(self, args, stdout: Path, stderr: Path, cwd=None) -> int:
        """Fork ``madeval ARGS`` with this process's environment now and its output in the two files;
        return its pid."""
        root = str(Path(__file__).resolve().parents[1])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
        return int(self._ask({"op": "run", "args": [os.fspath(arg) if isinstance(arg, os.PathLike) else str(arg)
                                                   for arg in args],
                              "env": env, "cwd": str(cwd or os.getcwd()), "stdout": str(stdout),
                              "stderr": str(stderr)}))

    def poll(self, pid: int, block: bool = False) -> int | None:
        """The exit status of ``pid`` as ``subprocess`` reports it (negative: the signal that ended
        it), or None while it runs (``block``: wait for it)."""
        done, status = json.loads(self._ask({"op": "wait", "pid": pid, "block": block}))
        return os.waitstatus_to_exitcode(status) if done else None

    def close(self) -> None:
        """Stop the server (its children have ended: every test waits for the ones it started)."""
        self._server.stdin.close()
        self._server.wait(timeout=60)
        self._server.stdout.close()
