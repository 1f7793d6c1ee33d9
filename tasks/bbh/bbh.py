"""BIG-Bench Hard rows: the options listed in ``input`` become a ``choices`` list."""

from __future__ import annotations

import re

OPTION = re.compile(r"^\(([A-Z])\)\s*(.*)$")


def split_options(docs):
    """Each doc with ``question`` (the input before "Options:") and ``choices`` (the option texts)."""
    rows = []
    for doc in docs:
        question, marker, options = doc["input"].rpartition("\nOptions:\n")
        if not marker:
            raise ValueError(f"no 'Options:' block in BBH input: {doc['input'][:80]!r}")
        choices = []
        for line in options.splitlines():
            match = OPTION.match(line.strip())
            if match:
                choices.append(match.group(2).strip())
        rows.append({**doc, "question": question.strip(), "choices": choices})
    return rows
