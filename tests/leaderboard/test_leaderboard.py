"""A sweep over the seven protocols of seed 001 on the simulator produces every output; the HTML
page works in headless Chromium; rows and comparisons are what the statistics say; group rows
follow their declared aggregation; scaling charts plot the series they should; the time shown is
the debates' own LLM time."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

import pytest

from browser import layout, run_chromium, screenshots
from helpers import madeval_in_process, run_quietly
from madeval.analysis.stats import holm, mcnemar_exact, paired_permutation
from madeval.leaderboard import LeaderboardOptions, build_leaderboard
from madeval.leaderboard.charts import chart_rows, scaling_data, scaling_series, turn_counts
from madeval.leaderboard.render import test_name as shown_test
from madeval.records.folder import read_records
from madeval.settings.config import build_settings, read_config_file
from madeval.simulator import simulate

ROOT = Path(__file__).resolve().parents[2]
PROTOCOLS = ["majority_consensus", "supermajority_consensus", "unanimity_consensus", "simple_voting",
             "approval_voting", "ranked_voting", "cumulative_voting"]
BASELINES = ["baseline_direct", "baseline_cot", "self_consistency"]


@pytest.fixture(scope="module")
def protocols_run(generated_tasks, tmp_path_factory):
    """leaderboards/protocols.yaml (two tasks, three repeats) on the simulator, 8 items per task."""
    folder = tmp_path_factory.mktemp("protocols") / "run"
    options = read_config_file(ROOT / "leaderboards" / "protocols.yaml")
    with simulate(tasks=generated_tasks.values(), accuracy=0.6, conformity=0.3) as sim:
        options.update(base_url=sim.base_url, limit=8, cache="off", output_path=str(folder))
        result, printed = run_quietly(build_settings(options))
    return result, printed


def test_protocol_sweep_produces_every_output(protocols_run):
    result, printed = protocols_run
    folder = result.folder
    labels = [c["label"] for c in json.loads((folder / "run.json").read_text())["configurations"].values()]
    assert sorted(labels) == sorted(PROTOCOLS + BASELINES)
    for name in ("leaderboard.md", "leaderboard.csv", "comparisons.csv", "leaderboard.json", "leaderboard.html"):
        assert (folder / name).stat().st_size > 0, name
    for chart in ("score", "turns", "decisions", "llm-time"):
        assert (folder / "charts" / f"{chart}.png").stat().st_size > 10_000
        assert (folder / "charts" / f"{chart}.svg").read_text().lstrip().startswith("<?xml")
    rows = result.rows
    assert {(r["label"], r["task"]) for r in rows} == {(line,
                                                        t) for line in labels for t in ("arith_mc", "arith_yesno")}
    assert all(r["items"] == 8 and r["units"] == 24 and r["repeats"] == 3 for r in rows)
    assert [r["label"] for r in rows[:10]] == PROTOCOLS + BASELINES  # run order
    direct = next(r for r in rows if r["label"] == "baseline_direct")
    assert direct["calls_per_item"] == 1.0 and direct["mean_turns"] == 1.0  # one agent, one answer
    with open(folder / "leaderboard.csv") as handle:
        assert len(list(csv.DictReader(handle))) == len(rows)
    written = (folder / "leaderboard.md").read_text()
    assert printed.startswith("| configuration | task |") and "about the population of questions" in written
    # the terminal shows the table and the sentences of leaderboard.md, then where the rest is
    brief = written[:written.index("\nColumns:")]
    assert printed.startswith(brief) and f"{folder / 'leaderboard.md'} and .html; --explain prints them." in printed


def test_rows_average_repeats_within_items_and_compare_with_the_reference(protocols_run):
    result, _ = protocols_run
    records = list(read_records(result.folder))
    board = result.board
    reference = board["options"]["reference"]
    assert board["configurations"][reference]["label"] == "majority_consensus"
    per_item = {}
    for r in records:
        if r["unit"]["task"] == "arith_mc":
            per_item.setdefault(r["unit"]["config"],
                                {}).setdefault(r["unit"]["item"], []).append(r["metrics"]["accuracy"])
    means = {c: {i: sum(v) / len(v) for i, v in items.items()} for c, items in per_item.items()}
    family = [r for r in board["rows"] if r["task"] == "arith_mc"]
    p_values = {}
    for row in family:
        mine = means[row["config"]]
        assert abs(row["score"] - sum(mine.values()) / len(mine)) < 1e-12
        if row["config"] != reference:
            a = [mine[i] for i in sorted(mine)]
            b = [means[reference][i] for i in sorted(mine)]
            binary = all(v in (0, 1) for v in a + b)
            expected = (mcnemar_exact(a, b) if binary else paired_permutation(a, b)).p_value
            assert abs(row["p_value"] - expected) < 1e-12 and row["test"] == ("mcnemar" if binary else "permutation")
            p_values[row["config"]] = row["p_value"]
    adjusted = dict(zip(p_values, holm(list(p_values.values()))))
    printed = protocols_run[1]
    for row in family:
        if row["config"] != reference:
            assert abs(row["p_adjusted"] - adjusted[row["config"]]) < 1e-12
            assert row["significant"] == (row["p_adjusted"] < 0.05)
            assert f"{row['p_adjusted']:.3g} after Holm, {shown_test(row['test'])}) |" in printed  # each names its test
        assert 0.0 <= row["ci_low"] <= row["score"] <= row["ci_high"] <= 1.0


def test_all_pairs_benchmark_intervals_and_bh_on_the_same_run(protocols_run):
    result, _ = protocols_run
    options = LeaderboardOptions(compare="all", correction="bh", interval="benchmark")
    board = build_leaderboard(result.folder, options)
    family = [c for c in board["comparisons"] if c["task"] == "arith_yesno"]
    assert len(family) == 10 * 9 // 2
    sizes = json.loads((result.folder / "run.json").read_text())["task_sizes"]
    assert all(r["population"] == sizes[r["task"]] and "FPC" in r["ci_method"] for r in board["rows"])
    assert "finite benchmark" in board["statement"] and "Benjamini-Hochberg" in board["statement"]
    default = {(r["config"], r["task"]): r for r in result.rows}
    for row in board["rows"]:  # 8 of 1000+ items: (1 - f) s^2 + f s_w^2 / K differs little from s^2
        wide = default[(row["config"], row["task"])]
        assert row["ci_high"] - row["ci_low"] <= 1.05 * (wide["ci_high"] - wide["ci_low"]) + 1e-12


def test_html_page_sorts_and_renders_in_headless_chromium(protocols_run, tmp_path):
    page = protocols_run[0].folder / "leaderboard.html"
    text = page.read_text()
    assert "<script" in text and "src='http" not in text and "href='http" not in text  # self-contained
    assert "about the population of questions" in text
    from madeval.leaderboard.html import page as html_page

    every_pair = tmp_path / "all-pairs.html"  # the default page's tables plus the sortable comparisons
    every_pair.write_text(html_page(build_leaderboard(protocols_run[0].folder, LeaderboardOptions(compare="all")), []))
    dom = run_chromium(every_pair, tmp_path / "profile-dom", "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert 'data-sortable="ready"' in dom.stdout and "sortable comparisons" in dom.stdout
    assert "Uncaught" not in dom.stderr
    screenshots(page, tmp_path, height=2000)


def test_html_tables_fit_at_1400_px_and_scroll_in_their_box_at_800(protocols_run, tmp_path):
    """With the protocol names and with the long labels of a command-line run
    (none/simple/memory/<decider>/3a): at 1400 px no table needs a scroll bar; at 800 px a table
    may scroll inside its own box, and the page itself never overflows the window."""
    from madeval.leaderboard.html import page as html_page

    board = build_leaderboard(protocols_run[0].folder)
    pages = {"protocol names": html_page(board, [])}
    for config in board["configurations"].values():
        config["label"] = f"none/simple/memory/{config['label']}/3a"
    pages["long labels"] = html_page(board, [])
    for name, text in pages.items():
        wide = layout(text, tmp_path, 1400)
        assert wide["width"] == 1400 and wide["tables"] == 3, (name, wide)  # two tasks and the cost table
        assert wide["overflowing_tables"] == 0 and wide["page_overflow"] == 0, (name, wide)
        narrow = layout(text, tmp_path, 800)
        assert narrow["width"] == 800 and narrow["page_overflow"] == 0, (name, narrow)
        assert narrow["overflowing_tables"] == 3, (name, narrow)  # 13 and 8 columns do not fit in 800 px


@pytest.mark.parametrize("tasks", [1, 2])
def test_the_turns_legend_lies_inside_its_figure(protocols_run, tasks):
    """Three legend entries side by side are wider than a one-task figure: they are then stacked."""
    from madeval.leaderboard.charts import _turns

    board = build_leaderboard(protocols_run[0].folder)
    for config in board["configurations"].values():
        config["label"] = f"none/simple/memory/{config['label']}/3a"
    rows = [r for r in chart_rows(board) if r["task"] in ("arith_mc", "arith_yesno")[:tasks]]
    figure = _turns(board, rows)
    figure.draw_without_rendering()  # runs the constrained layout
    (legend,) = figure.legends
    box, frame = legend.get_window_extent(), figure.bbox
    assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
    assert legend._ncols == (1 if tasks == 1 else 3)


@pytest.mark.parametrize("chart", ["_score", "_turns", "_decisions", "_llm_time"])
def test_a_one_task_chart_s_title_lies_inside_its_figure(protocols_run, chart):
    """A one-task figure with short labels is narrow: a title wider than it is cut off on both sides."""
    from madeval.leaderboard import charts

    board = build_leaderboard(protocols_run[0].folder)
    for number, config in enumerate(board["configurations"].values()):
        config["label"] = f"c{number}"
    figure = getattr(charts, chart)(board, [r for r in chart_rows(board) if r["task"] == "arith_mc"])
    figure.draw_without_rendering()
    box, frame = figure._suptitle.get_window_extent(), figure.bbox
    assert frame.x0 <= box.x0 and box.x1 <= frame.x1, (chart, box, frame)


def test_a_tag_gets_a_macro_group_row_of_its_tasks(sim, tmp_path):
    from helpers import settings_for

    settings = settings_for(sim.base_url, tmp_path, tasks=["generated"], limit=5, cache="off",
                            paradigm="collective_refinement", decider="counting", max_turns=1)
    result, printed = run_quietly(settings)
    rows = {(r["scope"], r["task"]): r for r in result.rows}
    assert set(rows) == {("task", "arith_mc"), ("task", "arith_yesno"), ("group", "generated")}
    group = rows[("group", "generated")]
    assert group["items"] == 10 and group["aggregation"] == "macro" and group["aggregation_declared"] is False
    assert abs(group["score"] - (rows[("task",
                                       "arith_mc")]["score"] + rows[("task", "arith_yesno")]["score"]) / 2) < 1e-12
    assert group["ci_method"].startswith("stratified t")
    assert "| generated (group, macro) |" in printed


def test_leaderboard_show_rewrites_outputs_and_rejects_an_unknown_reference(protocols_run):

    folder = protocols_run[0].folder
    done = madeval_in_process("leaderboard", "show", str(folder), "--reference", "unanimity_consensus", "--compare",
                              "all")
    assert done.returncode == 0, done.stderr
    assert "| unanimity_consensus | arith_mc | accuracy |" in done.stdout and "| ref |" in done.stdout
    assert "| task | metric | A | B |" in (folder / "leaderboard.md").read_text()  # the all-pairs table
    assert "| task | metric | A | B |" not in done.stdout  # printed with --explain
    bad = madeval_in_process("leaderboard", "show", str(folder), "--reference", "nope")
    assert (
        bad.returncode == 2 and bad.stderr.count("\n") == 1 and "unknown reference configuration 'nope'" in bad.stderr
    )
    with open(folder / "comparisons.csv") as handle:
        listed = list(csv.DictReader(handle))
    assert len(listed) == 2 * 10 * 9 // 2 and {c["test"] for c in listed} <= {"mcnemar", "permutation"}
    page = (folder / "leaderboard.html").read_text()
    assert "<table class='sortable comparisons'>" in page and "<pre>" not in page
    assert page.count("<tr><td>", page.index("sortable comparisons")) == 2 * 10 * 9 // 2


# --- group rows follow the group's declared aggregation ---------------------------------------

def _record(config, task, item, score, repeat=0, llm_s=0.5, wall_s=2.0):
    return {"unit": {"key": f"{config}/{task}/{item}/{repeat}", "config": config, "task": task, "item": item,
                     "repeat": repeat},
            "metrics": {"accuracy": score}, "parse_failure": False, "decision_success": True, "turns": 1,
            "calls": 1, "tokens": {"total": 10}, "wall_s": wall_s, "llm_s": llm_s, "oracle": False}


def _group_run(weight_by_size: bool | None):
    """Task A has 2 items, task B 4. X scores A: 1 1, B: 1 0 0 0; the reference Y scores A: 0 0, B: 0 0 0 1."""
    from madeval.analysis.run_data import RunData
    from madeval.task.files import AggregateMetric

    scores = {"X": {"A": [1, 1], "B": [1, 0, 0, 0]}, "Y": {"A": [0, 0], "B": [0, 0, 0, 1]}}
    records = [_record(c, t, f"i{n}", float(v)) for c, tasks in scores.items() for t, values in tasks.items()
               for n, v in enumerate(values)]
    declared = {}
    if weight_by_size is not None:
        declared = {"g": {"accuracy": AggregateMetric("accuracy", "mean", weight_by_size)}}
    configs = {"Y": {"label": "ref", "source": "run"}, "X": {"label": "x", "source": "run"}}
    return RunData(Path("hand"), {"tasks": {"A": {}, "B": {}}}, configs, records, {"g": ["A", "B"]}, declared)


def test_macro_group_row_averages_task_scores_with_a_stratified_interval_and_test():
    from scipy import stats

    from madeval.leaderboard.table import build

    board = build(_group_run(weight_by_size=False), LeaderboardOptions())
    x = next(r for r in board["rows"] if r["scope"] == "group" and r["config"] == "X")
    assert x["aggregation"] == "macro" and x["aggregation_declared"] is True
    assert x["score"] == (1 + 0.25) / 2 and x["items"] == 6
    # A has no spread; B: s^2 = 1/4 over 4 items. Variance (0 + 1/16) / 2^2, Satterthwaite df = 3.
    half = stats.t.ppf(0.975, 3) * (1 / 8)
    assert abs(x["ci_low"] - (0.625 - half)) < 1e-12 and x["ci_high"] == 1.0
    # Weighted differences 1/4, 1/4 (A) and 1/8, -1/8 (B): 6 of 16 sign flips are as extreme.
    assert x["test"] == "stratified permutation" and x["delta"] == 0.5 and abs(x["p_value"] - 6 / 16) < 1e-12


def test_micro_group_row_pools_items_and_uses_the_item_paired_test():
    from madeval.leaderboard.table import build

    board = build(_group_run(weight_by_size=True), LeaderboardOptions())
    x = next(r for r in board["rows"] if r["scope"] == "group" and r["config"] == "X")
    assert x["aggregation"] == "micro" and x["score"] == 3 / 6 and x["ci_method"] == "Wilson"
    # Pooled 0/1 scores: McNemar on 3 discordant pairs for X and 1 for Y, p = 2 * P(Bin(4, 1/2) <= 1).
    assert x["test"] == "mcnemar" and abs(x["delta"] - 1 / 3) < 1e-12 and abs(x["p_value"] - 10 / 16) < 1e-12
    undeclared = build(_group_run(weight_by_size=None), LeaderboardOptions())
    row = next(r for r in undeclared["rows"] if r["scope"] == "group" and r["config"] == "X")
    assert row["aggregation"] == "macro" and row["aggregation_declared"] is False and row["score"] == 0.625


def test_group_declarations_come_from_the_task_files(tmp_path):
    from madeval.analysis.run_data import load_run

    groups = {"bbh": ["bbh_geometric_shapes"], "knowledge": ["mmlu"], "generated": ["arith_mc", "arith_yesno"]}
    (tmp_path / "run.json").write_text(json.dumps({"configurations": {}, "tasks": {}, "groups": groups}))
    data = load_run(tmp_path)
    assert data.aggregations["bbh"]["accuracy"].weight_by_size is True  # tasks/bbh/bbh_group.yaml
    assert data.aggregations["knowledge"]["accuracy"].weight_by_size is False
    assert "generated" not in data.aggregations  # a tag declares nothing


def test_a_group_row_without_a_recorded_aggregation_is_labelled_macro_the_default():
    from madeval.leaderboard.render import task_of

    assert task_of({"scope": "group", "task": "bbh", "aggregation": "micro"}) == "bbh (group, micro)"
    assert task_of({"scope": "group", "task": "knowledge"}) == "knowledge (group, macro)"
    assert task_of({"scope": "task", "task": "mmlu"}) == "mmlu"


def test_run_json_records_group_aggregation_and_the_board_reads_it(tmp_path):
    """What the run recorded wins over today's task files (they may have changed since)."""
    from madeval.analysis.run_data import load_run
    from madeval.core.plugins import registries
    from madeval.run.engine import task_groups
    from madeval.settings.config import RunSettings

    described = task_groups(RunSettings(tasks=["bbh", "knowledge", "generated"]), registries())
    assert described["group_aggregation"]["bbh"] == {"accuracy": {"aggregation": "mean", "weight_by_size": True}}
    assert described["group_aggregation"]["knowledge"] == {"accuracy": {"aggregation": "mean", "weight_by_size": False}}
    assert "generated" in described["groups"] and "generated" not in described["group_aggregation"]
    recorded = {"bbh": {"accuracy": {"aggregation": "mean", "weight_by_size": False}}}
    (tmp_path / "run.json").write_text(json.dumps(
        {"configurations": {}, "tasks": {}, "groups": {"bbh": ["bbh_geometric_shapes"]},
         "group_aggregation": recorded}))
    assert load_run(tmp_path).aggregations["bbh"]["accuracy"].weight_by_size is False


