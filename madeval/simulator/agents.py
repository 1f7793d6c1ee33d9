"""Synthetic agents: what the simulator answers to each kind of prompt.

Each simulated agent holds a *private answer* per question: correct with probability
``accuracy``, otherwise a uniformly chosen wrong answer. When a prompt shows other answers (the
peers' solutions, a discussion, the ballot's candidates, a challenged answer), the agent's answer
to it is decided in two steps (:meth:`SyntheticAgents._belief`):

1. **persuasion** (correct arguments persuade): if the private answer is wrong and at least one
   shown answer is the gold answer, the agent adopts the gold answer with probability
   ``persuasion``;
2. otherwise **conformity** (blind to the truth): with probability ``conformity`` the agent adopts
   the most common shown answer (a tie goes to its current solution when that is among the
   leaders, else to the first leader shown); otherwise it keeps its private answer.

An agent shown no other answer keeps its private answer: in an independent draft, and in a
self-check prompt (a plugin's, answered with :meth:`SimulatedPrompt.recheck`: madeval-madc's
Society-of-Minds "Can you double check that your answer is correct", which an agent cut off by a
communication attack gets) unless it doubts itself:

3. **self-doubt** (self-correction without external feedback): asked to double-check its answer
   with no peer answer shown, the agent abandons its current answer (its latest one in the
   conversation) for a different answer with probability ``self_doubt``: another option chosen
   uniformly (a choice item), the other answer (yes/no), a number 1 to 9 away (a number), or
   another stock text; otherwise it gives its private answer. This models Huang et al., "Large
   Language Models Cannot Self-Correct Reasoning Yet" (ICLR 2024): asked to review its answer
   without external feedback, a model often changes a correct answer to a wrong one, so intrinsic
   self-correction lowers accuracy. ``self_doubt`` 0 (the default) never doubts.

Debate prompts are read through their "Final Solution:" markers; a discussion without any marker
is read as Collective Improvement shows it, bare solutions ("Current Solution: C",
"Participant 2: C"). The draws are made afresh for every prompt, so the agents have no memory
beyond what the prompt shows. With ``persuasion`` 0 (the default) debate only spreads the most
common answers, blind to the truth; real debate helps because correct arguments persuade more than
wrong ones, which ``persuasion`` models. Randomness comes from a hash of the request's ``seed``
(madeval derives one per agent, item and repeat), the question and the prompt, so the simulator is
deterministic: the same request always gets the same reply, and agents with different seeds answer
independently.

A prompt that quotes no question the simulator knows is refused with HTTP 400 (:class:`UnknownQuestion`),
which the client sees as a failed unit it will not retry, and counted (``unknown_questions`` in
``GET /stats``): answering it at random would score a run against the wrong server (a simulator of
``generated`` asked ``mmlu_pro`` scored 15% with letters A-D for ten-option items) and no one
would know. Persona generation needs no gold answer and is always answered, and so are madeval's
probe call (:mod:`madeval.llm.probe`) and a plugin's own prompts that quote no question (a
summary of the discussion so far), which the plugin's ``simulator_reply`` answers.
``unknown="answer"`` (``madeval simulator --unknown answer``) answers such prompts as a
four-option question with no right answer, as a simulator that knows no question at all always
does (it has nothing to check against).

The request kind is recognised from the wording of madeval's own prompts: persona generation,
debate turns with [AGREE]/[DISAGREE], final-answer extraction, simple / approval / cumulative /
ranked votes and the judge. A plugin's own prompts are recognised and answered by the plugin,
through the ``simulator_reply`` hook (:mod:`madeval.core.hookspecs`), which gets each request as a
:class:`SimulatedPrompt` and is asked before madeval's own prompts are. Replies state answers as
``Final Solution: X``; a request with a ``response_format`` gets the same reply as JSON of its
schema (:func:`structured_reply`), as a guided decoder would write it.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from madeval.core.plugins import load_plugins
from madeval.llm.model_identity import SIMULATOR_FINGERPRINT
from madeval.llm.probe import PROBE_PROMPT, SPEED_PROMPT
from madeval.simulator.truth import Gold, GoldIndex

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
UNKNOWN = Gold("choice", "", 4)
FINAL = re.compile(r"final solution\s*:\s*([^\n]*)", re.IGNORECASE)
SOLUTION_LINE = re.compile(r"^Solution (\d+):\s*(.*)$", re.MULTILINE)
POINTS = re.compile(r"distributing (\d+) points")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@dataclass(frozen=True)
class AgentProfile:
    """How a synthetic agent behaves (see the module docstring for the model).

    ``accuracy``: chance its private answer is right. ``persuasion``: chance an agent whose
    private answer is wrong adopts the gold answer when a shown answer holds it. ``conformity``:
    chance it otherwise adopts the most common shown answer. ``self_doubt``: chance an agent asked
    to double-check its answer with no peer answer shown abandons its current answer for another.
    """

    accuracy: float = 0.6
    conformity: float = 0.0
    persuasion: float = 0.0
    self_doubt: float = 0.0


UNKNOWN_POLICIES = ("error", "answer")


class UnknownQuestion(ValueError):
    """A prompt quotes no question the simulator knows (answered with HTTP 400)."""


@dataclass
class BehaviourStats:
    """Requests answered per kind, and questions the simulator did not know."""

    kinds: Counter = field(default_factory=Counter)
    unknown_questions: int = 0


class SyntheticAgents:
    """The behaviour callback of the simulator server: request JSON -> (text, tokens in, out)."""

    def __init__(
        self,
        truth: GoldIndex,
        *,
        default: AgentProfile | None = None,
        profiles: dict[str, AgentProfile] | None = None,
        seed: int = 0,
        unknown: str | None = None,
    ):
        self.truth = truth
        self.default = default or AgentProfile()
        self.profiles = profiles or {}
        self.seed = seed
        #: What a prompt quoting no known question gets: "error" (HTTP 400) or "answer" (at random);
        #: default: "error", unless the simulator knows no question at all.
        self.unknown = unknown or ("error" if len(truth) else "answer")
        if self.unknown not in UNKNOWN_POLICIES:
            raise ValueError(f"unknown must be one of {', '.join(UNKNOWN_POLICIES)}, got {unknown!r}")
        self.stats = BehaviourStats()
        self._plugin_reply = load_plugins().hook.simulator_reply
        self._fingerprints: dict[str, str] = {}
        self._warned_unknown = False

    def fingerprint(self, model: str) -> str:
        """What the server reports about ``model`` (in ``/models`` and as each reply's
        ``system_fingerprint``): a digest of the agents' profile for it, the seed, the unknown-question
        policy and the questions known, so a simulator started otherwise is told apart by a cache."""
        if model not in self._fingerprints:
            profile = self.profiles.get(model, self.default)
            blob = json.dumps([vars(profile), self.seed, self.unknown, self.truth.digest()], sort_keys=True)
            self._fingerprints[model] = SIMULATOR_FINGERPRINT + hashlib.sha256(blob.encode()).hexdigest()[:12]
        return self._fingerprints[model]

    def __call__(self, request: dict[str, Any]) -> tuple[str, int, int]:
        messages = request.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ValueError("messages must be a non-empty list")
        contents = [str(m.get("content") or "") for m in messages if isinstance(m, dict)]
        prompt = "\n".join(contents)
        user = contents[-1]
        profile = self.profiles.get(str(request.get("model")), self.default)
        if user.strip() == PROBE_PROMPT:  # madeval's probe call: any model answers it
            self.stats.kinds["probe"] += 1
            return "OK", max(1, len(prompt) // 4), 1
        if user.strip() == SPEED_PROMPT:  # madeval's speed probe: a story that runs to its max_tokens
            self.stats.kinds["probe"] += 1
            tokens = request.get("max_tokens")
            tokens = tokens if isinstance(tokens, int) and 0 < tokens <= 4096 else 16
            return " ".join(["once"] * tokens), max(1, len(prompt) // 4), tokens
        gold = self.truth.lookup(prompt)
        known = gold is not None
        if not known:
            self.stats.unknown_questions += 1
            gold = UNKNOWN
        draw = _Draws(self.seed, request.get("seed"), gold.input, prompt)
        private = self._private_answer(gold, profile, draw)

        def believe(peers: list[str], anchor: str | None) -> str:
            return self._belief(private, peers, anchor, profile, draw, gold)

        def recheck(current: str | None) -> str:
            return self._recheck(private, current, profile, draw, gold)

        shown = SimulatedPrompt(messages, contents, gold, private, believe, recheck)
        plugin = self._plugin_reply(prompt=shown)
        if plugin is None and not known:  # a plugin's own prompt may quote no question (a summary)
            self._unknown_question(user)
        kind, text = plugin or self._reply(user, prompt, gold, profile, private, draw)
        self.stats.kinds[kind] += 1
        schema = requested_schema(request.get("response_format"))
        if schema is not None:
            text = json.dumps(structured_reply(text, schema, gold))
        return text, max(1, len(prompt) // 4), max(1, len(text) // 4)

    def _unknown_question(self, user: str) -> None:
        """A prompt of madeval's quoting no known question: refused (UnknownQuestion), or answered at
        random; said once on stderr either way. A persona prompt needs no gold answer: answered."""
        refuse = self.unknown == "error" and "generate a participant" not in user.lower()
        if len(self.truth) and not self._warned_unknown:
            self._warned_unknown = True
            print(f"simulator: warning: a request quotes none of the {len(self.truth)} questions known "
                  f"({'refused with HTTP 400' if refuse else 'answered at random'}); unknown_questions in "
                  "GET /stats counts them", file=sys.stderr)
        if refuse:
            raise UnknownQuestion(
                f"the madeval simulator knows {len(self.truth)} questions and this request quotes none of "
                "them: start the simulator with the run's tasks (madeval simulator --tasks ...)")

    def _private_answer(self, gold: Gold, profile: AgentProfile, draw: _Draws) -> str:
        rng = draw.rng("private")
        if gold.answer and rng.random() < profile.accuracy:
            return gold.answer
        return _wrong_answer(gold, rng)

    def _belief(self, private: str, peers: list[str], anchor: str | None, profile: AgentProfile, draw: _Draws,
                gold: Gold) -> str:
        """The answer an agent gives when shown ``peers``' answers (``anchor``: its current solution).

        Persuasion first: a wrong private answer gives way to the gold answer shown by a peer with
        probability ``persuasion``. Then conformity: with probability ``conformity`` the peers' most
        common answer. Otherwise the private answer.
        """
        if not peers:
            return private
        if (profile.persuasion > 0 and gold.answer and not _same(private, gold) and any(_same(p, gold) for p in peers)
                and draw.rng("persuade").random() < profile.persuasion):
            return gold.answer
        if draw.rng("conform").random() >= profile.conformity:
            return private
        counts = Counter(peers)
        best = max(counts.values())
        leaders = [a for a in counts if counts[a] == best]
        return anchor if anchor in leaders else leaders[0]

    def _recheck(self, private: str, current: str | None, profile: AgentProfile, draw: _Draws, gold: Gold) -> str:
        """The answer to a self-check prompt that shows no peer answer (``current``: the agent's latest).

        With probability ``self_doubt`` a different answer than ``current`` (the private answer when
        there is none yet), chosen by :func:`_other_answer`; otherwise the private answer.
        """
        if profile.self_doubt > 0 and draw.rng("doubt").random() < profile.self_doubt:
            return _other_answer(current if current is not None else private, gold, draw.rng("doubt-answer"))
        return private

    def _reply(self, user: str, prompt: str, gold: Gold, profile: AgentProfile, private: str,
               draw: _Draws) -> tuple[str, str]:
        lowered = user.lower()
        if "generate a participant" in lowered:
            return "persona", _persona(draw, ipip="extraversion" in prompt.lower())
        if "extract the final solution" in lowered:
            answers = _answers_in(user, gold)
            return "extraction", _say(answers[-1] if answers else private, gold)
        if "plausible but incorrect answer" in lowered:
            return "wrong_answer", f"Final Solution: {_say(_wrong_answer(gold, draw.rng('wrong')), gold)}"
        if "final answer generated by the discussion" in lowered:
            return self._challenge(user, gold, profile, private, draw)
        solutions = [(int(n), _answer_of(text, gold)) for n, text in SOLUTION_LINE.findall(user)]
        if solutions:
            listed = [a for _, a in solutions if a is not None]
            belief = self._belief(private, listed, None, profile, draw, gold)
            return _ballot(lowered, solutions, belief, gold)
        anchor, peers = _debate_answers(prompt, gold)
        belief = self._belief(private, peers, anchor, profile, draw, gold)
        if "answer only with [agree] or [disagree]" in lowered:
            return "agreement", "[AGREE]" if anchor is not None and belief == anchor else "[DISAGREE]"
        if anchor is None or "the discussion is over" in lowered:
            return "draft", f"Here is my solution. Final Solution: {_say(belief, gold)}"
        if belief == anchor:
            return "agree", f"[AGREE] The current solution is right. Final Solution: {_say(belief, gold)}"
        return "disagree", f"[DISAGREE] The current solution is wrong. Final Solution: {_say(belief, gold)}"


    def _challenge(self, user: str, gold: Gold, profile: AgentProfile, private: str, draw: _Draws) -> tuple[str, str]:
        """AGREE when the challenged answer is the agent's own belief; a new answer when asked."""
        shown_text = user.split("final answer generated by the discussion:", 1)[1]
        shown_text = re.split(r"\. (?:Please critically evaluate|You dont agree)", shown_text)[0]
        shown = _answer_of(shown_text, gold)
        belief = self._belief(private, [shown] if shown else [], shown, profile, draw, gold)
        if "you dont agree" in user.lower():
            return "challenge_answer", f"Final Solution: {_say(belief, gold)}"
        return "challenge", "AGREE" if belief == shown else "DISAGREE"


class _Draws:
    """Deterministic random streams for one request."""

    def __init__(self, seed: int, request_seed: Any, question: str, prompt: str):
        self.base = f"{seed}\x1f{request_seed}\x1f{question}"
        self.prompt_digest = hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()[:16]

    def rng(self, stream: str) -> random.Random:
        extra = self.prompt_digest if stream != "private" else ""
        digest = hashlib.sha256(f"{self.base}\x1f{stream}\x1f{extra}".encode("utf-8", "surrogatepass")).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))


