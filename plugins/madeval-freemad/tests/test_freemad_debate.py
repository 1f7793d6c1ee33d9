"""Free-MAD's debate modes, the communication attack, the token cost and the presets on the simulator."""

from __future__ import annotations

import contextlib
import io
import itertools
import math
import statistics
from collections import Counter, defaultdict

import pytest

from madeval.analysis.run_data import read_rescored
from madeval.cli.main import main
from madeval.core.plugins import registries
from madeval.core.transcript import Call, Transcript
from madeval.errors import UsageError
from madeval.evaluation import run
from madeval.leaderboard import build_leaderboard
from madeval.records.folder import read_records
from madeval.settings.config import DebateConfig, RunSettings, debate_config
from madeval.simulator import simulate
from madeval.testing import debate
from madeval_freemad.metrics import token_cost
from madeval_freemad.prompts import ANTI_CONFORMITY
from madeval_freemad.score import score_trajectory

ANSWERS = ["Final Solution: A", "Final Solution: B", "Final Solution: C"]


def three(turn, agent, purpose, messages):
    return f"Reasoning of agent {agent}. {ANSWERS[agent % 3]}"


def test_freemad_anti_conformity_replaces_the_conformity_advice():
    _, llm = debate(three, responder="anti_conformity", paradigm="som", decider="freemad_score", agents=3)
    update = llm.prompts(0, turn=2)[0][-1]["content"]
    assert update.startswith("These are the solutions to the problem from other agents: \n\n "
                             "One agent solution: ```Reasoning of agent 1.")
    assert ANTI_CONFORMITY in update
    assert "Since some malicious agents may deliberately disseminate incorrect answers" in update
    assert "Using the reasoning from other agents as additional advice" not in update
    assert update.endswith("Answer in the format the task asks for: Answer.")
    _, conforming = debate(three, responder="conformity", paradigm="som", decider="freemad_score", agents=3)
    assert ("Using the reasoning from other agents as additional advice"
            in conforming.prompts(0, turn=2)[0][-1]["content"])


def test_freemad_attacked_agent_sees_no_peer_but_is_still_seen():
    transcript, llm = debate(three, responder="conformity", paradigm="communication_attack", decider="counting",
                             agents=3, max_turns=3, paradigm_args={"paradigm": "som", "targets": "1"})
    assert [e for e in transcript.events if e["kind"] == "communication_attack"] == [
        {"kind": "communication_attack", "attacked": [1], "paradigm": "som"}]
    for turn in (2, 3):
        attacked = llm.prompts(1, turn=turn)[0][-1]["content"]
        assert attacked == ("Can you double check that your answer is correct. "
                            "Answer in the format the task asks for: Answer.")
        for agent in (0, 2):
            seen = llm.prompts(agent, turn=turn)[0][-1]["content"]
            assert "Reasoning of agent 1." in seen  # the attacked agent still sends
    # The attacked agent's own conversation is intact: its earlier answers stay in its context.
    assert [m["role"] for m in llm.prompts(1, turn=3)[0]] == ["user", "assistant", "user", "assistant", "user"]


def test_freemad_attack_chooses_a_fraction_of_the_agents():
    def attacked(seed=0, **options):
        transcript, _ = debate(three, responder="conformity", paradigm="communication_attack",
                               decider="counting", agents=6, paradigm_args={"paradigm": "som", **options},
                               seed=seed)
        return next(e["attacked"] for e in transcript.events if e["kind"] == "communication_attack")

    assert attacked(fraction=1 / 3, select="first") == [0, 1]
    assert attacked(fraction=1 / 3, select="last") == [4, 5]
    assert attacked(fraction=0.5, select="first") == [0, 1, 2]
    assert attacked(fraction=0.0) == []
    chosen = [attacked(fraction=1 / 3, seed=seed) for seed in range(8)]
    assert all(len(c) == 2 for c in chosen) and len({tuple(c) for c in chosen}) > 1  # seeded random draws


