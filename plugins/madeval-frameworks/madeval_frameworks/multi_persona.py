"""Multi-Persona (Liang et al. 2023, "MAD"): an affirmative and a negative debater and a moderator.

Protocol (Skytliang/Multi-Agents-Debate, ``code/debate4tran.py`` with the prompts of
``code/utils/config4all.json``; methods.md 4.1):

* agent 0 is the moderator (a neutral agent), agent 1 the affirmative side, agent 2 the negative;
* round 1: the affirmative answers the topic; the negative gets the affirmative's answer with "You
  disagree with my answer. Provide your answer and reasons."; the moderator judges in JSON;
* rounds 2..max (default 3): each side gets the other's latest answer with "Do you agree with my
  perspective? Please provide your reasons and answer.", then the moderator judges again;
* the debate stops as soon as the moderator's ``debate_answer`` is not empty (the code checks this
  field, not "Whether there is a preference");
* with no answer after the last round, a fresh judge (the judge model) gets the moderator's meta
  prompt and the *first-round* answers of both sides, lists the answer candidates, then gives the
  final answer in JSON.

Every player keeps its own conversation (system: meta prompt; then its prompts and answers), which
madeval rebuilds from the transcript. The code parses replies with ``eval``; madeval reads JSON
(or a Python dict literal). The MAD-frameworks appendix's re-implementation uses different prompts
("Decision: The correct answer is ..."); madeval follows the authors' code.
"""

from __future__ import annotations

from typing import Iterator

from madeval import (
    Contribution,
    DebateSetup,
    DebateState,
    Decider,
    Decision,
    Message,
    Paradigm,
    Persona,
    PersonaGenerator,
    Responder,
    SpeakContext,
    Speaker,
)

from .common import by_turn, parse_object, require_layout, topic

# --- verbatim prompts (config4all.json) --------------------------------------------------------
PLAYER_META = (
    "You are a debater. Hello and welcome to the debate. It's not necessary to fully agree with each "
    "other's perspectives, as our objective is to find the correct answer.\nThe debate topic is stated "
    "as follows:\n##debate_topic##"
)
MODERATOR_META = (
    "You are a moderator. There will be two debaters involved in a debate. They will present their "
    "answers and discuss their perspectives on the following topic: \"##debate_topic##\"\nAt the end "
    "of each round, you will evaluate answers and decide which is correct."
)
AFFIRMATIVE = "##debate_topic##"
NEGATIVE = "##aff_ans##\n\nYou disagree with my answer. Provide your answer and reasons."
MODERATOR = (
    "Now the ##round## round of debate for both sides has ended.\n\nAffirmative side arguing:\n"
    "##aff_ans##\n\nNegative side arguing: ##neg_ans##\n\nYou, as the moderator, will evaluate both "
    "sides' answers and determine if there is a clear preference for an answer candidate. If so, "
    "please summarize your reasons for supporting affirmative/negative side and give the final answer "
    "that you think is correct, and the debate will conclude. If not, the debate will continue to the "
    "next round. Now please output your answer in json format, with the format as follows: "
    "{\"Whether there is a preference\": \"Yes or No\", \"Supported Side\": \"Affirmative or "
    "Negative\", \"Reason\": \"\", \"debate_answer\": \"\"}"
)
JUDGE_CANDIDATES = (
    "Affirmative side arguing: ##aff_ans##\n\nNegative side arguing: ##neg_ans##\n\nNow, what answer "
    "candidates do we have? Present them without reasons."
)
JUDGE_FINAL = (
    "Therefore, ##debate_topic##\nPlease summarize your reasons and give the final answer that you "
    "think is correct. Now please output your answer in json format, with the format as follows: "
    "{\"Reason\": \"\", \"debate_answer\": \"\"}"
)
DEBATE = "##oppo_ans##\n\nDo you agree with my perspective? Please provide your reasons and answer."
ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", 6: "sixth", 7: "seventh",
            8: "eighth", 9: "ninth", 10: "tenth"}

MODERATOR_AGENT, AFFIRMATIVE_AGENT, NEGATIVE_AGENT = 0, 1, 2


def fill(template: str, **values: str) -> str:
    """Replace ``##name##`` placeholders, as the authors' code does with ``str.replace``."""
    for key, value in values.items():
        template = template.replace(f"##{key}##", value)
    return template


def debate_answer(text: str) -> str | None:
    """The non-empty ``debate_answer`` of a moderator or judge reply, else ``None``."""
    data = parse_object(text)
    if not data:
        return None
    answer = data.get("debate_answer")
    if answer is None:
        return None
    answer = str(answer).strip()
    return answer or None


class MultiPersonaRoles(PersonaGenerator):
    """Multi-Persona's debaters: agent 1 is the "Affirmative side", agent 2 the "Negative side"."""

    sequential = False

    async def generate(self, agent: int, task, existing, llm) -> Persona:
        names = {AFFIRMATIVE_AGENT: "Affirmative side", NEGATIVE_AGENT: "Negative side"}
        return Persona(name=names.get(agent, f"Debater {agent}"), generator=self.name)


