"""The folder of madeval's caches: ``$MADEVAL_CACHE_DIR``, else ``~/.cache/madeval``."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """``$MADEVAL_CACHE_DIR`` when set (and not empty), else ``~/.cache/madeval`` (not created here)."""
    return Path(os.environ.get("MADEVAL_CACHE_DIR") or Path.home() / ".cache" / "madeval")