def test_freemad_attack_records_the_wrapped_paradigm_by_its_registered_name():
    transcript, _ = debate(three, responder="conformity", paradigm="attack", decider="counting",
                           paradigm_args={"paradigm": "society_of_minds", "select": "first"})
    event = next(e for e in transcript.events if e["kind"] == "communication_attack")
    assert event["paradigm"] == "som" and event["attacked"] == [0]


def test_freemad_attack_bad_options_are_usage_errors():
    paradigms = registries().paradigms
    with pytest.raises(UsageError, match="fraction must be between 0 and 1"):
        paradigms.create("communication_attack", {"fraction": 1.5})
    with pytest.raises(UsageError, match="unknown paradigm 'somm'"):
        paradigms.create("communication_attack", {"paradigm": "somm"})
    with pytest.raises(UsageError, match="cannot wrap itself"):
        paradigms.create("communication_attack", {"paradigm": "attack"})  # its alias is itself too
    with pytest.raises(UsageError, match="no agent 7 among 3 agents"):
        debate(three, responder="conformity", paradigm="communication_attack", decider="counting",
               paradigm_args={"targets": "7"})


def test_freemad_token_cost_sums_agents_calls_per_round():
    transcript = Transcript(calls=[
        Call("draft", 0, 1, "m", "e", prompt_tokens=100, completion_tokens=20),
        Call("draft", 1, 1, "m", "e", prompt_tokens=110, completion_tokens=30),
        Call("refine", 0, 2, "m", "e", prompt_tokens=300, completion_tokens=25),
        Call("judge", None, 2, "m", "e", prompt_tokens=999, completion_tokens=99),  # no agent: left out
    ])
    assert token_cost(transcript) == {"token_cost": 585.0, "token_cost_prompt": 510.0, "token_cost_completion": 75.0,
                                      "token_cost_turn1": 260.0, "token_cost_turn2": 325.0}


def test_freemad_presets_report_the_token_cost_of_every_run(generated_tasks, tmp_path):
    """The presets list ``token_cost`` in their ``metrics``, so a freemad_n run on a task whose
    metric_list names only accuracy records Eq. 6 for every debate and shows it in the leaderboard."""
    assert (debate_config({"preset": "freemad_n"}).metrics == debate_config({"preset": "freemad_c"}).metrics
            == ["token_cost"])
    assert generated_tasks["arith_mc"].metric_names == ["accuracy"]
    with simulate(tasks=generated_tasks.values()) as sim:
        settings = RunSettings(tasks=["arith_mc"], limit=4, base_url=sim.base_url,
                               configurations=[debate_config({"preset": "freemad_n"})],
                               output_path=str(tmp_path / "run"), cache="off", transport="direct")
        result = run(settings, show_progress=False, out=io.StringIO())
    records = list(read_records(result.folder))
    assert len(records) == 4
    for record in records:
        metrics = record["metrics"]
        calls = record["transcript"]["calls"]
        per_agent_round = {(c["agent"], c["turn"]): c["prompt_tokens"] + c["completion_tokens"] for c in calls}
        assert len(per_agent_round) == len(calls) == 4 * 2  # one call per agent and round, no judge
        assert metrics["token_cost"] == sum(per_agent_round.values()) == record["tokens"]["total"] > 0
        for turn in (1, 2):
            assert metrics[f"token_cost_turn{turn}"] == sum(v for (_, t), v in per_agent_round.items() if t == turn)
        assert metrics["token_cost_prompt"] == sum(c["prompt_tokens"] for c in calls)
        assert metrics["token_cost_prompt"] + metrics["token_cost_completion"] == metrics["token_cost"]
    cost = next(r for r in result.rows if r["metric"] == "token_cost")
    assert cost["label"] == "freemad_n"
    assert cost["score"] == pytest.approx(sum(r["metrics"]["token_cost"] for r in records) / 4)
    assert {r["metric"] for r in result.rows} >= {"accuracy", "token_cost", "token_cost_turn2"}
    assert "| freemad_n | arith_mc | token_cost |" in (result.folder / "leaderboard.md").read_text()


