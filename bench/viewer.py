"""``python -m bench viewer RUN [--debates N]``: the debate viewer's page size and load time.

Times reading RUN's debates for the page (``views_s``: every record made into its row and view,
in this process, best of 3, without the questions' loading or the packing), writes RUN's viewer
page (``madeval view``, timed, with the writer's peak memory) and opens it in
headless Chromium, driven through the DevTools protocol (aiohttp's websocket client), to measure
in the page: when the list is ready (the viewer's script done), when the whole file is parsed
(``DOMContentLoaded``: the debates follow the list) and the load event, the JavaScript heap, one
filter over every debate, sorting every debate by item id (``sort_ms``), and opening the last
debate (unpacking it and drawing its grid). With ``--debates N`` the page is made from a copy of RUN whose records
are repeated under new unit keys (new repeat numbers) until there are N, for sizes no real run has
yet. With ``--huge-reply MB`` the last debate's first message is a reply of that many megabytes
(words and blanks, as near the 16 MB reply limit), so ``open_ms`` shows what its preview costs.
Prints one JSON line per page.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

from madeval.testing.browser import MISSING, chromium_command, find_chromium

MEASURE = """
new Promise(function (done) {
  var root = document.documentElement;
  (function ready() {
    if (root.getAttribute('data-viewer') !== 'ready' || document.readyState !== 'complete') return setTimeout(ready, 10);
    var navigation = performance.getEntriesByType('navigation')[0];
    var result = {ready_ms: performance.getEntriesByName('madeval-viewer-ready')[0].startTime,
                  parsed_ms: navigation.domContentLoadedEventEnd, load_ms: navigation.loadEventEnd,
                  heap_mb: performance.memory ? performance.memory.usedJSHeapSize / 1e6 : null,
                  debates: JSON.parse(document.getElementById('madeval-index').textContent).debates.length};
    var start = performance.now();
    var drift = document.getElementById('f-drift');
    drift.checked = true; drift.dispatchEvent(new Event('change'));
    result.filter_ms = performance.now() - start;
    result.drifting = Number(root.getAttribute('data-shown'));
    drift.checked = false; drift.dispatchEvent(new Event('change'));
    var sortItems = document.querySelector('#debates th[data-sort="item"] button');
    start = performance.now();
    if (sortItems) sortItems.click();  // every debate sorted by item id (an older page has no sorting)
    result.sort_ms = sortItems ? performance.now() - start : null;
    if (sortItems) document.querySelector('#debates th[data-sort="n"] button').click();
    start = performance.now();
    location.hash = 'debate=' + result.debates;
    (function opened() {
      if (root.getAttribute('data-opened') !== String(result.debates - 1)) return setTimeout(opened, 5);
      result.open_ms = performance.now() - start;
      result.messages = Number(root.getAttribute('data-messages'));
      done(JSON.stringify(result));
    })();
  })();
})
"""  # noqa: E501 - embedded JavaScript


def copied_run(run: Path, debates: int, folder: Path) -> Path:
    """A copy of ``run`` whose records repeat under new repeat numbers until there are ``debates``."""
    folder.mkdir(parents=True)
    shutil.copy(run / "run.json", folder / "run.json")
    lines = (run / "records.jsonl").read_bytes().splitlines()
    written = 0
    with open(folder / "records.jsonl", "wb") as out:
        copy = 0
        while written < debates:
            for line in lines:
                if written == debates:
                    break
                record = json.loads(line)
                unit = record["unit"]
                unit["repeat"] = unit["repeat"] + 1000 * copy
                unit["key"] = json.dumps([unit["config"], unit["task"], unit["item"], unit["repeat"]])
                out.write(json.dumps(record, ensure_ascii=False).encode("utf-8", "backslashreplace") + b"\n")
                written += 1
            copy += 1
    return folder


def with_huge_reply(run: Path, megabytes: float, folder: Path) -> Path:
    """A copy of ``run`` whose last record's first message is a reply of ``megabytes`` MB."""
    folder.mkdir(parents=True)
    shutil.copy(run / "run.json", folder / "run.json")
    lines = (run / "records.jsonl").read_bytes().splitlines()
    record = json.loads(lines[-1])
    words = "Final Solution: B. " + "words and  blanks\n\n " * int(megabytes * 1e6 / 22)
    record["transcript"]["messages"][0]["text"] = words
    with open(folder / "records.jsonl", "wb") as out:
        out.write(b"\n".join(lines[:-1]) + b"\n" if len(lines) > 1 else b"")
        out.write(json.dumps(record, ensure_ascii=False).encode("utf-8", "backslashreplace") + b"\n")
    return folder


