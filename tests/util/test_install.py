"""Messages about extras say how to install them the way madeval was installed (issue 31, item 6):
from a clone ``pip install -e '.[inspect]'``, from a repository or a folder that one, from an index
``pip install 'madeval[inspect]'``. The cases are PEP 610's ``direct_url.json`` shapes, as pip writes them."""

from __future__ import annotations

import json
import shlex
from importlib import metadata
from pathlib import Path

import pytest

from madeval.util import install
from madeval.util.install import command_for, install_command

CLONE = Path("/home/someone/src/madeval")


def test_an_editable_clone_is_installed_again_editable_from_its_folder(tmp_path):
    editable = {"url": CLONE.as_uri(), "dir_info": {"editable": True}}
    assert command_for("inspect", editable, None, CLONE) == "pip install -e '.[inspect]'"
    assert command_for("inspect", editable, None, tmp_path) == f"pip install -e '{CLONE}[inspect]'"


def test_a_folder_with_a_space_is_quoted_as_one_argument(tmp_path):
    folder = tmp_path / "my clone"
    command = command_for("wandb", {"url": folder.as_uri(), "dir_info": {"editable": True}}, None, CLONE)
    assert shlex.split(command) == ["pip", "install", "-e", f"{folder}[wandb]"]


def test_a_repository_a_folder_and_an_index_each_get_their_own_command():
    git = {"url": "https://example.invalid/madeval.git", "vcs_info": {"vcs": "git", "commit_id": "abc"}}
    assert command_for("inspect", git, None, CLONE) == (
        "pip install 'madeval[inspect] @ git+https://example.invalid/madeval.git'")
    folder = {"url": CLONE.as_uri(), "dir_info": {}}  # pip install /path, not editable
    assert command_for("inspect", folder, None, CLONE) == "pip install '.[inspect]'"
    wheel = {"url": "file:///tmp/madeval-0.1.0-py3-none-any.whl", "archive_info": {}}
    assert command_for("inspect", wheel, None, CLONE) == "pip install 'madeval[inspect]'"
    assert command_for("inspect", None, None, CLONE) == "pip install 'madeval[inspect]'"


def test_code_run_from_a_clone_pip_never_installed_counts_as_a_clone(tmp_path):
    assert command_for("metrics", None, CLONE, tmp_path) == f"pip install -e '{CLONE}[metrics]'"


def test_this_installation_is_read_from_its_direct_url_record():
    """The command for the madeval installed here follows its own direct_url.json."""
    try:
        recorded = metadata.distribution("madeval").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        recorded = None
    found = json.loads(recorded) if recorded else None
    assert install.installed_from() == found
    command = install_command("inspect")
    if found and found.get("dir_info", {}).get("editable"):
        assert command.startswith("pip install -e ") and command.endswith("[inspect]'")
    assert command == command_for("inspect", found, install.source_tree(), Path.cwd())


def test_the_messages_that_need_an_extra_name_the_command(monkeypatch, tmp_path):
    from madeval import UsageError
    from madeval.export import inspect_log
    from madeval.metrics import models
    from madeval.settings import wandb_args

    monkeypatch.setattr(install, "installed_from", lambda: {"url": CLONE.as_uri(), "dir_info": {"editable": True}})
    monkeypatch.chdir(tmp_path)  # not the clone: its folder is named in full
    expected = f"pip install -e '{CLONE}[inspect]' (or pip install inspect-ai)"
    assert inspect_log.install_hint() == expected
    assert models.install_hint() == f"install madeval's metrics extra: pip install -e '{CLONE}[metrics]'"
    monkeypatch.setattr(wandb_args.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(UsageError, match=rf"needs the wandb package: pip install -e '{CLONE}\[wandb\]'$"):
        wandb_args.check_wandb_args({"project": "p"})