# --- time: the debates' own LLM time, not the queue ------------------------------------------

def test_call_latency_is_the_time_holding_a_slot_not_the_wait_for_it(monkeypatch):
    """Two calls share one slot; a fake clock moves 1 s per attempt (0.5 s for a failed one)."""
    from madeval.llm import client as client_module
    from madeval.llm import transports as transports_module
    from madeval.llm.client import Endpoint, LLMClient, RetryPolicy
    from madeval.llm.transports import RetryableError

    clock = {"now": 100.0}
    monkeypatch.setattr(client_module.time, "perf_counter", lambda: clock["now"])

    class Transport:
        failures = {"second": 1}

        async def chat(self, model, messages, params, headers=None):
            await asyncio.sleep(0)  # the other call now waits for the slot
            name = messages[0]["content"]
            if self.failures.get(name):
                self.failures[name] -= 1
                clock["now"] += 0.5
                raise RetryableError("HTTP 503")
            clock["now"] += 1.0
            return "reply", 1, 1

        async def close(self):
            pass

    monkeypatch.setitem(transports_module.TRANSPORTS, "fake", lambda base_url, api_key, timeout_s,
                        **limits: Transport())

    async def main():
        endpoint = Endpoint("e", "http://127.0.0.1:9/v1", concurrency=1, transport="fake")
        client = LLMClient({"e": endpoint}, concurrency=1, retry=RetryPolicy(base_delay_s=0.0))
        done = await asyncio.gather(*(client.complete("e", "m", [{"role": "user", "content": name}], {}, (name,))
                                      for name in ("first", "second")))
        await client.aclose()
        return done

    first, second = asyncio.run(main())
    assert first.latency_s == 1.0  # the second call's wait for the slot is not its latency
    assert second.latency_s == 1.5 and second.attempts == 2  # both attempts, no backoff, no queue


