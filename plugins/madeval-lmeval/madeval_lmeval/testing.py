"""Test-session help for suites that run lm-eval tasks (madeval-lmeval's own and madeval's importer tests).

Each test has a cache folder of its own (``madeval.testing.fixtures.madeval_isolated``), and walking
lm-eval's ~14,700 task files to build its index takes 10 s of CPU: :func:`shared_index_file` builds
that index once per test session, in a folder pytest-xdist's workers share, and :func:`seed_index`
copies it into the running test's cache folder.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from . import index_cache


def shared_index_file(tmp_path_factory: Any) -> Path:
    """The index file of lm-eval's own tasks (no include path), read or built once in a folder the
    session's workers share (xdist gives each worker a folder under the run's) under a file lock:
    one worker builds it, the others wait and read it. ``tmp_path_factory``: pytest's fixture."""
    import pytest
    from filelock import FileLock  # a dependency of lm-eval's (through datasets and huggingface_hub)

    base = tmp_path_factory.getbasetemp()
    store = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "lmeval-index-store"
    store.mkdir(exist_ok=True)
    with FileLock(str(store / "build.lock")), pytest.MonkeyPatch.context() as patch:
        patch.setenv("MADEVAL_CACHE_DIR", str(store))
        index_cache.load_raw(())  # read when there, else built and written atomically
        return index_cache.cache_file(index_cache.lm_eval_key())


def seed_index(index_file: Path) -> None:
    """Copy ``index_file`` into this test's cache folder (``MADEVAL_CACHE_DIR``; a copy: a test may
    rewrite its own)."""
    shutil.copyfile(index_file, Path(os.environ["MADEVAL_CACHE_DIR"]) / index_file.name)
