"""The debate viewer (``madeval view``): a simulator run with conformity plus two hand-made debates
(one right in turn 1 and wrong at the end; one of hostile text) becomes one page that, in headless
Chromium, lists every debate, filters them as the turn-by-turn facts say, opens a debate as a grid
of turns by agents, and shows model text as text; the page fits at 1400 and 800 px."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from browser import chromium, chromium_command, run_chromium
from debates_by_hand import HOSTILE, HOSTILE_LABEL, HOSTILE_RECORD, HUGE, LOST
from helpers import madeval_in_process, run_quietly
from madeval.analysis.debate_facts import debate_facts
from madeval.errors import StorageError
from madeval.records.folder import encode_line, read_records
from madeval.settings.config import build_settings
from madeval.simulator import simulate
from madeval.viewer import VIEWER_FILE, write_viewer
from madeval.viewer.debates import readable
from madeval.viewer.page import inert_json, pack


@pytest.fixture(scope="module")
def viewed_run(generated_tasks, tmp_path_factory):
    """Three configurations on two generated tasks (simulator, conformity 0.4), plus LOST and
    HOSTILE_RECORD appended to its records; the viewer page written into the run folder."""
    folder = tmp_path_factory.mktemp("viewer") / "run"
    options = {"tasks": ["arith_mc", "arith_yesno"], "repeats": 1, "limit": 9, "seed": 7, "cache": "off",
               "common": {"agents": 3, "max_turns": 3, "paradigm": "memory"},
               "grid": {"decider": ["majority_consensus", "simple_voting"]},
               "runs": [{"preset": "baseline_direct"}]}
    with simulate(tasks=generated_tasks.values(), accuracy=0.55, conformity=0.4) as sim:
        run_quietly(build_settings({**options, "base_url": sim.base_url, "output_path": str(folder)}))
    with open(folder / "records.jsonl", "ab") as handle:
        handle.write(encode_line(LOST) + encode_line(HOSTILE_RECORD))
    written = write_viewer(folder)
    return folder, written


def chromium_dom(page: Path, profile: Path, width: int = 1400, budget_ms: int = 20_000) -> str:
    """The DOM of ``page`` after its scripts, timers and promises ran (virtual time), ``width`` wide."""
    done = subprocess.run(
        chromium_command(chromium(), profile, f"--virtual-time-budget={budget_ms}", f"--window-size={width},1200",
                         "--dump-dom", page.resolve().as_uri()),
        capture_output=True, text=True, timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Uncaught" not in done.stderr, done.stderr[-2000:]
    return done.stdout


def with_probe(page: Path, probe: str, target: Path) -> Path:
    """A copy of ``page`` with ``probe`` run after the viewer's script."""
    text = page.read_text(encoding="utf-8")
    assert text.count("</body>") == 1  # no text of the run can close the body early
    target.write_text(text.replace("</body>", f"<script>{probe}</script></body>"), encoding="utf-8")
    return target


def attribute(dom: str, name: str) -> str | None:
    found = re.search(rf'<html[^>]*\s{name}="([^"]*)"', dom)
    return html.unescape(found.group(1)) if found else None


# ---- what the page holds ---------------------------------------------------------------------

def test_the_page_holds_every_debate_with_the_facts_of_the_dynamics(viewed_run):
    folder, written = viewed_run
    records = list(read_records(folder))
    assert written["debates"] == len(records) == 3 * 2 * 9 + 2
    page = (folder / VIEWER_FILE).read_text(encoding="utf-8")
    index = json.loads(re.search(r"id='madeval-index'>(.*?)</script>", page).group(1))
    assert sorted(index["configs"]) == sorted({r["config_label"] for r in records})
    for row, record in zip(index["debates"], records):
        facts = debate_facts(record, "accuracy")
        assert [index["configs"][row["c"]], index["tasks"][row["t"]], row["item"]] == \
            readable((record["config_label"], record["unit"]["task"], record["unit"]["item"]))
        assert row["right"] == (record["metrics"]["accuracy"] == 1.0) == facts.final_right
        assert (row["first"], row["drift"],
                row["unparsed"]) == (facts.first_turn_vote_right, facts.drift, facts.unparsed)
    lost, hostile = index["debates"][-2:]
    assert (lost["first"], lost["right"], lost["drift"], lost["unparsed"]) == (True, False, True, 0)
    assert (hostile["first"], hostile["right"], hostile["drift"], hostile["unparsed"]) == (True, True, False, 1)
    markup = re.sub(r"<script type='application/[^']+'[^>]*>.*?</script>", "", page)  # without the run's data
    assert not re.search(r"https?:|<link|\ssrc=|@import|url\(", markup)  # opens from disk, asks no network