def test_freemad_presets_run_on_the_simulator(generated_tasks, tmp_path):
    configs = [debate_config({"preset": "freemad_n"}), debate_config({"preset": "freemad_c"})]
    assert (configs[0].responder, configs[0].paradigm, configs[0].decider, configs[0].agents, configs[0].max_turns) == (
        "anti_conformity", "som", "freemad_score", 4, 2)
    with simulate(tasks=generated_tasks.values(), accuracy=0.6, conformity=0.5) as sim:
        # share_calls off: the simulator counts each configuration's own calls (the two presets' first
        # drafts are identical requests, which a run shares by default: 60 drafts made for 120 used).
        settings = RunSettings(tasks=["arith_mc"], configurations=configs, limit=15, base_url=sim.base_url,
                               output_path=str(tmp_path / "run"), cache="off", transport="direct",
                               share_calls=False)
        result = run(settings, show_progress=False, out=io.StringIO())
        kinds = dict(sim.agents.stats.kinds)
    assert result.outcome.finished == 30 and result.outcome.failed == 0
    assert kinds == {"draft": 120, "som_update": 120}
    assert all(r["decision_success_rate"] == 1.0 and r["mean_turns"] == 2.0 for r in result.rows)


def _attack_run(tasks, tmp_path, items, *, task="arith_yesno", max_turns=2, repeats=1, accuracy=0.6,
                rescore_freemad=False, **profile):
    """3 agents in Free-MAD-c's conformity debate (Society of Minds, ``max_turns - 1`` debate rounds)
    on ``task``, decided by ``counting`` (the last-round majority), unattacked and with a third of the
    agents attacked. With ``rescore_freemad`` the same debates are also decided by ``freemad_score``
    (``madeval rescore``: both deciders read only the transcript, so this equals running them live).
    Returns the accuracy rows by label (``counting``, ``counting attacked``, ``freemad_score``,
    ``freemad_score attacked``), the records by (label, item, repeat) and the simulator's request kinds.
    """
    def config(attacked):
        paradigm = {"paradigm": "communication_attack", "paradigm_args": {"paradigm": "som", "fraction": 1 / 3}} \
            if attacked else {"paradigm": "som"}
        return DebateConfig(responder="conformity", decider="counting", agents=3, max_turns=max_turns,
                            name=f"counting{' attacked' if attacked else ''}", **paradigm)

    configs = [config(False), config(True)]
    with simulate(tasks=tasks.values(), accuracy=accuracy, **profile) as sim:
        # share_calls off: the simulator counts each configuration's own calls (their first drafts are
        # identical requests, which a run shares by default).
        settings = RunSettings(tasks=[task], configurations=configs, limit=items, repeats=repeats,
                               base_url=sim.base_url, output_path=str(tmp_path / "run"), cache="off",
                               transport="direct", share_calls=False)
        result = run(settings, show_progress=False, out=io.StringIO())
        kinds = dict(sim.agents.stats.kinds)
        assert sim.agents.stats.unknown_questions == 0  # the simulator finds the question in Du et al.'s prompt
        if rescore_freemad:
            notes = io.StringIO()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(notes):
                main(["rescore", str(result.folder), "--decider", "freemad_score"])  # as a user would
            assert len(read_rescored(result.folder)) == 2 * items * repeats and not notes.getvalue()
            assert sim.agents.stats.kinds == kinds  # the score makes no call
    assert result.outcome.finished == items * repeats * len(configs) and result.outcome.failed == 0

    def name(label):  # "counting attacked -> freemad_score" -> "freemad_score attacked"
        return label.replace("counting", "freemad_score").replace(" -> freemad_score", "") if " -> " in label else label

    board = build_leaderboard(result.folder)
    rows = {name(r["label"]): r for r in board["rows"] if r["metric"] == "accuracy"}
    stored = [*read_records(result.folder), *read_rescored(result.folder)]
    records = {(name(r["config_label"]), r["unit"]["item"], r["unit"]["repeat"]): r for r in stored}
    return rows, records, kinds


