"""ReConcile (Chen et al. 2023; dinobby/ReConcile, ``utils.py`` and ``generation.py``).

Protocol (methods.md section 5):

* every agent answers in JSON ``{"reasoning", "answer", "confidence_level"}``, with the confidence
  "between 0.0 and 1.0 to indicate the possibility of your answer being right";
* in a discussion round every agent gets the same summary of the previous round: for the (at most)
  two most common answers, "There are {n} agents think the answer is {a}." and each such agent's
  "One agent solution: I think the answer is {a} because {reasoning} My confidence level is {p}.";
* when all agents give the same answer there is no further discussion (the code builds an empty
  discussion prompt); madeval stops there;
* the decision is the confidence-weighted vote of the last round: ``score(a) = sum f(p_i)`` over
  the agents answering ``a``, with ReConcile's recalibration ``f`` (``trans_confidence``):
  ``p <= 0.6 -> 0.1``, ``0.6 < p < 0.8 -> 0.3``, ``0.8 <= p < 0.9 -> 0.5``, ``0.9 <= p < 1 -> 0.8``,
  ``p = 1 -> 1.0``; ties go to the earliest agent. Percent strings are divided by 100; a missing
  or invalid confidence counts as 0.0.

The code runs ``--round 2`` discussion rounds (``max_turns`` 3 here). Not reproduced: the
"convincing samples" (few-shot answers from the other models) and the random answer the code
substitutes for an unparsable reply (madeval records the parse failure instead).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from madeval import Contribution, DebateState, Decider, Decision, Message, Responder, SpeakContext

from .common import parse_object

# --- verbatim (utils.py prepare_context_for_chat_assistant, generation.py gpt_debate) --------------
QUESTION = "Q: {question}"
STEP_BY_STEP = " Please answer the question with step-by-step reasoning."
CONFIDENCE = (
    " Also, evaluate your confidence level (between 0.0 and 1.0) to indicate the possibility of your "
    "answer being right."
)
JSON_FORMAT = (
    " Output your answer in json format, with the format as follows: {\"reasoning\": \"\", \"answer\": \"\", "
    "\"confidence_level\": \"\"}. Please strictly output in JSON format."
)
IRRELEVANT = " Do not output irrelevant content."
DISCUSS = [
    "\n\nCarefully review the following solutions from other agents as additional information, and provide "
    "your own answer and step-by-step reasoning to the question.",
    "Clearly states that which pointview do you agree or disagree and why.\n\n",
]
JSON_FORMAT_DISCUSS = (
    "Output your answer in json format, with the format as follows: {\"reasoning\": \"\", \"answer\": \"\", "
    "\"confidence_level\": \"\"}. Please strictly output in JSON format."
)
GROUP = "There are {count} agents think the answer is {answer}. "
EXPLANATION = "I think the answer is {answer} because {reasoning} My confidence level is {confidence}."
ONE_SOLUTION = "One agent solution: "
# --- madeval wording: the code's per-dataset "answer" field line, for any task ----------------------
ANSWER_FIELD = " Only place the final answer in the \"answer\" field, as the task asks for it: {instruction}"


def recalibrate(p: float) -> float:
    """ReConcile's ``trans_confidence``."""
    if p <= 0.6:
        return 0.1
    if p < 0.8:
        return 0.3
    if p < 0.9:
        return 0.5
    if p < 1:
        return 0.8
    return 1.0


def read_confidence(value: Any) -> float:
    """A confidence as the code reads it: percent strings / 100, invalid or missing -> 0.0."""
    if value is None or value == "":
        return 0.0
    text = str(value).strip()
    try:
        return float(text.rstrip("%")) / 100 if text.endswith("%") else float(text)
    except ValueError:
        return 0.0


def read_reply(text: str) -> dict[str, Any] | None:
    """The reply's JSON fields (reasoning, answer, confidence) or ``None`` without an answer."""
    data = parse_object(text)
    if not data or data.get("answer") in (None, ""):
        return None
    reasoning = data.get("reasoning", "")
    if isinstance(reasoning, list):
        reasoning = " ".join(map(str, reasoning))
    return {"reasoning": str(reasoning), "answer": str(data["answer"]).strip(),
            "confidence": read_confidence(data.get("confidence_level"))}