def test_a_debate_whose_metric_cannot_score_an_answer_is_shown_without_facts_and_says_why():
    from madeval.viewer.debates import view_debate

    record = {**HOSTILE_RECORD, "metrics": {"no_such_metric": 0.7}}
    shown = view_debate(record, "the question")
    assert (shown.row["right"], shown.row["first"], shown.row["drift"]) == (None, None, None)
    assert shown.row["score"] == 0.7 and shown.row["unparsed"] == 1  # agent 0's answer, read without a score
    assert shown.detail["facts"] is None and "no_such_metric" in shown.detail["no_facts"]
    assert [m["right"] for m in shown.detail["messages"]] == [None, None, None]
    judged = view_debate(LOST, None)
    assert [m["right"] for m in judged.detail["messages"]] == [True, True, False, False, False, False]
    agreeing = json.loads(json.dumps(LOST))
    agreeing["transcript"]["messages"][5].update(solution=None, answer=None, agreement=True, backs=3)
    said = view_debate(agreeing, None).detail["messages"]
    assert [m["proposes"] for m in said] == [True] * 5 + [False]  # no "unparsed" mark on a message that only agrees


def test_a_debate_s_answers_are_scored_once_for_its_facts_and_its_messages_together():
    import types

    from madeval.core.hookspecs import hookimpl
    from madeval.metrics.base import Metric
    from madeval.testing import registered
    from madeval.viewer.debates import view_debate

    asked = []

    class CountedLetter(Metric):
        """Right when the answer is the gold letter; counts what it is asked."""

        def score(self, prediction, item):
            asked.append(prediction)
            return float(prediction == item.target)

    plugin = types.ModuleType("counted_letter_plugin")
    plugin.register_metrics = hookimpl(lambda register: register("counted_letter", CountedLetter))
    record = json.loads(json.dumps({**LOST, "metrics": {"counted_letter": 0.0}}))  # decision A, gold B
    early = {**record["transcript"]["messages"][0], "id": 99, "answer": "D", "text": "D first"}
    record["transcript"]["messages"].insert(0, early)  # agent 0 says D, then B, in turn 1: only B is its vote
    with registered(plugin):
        shown = view_debate(record, None)
    assert sorted(asked) == ["B", "D"]  # each once; A is the decision, whose score the record holds
    assert [m["right"] for m in shown.detail["messages"]] == [False, True, True, False, False, False, False]
    assert shown.detail["facts"]["vote_right"] == [True, False] and shown.row["drift"] is True


def test_embedded_data_cannot_close_its_element():
    assert ("<" not in inert_json({"x": "</script><!--"})
            and json.loads(inert_json({"x": "</script>"})) == {"x": "</script>"})
    packed = pack({"text": HOSTILE})
    assert re.fullmatch(r"[A-Za-z0-9+/=]+", packed)
    import base64
    import gzip
    shown = HOSTILE.replace("\ud800", "\ufffd")  # a lone surrogate has no UTF-8 form: U+FFFD, as a browser draws it
    assert json.loads(gzip.decompress(base64.b64decode(packed)).decode("utf-8"))["text"] == shown
    assert json.loads(inert_json([HOSTILE, "\U0001F600"])) == [shown, "\U0001F600"]  # a real pair is kept