def _decided(records, label):
    return {(item, repeat): r["prediction"] for (name, item, repeat), r in records.items() if name == label}


def test_freemad_attacked_agents_get_no_peers_from_the_simulator(generated_tasks, tmp_path):
    """Cut off from its peers, an attacked agent is shown no answer, so even an agent that is always
    persuaded and always conforms keeps its own answer; the agents not attacked do change."""
    rows, records, kinds = _attack_run(generated_tasks, tmp_path, 40, conformity=1.0, persuasion=1.0)
    assert kinds == {"draft": 2 * 40 * 3, "som_update": 40 * 3 + 40 * 2, "som_double_check": 40}
    kept, changed = [], []
    for (label, _, _), record in records.items():
        transcript = Transcript.from_dict(record["transcript"])
        attacked = next((e["attacked"] for e in transcript.events if e["kind"] == "communication_attack"), [])
        assert len(attacked) == (1 if label.endswith("attacked") else 0)
        first, second = transcript.trajectory()
        for agent in range(3):
            (kept if agent in attacked else changed).append(first[agent] == second[agent])
    assert all(kept) and len(kept) == 40
    assert not all(changed)  # persuasion and conformity move the others


# The simulator model for the attack test (madeval/simulator/agents.py), on a yes/no task so that every
# wrong answer is the same one: accuracy q = 0.6, persuasion p, conformity c; 3 agents, round 0 = their
# private answers, round 1 = each agent shown its two peers' round-0 answers (an attacked agent: none, so it
# keeps its answer). In round 1 a correct agent stays correct unless both peers are wrong and it conforms
# (c); a wrong agent shown a correct peer becomes correct with p, and otherwise conforms only when both
# peers are correct (one correct, one wrong is a tie, which goes to its own answer). By k = number of
# agents correct in round 0 (P(k=3) = q^3 = .216, P(k=2) = 3q^2(1-q) = .432, P(k=1) = 3q(1-q)^2 = .288,
# P(k=0) = .064), the last-round majority is right:
#   k=3 and k=2: always (the correct agents stay correct); k=0: never (nobody is shown the gold answer);
#   k=1, no attack: the correct agent G stays (1-c) and at least one of the two wrong ones is persuaded,
#       or G conforms (c) and both are persuaded: (1-c)(1-(1-p)^2) + c p^2;
#   k=1, attack: the attacked agent is G (1/3): G stays, one persuaded agent suffices: 1-(1-p)^2; it is a
#       wrong one (2/3): it stays wrong, so G must stay (1-c) and the other wrong one be persuaded (p):
#       (1/3)(1-(1-p)^2) + (2/3)(1-c)p.
# With p = 0 both k=1 terms are 0 and nothing changes: majority = the round-0 majority, attacked or not,
# on every item. With p = c = 0.8: k=1 terms .704 and .4267, so majority accuracy .648 + .288 x .704 =
# .8508 unattacked and .648 + .288 x .4267 = .7709 attacked, a drop of .0799. On 1000 items the standard
# error of the difference of two independent accuracies is sqrt(.8508 x .1492 + .7709 x .2291)/sqrt(1000)
# = .0174, so the expected drop is 4.6 of them (the items and round-0 answers are shared, so the paired
# standard error is smaller still, .011). Free-MAD's score (W = 20, 25, 30, 20; f = 1/(k+1)) gives the
# same decision as the majority in every one of these cases: e.g. k=1 with G staying and one wrong agent
# persuaded: gold 20 + 10 + 15 = 45, wrong 40 - 12.5 + 10 = 37.5; G conforming and one persuaded: gold
# 20 - 12.5 + 15 = 22.5, wrong 40 + 15 - 12.5 + 10 = 52.5; and so on. So on this model the attack lowers
# freemad_score exactly as much as the majority, well outside freemad_score's unattacked 95% interval.
ATTACK_ITEMS = 1000
EXPECTED = {"unattacked": 0.648 + 0.288 * 0.704, "attacked": 0.648 + 0.288 * (0.32 + 2 / 3 * 0.2 * 0.8)}


