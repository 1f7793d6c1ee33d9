"""Files in the output folder that are not ours (issue 25, item 11): a link named like one of the
run's files is never followed, and a folder holding our file names but no run of ours is refused
and left as it was. Real links in a real folder: what another local user could plant in /tmp."""

from __future__ import annotations

import os

import pytest

from helpers import madeval_in_process, run_quietly, settings_for
from madeval.errors import UsageError
from madeval.records.folder import write_json_atomically

SECRET = b"a file of the user's that the run must never touch\nlast line without newline"


@pytest.mark.parametrize("name", ["run.lock", "run.json"])
def test_hostile_link_planted_in_a_new_run_folder_is_refused_and_its_target_untouched(sim, tmp_path, victim, name):
    folder = tmp_path / "run"
    folder.mkdir()
    os.symlink(victim, folder / name)
    settings = settings_for(sim.base_url, tmp_path, limit=2, cache="off")
    with pytest.raises(UsageError, match=f"{name} is a symbolic link"):
        run_quietly(settings)
    assert victim.read_bytes() == SECRET


@pytest.mark.parametrize("name", ["records.jsonl", "errors.jsonl"])
def test_hostile_link_in_a_finished_run_is_refused_on_resume(sim, tmp_path, victim, name):
    settings = settings_for(sim.base_url, tmp_path, limit=3, cache="off")
    first, _ = run_quietly(settings)
    path = first.folder / name
    path.unlink(missing_ok=True)
    os.symlink(victim, path)
    with pytest.raises(UsageError, match=f"{name} is a symbolic link"):
        run_quietly(settings)
    assert victim.read_bytes() == SECRET


def test_hostile_links_named_like_outputs_are_replaced_not_written_through(sim, tmp_path, victim):
    settings = settings_for(sim.base_url, tmp_path, limit=3, cache="off", leaderboard={"charts": True})
    first, _ = run_quietly(settings)
    names = ["leaderboard.md", "leaderboard.csv", "comparisons.csv", "leaderboard.json", "leaderboard.html",
             "charts/score.png", "charts/score.svg"]
    for name in names:
        (first.folder / name).unlink()
        os.symlink(victim, first.folder / name)
    shown = madeval_in_process("leaderboard", "show", first.folder)
    assert shown.returncode == 0, shown.stderr
    assert victim.read_bytes() == SECRET
    for name in names:
        path = first.folder / name
        assert not path.is_symlink() and path.stat().st_size > 0, name
    assert (first.folder / "leaderboard.md").read_text().startswith("| configuration |")


def test_hostile_charts_folder_link_is_refused(sim, tmp_path, victim):
    settings = settings_for(sim.base_url, tmp_path, limit=3, cache="off")
    first, _ = run_quietly(settings)
    os.symlink(victim.parent, first.folder / "charts")
    shown = madeval_in_process("leaderboard", "show", first.folder, "--charts")
    assert shown.returncode == 2 and "charts is a symbolic link" in shown.stderr
    assert len(shown.stderr.strip().splitlines()) == 1
    assert os.listdir(victim.parent) == ["precious.txt"]


def test_hostile_folder_with_another_tools_records_is_refused_and_left_as_it_was(sim, tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    theirs = b'{"unit": {"key": "theirs"}, "score": 1}\n{"partial": '  # their last line has no newline yet
    (folder / "records.jsonl").write_bytes(theirs)
    settings = settings_for(sim.base_url, tmp_path, limit=2, cache="off")
    with pytest.raises(UsageError, match=r"holds records\.jsonl but no run\.json"):
        run_quietly(settings)
    assert (folder / "records.jsonl").read_bytes() == theirs
    assert sorted(os.listdir(folder)) == ["records.jsonl"]  # not even a lock file left behind


def test_hostile_temporary_file_name_link_is_not_written_through(tmp_path, victim):
    # The old temporary name was fixed (run.json.tmp): a link there received the new run.json.
    os.symlink(victim, tmp_path / "run.json.tmp")
    write_json_atomically(tmp_path / "run.json", {"a": 1})
    assert victim.read_bytes() == SECRET
    from madeval.util.safe_files import write_text_atomically

    write_text_atomically(tmp_path / "leaderboard.md", "text")
    assert (tmp_path / "run.json").read_text() == '{\n  "a": 1\n}\n'
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp") and not p.is_symlink()] == []