def test_a_folder_that_is_no_run_is_one_line_and_status_2_with_nothing_written(tmp_path):
    done = madeval_in_process("view", str(tmp_path))
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0 and "not a madeval run folder" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_page_of_a_slice_holds_only_its_debates_and_an_empty_slice_writes_nothing(viewed_run, tmp_path):
    folder, _ = viewed_run
    records = list(read_records(folder))
    page = tmp_path / "slice.html"
    done = madeval_in_process("view", str(folder), "--output", str(page), "--task", "arith_yesno", "--config",
                              "simple_voting,baseline_direct")
    expected = [r for r in records if r["unit"]["task"] == "arith_yesno"
                and r["config_label"] in ("simple_voting", "baseline_direct")]
    assert done.returncode == 0 and done.stdout.startswith(f"{len(expected)} debates in {page}"), done.stderr
    index = json.loads(re.search(r"id='madeval-index'>(.*?)</script>", page.read_text()).group(1))
    assert [r["item"] for r in index["debates"]] == [r["unit"]["item"] for r in expected] and len(expected) == 18
    empty = tmp_path / "empty.html"
    done = madeval_in_process("view", str(folder), "--output", str(empty), "--task", "nope")
    assert done.returncode == 2 and "no debate of" in done.stderr and done.stderr.count("\n") == 1
    described = json.loads((folder / "run.json").read_text())
    labels = ", ".join(c["label"] for c in described["configurations"].values())
    assert sorted(labels.split(", ")) == sorted({r["config_label"] for r in records} - {"hand", HOSTILE_LABEL})
    # the labels only records name (the hand-made debates appended to records.jsonl) are listed too, after run.json's
    assert done.stderr.rstrip().endswith(f"is of task nope (it has task arith_mc, arith_yesno; "
                                         f"configuration {labels}, hand, {HOSTILE_LABEL})")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["slice.html"]


def test_an_empty_slice_s_line_cuts_a_huge_label_that_only_records_name(viewed_run, tmp_path):
    import shutil

    folder, _ = viewed_run
    copy = tmp_path / "run"
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("*.html", "run.lock"))
    huge = {**LOST, "unit": {**LOST["unit"], "key": "huge"}, "config_label": "L" * 100_000}
    with open(copy / "records.jsonl", "ab") as handle:
        handle.write(encode_line(huge))
    from madeval.errors import UsageError

    with pytest.raises(UsageError) as raised:
        write_viewer(copy, tmp_path / "page.html", configs=["nope"])
    assert str(raised.value).endswith(f", {HOSTILE_LABEL}, {'L' * 79}…)") and len(str(raised.value)) < 1000
    assert not (tmp_path / "page.html").exists()


def test_a_record_of_another_shape_is_left_out_and_named_and_a_broken_line_counted(viewed_run, tmp_path):
    import shutil

    folder, written = viewed_run
    copy = tmp_path / "run"
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("*.html", "run.lock"))
    odd = {**LOST, "unit": {**LOST["unit"], "key": "odd", "item": "odd-item"},
           "transcript": {"messages": ["not a message"]}}
    with open(copy / "records.jsonl", "ab") as handle:
        handle.write(encode_line(odd) + b"{not json\n")
    done = write_viewer(copy)
    assert done["debates"] == written["debates"]
    assert done["notes"] == ["records left out: 1 broken line skipped (records.jsonl:%d)" % (written["debates"] + 2),
                             "1 record with a transcript of another shape left out (odd)"]
    index = json.loads(re.search(r"id='madeval-index'>(.*?)</script>", (copy / VIEWER_FILE).read_text()).group(1))
    assert index["notes"] == done["notes"]