def test_freemad_attack_without_persuasion_changes_no_majority(generated_tasks, tmp_path):
    """Blind conformity (persuasion 0): the attack changes the majority's answer on no item."""
    rows, records, _ = _attack_run(generated_tasks, tmp_path, 200, conformity=0.8)
    assert _decided(records, "counting") == _decided(records, "counting attacked")
    assert rows["counting"]["score"] == rows["counting attacked"]["score"]


def test_freemad_communication_attack_on_persuadable_agents_lowers_majority_and_score_alike(generated_tasks, tmp_path):
    """A third of 3 conforming, persuadable agents attacked (model and figures in the comment above).

    Last-round majority accuracy drops by several standard errors and matches the model's values;
    freemad_score decides as the majority on every item, so it drops as much: cutting agents off
    from a persuasive truth is a loss Free-MAD's score cannot prevent (a limitation the package
    README records with the figures).
    """
    rows, records, kinds = _attack_run(generated_tasks, tmp_path, ATTACK_ITEMS, rescore_freemad=True,
                                       conformity=0.8, persuasion=0.8)
    assert kinds["som_double_check"] == ATTACK_ITEMS  # one attacked agent per attacked debate
    n = ATTACK_ITEMS
    plain, attacked = rows["counting"]["score"], rows["counting attacked"]["score"]
    for score, expected in ((plain, EXPECTED["unattacked"]), (attacked, EXPECTED["attacked"])):
        assert abs(score - expected) <= 3 * math.sqrt(expected * (1 - expected) / n)
    standard_error = math.sqrt((plain * (1 - plain) + attacked * (1 - attacked)) / n)
    assert plain - attacked >= 3 * standard_error
    for label in ("", " attacked"):  # the model's identity: Free-MAD's score and the majority agree
        assert _decided(records, "freemad_score" + label) == _decided(records, "counting" + label)
    free = rows["freemad_score"]
    assert rows["freemad_score attacked"]["score"] < free["ci_low"]
    print({label: (round(r["score"], 3), round(r["ci_low"], 3), round(r["ci_high"], 3)) for label, r in rows.items()})


