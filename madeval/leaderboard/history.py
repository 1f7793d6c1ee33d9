"""CI history: each ``madeval leaderboard check --history FILE`` appends one JSON line (written by
:mod:`.history_file`), and ``madeval leaderboard history FILE`` tabulates (and
:mod:`.history_chart` draws) score over commits.

An entry holds the commit (``--commit``, else ``GITHUB_SHA``, else ``git rev-parse HEAD`` when
the working folder is in a git repository, else null), the time (UTC), the verdict, and per
baseline row (configuration, task, metric) the run's score with its 95% interval and the check's
outcome. A **significant drop** is the check's own verdict: the row is ``regressed``, i.e. the
one-sided paired test of run < **baseline** (:mod:`.regression`, corrected across rows) is
significant. Drops are against the baseline, not the previous entry, so a commit that only
returns to the baseline score is never marked, and a drop that persists is marked at every
commit that still has it.
"""

from __future__ import annotations

import json
import os
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from madeval.errors import UsageError
from madeval.leaderboard.regression import Check
from madeval.leaderboard.render import points
from madeval.settings.board_options import LeaderboardOptions

FORMAT = "madeval-history/1"
#: The check statuses an entry may record for a row; ``regressed`` is a significant drop.
DROP = "regressed"


def current_commit(given: str | None = None, folder: Path | None = None) -> str | None:
    """The commit an entry is about: ``given``, ``GITHUB_SHA``, or HEAD of the git repository around
    ``folder`` (the working folder); None outside a repository or without git."""
    if given:
        return given
    if os.environ.get("GITHUB_SHA"):
        return os.environ["GITHUB_SHA"]
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def entry(result: Check, board: dict[str, Any], options: LeaderboardOptions, commit: str | None,
          time: datetime | None = None) -> dict[str, Any]:
    """One history line: the check of ``board`` (the run's leaderboard) with its scores and intervals."""
    rows = {(r["label"], r["task"], r["metric"]): r for r in board["rows"] if r["scope"] == "task"}
    scored = []
    for delta in result.deltas:
        row = rows.get((delta["label"], delta["task"], delta["metric"]))
        scored.append({
            "label": delta["label"], "task": delta["task"], "metric": delta["metric"],
            "bounded": delta["bounded"], "score": row["score"] if row else None,
            "ci_low": row["ci_low"] if row else None, "ci_high": row["ci_high"] if row else None,
            "items": row["items"] if row else 0, "baseline": delta["baseline"], "delta": delta["delta"],
            "p_adjusted": delta["p_adjusted"], "status": delta["status"],
        })
    when = (time or datetime.now(timezone.utc)).isoformat(timespec="seconds")
    return {"format": FORMAT, "commit": commit, "time": when, "passed": not result.failed,
            "alpha": options.alpha, "correction": options.correction, "rows": scored}


def read(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The entries of a history file, oldest first, and how many broken lines were skipped.

    A file that cannot be read, or holds no entry, is a one-line UsageError.
    """
    try:
        content = path.read_bytes()
    except OSError as error:
        raise UsageError(f"cannot read history {path}: {error.strerror}") from None
    entries, broken = parse(content)
    if not entries:
        raise UsageError(f"{path} holds no madeval history entry ({FORMAT})")
    return entries, broken


def parse(content: bytes) -> tuple[list[dict[str, Any]], int]:
    """The entries of a history file's ``content`` and the count of its broken lines (not JSON, not
    UTF-8, nested past the parser's depth, or not an entry); empty lines are neither."""
    entries, broken = [], 0
    for line in content.splitlines():
        try:
            found = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested too deeply
            broken += bool(line.strip())
            continue
        if is_entry(found):
            entries.append(found)
        else:
            broken += 1
    return entries, broken


def is_entry(found: Any) -> bool:
    """Whether ``found`` is a history entry whose every part the table and the chart read is of its
    type (a hand-edited or hostile line is skipped as broken, never a traceback)."""
    if not (isinstance(found, dict) and found.get("format") == FORMAT and isinstance(found.get("rows"), list)
            and isinstance(found.get("commit"), (str, type(None))) and isinstance(found.get("time"), str)
            and isinstance(found.get("passed"), bool)):
        return False
    return all(isinstance(row, dict) and all(isinstance(row.get(k), str) for k in ("label", "task", "metric", "status"))
               and isinstance(row.get("bounded", True), bool)
               and all(_number_or_none(row.get(k)) for k in ("score", "ci_low", "ci_high"))
               and (row.get("score") is None or None not in (row.get("ci_low"), row.get("ci_high")))
               for row in found["rows"])


def _number_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def series(entries: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, list[dict[str, Any] | None]]]:
    """(task, metric) -> configuration label -> its row in each entry (None where an entry lacks it)."""
    found: dict[tuple[str, str], dict[str, list[dict[str, Any] | None]]] = {}
    for index, line in enumerate(entries):
        for row in line["rows"]:
            by_label = found.setdefault((row["task"], row["metric"]), {})
            by_label.setdefault(row["label"], [None] * len(entries))[index] = row
    return found


def drops(entries: list[dict[str, Any]]) -> list[int]:
    """The indices of the entries with a significant drop (a row the check found ``regressed``)."""
    return [i for i, line in enumerate(entries) if any(row["status"] == DROP for row in line["rows"])]


def short(commit: str | None) -> str:
    """A commit as shown: its first 10 characters, or ``–`` when unknown."""
    return commit[:10] if commit else "–"


def markdown(entries: list[dict[str, Any]], broken: int = 0) -> str:
    """One table per (task, metric): a line per entry, a column per configuration (score and 95% CI),
    and the entries with a significant drop marked."""
    parts = []
    for (task, metric), by_label in series(entries).items():
        labels = list(by_label)
        head = "| # | commit | time | " + " | ".join(labels) + " | verdict |"
        lines = [head, "|---:|---|---|" + "---:|" * len(labels) + "---|"]
        for index, line in enumerate(entries):
            cells = [cell(by_label[label][index]) for label in labels]
            lines.append(f"| {index + 1} | {short(line['commit'])} | {line['time']} | {' | '.join(cells)} "
                         f"| {'PASS' if line['passed'] else 'FAIL'} |")
        parts.append(f"### {task} — {metric}\n\n" + "\n".join(lines) + "\n")
    skipped = f" {broken} broken line{'s' if broken != 1 else ''} skipped." if broken else ""
    return "\n".join(parts) + f"\n{summary(entries)}{skipped}\n"


def summary(entries: list[dict[str, Any]]) -> str:
    """One sentence: which commits have a significant drop, and against what."""
    marked = drops(entries)
    return (f"Significant drops (▼: run < baseline by the check's one-sided paired test, corrected, at the "
               f"entry's alpha) at {', '.join(short(entries[i]['commit']) for i in marked)}."
            if marked else "No significant drop against the baseline.")


def cell(row: dict[str, Any] | None) -> str:
    """A configuration's score at one entry: ``score [low–high]``, ▼ for a significant drop."""
    if row is None or row["score"] is None:
        return "–"
    mark = " ▼" if row["status"] == DROP else ""
    return f"{points(row, row['score'])} [{points(row, row['ci_low'])}–{points(row, row['ci_high'])}]{mark}"