def test_a_page_above_the_size_limit_says_how_to_split_the_run(viewed_run, tmp_path, monkeypatch):
    from click.testing import CliRunner

    import madeval.viewer
    from madeval.cli.main import cli

    folder, written = viewed_run
    monkeypatch.setattr(madeval.viewer, "PAGE_LIMIT_BYTES", 50_000)  # the run's page is about 90 KB
    done = CliRunner().invoke(cli, ["view", str(folder), "--output", str(tmp_path / "big.html")])
    assert done.exit_code == 0 and "larger than the 0 MB" in done.stderr and "--task or --config" in done.stderr
    monkeypatch.setattr(madeval.viewer, "PAGE_LIMIT_BYTES", 10_000_000)
    done = CliRunner().invoke(cli, ["view", str(folder), "--output", str(tmp_path / "small.html")])
    assert done.exit_code == 0 and done.stderr == ""


def test_a_page_that_cannot_be_written_leaves_nothing(viewed_run, tmp_path):
    folder, _ = viewed_run
    (tmp_path / "a-file").write_text("not a folder")
    target = tmp_path / "a-file" / "deeper" / "page.html"
    with pytest.raises(StorageError, match="cannot make the folder"):
        write_viewer(folder, target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]
    done = madeval_in_process("view", str(folder), "--output", str(target))
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and "cannot make the folder" in done.stderr


def test_output_into_missing_folders_makes_them_as_a_run_s_and_a_board_s_output_do(viewed_run, tmp_path):
    """``--output`` into folders that do not exist yet makes them (``madeval run -o`` and
    ``leaderboard show -o`` do); a page that is not kept (an empty slice) removes them again."""
    folder, written = viewed_run
    target = tmp_path / "new" / "deeper" / "page.html"
    done = madeval_in_process("view", str(folder), "--output", str(target))
    assert done.returncode == 0 and done.stdout.startswith(f"{written['debates']} debates in {target}"), done.stderr
    assert sorted(p.name for p in target.parent.iterdir()) == ["page.html"]
    empty = tmp_path / "other" / "deeper" / "page.html"
    done = madeval_in_process("view", str(folder), "--output", str(empty), "--task", "nope")
    assert done.returncode == 2 and "no debate of" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new"]


def test_the_leaderboard_page_links_the_viewer_when_it_is_there(viewed_run, tmp_path):
    from madeval.leaderboard import build_leaderboard, write_outputs

    folder, _ = viewed_run
    board = build_leaderboard(folder)
    write_outputs(board, folder)
    assert f"<a href='{VIEWER_FILE}'>" in (folder / "leaderboard.html").read_text()
    write_outputs(board, tmp_path)  # a folder without the viewer: no link
    assert "<a href=" not in (tmp_path / "leaderboard.html").read_text()


def test_view_says_how_to_link_the_page_from_the_board_with_a_command_that_does_it(viewed_run, tmp_path):
    import shlex
    import shutil

    from click.testing import CliRunner

    from madeval.cli.main import cli
    from madeval.leaderboard import build_leaderboard, write_outputs

    folder, _ = viewed_run
    copy = tmp_path / "a run's folder"  # a space and a quote: the command must still be one argument
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("*.html", "run.lock"))
    write_outputs(build_leaderboard(copy), copy)  # a board written before the page: no link yet
    done = CliRunner().invoke(cli, ["view", str(copy)])
    assert done.exit_code == 0, done.output
    hint = done.stdout.splitlines()[-1]
    assert hint.startswith("leaderboard.html does not link it yet: run madeval leaderboard show ")
    command = shlex.split(hint.split(": run ", 1)[1])
    assert command == ["madeval", "leaderboard", "show", str(copy)]
    assert CliRunner().invoke(cli, command[1:]).exit_code == 0
    assert f"<a href='{VIEWER_FILE}'>" in (copy / "leaderboard.html").read_text()
    again = CliRunner().invoke(cli, ["view", str(copy)])
    assert again.exit_code == 0 and "does not link" not in again.stdout


# ---- in headless Chromium --------------------------------------------------------------------