def _wrong_answer(gold: Gold, rng: random.Random) -> str:
    """An answer other than the gold one (see :func:`_other_answer`)."""
    return _other_answer(gold.answer, gold, rng)


def _other_answer(current: str, gold: Gold, rng: random.Random) -> str:
    """An answer other than ``current``: another option chosen uniformly (``choice``), the other
    answer (``yes_no``), a number 1 to 9 away (``number``) or another stock text (``text``)."""
    if gold.kind == "choice":
        return rng.choice([letter for letter in LETTERS[: gold.options or 4] if letter != current])
    if gold.kind == "yes_no":
        return "no" if current == "yes" else "yes"
    if gold.kind == "number":
        try:
            value = float(current)
        except ValueError:
            value = 0.0
        other = value + rng.choice([-1, 1]) * rng.randint(1, 9)
        return str(int(other)) if other == int(other) else str(other)
    texts = [gold.answer, "[UNKNOWN]", "I am not sure.", "None of the above."]
    return rng.choice([t for t in dict.fromkeys(texts) if t and t.strip().casefold() != current.strip().casefold()])


def _same(answer: str | None, gold: Gold) -> bool:
    """Whether ``answer`` (as the simulator reads answers) is ``gold``'s answer."""
    if answer is None or not gold.answer:
        return False
    if gold.kind == "number":
        try:
            return float(answer) == float(gold.answer)
        except ValueError:
            return False
    if gold.kind == "choice":
        return answer == gold.answer
    return answer.strip().casefold() == gold.answer.strip().casefold()