# Self-doubt (madeval/simulator/agents.py): the Free-MAD paper's attack cuts an agent off from its peers, and
# Society of Minds then sends it the self-check prompt "Can you double check that your answer is correct";
# without external feedback such self-correction degrades answers (Huang et al., ICLR 2024), which the
# simulator models as abandoning the current answer for another option with probability self_doubt = d.
# Setting: arith_mc (4 options), 3 agents, accuracy q = 0.7, conformity c = 0.1, persuasion 0, d = 0.3,
# two debate rounds (max_turns 3), one agent (a third) attacked, chosen at random per debate. In round r
# an agent not attacked is shown its peers' round r-1 answers in agent order: with c it conforms to their
# most common answer (a tie goes to its own answer when it is among the leaders, else to the first shown),
# otherwise it gives its private answer; the attacked agent abandons its current answer with d, else it
# gives its private answer.
#
# Unattacked: the enumeration below gives .826 for both rules (at every conformity: with persuasion 0,
# blind conformity does not change how often the group is right), which is the accuracy of the round-0
# plurality, by hand: all three right q^3 = .343, two right 3q^2(1-q) = .441, one right with two
# different wrong answers 3q(1-q)^2 x 2/3 = .126 and the tie won by the right answer (counting: the
# earliest agent holds it, 1/3; Free-MAD: a seeded draw among the three, 1/3): .042. Total .826.
#
# Attacked, the key case (two right, the attacked agent among them: P = .441 x 2/3): in round 1 it
# abandons the right answer with d. Free-MAD's score counts the round-0 answers (20 each, so right 40,
# wrong 20) and prices a change at -12.5 for the answer left and +15 for the one taken (f = 1/2), while
# the majority sees only the last round. When it moves to the other agent's wrong answer (1/3), both rules
# fail unless that agent conforms to the right answer it was shown (else right 37.5 against wrong 45,
# and two of three last-round answers wrong). When it moves to a third option
# (2/3), the last round holds three different answers: counting gives the tie to the earliest agent,
# wrong 2 times in 3, while Free-MAD's score still picks the right answer (37.5 against 30 and 15). In
# round 2 (f = 1/3: -8.3 and +10) the attacked agent asks itself again: it returns to its private answer
# with 1 - d, which repairs the majority but leaves Free-MAD's earlier decision intact, or doubts again,
# which again costs the majority more than the score. All cases (4^3 private answers, every draw of both
# rounds, each attacked agent) are enumerated exactly by _attack_model below: majority .826 -> .7699,
# freemad_score .826 -> .8176. On 1000 items x 2 repeats (2000 debates per configuration) the standard
# error of a difference of two independent accuracies is sqrt(.826 x .174 + .770 x .230) / sqrt(2000) =
# .0127, so the majority is expected to drop by 4.4 of them (the debates are paired: the same items,
# seeds and round-0 answers, and the paired standard error is about half as large); freemad_score's
# expected drop, .0084, is 1.0 of its own standard errors (.0085), inside its 95% interval (+-.0166).
# More debates would make the majority's drop clearer, but the score's drop too. With one debate round
# the score drops by 2.3 points (.826 -> .8033), too close to its interval. With conformity 0.5 the majority drops
# less (.826 -> .7823) and the score more (.826 -> .8145); with persuasion 0.2 (an enumeration that adds
# the persuasion step) the score drops by 2.4 points (.8803 -> .8567): cut-off agents miss what the others
# would have brought them, and no rule over the answers gets that back.
SELF_DOUBT = {"accuracy": 0.7, "conformity": 0.1, "self_doubt": 0.3}
SELF_DOUBT_ITEMS, SELF_DOUBT_REPEATS = 1000, 2


def _attack_model(accuracy, conformity, self_doubt, rounds, attacked, options=4):
    """Exact expected accuracies (last-round majority as counting decides, freemad_score) of the
    simulator's model for 3 agents with persuasion 0, on ``options``-option items, ``rounds`` debate
    rounds and agent ``attacked`` cut off (``None``: no attack). Enumerates every combination of private
    answers and draws; ties of freemad_score count as won with 1 / (number of leaders)."""
    answers = range(options)  # 0 is the gold answer
    start = defaultdict(float)
    for private in itertools.product(answers, repeat=3):
        start[(private, (private,))] += math.prod(
            accuracy if a == 0 else (1 - accuracy) / (options - 1) for a in private)
    states = start
    for _ in range(rounds):
        following = defaultdict(float)
        for (private, rows), weight in states.items():
            current = rows[-1]
            choices = []
            for agent in range(3):
                if agent == attacked:
                    others = [a for a in answers if a != current[agent]]
                    choices.append([(self_doubt / len(others), a) for a in others]
                                   + [(1 - self_doubt, private[agent])])
                    continue
                peers = [current[j] for j in range(3) if j != agent]
                counts = Counter(peers)
                leaders = [a for a in counts if counts[a] == max(counts.values())]
                conform = current[agent] if current[agent] in leaders else leaders[0]
                choices.append([(conformity, conform), (1 - conformity, private[agent])])
            for picked in itertools.product(*choices):
                chance = weight * math.prod(p for p, _ in picked)
                if chance:
                    following[(private, rows + (tuple(a for _, a in picked),))] += chance
        states = following
    majority = freemad = 0.0
    for (_, rows), weight in states.items():
        last = rows[-1]
        tally = Counter(last)
        majority += weight * ([a for a in last if tally[a] == max(tally.values())][0] == 0)
        leaders = score_trajectory([[str(a) for a in row] for row in rows]).leaders()
        freemad += weight * ("0" in leaders) / len(leaders)
    return majority, freemad