FILTER_PROBE = """
(function () {
  var root = document.documentElement, out = {};
  function set(id, value) {
    var e = document.getElementById(id);
    if (e.tagName === 'SELECT' && value !== '') {
      value = Array.prototype.filter.call(e.options, function (o) { return o.textContent === value; })[0].value;
    }
    if (e.type === 'checkbox') e.checked = value; else e.value = value;
    e.dispatchEvent(new Event(e.type === 'search' ? 'input' : 'change'));
  }
  var empty = {'f-config': '', 'f-task': '', 'f-outcome': '', 'f-lost': false, 'f-drift': false,
               'f-unparsed': false, 'f-item': ''};
  CASES.forEach(function (c) {
    Object.keys(empty).forEach(function (id) { set(id, id in c[1] ? c[1][id] : empty[id]); });
    out[c[0]] = {shown: Number(root.getAttribute('data-shown')), count: document.getElementById('count').textContent,
                 rows: document.querySelectorAll('#debates tbody tr').length,
                 items: Array.prototype.map.call(document.querySelectorAll('#debates tbody tr td:nth-child(4)'),
                                                 function (td) { return td.textContent; })};
  });
  Object.keys(empty).forEach(function (id) { set(id, empty[id]); });
  document.getElementById('next').click();
  out.next = {rows: document.querySelectorAll('#debates tbody tr').length, page: document.getElementById('page').textContent,
              first: document.querySelector('#debates tbody tr td').textContent};
  root.setAttribute('data-probe', JSON.stringify(out));
})();
"""  # noqa: E501 - embedded JavaScript


def test_filters_show_the_debates_the_facts_say(viewed_run, tmp_path):
    folder, _ = viewed_run
    records = list(read_records(folder))
    facts = [debate_facts(r, "accuracy") for r in records]
    label = records[0]["config_label"]
    expected = {
        "all": len(records),
        "config": sum(r["config_label"] == label for r in records),
        "task": sum(r["unit"]["task"] == "arith_yesno" for r in records),
        "wrong": sum(not f.final_right for f in facts),
        "right": sum(f.final_right for f in facts),
        "lost": sum(f.first_turn_vote_right and not f.final_right for f in facts),
        "drift": sum(f.drift for f in facts),
        "unparsed": sum(f.unparsed > 0 for f in facts),
        "config+wrong": sum(r["config_label"] == label and not f.final_right for r, f in zip(records, facts)),
        "item": 1,
    }
    cases = [["all", {}], ["config", {"f-config": label}], ["task", {"f-task": "arith_yesno"}],
             ["wrong", {"f-outcome": "wrong"}], ["right", {"f-outcome": "right"}], ["lost", {"f-lost": True}],
             ["drift", {"f-drift": True}], ["unparsed", {"f-unparsed": True}],
             ["config+wrong", {"f-config": label, "f-outcome": "wrong"}], ["item", {"f-item": "lost-ITEM"}]]
    probe = with_probe(folder / VIEWER_FILE, FILTER_PROBE.replace("CASES", json.dumps(cases)),
                       tmp_path / "filters.html")
    dom = chromium_dom(probe, tmp_path / "profile-filters")
    assert attribute(dom, "data-viewer") == "ready"
    found = json.loads(attribute(dom, "data-probe"))
    assert {name: found[name]["shown"] for name in expected} == expected
    assert found["all"]["rows"] == 50  # paged
    assert found["all"]["count"] == (f"{len(records)} of {len(records)} debates: "
                                     f"{expected['right']} right, {expected['wrong']} wrong")
    drifting = [f for f in facts if f.drift]
    assert found["drift"]["count"] == (f"{len(drifting)} of {len(records)} debates: "
                                       f"{sum(f.final_right for f in drifting)} "
                                       f"right, {sum(not f.final_right for f in drifting)} wrong")
    assert found["next"] == {"rows": len(records) - 50, "page": "page 2 of 2", "first": "51"}
    assert "lost-item" in found["lost"]["items"] and found["item"]["items"] == ["lost-item"]
    assert expected["lost"] >= 1 and expected["drift"] >= 1 and 0 < expected["wrong"] < len(records)