def _say(answer: str, gold: Gold) -> str:
    """An answer as an agent writes it."""
    if gold.kind == "yes_no":
        return answer.capitalize()
    return answer


def _answer_of(text: str, gold: Gold) -> str | None:
    """Read an answer of ``gold``'s kind from a short piece of text."""
    finals = FINAL.findall(text)
    text = (finals[-1] if finals else text).strip()
    if gold.kind == "choice":
        match = re.match(r"\(?([A-Z])\)?(?![A-Za-z])", text)
        return match.group(1) if match else None
    if gold.kind == "yes_no":
        match = re.search(r"\b(yes|no)\b", text, re.IGNORECASE)
        return match.group(1).lower() if match else None
    if gold.kind == "number":
        numbers = NUMBER.findall(text)
        return numbers[0] if numbers else None
    return text or None


def _answers_in(text: str, gold: Gold) -> list[str]:
    found = [_answer_of(f, gold) for f in FINAL.findall(text)]
    return [a for a in found if a is not None]


def _debate_answers(prompt: str, gold: Gold) -> tuple[str | None, list[str]]:
    """The current solution's answer and every answer in the discussion shown in a debate prompt.

    Answers are read from "Final Solution:" markers. A discussion without any marker is read as
    Collective Improvement shows it, bare solutions: "Current Solution: C" and one
    "Participant 2: C" line per message (:func:`_bare_answers`).
    """
    current, _, discussion = prompt.partition("Current Solution:")
    if not discussion:
        return None, []
    solution, _, memory = discussion.partition("Discussion so far:")
    anchor = _answers_in(solution, gold)
    peers = _answers_in(memory, gold)
    if not anchor and not peers and not FINAL.search(discussion):
        anchor = [a for a in [_bare_answer(solution, gold)] if a is not None]
        peers = _bare_answers(memory, gold)
    elif not anchor:  # a structured answer's solution is bare ("Current Solution: C")
        anchor = [a for a in [_bare_answer(solution, gold)] if a is not None]
    if not anchor and not peers:
        return None, []
    return (anchor[-1] if anchor else None), peers or anchor


