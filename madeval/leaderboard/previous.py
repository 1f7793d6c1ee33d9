"""The board a run folder held before it is rewritten (``madeval rescore``), kept beside it.

A rescore adds rows and rewrites the folder's board; what the board said before is moved, not
lost, into ``previous-boards/<n>/`` (``n`` counting up from 1, one folder per rewrite), each output
as it was. Only regular files move (a link named like an output is left where it is, never followed),
each by a rename within the run folder: nothing is read or copied.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from madeval.util.safe_files import refuse_linked_folder

#: The folder of a run folder holding its earlier boards.
PREVIOUS_BOARDS = "previous-boards"


def keep_previous(folder: Path, names: tuple[str, ...]) -> Path | None:
    """Move the outputs ``names`` found in ``folder`` (regular files only) into a new numbered folder
    of :data:`PREVIOUS_BOARDS`; returns that folder, or None when there was no board to keep."""
    found = [name for name in names if _regular(folder / name)]
    if not found:
        return None
    home = folder / PREVIOUS_BOARDS
    refuse_linked_folder(home)
    home.mkdir(exist_ok=True)
    number = 1 + max((int(entry.name) for entry in home.iterdir() if entry.name.isdigit()), default=0)
    kept = home / str(number)
    kept.mkdir()  # a new folder: never one that exists (or a link planted under its name)
    for name in found:
        os.replace(folder / name, kept / name)
    return kept


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