OPEN_PROBE = """
(function () {
  var root = document.documentElement;
  location.hash = 'debate=NUMBER';
  (function wait() {
    if (!root.getAttribute('data-opened')) return setTimeout(wait, 20);
    var view = document.getElementById('debate');
    Array.prototype.forEach.call(view.querySelectorAll('details.msg'), function (d) { d.open = true; });
    root.setAttribute('data-probe', JSON.stringify({
      images: document.querySelectorAll('img').length,
      scripts: document.querySelectorAll('script').length,
      cells: Array.prototype.map.call(view.querySelectorAll('table.grid tbody tr'), function (tr) {
        return Array.prototype.map.call(tr.cells, function (td) { return td.querySelectorAll('details.msg').length; });
      }),
      texts: Array.prototype.map.call(view.querySelectorAll('details.msg > div.text'), function (d) { return d.textContent; }),
      heads: Array.prototype.map.call(view.querySelectorAll('table.grid thead th'), function (th) { return th.firstChild.textContent; }),
      votes: Array.prototype.map.call(view.querySelectorAll('table.grid td.vote'), function (td) { return td.textContent; }),
      marks: Array.prototype.map.call(view.querySelectorAll('details.msg summary .badge:nth-child(2)'), function (b) { return b.textContent; }),
      title: view.querySelector('h2').textContent,
      isolated: Array.prototype.map.call(view.querySelectorAll('h2 bdi'), function (b) { return b.textContent; }),
      decision: view.querySelector('.decision').textContent,
      overflow: root.scrollWidth - root.clientWidth
    }));
  })();
})();
"""  # noqa: E501 - embedded JavaScript


def opened(folder: Path, number: int, tmp_path: Path, width: int = 1400) -> tuple[dict, str]:
    page = with_probe(folder / VIEWER_FILE, OPEN_PROBE.replace("NUMBER", str(number)),
                      tmp_path / f"open-{number}-{width}.html")
    dom = chromium_dom(page, tmp_path / f"profile-open-{number}-{width}", width)
    assert attribute(dom, "data-opened") == str(number - 1), dom[-3000:]
    return json.loads(attribute(dom, "data-probe")), dom


def test_opening_a_debate_shows_the_grid_of_turns_by_agents_with_votes_and_the_decision(viewed_run, tmp_path):
    folder, written = viewed_run
    seen, _ = opened(folder, written["debates"] - 1, tmp_path)  # LOST
    assert seen["cells"] == [[0, 0, 1, 1, 1], [0, 0, 1, 1, 1]]  # turn, the vote of the turn, three agents
    assert seen["heads"] == ["turn", "vote of the turn", "Ada", "Bo", "Cy"]
    assert seen["marks"] == ["answer B \u2713", "answer B \u2713", "answer A \u2717"] + ["answer A \u2717"] * 3
    assert (seen["votes"][0].startswith("B \u2713 (2 of 3)")
            and seen["votes"][1].startswith("A \u2717 (3 of 3)unanimous"))
    assert "decided: plurality" in seen["votes"][1]
    assert seen["decision"].startswith("Decision: A \u2717 \u2014 simple_voting, plurality, turn 2")
    assert seen["texts"][0] == "I say B. Final Solution: B"


def test_hostile_text_is_shown_as_text_and_never_runs(viewed_run, tmp_path):
    folder, written = viewed_run
    seen, dom = opened(folder, written["debates"], tmp_path)  # HOSTILE_RECORD, the last
    assert attribute(dom, "data-pwned") is None
    assert seen["images"] == 0
    shown = HOSTILE.replace("\ud800", "\ufffd")  # a lone surrogate has no UTF-8 form: the page shows U+FFFD
    assert seen["texts"][0] == shown and seen["texts"][1] == HUGE
    assert (seen["heads"][2] == HOSTILE_LABEL
            and seen["title"].startswith(f"Debate {written['debates']}: {HOSTILE_LABEL}"))
    assert seen["marks"] == ["unparsed", "answer B \u2713", "answer B \u2713"]
    assert seen["isolated"] == [HOSTILE_LABEL, "arith_mc", shown]  # its bidi override cannot reorder the title
    body = dom.split("<body", 1)[1]
    assert "&lt;img src=x onerror=" in body and re.search(r"<img\b", body) is None
    assert "<b>bold</b>" not in body and "&lt;b&gt;bold&lt;/b&gt;" in body


