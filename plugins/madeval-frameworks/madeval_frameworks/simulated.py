"""The simulator's replies to the frameworks' prompts (madeval's ``simulator_reply`` hook).

Each prompt is recognised by a phrase of its wording. Agents answer with their belief about the
answers the prompt shows (``prompt.believe``: persuaded by a shown gold answer, conforming to the
most common answer shown, or keeping the private answer); see :mod:`madeval.simulator.agents`.
"""

from __future__ import annotations

import json
import re

EOT_FRIEND = re.compile(r"^(\w+)'s Solution: (.*)$", re.MULTILINE)
EOT_OWN = re.compile(r"^Your Solution: (.*)$", re.MULTILINE)
RECONCILE_GROUP = re.compile(r"There are (\d+) agents think the answer is (.*?)\. ")
RECRUIT = re.compile(r"You can recruit (\d+) expert")


def reply(prompt) -> tuple[str, str] | None:
    """``(kind, text)`` for a prompt of Exchange-of-Thought, Multi-Persona, ChatEval, AgentVerse or
    ReConcile (``prompt``: a :class:`madeval.simulator.SimulatedPrompt`); ``None`` for any other."""
    user, lowered, before, own = prompt.user, prompt.lowered, prompt.before, prompt.own
    if "here is a solution process from your friend" in lowered:  # Exchange-of-Thought
        friends = [text for name, text in EOT_FRIEND.findall(user) if name != "Your"]
        mine = prompt.answers(EOT_OWN.findall(user))
        return prompt.final("eot_update", prompt.believe(prompt.answers(friends), mine[-1] if mine else own))
    if "determine if there is a clear preference for an answer candidate" in lowered:  # Multi-Persona
        sides = _sides(user, prompt)
        belief = prompt.believe([a for a in sides if a is not None], None)
        side = "Affirmative" if belief == sides[0] else "Negative" if belief == sides[1] else ""
        verdict = {"Whether there is a preference": "Yes" if side else "No", "Supported Side": side,
                   "Reason": "", "debate_answer": prompt.say(belief) if side else ""}
        return "moderator", json.dumps(verdict)
    if "what answer candidates do we have" in lowered:
        listed = [a for a in _sides(user, prompt) if a is not None]
        return "judge_candidates", "Candidates: " + "; ".join(prompt.say(a) for a in dict.fromkeys(listed))
    if "give the final answer that you think is correct. now please output" in lowered:
        candidates = [a for a in _sides(before, prompt) if a is not None]
        return "judge_final", json.dumps({"Reason": "", "debate_answer": prompt.say(prompt.believe(candidates, None))})
    if "do you agree with my perspective?" in lowered:
        shown = user[: lowered.index("do you agree with my perspective?")]
        peers = prompt.answers(prompt.final_markers(shown)) or prompt.answers([shown])
        return prompt.final("multi_persona", prompt.believe(peers, own))
    if "summarize the lines of the new lines" in lowered:  # ChatEval's summarizer: keep the answers
        new = user.split("New lines:", 1)[-1]
        return "summary", "The group proposed: " + " ".join(f"Final Solution: {s.strip()}."
                                                            for s in prompt.final_markers(new))
    if "part of a group discussing this question" in before.lower():  # ChatEval debaters
        # Answers are read from the role prompt on (its chat history), not from the question before it.
        history = before[before.lower().index("part of a group discussing this question"):]
        belief = prompt.believe(prompt.answers_in(history), own)
        return "chateval", f"Answer: {prompt.say(belief)}\nFinal Solution: {prompt.say(belief)}"
    if "you are the leader of a group of experts" in before.lower() + lowered:  # AgentVerse
        count = int((RECRUIT.findall(user) or ["2"])[-1])
        return "role_assigner", "\n".join(f"{i}. an expert in mathematics number {i}" for i in range(1, count + 1))
    if 'end your response with a special token "[agree]"' in lowered:
        plans = [str(m.get("content") or "") for m in prompt.messages
                 if str(m.get("content") or "").startswith("[Solver]:")]
        plan = prompt.answer_of(plans[-1]) if plans else None
        belief = prompt.believe([plan] if plan else [], plan)
        if plan is not None and belief == plan:
            return "critic_agree", f"The solution is right. Final Solution: {prompt.say(belief)} [Agree]"
        return "critic_disagree", f"The solution is wrong; I get Final Solution: {prompt.say(belief)}."
    if "you should provide the correct solution to the math problem" in lowered:
        reviews = [str(m.get("content") or "") for m in prompt.messages[:-1]
                   if str(m.get("content") or "").startswith("[Critic")]
        return prompt.final("solver", prompt.believe(prompt.answers(reviews), own))
    if "correctness: (0 or 1" in lowered:
        shown = prompt.answer_of(before.split("\nSolution:", 1)[-1])
        belief = prompt.believe([shown] if shown else [], shown)
        correct = int(shown is not None and belief == shown)
        return "evaluator", f"Correctness: {correct}\nResponse: The final answer should be {prompt.say(belief)}."
    if "evaluate your confidence level" in lowered:  # ReConcile
        peers = [a for n, text in RECONCILE_GROUP.findall(user) for a in [prompt.answer_of(text)] * int(n) if a]
        belief = prompt.believe(peers, None)
        answer = {"reasoning": "I checked every step.", "answer": prompt.say(belief),
                  "confidence_level": 0.9 if belief == prompt.private else 0.7}
        return "reconcile", json.dumps(answer)
    return None


def _sides(text: str, prompt) -> tuple[str | None, str | None]:
    """The affirmative's and the negative's answers quoted in a Multi-Persona moderator or judge prompt."""
    _, _, rest = text.rpartition("Affirmative side arguing:")
    affirmative, _, negative = rest.partition("Negative side arguing:")
    negative = negative.split("You, as the moderator")[0].split("Now, what answer candidates")[0]
    return prompt.answer_of(affirmative), prompt.answer_of(negative)