def view_time(run: Path, rounds: int = 3) -> float:
    """Seconds to make every record of ``run`` into its row and view (best of ``rounds``)."""
    from madeval.records.folder import ReadReport
    from madeval.viewer.debates import run_records, view_debate

    best = float("inf")
    for _ in range(rounds):  # records read anew each round, as the writer reads them, untimed
        records = list(run_records(run, ReadReport()))
        start = time.perf_counter()
        for record in records:
            view_debate(record, None)
        best = min(best, time.perf_counter() - start)
    return round(best, 3)


def write_page(run: Path, page: Path) -> dict:
    """``madeval view`` in its own process: seconds and peak memory (MB) of the writer."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "madeval", "view", str(run), "--output", str(page)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the writer is the only child so far
    return {"write_s": round(time.perf_counter() - start, 2), "writer_peak_mb": round(peak),
            "page_mb": round(page.stat().st_size / 1e6, 2)}


async def in_chromium(page: Path, profile: Path) -> dict:
    """Open ``page`` in headless Chromium (1400 x 1000) and run :data:`MEASURE` in it."""
    chromium = find_chromium()
    if chromium is None:
        raise SystemExit(MISSING)
    process = subprocess.Popen(chromium_command(chromium, profile, "--remote-debugging-port=0",
                                                "--enable-precise-memory-info",
                                                "--window-size=1400,1000", "about:blank"),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        port_file = profile / "DevToolsActivePort"
        for _ in range(300):
            if port_file.exists() and port_file.read_text().strip():
                break
            await asyncio.sleep(0.1)
        port = port_file.read_text().split()[0]
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{port}/json/list") as listed:
                target = next(t for t in await listed.json() if t["type"] == "page")
            async with session.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0) as socket:
                ids = iter(range(1, 1_000_000))

                async def call(method: str, **params):
                    number = next(ids)
                    await socket.send_json({"id": number, "method": method, "params": params})
                    async for message in socket:
                        data = json.loads(message.data)
                        if data.get("id") == number:
                            return data

                await call("Page.enable")
                await call("Page.navigate", url=page.resolve().as_uri())
                ready = "location.protocol === 'file:' && document.readyState === 'complete'"
                while not (await call("Runtime.evaluate", expression=ready,
                                      returnByValue=True))["result"]["result"].get("value"):
                    await asyncio.sleep(0.05)
                answer = await call("Runtime.evaluate", expression=MEASURE, awaitPromise=True, returnByValue=True)
                value = answer["result"]["result"].get("value")
                if not isinstance(value, str):
                    raise SystemExit(f"the page did not answer: {answer}")
                return json.loads(value)
    finally:  # Chromium's helpers outlive the browser and write into the profile: end its group
        process.terminate()
        process.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench viewer", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path)
    parser.add_argument("--debates", type=int, default=None, help="Repeat the run's records until there are this many.")
    parser.add_argument("--huge-reply", type=float, default=None, metavar="MB",
                        help="Make the last debate's first message a reply of this many megabytes.")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="madeval-bench-viewer-", ignore_cleanup_errors=True) as scratch:
        scratch = Path(scratch)
        run = copied_run(args.run, args.debates, scratch / "run") if args.debates else args.run
        if args.huge_reply:
            run = with_huge_reply(run, args.huge_reply, scratch / "huge")
        page = scratch / "debates.html"
        result = write_page(run, page)  # first: its peak memory is read from this process's children
        result["views_s"] = view_time(run)
        result.update(asyncio.run(in_chromium(page, scratch / "profile")))
        print(json.dumps(result))


if __name__ == "__main__":
    main()