@pytest.mark.parametrize("width", [1400, 800])
@pytest.mark.parametrize("which", ["lost", "hostile"])
def test_an_open_debate_fits_the_window(viewed_run, tmp_path, width, which):
    """The page never scrolls sideways, even with a long hostile title: the list and the grid
    scroll inside their own boxes."""
    folder, written = viewed_run
    seen, _ = opened(folder, written["debates"] - (which == "lost"), tmp_path, width)
    assert seen["overflow"] == 0


SHOT_PROBE = """
location.hash = 'debate=NUMBER';
(function wait() {
  if (!document.documentElement.getAttribute('data-opened')) return setTimeout(wait, 20);
  document.querySelector('#debate details.msg').open = true;
  window.scrollTo(0, 0);
})();
"""


def test_screenshots_of_the_list_and_an_open_debate_at_1400_and_800_px(viewed_run, tmp_path):
    """Drawn at both widths with the hand-made debate open (the list hides nothing of it)."""
    folder, written = viewed_run
    page = with_probe(folder / VIEWER_FILE, SHOT_PROBE.replace("NUMBER", str(written["debates"] - 1)),
                      tmp_path / "shot.html")
    for width in (1400, 800):
        shot = tmp_path / f"viewer-{width}.png"
        taken = run_chromium(page, tmp_path / f"profile-shot-{width}", "--virtual-time-budget=20000",
                             f"--screenshot={shot}", f"--window-size={width},3200")
        assert taken.returncode == 0, taken.stderr[-2000:]
        assert shot.stat().st_size > 50_000  # a drawn page, not a blank one


def test_bench_viewer_measures_the_page_with_madeval_s_chromium_flags_only(viewed_run):
    """``python -m bench viewer`` runs with madeval importable and tests/ not (it imports nothing
    from the tests), and its figures are the page's: every debate, the drifting ones, the last
    debate's messages."""
    folder, written = viewed_run
    chromium()  # skips (or fails under CI) without Chromium, as the other browser tests
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-m", "bench", "viewer", str(folder)], cwd=root,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    records = list(read_records(folder))
    assert measured["debates"] == written["debates"] == len(records)
    assert measured["drifting"] == sum(debate_facts(r, "accuracy").drift for r in records)
    assert measured["messages"] == len(records[-1]["transcript"]["messages"])
    assert measured["views_s"] > 0 and measured["page_mb"] > 0


KEYBOARD_PROBE = """
(function () {
  var root = document.documentElement, out = {};
  var link = document.querySelector('#debates tbody tr[data-n="LAST"] td a');
  out.href = link.getAttribute('href');
  var tab = new MouseEvent('click', {bubbles: true, cancelable: true, ctrlKey: true});  // on the number's link: a new tab
  link.parentNode.dispatchEvent(tab);  // (sent to its cell, which has no default action, so no tab opens here)
  out.tab_left_to_browser = !tab.defaultPrevented && location.hash === '#debate=1';
  link.focus();
  out.focused = document.activeElement === link;
  link.click();  // what Enter on a focused link does
  (function opened() {
    if (root.getAttribute('data-opened') !== 'LAST') return setTimeout(opened, 20);
    var view = document.getElementById('debate');
    out.hash = location.hash;
    out.focus_in_debate = document.activeElement === view.querySelector('h2');
    out.focus_outline = getComputedStyle(view.querySelector('h2')).outlineStyle;
    out.event = view.querySelector('td.vote details .code').textContent;
    out.flags = Array.prototype.map.call(view.querySelectorAll('.facts .badge'), function (b) { return b.textContent; });
    out.back = view.querySelector('a[href="#debates"]').textContent;
    var decided = view.querySelector('.decision details .text');
    out.decision_weight = getComputedStyle(decided).fontWeight;
    out.decision_outcome = view.querySelector('.decision').getAttribute('data-outcome');
    root.removeAttribute('data-opened');
    view.textContent = '';
    document.querySelector('#debates tbody tr[data-n="LAST"] td:nth-child(3)').click();  // the same row again
    (function again() {
      if (root.getAttribute('data-opened') !== 'LAST') return setTimeout(again, 20);
      out.reopened = view.querySelectorAll('details.msg').length;
      root.setAttribute('data-probe', JSON.stringify(out));
    })();
  })();
})();
"""  # noqa: E501 - embedded JavaScript