MEMORY_LINE = re.compile(r"^[^:\n]{1,80}:[ \t]*(\S[^\n]*)$", re.MULTILINE)


def _bare_answer(text: str, gold: Gold) -> str | None:
    """An answer that is the whole of ``text`` (a choice item's letter must be one of its options)."""
    text = text.strip()
    if not text:
        return None
    answer = _answer_of(text, gold)
    if gold.kind == "choice" and answer is not None and answer not in LETTERS[: gold.options or 4]:
        return None
    return answer


def _bare_answers(memory: str, gold: Gold) -> list[str]:
    """The answers of a discussion of bare solutions, one "Name: solution" line each."""
    return [a for a in (_bare_answer(text, gold) for text in MEMORY_LINE.findall(memory)) if a is not None]


def _ballot(lowered: str, solutions: list[tuple[int, str | None]], belief: str, gold: Gold) -> tuple[str, str]:
    """A vote, approval list, point allocation or ranking that favours ``belief``; or a judgment."""
    numbers = [n for n, _ in solutions]
    matching = [n for n, a in solutions if a == belief] or numbers[:1]
    others = [n for n in numbers if n not in matching]
    if "please provide a decision" in lowered:
        return "judge", f"Final Solution: {_say(belief, gold)}"
    if "approving" in lowered:
        return "approval", ", ".join(str(n) for n in matching)
    if "points" in lowered:
        match = POINTS.search(lowered)
        budget = int(match.group(1)) if match else 10
        share, rest = divmod(budget, len(matching))
        allocation = {str(n): share + (1 if i < rest else 0) for i, n in enumerate(matching)}
        return "cumulative", json.dumps(allocation)
    if "ranking" in lowered:
        return "ranked", " ".join(str(n) for n in matching + others)
    return "vote", str(matching[0])


