"""Export a run's debates to other tools' formats: ``madeval export RUN --format NAME --output FILE``.

* :mod:`.inspect_log`: inspect-ai's eval log (``.eval``), read by ``inspect view`` (the optional
  extra ``madeval[inspect]``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from madeval.errors import UsageError
from madeval.export.inspect_log import export_inspect

#: Format name -> function (run folder, output file) -> what was written (``samples``, ``path``, ``notes``).
FORMATS: dict[str, Callable[[Path, Path], dict[str, Any]]] = {"inspect": export_inspect}


def export_run(run: str | Path, format: str, output: str | Path) -> dict[str, Any]:
    """Write the run folder ``run`` to ``output`` in ``format`` (one of :data:`FORMATS`)."""
    if format not in FORMATS:
        raise UsageError(f"unknown export format {format!r}; choose one of: {', '.join(FORMATS)}")
    return FORMATS[format](Path(run), Path(output))


__all__ = ["FORMATS", "export_run"]