@pytest.mark.slow  # 4,000 debates: started first, beside the short tests (tests/conftest.py)
def test_freemad_score_withstands_the_attack_when_cut_off_agents_doubt_themselves(generated_tasks, tmp_path):
    """A third of 3 conforming agents attacked, the attacked one doubting itself under the self-check
    prompt (model and figures in the comment above): the last-round majority drops by several standard
    errors while freemad_score stays inside its unattacked 95% interval. The package README and
    ``attack.yaml`` record the figures."""
    plain_model = _attack_model(0.7, 0.1, 0.3, 2, None)
    attacked_model = [sum(v) / 3 for v in zip(*(_attack_model(0.7, 0.1, 0.3, 2, a) for a in range(3)))]
    assert plain_model == pytest.approx((0.826, 0.826))  # the hand value above
    assert attacked_model == pytest.approx((0.7699, 0.8176), abs=5e-5)

    rows, records, kinds = _attack_run(generated_tasks, tmp_path, SELF_DOUBT_ITEMS, task="arith_mc", max_turns=3,
                                       repeats=SELF_DOUBT_REPEATS, rescore_freemad=True, **SELF_DOUBT)
    n = SELF_DOUBT_ITEMS * SELF_DOUBT_REPEATS
    assert kinds["som_double_check"] == 2 * n  # the attacked agent, in both debate rounds
    flipped = 0
    for (label, _, _), record in records.items():
        if label == "counting attacked":
            transcript = Transcript.from_dict(record["transcript"])
            (agent,) = next(e["attacked"] for e in transcript.events if e["kind"] == "communication_attack")
            flipped += sum(row[agent] != before[agent] for before, row in itertools.pairwise(transcript.trajectory()))
    assert flipped > 0  # the self-check prompt now moves the attacked agent

    expected = {"counting": plain_model[0], "counting attacked": attacked_model[0],
                "freemad_score": plain_model[1], "freemad_score attacked": attacked_model[1]}
    for label, value in expected.items():
        assert abs(rows[label]["score"] - value) <= 3 * math.sqrt(value * (1 - value) / n), label
    plain, attacked = rows["counting"]["score"], rows["counting attacked"]["score"]
    assert plain - attacked >= 3 * math.sqrt((plain * (1 - plain) + attacked * (1 - attacked)) / n)
    paired = [records[("counting", item, repeat)]["metrics"]["accuracy"] - record["metrics"]["accuracy"]
              for (label, item, repeat), record in records.items() if label == "counting attacked"]
    assert len(paired) == n and statistics.fmean(paired) >= 6 * statistics.stdev(paired) / math.sqrt(n)
    free = rows["freemad_score"]
    assert free["ci_low"] <= rows["freemad_score attacked"]["score"] <= free["ci_high"]
    print({label: (round(r["score"], 4), round(r["ci_low"], 4), round(r["ci_high"], 4)) for label, r in rows.items()})


def test_the_attack_keeps_the_wrapped_paradigms_steps_for_a_batch_runs_bounds():
    """The attack changes what agents see, not who speaks when: a batch run's round trips are the
    wrapped paradigm's (Memory, 3 agents, 3 turns, counting: 9 calls one after another, no fewer, no
    more). Before, the attack said nothing (1 step a turn: at least 3)."""
    from madeval.debate.chain import chain_bounds
    from madeval.run.plan import debate_setup

    attack = DebateConfig(paradigm="communication_attack", paradigm_args={"paradigm": "memory"}, agents=3,
                          max_turns=3, decider="counting")
    bounds = chain_bounds(debate_setup(attack, registries()))
    assert (bounds.least, bounds.most) == (9, 9)
