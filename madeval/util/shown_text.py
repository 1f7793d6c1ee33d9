"""Text from outside (configuration labels, task names, model replies) made safe where it is shown.

Labels and replies are untrusted: each output format has its own way to be abused, and each gets
the one neutralisation it needs where it is written.

* Terminal: escape sequences (``ESC ] 52`` writes the clipboard, others retitle the window or
  hide text) are C0/C1 control characters; :func:`terminal_text` removes them, newlines and tabs kept.
* CSV opened in a spreadsheet: a cell starting with ``=``, ``+``, ``-``, ``@``, tab or CR is a
  formula; :func:`csv_cell` prefixes such text with ``'`` (OWASP's CSV injection advice). Numbers
  are left as they are (``-0.05`` is a value, not a formula).
* Markdown tables: :func:`markdown_cell` keeps a label in its cell: line breaks and controls made
  spaces, ``|`` and ``<`` backslash-escaped (CommonMark), so a pipe does not open a column and
  raw HTML stays text; a backslash is escaped too, so a label ending in one cannot escape the
  cell's closing pipe. Backslash escapes rather than entities keep the printed table readable.
* Charts: a control character has no glyph, and matplotlib's warning about a missing glyph prints
  the character itself to stderr (an ESC or a BEL reaches the terminal); :func:`chart_text` writes
  each control as its escape (``\x1b``), and :func:`chart_values` does so in every text of a board.
"""

from __future__ import annotations

import re
from typing import Any

#: C0 controls but tab and newline, DEL, and the C1 controls (8-bit CSI, OSC, ...).
_TERMINAL_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
#: Every C0/C1 control (a Markdown cell is one line).
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")
#: What a spreadsheet reads as the start of a formula (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_MARKDOWN_SPECIAL = re.compile(r"[\\|<]")


def terminal_text(text: str) -> str:
    """``text`` without the control characters a terminal acts on (newlines and tabs kept)."""
    return _TERMINAL_CONTROLS.sub("", text)


def csv_cell(value: Any) -> Any:
    """``value`` for a CSV cell: text that a spreadsheet would run as a formula gets a leading ``'``;
    anything else (numbers included) is returned unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def markdown_cell(value: Any) -> str:
    """``value`` as the text of one Markdown table cell (see the module docstring)."""
    text = _CONTROLS.sub(" ", str(value))
    return _MARKDOWN_SPECIAL.sub(lambda found: "\\" + found.group(), text)


def chart_text(text: str) -> str:
    """``text`` as a chart draws it: each C0/C1 control character written as its escape (``\\x1b``),
    newlines included (a label is one line in a chart)."""
    return _CONTROLS.sub(lambda found: f"\\x{ord(found.group()):02x}", text)


def chart_values(value: Any) -> Any:
    """``value`` (a board: mappings, lists, text, numbers) with every text in it, keys included, as
    :func:`chart_text` writes it; the same text always becomes the same, so lookups by label or task
    still match."""
    if isinstance(value, str):
        return chart_text(value)
    if isinstance(value, dict):
        return {chart_values(key): chart_values(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(chart_values(item) for item in value)
    return value
