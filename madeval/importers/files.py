"""Reading input files as every importer needs: gzip or not, their label, their checksum."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path
from typing import BinaryIO

from madeval.errors import UsageError


def file_label(path: Path) -> str:
    """A file's label: its name without ``.gz`` and ``.json`` (``run.json.gz`` -> ``run``)."""
    name = path.name
    for suffix in (".gz", ".json", ".jsonl"):
        name = name[: -len(suffix)] if name.endswith(suffix) and len(name) > len(suffix) else name
    return name


def sha256_of(path: Path) -> str:
    """The SHA-256 of the file as stored (compressed or not), read in blocks; an unreadable file
    is a one-line UsageError."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
    return digest.hexdigest()


def open_binary(path: Path) -> BinaryIO:
    """``path`` opened for reading bytes, through gzip when it starts with gzip's magic number."""
    with open(path, "rb") as handle:
        gzipped = handle.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gzipped else open(path, "rb")  # type: ignore[return-value]