def test_records_carry_llm_time_and_rows_show_it_per_item(protocols_run):
    result, printed = protocols_run
    records = list(read_records(result.folder))
    for record in records:
        assert record["llm_s"] == round(sum(c["latency_s"] for c in record["transcript"]["calls"]), 4)
        assert record["wall_s"] > 0
    row = next(r for r in result.rows if r["label"] == "unanimity_consensus" and r["task"] == "arith_mc")
    mine = [r for r in records if r["config_label"] == "unanimity_consensus" and r["unit"]["task"] == "arith_mc"]
    per_item = {}
    for record in mine:
        per_item.setdefault(record["unit"]["item"], []).append(record["llm_s"])
    expected = sum(sum(v) / len(v) for v in per_item.values()) / len(per_item)
    assert abs(row["llm_s_per_item"] - expected) < 1e-12
    assert "| LLM s/item |" in printed and "wall s/item" not in printed


def test_turns_chart_splits_decided_and_undecided_debates(protocols_run):
    result, _ = protocols_run
    records = list(read_records(result.folder))
    for row in chart_rows(result.board):
        mine = [r for r in records if r["unit"]["config"] == row["config"] and r["unit"]["task"] == row["task"]]
        expected = {}
        for record in mine:
            decided, undecided = expected.get(record["turns"], (0, 0))
            success = record["decision_success"]
            expected[record["turns"]] = (decided + success, undecided + (not success))
        assert turn_counts(row) == expected