def discussion(messages: list[Message]) -> str:
    """The code's discussion prompt for the previous round (top two answers), '' when all agree."""
    replies = [(m, read_reply(m.text)) for m in messages]
    keys = [m.answer or (r["answer"] if r else None) for m, r in replies]
    vote = Counter(keys).most_common(2)
    if len(vote) <= 1:
        return ""
    text = ""
    for answer, count in vote:
        text += GROUP.format(count=count, answer=answer)
        group = []
        for key, (message, reply) in zip(keys, replies):
            if key == answer:
                reply = reply or {"reasoning": message.text, "answer": answer, "confidence": message.confidence or 0.0}
                group.append(ONE_SOLUTION + EXPLANATION.format(answer=reply["answer"], reasoning=reply["reasoning"],
                                                               confidence=reply["confidence"]))
        text += "\n".join(group) + "\n\n"
    return text


class ReconcileResponder(Responder):
    """ReConcile's prompts: answer in JSON with a confidence; then review the grouped solutions."""

    gives_agreement = False

    def prompt(self, ctx: SpeakContext) -> list[dict[str, str]]:
        question = ctx.task.input if not ctx.task.context else f"{ctx.task.input}\n{ctx.task.context}"
        content = QUESTION.format(question=question) + STEP_BY_STEP + CONFIDENCE + JSON_FORMAT
        content += ANSWER_FIELD.format(instruction=ctx.task.instruction) + IRRELEVANT
        debate = discussion(ctx.view) if ctx.view else ""
        if debate:
            content += " ".join([*DISCUSS, debate, JSON_FORMAT_DISCUSS])
        return [{"role": "user", "content": content}]

    def parse(self, text: str, ctx: SpeakContext) -> Contribution:
        """The answer field becomes "The answer is <answer>." for the task's extractor; the
        confidence is kept on the message."""
        reply = read_reply(text)
        if reply is None:
            return Contribution(text, text.strip() or None, confidence=0.0, notes=("reply is not JSON with an answer",))
        return Contribution(text, f"The answer is {reply['answer']}.", confidence=reply["confidence"])


class ReconcileVote(Decider):
    """ReConcile's decision: stop when all agents agree; else the confidence-weighted vote at the end.

    Weighted vote over the latest round: each agent adds ReConcile's recalibrated confidence
    ``f(p)`` to its answer; the highest total wins, ties to the earliest agent's answer. Every
    tally is recorded as a ``reconcile_vote`` event (with the plain majority for comparison).
    """

    transcript_only = True

    def __init__(self, after_turns: int = 0):
        if after_turns < 0:
            raise ValueError("after_turns must be >= 0 (0 = at max_turns)")
        self.after_turns = after_turns

    async def after_turn(self, state: DebateState, llm) -> Decision | None:
        latest = self._latest(state)
        answers = [m.answer for m in latest]
        if answers and answers[0] is not None and len(set(answers)) == 1:
            return self.vote(state, "consensus")
        if state.turn >= (self.after_turns or state.max_turns):
            return self.vote(state, "weighted_vote")
        return None

    async def at_max_turns(self, state: DebateState, llm) -> Decision:
        return self.vote(state, "weighted_vote")

    @staticmethod
    def _latest(state: DebateState) -> list[Message]:
        latest = state.transcript.latest_by_agent()
        return [latest[a.index] for a in state.agents if not a.neutral and a.index in latest]

    def vote(self, state: DebateState, reason: str) -> Decision:
        """The confidence-weighted vote over each agent's latest message."""
        latest = self._latest(state)
        scores: dict[str, float] = {}
        for message in latest:
            if message.answer is None:
                continue
            scores[message.answer] = scores.get(message.answer, 0.0) + recalibrate(message.confidence or 0.0)
        winner = max(scores, key=scores.get) if scores else None
        majority = Counter(m.answer for m in latest if m.answer is not None).most_common(1)
        state.transcript.events.append({
            "kind": "reconcile_vote", "turn": state.turn, "reason": reason,
            "answers": [m.answer for m in latest], "confidences": [m.confidence for m in latest],
            "scores": scores, "winner": winner, "majority": majority[0][0] if majority else None,
        })
        text = next((m.solution for m in latest if m.answer == winner and m.solution), winner)
        return Decision(text, winner is not None, state.turn, self.name, reason if winner else "no_answers",
                        {"answer": winner, "scores": scores})