def requested_schema(response_format: Any) -> dict | None:
    """The JSON schema of a request's ``response_format``, in OpenAI's form or llama.cpp's."""
    if not isinstance(response_format, dict):
        return None
    schema = (response_format.get("json_schema") or {}).get("schema") or response_format.get("schema")
    return schema if isinstance(schema, dict) else None


def structured_reply(text: str, schema: dict, gold: Gold) -> dict[str, Any]:
    """The text reply ``text`` written as an object of ``schema``'s properties (a guided decoder's
    reply): ``reasoning`` (and any other free text) is the reply cut to its maximum length, a
    string answer field the reply's answer, a boolean its [AGREE] stance, numbers its ballot."""
    reply: dict[str, Any] = {}
    answers = _answers_in(text, gold)
    numbers = [int(n) for n in re.findall(r"\d+", text)]
    for name, spec in (schema.get("properties") or {}).items():
        kind = spec.get("type")
        if kind == "string":
            said = _say(answers[-1], gold) if answers and name != "reasoning" else text
            reply[name] = said[: spec.get("maxLength", len(said))]
        elif kind == "boolean":
            reply[name] = text.lstrip().upper().startswith(("[AGREE]", "AGREE"))
        elif kind == "integer":
            reply[name] = numbers[0] if numbers else 0
        elif kind == "array":
            reply[name] = numbers
        elif kind == "object":
            reply[name] = json.loads(text) if text.lstrip().startswith("{") else {}
    return reply


