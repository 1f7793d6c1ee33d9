"""The viewer's page: one self-contained HTML file written as the debates are read.

The page holds two kinds of data, both inert to the HTML parser:

* the **index** (one small row per debate, no message text) as JSON in a
  ``<script type="application/json">`` element, with every ``<`` written as ``\\u003c`` so no text
  can close the element; the script reads it with ``textContent`` and ``JSON.parse``;
* each **debate** as gzip-compressed JSON in base64 (letters, digits, ``+/=`` only) in its own
  ``<script type="application/octet-stream" id="dN">`` element, unpacked with the browser's
  ``DecompressionStream`` only when the debate is opened. Real debates are long (MALLM's 372 are
  23 MB of JSON): gzip makes them about a fifth of that, and the page loads in the time the browser
  takes to read the file plus one small JSON parse, whatever the number of debates.

The file is written to a temporary name beside the output and renamed when complete, so a failure
leaves no half-written page.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import html
import json
import os
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Iterable, TextIO

from ..errors import StorageError
from .debates import ViewedDebate

#: Rows of the list per page (the script's PAGE).
PAGE_ROWS = 50

CONTROLS = """
<div class='filters' role='search'>
<label>configuration <select id='f-config'><option value=''>all</option></select></label>
<label>task <select id='f-task'><option value=''>all</option></select></label>
<label>final <select id='f-outcome'><option value=''>all</option><option value='right'>right</option>
<option value='wrong'>wrong</option><option value='unscored'>not 0/1</option></select></label>
<label><input type='checkbox' id='f-lost'> right in turn 1, wrong at the end</label>
<label><input type='checkbox' id='f-drift'> drift</label>
<label><input type='checkbox' id='f-unparsed'> unparsed answers</label>
<label>item <input type='search' id='f-item' placeholder='item id'></label>
</div>
<p id='count'></p>
<div class='scroll'><table id='debates'><thead><tr><th>#</th><th>configuration</th><th>task</th><th>item</th>
<th>repeat</th><th>decision</th><th>final</th><th>turn-1 vote</th><th>drift</th><th>unparsed</th><th>turns</th></tr></thead>
<tbody></tbody></table></div>
<div class='pager'><button type='button' id='prev'>&lsaquo; previous</button><span id='page'></span>
<button type='button' id='next'>next &rsaquo;</button></div>
<section id='debate' hidden></section>
"""


def asset(name: str) -> str:
    """A file shipped beside this module (the page's script and style)."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def pack(detail: dict[str, Any]) -> str:
    """A debate's view as base64 of gzip of its JSON (what the page's script unpacks).

    Model text may hold lone surrogates, which UTF-8 cannot encode: they are written as JSON
    escapes, which read back as the same text (as :func:`madeval.records.encode_line` does)."""
    text = json.dumps(detail, ensure_ascii=False, separators=(",", ":"), default=str)
    data = gzip.compress(text.encode("utf-8", "backslashreplace"), compresslevel=6, mtime=0)
    return base64.b64encode(data).decode("ascii")


def inert_json(data: Any) -> str:
    """JSON that can sit inside a ``<script>`` element: no ``<`` (so no ``</script>``, no
    ``<!--``), and no lone surrogate (ASCII only)."""
    return json.dumps(data, ensure_ascii=True, separators=(",", ":"), default=str).replace("<", "\\u003c")


def write_page(output: Path, title: str, debates: Iterable[ViewedDebate],
               notes: Callable[[], list[str]]) -> dict[str, Any]:
    """Write the page to ``output`` (through a temporary file); returns what went into it:
    ``debates`` (how many), ``bytes`` (the file's size). ``notes`` is asked once every debate is
    read (what reading left out is known only then); the page shows them at the top."""
    temporary = output.with_name(output.name + ".tmp")
    try:
        with open(temporary, "w", encoding="utf-8") as handle:
            count = _write(handle, title, debates, notes)
        os.replace(temporary, output)
    except OSError as error:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise StorageError(f"cannot write {output}: {error.strerror or error}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    return {"debates": count, "bytes": output.stat().st_size}


def _write(handle: TextIO, title: str, debates: Iterable[ViewedDebate], notes: Callable[[], list[str]]) -> int:
    handle.write(
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title><style>{asset('viewer.css')}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>"
    )
    handle.write("<div id='notes'></div>")
    handle.write(
        "<p class='note'>Click a debate to open it: a grid of turns by agents, each message opening in full. "
        f"The list shows {PAGE_ROWS} debates a page; a debate is unpacked only when opened, so the page loads "
        "in about the time the browser takes to read the file.</p>"
    )
    handle.write(CONTROLS)
    configs: dict[str, int] = {}
    tasks: dict[str, int] = {}
    rows = []
    for number, debate in enumerate(debates):
        handle.write(f"<script type='application/octet-stream' id='d{number}'>{pack(debate.detail)}</script>\n")
        row = dict(debate.row)
        row["c"] = configs.setdefault(row.pop("config"), len(configs))
        row["t"] = tasks.setdefault(row.pop("task"), len(tasks))
        rows.append(row)
    index = {"configs": list(configs), "tasks": list(tasks), "notes": notes(), "debates": rows}
    handle.write(f"<script type='application/json' id='madeval-index'>{inert_json(index)}</script>\n")
    if not rows:
        handle.write("<p class='note'>This run has no finished debate yet.</p>")
    handle.write(f"<script>{asset('viewer.js')}</script></body></html>\n")
    return len(rows)