def test_a_debate_opens_from_the_keyboard_and_again_from_its_row_and_its_box_reads_plainly(viewed_run, tmp_path):
    """Each row's number is a link (focusable, Enter opens it, the keyboard's focus moves to the
    debate); a click on the row of the debate
    already in the address opens it again (no hashchange comes); the decision's details are not in
    the right/wrong colour's bold; one unparsed answer is said in the singular."""
    folder, written = viewed_run
    last = written["debates"] - 1  # HOSTILE_RECORD: one unparsed answer, final right
    probe = KEYBOARD_PROBE.replace("LAST", str(last))
    with_probe(folder / VIEWER_FILE,
               "location.hash = '#debate=1'; setTimeout(function () { document.getElementById('next')"
               ".click(); document.getElementById('next').click(); " + probe + "}, 200);", tmp_path / "keys.html")
    dom = chromium_dom(tmp_path / "keys.html", tmp_path / "profile-keys")
    seen = json.loads(attribute(dom, "data-probe"))
    assert seen["href"] == f"#debate={last + 1}" and seen["focused"] and seen["hash"] == f"#debate={last + 1}"
    assert seen["tab_left_to_browser"]
    assert seen["focus_in_debate"] and seen["focus_outline"] == "none"  # Tab goes on into the debate just opened
    kind, event = seen["event"].split(" ", 1)  # the decider's event, a key a line
    assert kind == "vote" and json.loads(event) == {"ballots": [], "note": HOSTILE.replace("\ud800", "\ufffd")}
    assert event.startswith('{\n "ballots": []')
    assert "1 unparsed answer" in seen["flags"] and seen["back"] == "back to the list"
    assert seen["decision_weight"] == "400" and seen["decision_outcome"] == "right"
    assert seen["reopened"] == 3


def test_a_score_that_is_not_0_or_1_is_shown_with_three_decimals_as_on_the_board(tmp_path):
    from madeval.viewer.debates import view_debate
    from madeval.viewer.page import write_page

    record = {**LOST, "metrics": {"no_such_metric": 2 / 3, "accuracy": 0.0}}  # a judge's or an F1's score
    write_page(tmp_path / "page.html", "scores", [view_debate(record, "q")], lambda: [])
    probe = """
    location.hash = 'debate=1';
    (function wait() {
      var root = document.documentElement;
      if (root.getAttribute('data-opened') !== '0') return setTimeout(wait, 20);
      root.setAttribute('data-probe', JSON.stringify({
        cell: document.querySelector('#debates tbody tr td:nth-child(7)').textContent,
        count: document.getElementById('count').textContent,
        badge: document.querySelector('#debate .facts .badge').textContent,
        scores: document.querySelector('#debate .decision > .muted').textContent}));
    })();"""
    dom = chromium_dom(with_probe(tmp_path / "page.html", probe, tmp_path / "probe.html"), tmp_path / "profile")
    assert json.loads(attribute(dom, "data-probe")) == {"cell": "0.667", "badge": "final 0.667",
                                                        "count": "1 of 1 debates: 0 right, 0 wrong, 1 not 0/1",
                                                        "scores": "scores: no_such_metric 0.667, accuracy 0"}