def _persona(draw: _Draws, ipip: bool = False) -> str:
    rng = draw.rng("persona")
    field_name = rng.choice(["Mathematician", "Logician", "Teacher", "Engineer", "Analyst", "Historian"])
    if ipip:
        levels = {d: rng.choice(["high", "low"]) for d in ("extraversion", "agreeableness", "conscientiousness",
                                                           "neuroticism", "openness")}
        return json.dumps({"role": field_name, **levels, "experience": rng.choice(["junior", "senior", "expert"]),
                           "gender": rng.choice(["female", "male", "non-binary"])})
    return json.dumps({"role": field_name, "description": f"A careful {field_name.lower()} who checks every step."})


class SimulatedPrompt:
    """One request to a synthetic agent, as a plugin's ``simulator_reply`` hook sees it.

    A plugin recognises its prompt by its wording (``user``, ``lowered``, ``before``), reads the
    answers it shows (:meth:`answer_of`, :meth:`answers`, :meth:`answers_in`) and replies with the
    agent's belief given those answers (:meth:`believe`), or, to a self-check prompt that shows no
    peer, :meth:`recheck`; answers are written back with :meth:`say` (or :meth:`final`). The model
    behind ``believe`` and ``recheck`` (persuasion, conformity, self-doubt) is the module's.
    """

    def __init__(self, messages: list[Any], contents: list[str], gold: Gold, private: str,
                 believe: Callable[[list[str], str | None], str], recheck: Callable[[str | None], str]):
        #: The request's chat messages, as sent (dictionaries with ``role`` and ``content``).
        self.messages = messages
        #: The gold answer of the question found in the prompt (kind, answer, number of options).
        self.gold = gold
        #: The agent's private answer to the question (right with probability ``accuracy``).
        self.private = private
        #: The last message's text, and the same in lower case.
        self.user = contents[-1]
        self.lowered = self.user.lower()
        #: The text of every message before the last, one per line.
        self.before = "\n".join(contents[:-1])
        own_texts = [str(m.get("content") or "") for m in messages
                     if isinstance(m, dict) and m.get("role") == "assistant"]
        #: The answer in the agent's own latest reply (its last assistant message), if any.
        self.own = _answer_of(own_texts[-1], gold) if own_texts else None
        self._believe = believe
        self._recheck = recheck

    def believe(self, peers: list[str], anchor: str | None = None) -> str:
        """The agent's answer when shown the answers ``peers``; ``anchor`` (its current answer)
        wins a tie when it conforms."""
        return self._believe(peers, anchor)

    def recheck(self, current: str | None) -> str:
        """The agent's answer when asked to double-check ``current`` with no peer answer shown."""
        return self._recheck(current)

    def answer_of(self, text: str) -> str | None:
        """The answer in a short piece of text (its last "Final Solution:" marker, else the text)."""
        return _answer_of(text, self.gold)

    def answers(self, texts: Iterable[str]) -> list[str]:
        """The answer of each text that has one (:meth:`answer_of`)."""
        return [a for a in (_answer_of(t, self.gold) for t in texts) if a is not None]

    def answers_in(self, text: str) -> list[str]:
        """The answers after every "Final Solution:" marker in ``text``."""
        return _answers_in(text, self.gold)

    @staticmethod
    def final_markers(text: str) -> list[str]:
        """The raw text after every "Final Solution:" marker in ``text`` (up to the line's end)."""
        return FINAL.findall(text)

    def say(self, answer: str) -> str:
        """An answer as an agent writes it ("Yes" for yes, letters and numbers as they are)."""
        return _say(answer, self.gold)

    def final(self, kind: str, answer: str, lead: str = "Here is my updated solution.") -> tuple[str, str]:
        """The reply ``(kind, "LEAD Final Solution: ANSWER")``."""
        return kind, f"{lead} Final Solution: {self.say(answer)}"
