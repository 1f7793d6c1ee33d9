"""The code blocks of the pages a newcomer follows run as written, against the simulator.

Each page's blocks run in order in one folder holding a copy of ``examples/``, as a reader in a clone
would type them: ``bash`` lines are commands (``madeval ...``, the simulator started with ``&``,
``cp``; each ``madeval`` command runs through the command line's entry point in this process,
the simulator in its own), a ``yaml`` block with a ``:caption:`` is the file of that name, a ``yaml`` block without one
must be a valid config file, a ``literalinclude`` shows a file of the repository, ``python`` blocks
run in one namespace, and ``text`` blocks are output, not run. Every endpoint URL
on the pages (the simulator's port 8765, a server's 8000) is the simulator the page starts, on a
free port; a run with no ``--base-url`` (the embedded model) is pointed at it too. Install commands
(``make``, ``pip install``) are what CI runs anyway and are skipped. A block of another language, or
a command this test does not know, fails: nothing on these pages escapes being run.
"""

from __future__ import annotations

import contextlib
import io
import os
import queue
import re
import shlex
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from madeval.cli.main import main
from madeval.settings.config import build_settings, read_config_file

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["getting-started.md", "studies.md"]
#: The endpoint URLs the pages show: the simulator's default port and a server's.
PAGE_URLS = ("http://127.0.0.1:8765/v1", "http://127.0.0.1:8000/v1")
#: Commands that install madeval: run by 'make test' and CI themselves, not by this test.
INSTALLS = ("make demo", "make test", "pip install ")
#: Commands that do not talk to a model (no --base-url added).
NO_MODEL = {"tasks", "plugins", "leaderboard", "view", "export", "import", "sample-size", "simulator"}


def code_blocks(page: str) -> list[tuple[str, str | None, str, int]]:
    """The fenced blocks of ``page``: (language, caption, content, line), in order."""
    found = []
    for token in MarkdownIt().parse((ROOT / "docs" / page).read_text(encoding="utf-8")):
        if token.type != "fence":
            continue
        info, content, caption = token.info.strip(), token.content, None
        included = re.fullmatch(r"\{literalinclude\}\s+(\S+)", info)
        if included:  # the file shown, relative to docs/
            found.append(("{literalinclude}", included.group(1), content, token.map[0] + 1))
            continue
        directive = re.fullmatch(r"\{code-block\}\s+(\S+)", info)
        if directive:
            info = directive.group(1)
            options = re.match(r"((?::\w+:.*\n)+)\n?", content)
            if options:
                caption = re.search(r":caption:\s*(\S+)", options.group(1)).group(1)
                content = content[options.end():]
        found.append((info, caption, content, token.map[0] + 1))
    return found


def command_lines(block: str) -> list[str]:
    """A bash block's commands, continuation lines joined, comments and blank lines left out."""
    joined = re.sub(r"\\\n\s*", " ", block)
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]


def run_in_process(args: list[str], folder: Path) -> tuple[int, str, str]:
    """``madeval ARGS`` run in ``folder`` through the command line's own entry point, in this process
    (a fresh interpreter per command would import madeval, numpy and openai again each time; the
    simulator, which runs in the background, keeps its own process): (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    status, stdin = 0, sys.stdin
    sys.stdin = io.StringIO()  # as from /dev/null: nothing typed, not a terminal
    try:
        with contextlib.chdir(folder), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main(args)
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else 1
    finally:
        sys.stdin = stdin
    return status, out.getvalue(), err.getvalue()


class Reader:
    """Runs one page's blocks in order in ``folder``, as a reader would."""

    def __init__(self, page: str, folder: Path):
        self.page, self.folder = page, folder
        self.url: str | None = None
        self.servers: list[subprocess.Popen] = []
        self.namespace: dict = {}
        paths = [str(ROOT), os.environ.get("PYTHONPATH")]  # the commands import this checkout's madeval
        self.env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths))}

    def endpoint(self, text: str) -> str:
        """``text`` with the pages' endpoint URLs replaced by the running simulator's."""
        for url in PAGE_URLS:
            if url in text:
                assert self.url, f"{self.page}: {url} is used before the page starts the simulator"
                text = text.replace(url, self.url)
        return text

    def start_simulator(self, args: list[str]) -> None:
        """``madeval simulator ARGS &`` on a free port; waits for the line saying where it serves."""
        args = [a for i, a in enumerate(args) if a != "--port" and (i == 0 or args[i - 1] != "--port")]
        server = subprocess.Popen([sys.executable, "-m", "madeval", *args, "--port", "0"], cwd=self.folder,
                                  env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
        self.servers.append(server)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in server.stderr], daemon=True).start()
        while True:
            line = lines.get(timeout=120)
            found = re.search(r"serving on (\S+)", line)
            if found:
                self.url = found.group(1)
                return

    def run_command(self, line: str) -> None:
        words = shlex.split(line)
        if line.startswith(INSTALLS):
            return
        if words[0] == "cp":
            shutil.copy(self.folder / words[1], self.folder / words[2])
            return
        assert words[0] == "madeval", f"{self.page}: a command this test does not run: {line}"
        if words[-1] == "&":
            assert words[1] == "simulator", f"{self.page}: only the simulator runs in the background: {line}"
            self.start_simulator(words[1:-1])
            return
        args = [self.endpoint(word) for word in words[1:]]
        if args[0] not in NO_MODEL and "rescore" != args[0] and "--base-url" not in args:
            assert self.url, f"{self.page}: {line} needs a model before the page starts the simulator"
            args += ["--base-url", self.url]  # the embedded model's place: the simulator
        status, out, err = run_in_process(args, self.folder)
        assert status == 0, f"{self.page}: {line}\n{out[-2000:]}\n{err[-2000:]}"

    def run_block(self, language: str, caption: str | None, content: str, line: int) -> None:
        if language == "bash":
            for command in command_lines(content):
                self.run_command(command)
        elif language == "yaml" and caption:
            (self.folder / caption).write_text(content, encoding="utf-8")
        elif language == "yaml":
            example = self.folder / f"example-{line}.yaml"
            example.write_text(content, encoding="utf-8")
            options = read_config_file(example)
            assert build_settings({"tasks": ["arith_mc"], **options}).configurations
        elif language == "{literalinclude}":
            assert (ROOT / "docs" / caption).is_file(), f"{self.page}:{line}: no file {caption}"
        elif language == "python":
            exec(compile(self.endpoint(content), f"{self.page}:{line}", "exec"), self.namespace)
        else:
            assert language == "text", f"{self.page}:{line}: a {language!r} block; say how this test runs it"

    def close(self) -> None:
        for server in self.servers:
            server.terminate()
            server.wait(timeout=30)


@pytest.mark.parametrize("page", PAGES)
def test_the_pages_code_blocks_run_against_the_simulator(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the python blocks write where the commands do
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    reader = Reader(page, tmp_path)
    try:
        for block in code_blocks(page):
            reader.run_block(*block)
    finally:
        reader.close()
    assert reader.servers, f"{page} runs nothing against the simulator"


def test_a_page_block_that_fails_fails_the_test(tmp_path):
    """The runner itself: a command that exits non-zero, and a command it does not know, are failures."""
    reader = Reader("example.md", tmp_path)
    with pytest.raises(AssertionError, match="no-such-option"):
        reader.run_block("bash", None, "madeval tasks --no-such-option\n", 1)
    with pytest.raises(AssertionError, match="does not run: rm -rf"):
        reader.run_block("bash", None, "rm -rf somewhere\n", 1)
    with pytest.raises(AssertionError, match="'sh' block"):
        reader.run_block("sh", None, "madeval tasks\n", 1)