class MultiPersonaParadigm(Paradigm):
    """Multi-Persona's rounds: affirmative, then negative, then the moderator (agent 0) judges."""

    supports_agreement = False

    def validate(self, setup: DebateSetup) -> None:
        require_layout(setup, "paradigm 'multi_persona'", (2, 2), 1)

    def turn(self, state: DebateState) -> Iterator[list[Speaker]]:
        yield [Speaker(AFFIRMATIVE_AGENT, "argue")]
        yield [Speaker(NEGATIVE_AGENT, "argue")]
        yield [Speaker(MODERATOR_AGENT, "moderate")]

    def view(self, agent: int, state: DebateState) -> list[Message]:
        return list(state.transcript.messages)


class MultiPersonaResponder(Responder):
    """Multi-Persona's prompts (Liang et al., config4all.json, verbatim), one conversation per role."""

    gives_agreement = False

    def prompt(self, ctx: SpeakContext) -> list[dict[str, str]]:
        state = ctx.state
        subject = topic(ctx.task)
        aff = by_turn(state.transcript, AFFIRMATIVE_AGENT)
        neg = by_turn(state.transcript, NEGATIVE_AGENT)
        mod = by_turn(state.transcript, MODERATOR_AGENT)
        rounds = range(1, ctx.turn + 1)
        me = ctx.agent.index
        if me == MODERATOR_AGENT:
            messages = [{"role": "system", "content": fill(MODERATOR_META, debate_topic=subject)}]
            asks = [fill(MODERATOR, aff_ans=aff[r].text, neg_ans=neg[r].text, round=ORDINALS.get(r, str(r)))
                    for r in rounds]
            answers = mod
        elif me == AFFIRMATIVE_AGENT:
            messages = [{"role": "system", "content": fill(PLAYER_META, debate_topic=subject)}]
            asks = [fill(AFFIRMATIVE, debate_topic=subject) if r == 1 else fill(DEBATE, oppo_ans=neg[r - 1].text)
                    for r in rounds]
            answers = aff
        else:
            messages = [{"role": "system", "content": fill(PLAYER_META, debate_topic=subject)}]
            asks = [fill(NEGATIVE, aff_ans=aff[1].text) if r == 1 else fill(DEBATE, oppo_ans=aff[r].text)
                    for r in rounds]
            answers = neg
        for r, ask in zip(rounds, asks):
            messages.append({"role": "user", "content": ask})
            if r < ctx.turn and r in answers:
                messages.append({"role": "assistant", "content": answers[r].text})
        return messages

    def parse(self, text: str, ctx: SpeakContext) -> Contribution:
        """A debater's reply is its solution; the moderator's solution is its ``debate_answer``."""
        if ctx.agent.index == MODERATOR_AGENT:
            answer = debate_answer(text)
            notes = () if parse_object(text) else ("moderator reply is not JSON",)
            return Contribution(text, answer, notes=notes)
        return Contribution(text, text.strip() or None)


class ModeratorDecider(Decider):
    """Multi-Persona's ending: stop when the moderator gives a debate_answer; else a fallback judge.

    After every moderator message with a non-empty ``debate_answer`` the debate ends with that
    answer. At ``max_turns`` a judge (the configuration's judge model) gets the moderator's meta
    prompt and the first-round answers of both sides, is asked for the answer candidates, then for
    the final answer in JSON; that answer is recorded with ``success = False``.
    """


    def validate(self, setup: DebateSetup) -> None:
        super().validate(setup)
        require_layout(setup, "decider 'moderator'", None, 1)

    async def after_step(self, state: DebateState, llm) -> Decision | None:
        last = state.transcript.messages[-1] if state.transcript.messages else None
        if last is None or last.agent != MODERATOR_AGENT or last.solution is None:
            return None
        data = parse_object(last.text) or {}
        return Decision(
            answer=last.solution, success=True, turn=state.turn, decider=self.name, reason="moderator",
            details={"supported_side": data.get("Supported Side"),
                     "preference": data.get("Whether there is a preference")},
        )

    async def at_max_turns(self, state: DebateState, llm) -> Decision:
        subject = topic(state.task)
        aff = by_turn(state.transcript, AFFIRMATIVE_AGENT)
        neg = by_turn(state.transcript, NEGATIVE_AGENT)
        first_aff, first_neg = aff[min(aff)].text if aff else "", neg[min(neg)].text if neg else ""
        messages = [
            {"role": "system", "content": fill(MODERATOR_META, debate_topic=subject)},
            {"role": "user", "content": fill(JUDGE_CANDIDATES, aff_ans=first_aff, neg_ans=first_neg)},
        ]
        candidates = await llm.chat(None, messages, purpose="judge")
        messages += [{"role": "assistant", "content": candidates},
                     {"role": "user", "content": fill(JUDGE_FINAL, debate_topic=subject)}]
        final = await llm.chat(None, messages, purpose="judge")
        answer = debate_answer(final)
        state.transcript.events.append({"kind": "fallback_judge", "turn": state.turn, "candidates": candidates,
                                        "final": final, "debate_answer": answer})
        return Decision(
            answer=answer if answer is not None else final, success=False, turn=state.turn,
            decider=self.name, reason="fallback_judge", details={"debate_answer": answer},
        )
