"""The viewer's page: one self-contained HTML file written as the debates are read.

The page holds two kinds of data, both inert to the HTML parser:

* the **index** (one small row per debate, no message text) as JSON in a
  ``<script type="application/json">`` element, with every ``<`` written as ``\\u003c`` so no text
  can close the element; the script reads it with ``textContent`` and ``JSON.parse``;
* each **debate** as gzip-compressed JSON in base64 (letters, digits, ``+/=`` only) in its own
  ``<script type="application/octet-stream" id="dN">`` element, unpacked with the browser's
  ``DecompressionStream`` only when the debate is opened. Real debates are long (MALLM's 372 are
  23 MB of JSON): gzip and base64 make them about a seventh of that.

The index and the script come first and the debates after them, so the list works as soon as the
browser has read the top of the file, however many debates follow.

The file is written under a new temporary name beside the output and renamed when complete
(:func:`madeval.util.safe_files.replacing`), so a failure leaves no half-written page, and a link
planted at the page's name or at any temporary name is replaced or never met, not written through.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import shutil
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Iterable, TextIO

from madeval.errors import StorageError, UsageError
from madeval.util.safe_files import replacing
from madeval.viewer.debates import ViewedDebate, readable

#: Rows of the list per page (the script's PAGE).
PAGE_ROWS = 50

#: The list's columns: the key the script sorts them by (viewer.js's SORT_KEYS) and the heading.
COLUMNS = [("n", "#"), ("config", "configuration"), ("task", "task"), ("item", "item"), ("repeat", "repeat"),
           ("answer", "decision"), ("score", "final"), ("first", "turn-1 vote"), ("drift", "drift"),
           ("unparsed", "unparsed"), ("turns", "turns")]

#: Each heading is a button (reached by Tab, pressed with Enter or Space) that sorts the list by its
#: column; ``aria-sort`` says which column sorts it, and which way (the order read, at first).
HEADER = "".join(f"<th data-sort='{key}' aria-sort='{'ascending' if key == 'n' else 'none'}'>"
                 f"<button type='button'>{html.escape(name)}</button></th>" for key, name in COLUMNS)

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
<div class='scroll'><table id='debates'><thead><tr>{HEADER}</tr></thead>
<tbody></tbody></table></div>
<div class='pager'><button type='button' id='prev'>&lsaquo; previous</button><span id='page'></span>
<button type='button' id='next'>next &rsaquo;</button></div>
<section id='debate' hidden></section>
""".replace("{HEADER}", HEADER)


def asset(name: str) -> str:
    """A file shipped beside this module (the page's script and style)."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def pack(detail: dict[str, Any]) -> str:
    """A debate's view as base64 of gzip of its JSON (what the page's script unpacks).

    Model text may hold lone surrogates, which UTF-8 cannot encode: they become U+FFFD, what a
    browser would draw (:func:`.debates.readable`)."""
    text = readable(json.dumps(detail, ensure_ascii=False, separators=(",", ":"), default=str))
    data = gzip.compress(text.encode("utf-8"), compresslevel=6, mtime=0)
    return base64.b64encode(data).decode("ascii")


def inert_json(data: Any) -> str:
    """JSON that can sit inside a ``<script>`` element: no ``<`` (so no ``</script>``, no
    ``<!--``), and no lone surrogate (U+FFFD instead, see :func:`.debates.readable`)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    return readable(text).replace("<", "\\u003c")


def write_page(output: Path, title: str, debates: Iterable[ViewedDebate],
               notes: Callable[[], list[str]], empty: Callable[[], str] | None = None) -> dict[str, Any]:
    """Write the page to ``output``; returns what went into it: ``debates`` (how many), ``bytes``
    (the file's size). ``notes`` is asked once every debate is read (what reading left out is known
    only then); the page shows them at the top. With ``empty``, a page without debates is not
    kept: ``empty()`` (asked once every debate is read) is the UsageError's message.

    The debates are packed into a scratch file first, while the index is gathered; the page then
    holds the index and the script *before* the debates, so the list works as soon as the browser
    has read its top, while it is still reading the debates. Both files are temporary until the
    page is complete, then the page is renamed into place. The scratch file has no name (a link
    cannot be planted at it); the page's temporary file is a new one (:func:`madeval.util.safe_files.replacing`)."""
    try:
        with tempfile.TemporaryFile("w+", encoding="utf-8", dir=output.parent) as packed:
            rows, configs, tasks = _pack_all(packed, debates)
            if empty is not None and not rows:
                raise UsageError(empty())
            packed.seek(0)
            with replacing(output, "w") as handle:
                _write(handle, title, {"configs": configs, "tasks": tasks, "notes": notes(), "debates": rows}, packed)
    except OSError as error:
        raise StorageError(f"cannot write {output}: {error.strerror or error}") from None
    return {"debates": len(rows), "bytes": output.stat().st_size}


def _pack_all(packed: TextIO, debates: Iterable[ViewedDebate]) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """Write each debate's packed element to ``packed``; return the index's rows, configurations
    and tasks (a row names its configuration and task by their place in those lists)."""
    configs: dict[str, int] = {}
    tasks: dict[str, int] = {}
    rows = []
    for number, debate in enumerate(debates):
        packed.write(f"<script type='application/octet-stream' id='d{number}'>{pack(debate.detail)}</script>\n")
        row = dict(debate.row)
        row["c"] = configs.setdefault(row.pop("config"), len(configs))
        row["t"] = tasks.setdefault(row.pop("task"), len(tasks))
        rows.append(row)
    return rows, list(configs), list(tasks)


def _write(handle: TextIO, title: str, index: dict[str, Any], packed: TextIO) -> None:
    handle.write(
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title><style>{asset('viewer.css')}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>"
    )
    handle.write("<div id='notes'></div>")
    handle.write(
        "<p class='note'>Click a debate (or, from the keyboard, its number) to open it: a grid of turns by agents, "
        "each message opening in full. "
        f"The list shows {PAGE_ROWS} debates a page and works as soon as the page's top is read; a debate is "
        "unpacked only when opened.</p>"
    )
    if not index["debates"]:
        handle.write("<p class='note'>This run has no finished debate yet.</p>")
    handle.write(CONTROLS)
    handle.write(f"<script type='application/json' id='madeval-index'>{inert_json(index)}</script>\n")
    handle.write(f"<script>{asset('viewer.js')}</script>\n")
    shutil.copyfileobj(packed, handle)
    handle.write("</body></html>\n")