# --- score against agents and turns (seed 001, Figures 4 and 5), with rescored rows ------------

def test_scaling_charts_plot_one_series_per_setting_and_rescored_series_by_source(sim, tmp_path):
    folder = tmp_path / "scaling"
    options = {"tasks": ["arith_mc"], "limit": 3, "repeats": 1, "seed": 3, "cache": "off", "base_url": sim.base_url,
               "output_path": str(folder), "common": {"persona": "none", "paradigm": "memory", "decider": "counting"},
               "grid": {"agents": [2, 3, 4], "max_turns": [1, 2, 3]}, "leaderboard": {"charts": True}}
    run_quietly(build_settings(options))
    done = madeval_in_process("rescore", str(folder), "--decider", "counting:after_turns=1", "--base-url", sim.base_url,
                              "--cache", "off")
    assert done.returncode == 0, done.stderr
    board = build_leaderboard(folder)
    rows = chart_rows(board)
    score = {r["label"]: r["score"] for r in rows}
    found = scaling_series(board)
    assert set(found) == {"agents", "max_turns"}  # after_turns has one value only
    values = {"agents": (2, 3, 4), "max_turns": (1, 2, 3)}
    for variable, other in (("agents", "max_turns"), ("max_turns", "agents")):
        plotted = scaling_data(board, rows, variable, found[variable])["arith_mc"]
        legends = {entry["legend"] for entry in plotted}
        run_legends = {f"{other}={v}" for v in values[other]}  # the one option that differs
        rescored = {f"{other}={v} -> counting:after_turns=1" for v in values[other]}  # named by their sources
        assert len(plotted) == 6 and legends == run_legends | rescored
        for entry in plotted:
            assert entry["x"] == [float(v) for v in values[variable]]
            fixed, _, replayed = entry["legend"].partition(" -> ")
            for x, value in zip(entry["x"], entry["score"]):
                setting = dict(word.split("=") for word in (fixed, f"{variable}={int(x)}"))
                label = f"agents={setting['agents']} max_turns={setting['max_turns']}"
                assert value == score[label + (f" -> {replayed}" if replayed else "")]
    assert (folder / "charts" / "scaling-agents.png").stat().st_size > 10_000
    assert (folder / "charts" / "scaling-max_turns.png").stat().st_size > 10_000


def test_every_markdown_table_row_has_its_header_s_columns(protocols_run):
    """A cell without a header (or a header without cells) shifts every column after it."""
    from madeval.leaderboard.render import markdown

    text = markdown(build_leaderboard(protocols_run[0].folder, LeaderboardOptions(compare="all")))
    tables, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            current.append(line.count("|"))
        elif current:
            tables, current = tables + [current], []
    assert len(tables) == 4  # the rows, the pairwise comparisons, cost and accuracy, dynamics
    for counts in tables:
        assert len(set(counts)) == 1, counts
