"""CI history: ``leaderboard check --history`` appends one line per check, ``leaderboard history`` marks
the commits with a significant drop against the baseline, and ``--format github`` writes a job summary.

Ten checks of a simulator run against its own board as the baseline: eight unchanged, one with a
planted drop of 10 items (significant: p = 2^-10 before Holm over 2 rows) and one with a dip of 2
items (not significant: p = 2 x 2^-2 = 0.5 after Holm). Only the planted commit may be marked.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from matplotlib.collections import PathCollection

from helpers import run_quietly
from madeval.cli.main import cli, main
from madeval.leaderboard import build_leaderboard
from madeval.leaderboard.history import current_commit, drops, read
from madeval.leaderboard.history_chart import DROP_COLOUR, figure
from madeval.settings.config import DebateConfig, RunSettings

COMMITS = [f"{index:02d}" + "abcdef0123456789" * 2 + "abcdef" for index in range(10)]
PLANTED, DIP = 5, 2


def lower(folder: Path, target: Path, items: int) -> Path:
    """A copy of the run where the first configuration gets ``items`` of its right answers wrong."""
    shutil.copytree(folder, target)
    run = json.loads((folder / "run.json").read_text())
    config = run["order"]["configurations"][0] if run.get("order") else next(iter(run["configurations"]))
    lines, flipped = [], 0
    for line in (folder / "records.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["unit"]["config"] == config and record["metrics"]["accuracy"] == 1.0 and flipped < items:
            record["metrics"]["accuracy"] = 0.0
            flipped += 1
        lines.append(json.dumps(record))
    assert flipped == items
    (target / "records.jsonl").write_text("\n".join(lines) + "\n")
    return target


@pytest.fixture(scope="module")
def boards(sim, tmp_path_factory):
    """Leaderboard JSON files: the baseline (= the unchanged run), the planted drop and the dip."""
    root = tmp_path_factory.mktemp("history")
    settings = RunSettings(base_url=sim.base_url, tasks=["arith_mc"], limit=40, output_path=str(root / "run"),
                           configurations=[DebateConfig(name="two", agents=2, max_turns=2),
                                           DebateConfig(name="three", agents=3, max_turns=2)])
    folder = run_quietly(settings)[0].folder
    found = {"baseline": folder / "leaderboard.json"}
    for name, items in (("planted", 10), ("dip", 2)):
        changed = lower(folder, root / name, items)
        found[name] = changed / "board.json"
        found[name].write_text(json.dumps(build_leaderboard(changed)))
    return found


def invoke(*args, env=None):
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


@pytest.fixture(scope="module")
def history(boards, tmp_path_factory):
    path = tmp_path_factory.mktemp("ci") / "history.jsonl"
    for index, commit in enumerate(COMMITS):
        board = boards["planted" if index == PLANTED else "dip" if index == DIP else "baseline"]
        done = invoke("leaderboard", "check", str(board), "--baseline", str(boards["baseline"]),
                      "--history", str(path), "--commit", commit)
        assert done.exit_code == (1 if index == PLANTED else 0), done.output
    return path


def test_history_ten_checks_mark_the_planted_drop_and_only_it(history, tmp_path):
    entries, broken = read(history)
    assert len(entries) == 10 and broken == 0
    assert [e["commit"] for e in entries] == COMMITS
    assert [e["passed"] for e in entries] == [i != PLANTED for i in range(10)]
    assert drops(entries) == [PLANTED]
    two = [next(r for r in e["rows"] if r["label"] == "two") for e in entries]
    assert two[DIP]["delta"] == pytest.approx(-2 / 40) and two[DIP]["status"] == "ok"
    assert two[PLANTED]["delta"] == pytest.approx(-10 / 40) and two[PLANTED]["status"] == "regressed"
    assert two[PLANTED]["p_adjusted"] == pytest.approx(2 * 0.5 ** 10)  # exact McNemar, Holm over 2 rows
    for row in two:  # each entry carries the run's own score and 95% interval
        assert row["ci_low"] <= row["score"] <= row["ci_high"]
    assert two[PLANTED]["score"] == pytest.approx(two[0]["score"] - 10 / 40)

    done = invoke("leaderboard", "history", str(history), "-o", str(tmp_path / "out"))
    assert done.exit_code == 0, done.output
    lines = [line for line in done.output.splitlines() if line.startswith("| ")][1:]
    assert len(lines) == 10
    assert [i for i, line in enumerate(lines) if "▼" in line] == [PLANTED]
    assert f"at {COMMITS[PLANTED][:10]}." in done.output
    for name in ("history.md", "history.html", "charts/history.png", "charts/history.svg"):
        assert (tmp_path / "out" / name).is_file()
    page = (tmp_path / "out" / "history.html").read_text()
    assert page.count("class='sig drop'") == 1  # the planted drop, red


def test_history_chart_marks_that_commit_and_only_it(history):
    entries, _ = read(history)
    (ax,) = figure(entries).axes
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert ticks == [("▼ " if i == PLANTED else "") + c[:10] for i, c in enumerate(COMMITS)]
    red = [i for i, t in enumerate(ax.get_xticklabels()) if t.get_color() == DROP_COLOUR]
    assert red == [PLANTED]
    rings = [c for c in ax.collections if isinstance(c, PathCollection)]  # the error bars are LineCollections
    assert len(rings) == 1 and [x for x, _ in rings[0].get_offsets()] == [PLANTED]
    assert [line.get_xdata()[0] for line in ax.lines if line.get_linestyle() == "-" and len(line.get_xdata()) == 2
            and line.get_xdata()[0] == line.get_xdata()[1]] == [PLANTED]  # the shaded column


def test_history_github_summary_and_the_commit_fallbacks(boards, tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    done = invoke("leaderboard", "check", str(boards["planted"]), "--baseline", str(boards["baseline"]),
                  "--format", "github", env={"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_SHA": COMMITS[3]})
    assert done.exit_code == 1
    text = summary.read_text()
    assert text.startswith(f"## madeval leaderboard check at `{COMMITS[3][:10]}`: ❌ FAIL\n\n| configuration |")
    assert "| regressed |" in text and "| regressed |" in done.output  # the usual table still printed
    printed = invoke("leaderboard", "check", str(boards["baseline"]), "--baseline", str(boards["baseline"]),
                     "--format", "github", env={"GITHUB_STEP_SUMMARY": ""})
    assert printed.exit_code == 0 and "✅ PASS" in printed.output

    repo = Path(__file__).resolve().parents[2]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    assert current_commit("given", repo) == "given"
    monkeypatch.setenv("GITHUB_SHA", "f" * 40)  # a CI job's commit wins over the checkout's HEAD
    assert current_commit(None, repo) == "f" * 40
    monkeypatch.delenv("GITHUB_SHA")
    assert current_commit(None, repo) == head
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # git looks no higher than tmp_path
    assert current_commit(None, outside) is None


def test_history_bad_file_is_one_line_and_status_2(tmp_path, capsys):
    (tmp_path / "h.jsonl").write_text("{broken\n")
    for path in (tmp_path / "h.jsonl", tmp_path / "missing.jsonl"):
        with pytest.raises(SystemExit) as exit_status:
            main(["leaderboard", "history", str(path)])
        assert exit_status.value.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("madeval: error: ")
    assert not (tmp_path / "history.md").exists()  # nothing half-written
