"""Structured answers (``--structured-answers``): a reply kind's JSON schema, the ``response_format``
each endpoint accepts, and the bounded reading of a structured reply.

A reply kind (a solution, an improvement with its agreement, a ballot) is a :class:`ReplySchema`,
declared once where the kind is defined (:mod:`madeval.builtins.responders`,
:mod:`madeval.builtins.voting`). Every schema starts with a ``reasoning`` string whose length is
bounded (:data:`REASONING_MAX_CHARS`), so a constrained model reaches the answer fields within
``max_tokens``; the published text prompts are sent unchanged, the schema is added to the request.

Endpoints differ in the form they accept: vLLM and OpenAI take OpenAI's
``{"type": "json_schema", "json_schema": {...}}``, the embedded llama-cpp-python server (0.3.x)
answers that with HTTP 500 (a request validation error) and takes its own
``{"type": "json_object", "schema": {...}}``. :func:`refuses_response_format` recognises a
rejection; the client then falls back to the text prompts for that endpoint, once, with one
warning (:mod:`madeval.llm.client`).

Replies are untrusted: :meth:`ReplySchema.read` keeps only the fields that match the schema (a
reply that is not a JSON object, is too long, or has fields of the wrong type or length gives
fewer or no fields), and the callers fall back to the text extractors for what is missing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

#: The longest free-text reasoning asked for. Arithmetic takes as little as 2 characters per token
#: (SmolLM2 wrote 240 characters in 65 to 125 tokens), so 160 characters and the JSON around them
#: stay within a ``max_tokens`` of 128 and the answer field is reached.
REASONING_MAX_CHARS = 160
#: The longest answer field (a solution, not a discussion).
ANSWER_MAX_CHARS = 200
#: The longest reply read as JSON; a longer one is read by the text extractors only.
MAX_REPLY_CHARS = 16_000
#: The most items of a list field (a ranking, an approval list) and keys of a points field.
MAX_ITEMS = 64

#: The ``response_format`` forms: OpenAI's (vLLM, OpenAI) and llama-cpp-python's own.
JSON_SCHEMA = "json_schema"
JSON_OBJECT = "json_object"

#: A short free text (an answer).
ANSWER = {"type": "string", "maxLength": ANSWER_MAX_CHARS}
#: A stance: true for [AGREE], false for [DISAGREE].
STANCE = {"type": "boolean"}
#: One solution number.
NUMBER = {"type": "integer", "minimum": 0}
#: Solution numbers, in order.
NUMBERS = {"type": "array", "items": NUMBER, "maxItems": MAX_ITEMS}
#: Points per solution number.
POINTS = {"type": "object", "additionalProperties": {"type": "number", "minimum": 0}, "maxProperties": MAX_ITEMS}
_REASONING = {"type": "string", "maxLength": REASONING_MAX_CHARS}


@dataclass(frozen=True)
class ReplySchema:
    """One reply kind: its name and its fields after the bounded ``reasoning`` (name -> JSON schema)."""

    name: str
    fields: tuple[tuple[str, Any], ...]

    @classmethod
    def of(cls, name: str, **fields: Any) -> ReplySchema:
        """The kind ``name`` with ``fields`` in the order given (answers after the reasoning)."""
        return cls(name, tuple(fields.items()))

    def answering(self, options: tuple[str, ...]) -> ReplySchema:
        """This kind with its ``solution`` field limited to ``options`` (a choice item's letters;
        none: unchanged), so guided decoding can only write a valid answer."""
        if not options or "solution" not in dict(self.fields):
            return self
        one_of = {"type": "string", "enum": list(options)}
        return ReplySchema(self.name, tuple((k, one_of if k == "solution" else v) for k, v in self.fields))

    def schema(self) -> dict[str, Any]:
        """The JSON schema of a reply: an object with the reasoning and every field, all required."""
        properties = {"reasoning": _REASONING, **dict(self.fields)}
        return {"type": "object", "properties": properties, "required": list(properties),
                "additionalProperties": False}

    def response_format(self, form: str) -> dict[str, Any]:
        """The ``response_format`` request field in ``form`` (:data:`JSON_SCHEMA` or :data:`JSON_OBJECT`)."""
        if form == JSON_OBJECT:
            return {"type": JSON_OBJECT, "schema": self.schema()}
        return {"type": JSON_SCHEMA, "json_schema": {"name": self.name, "schema": self.schema(), "strict": True}}

    def read(self, text: str | None) -> dict[str, Any]:
        """The fields of ``text`` that match the schema (reasoning included; extra fields ignored).

        Empty when the reply is not one JSON object or is longer than :data:`MAX_REPLY_CHARS`.
        """
        if not text or len(text) > MAX_REPLY_CHARS:
            return {}
        try:
            # strict=False: a raw line break inside a string (llama.cpp's grammar lets one through)
            data = json.loads(text, strict=False)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
            return {}
        if not isinstance(data, dict):
            return {}
        wanted = {"reasoning": _REASONING, **dict(self.fields)}
        return {key: data[key] for key, spec in wanted.items() if key in data and _matches(data[key], spec)}


def _matches(value: Any, spec: dict[str, Any]) -> bool:
    """Whether ``value`` matches ``spec``, one of the few schema shapes above.

    Hand-written: the schemas use four types and three bounds, and jsonschema is not a dependency.
    """
    kind = spec["type"]
    if kind == "string":
        if "enum" in spec:
            return value in spec["enum"]
        return isinstance(value, str) and len(value) <= spec.get("maxLength", len(value))
    if kind == "boolean":
        return isinstance(value, bool)
    if kind in ("integer", "number"):
        numeric = isinstance(value, int) or (kind == "number" and isinstance(value, float))
        return numeric and not isinstance(value, bool) and value >= spec.get("minimum", value)
    if kind == "array":
        return (isinstance(value, list) and len(value) <= spec["maxItems"]
                and all(_matches(item, spec["items"]) for item in value))
    if kind == "object":
        return (isinstance(value, dict) and len(value) <= spec["maxProperties"]
                and all(_matches(item, spec["additionalProperties"]) for item in value.values()))
    return False


def refuses_response_format(status: int | None, detail: str) -> bool:
    """Whether an endpoint's error answer refuses the ``response_format`` it was sent.

    A 400 or 422 that names the feature (``response_format``, a schema, guided decoding, a
    grammar) refuses it; any other 400 (a prompt over the context length, say) is about this one
    request, and must not turn structured answers off for the whole endpoint. llama-cpp-python
    answers a form it cannot read with a 500 whose body names a validation error. Neither changes
    on a retry.
    """
    text = detail.lower()
    if status in (400, 422):
        return any(word in text for word in REFUSAL_WORDS)
    return status == 500 and "validation" in text


#: Words of a 400/422 error that refuses structured output rather than the request's content.
REFUSAL_WORDS = ("response_format", "json_schema", "schema", "guided", "grammar")


def as_text(value: Any) -> str:
    """A structured field written as the text the text readers take: numbers as they are, lists
    comma separated, mappings as JSON."""
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    if isinstance(value, dict):
        return json.dumps(value)
    return str(value)


#: A solution: the draft, refine and final-solution stages, the single-model baselines.
SOLUTION = ReplySchema.of("solution", solution=ANSWER)
#: An improvement: the stance on the current draft, then the agent's solution.
IMPROVEMENT = ReplySchema.of("improvement", agreement=STANCE, solution=ANSWER)
#: A stance alone: feedback, and Split Free Text's agreement call.
AGREEMENT = ReplySchema.of("agreement", agreement=STANCE)


def reply_in(kind: ReplySchema | None, state: Any) -> dict[str, Any]:
    """The ``reply`` keyword of :meth:`madeval.core.components.DebateLLM.chat` in a debate ``state``
    (a :class:`madeval.core.components.DebateState`): ``kind`` for the item (:meth:`ReplySchema.answering`)
    when structured answers are on, else nothing, so a plain request is made as before the option."""
    if not state.structured_answers or kind is None:
        return {}
    return {"reply": kind.answering(state.task.options)}


def structured_fields(text: str, kind: ReplySchema | None, state: Any) -> dict[str, Any]:
    """The readable fields of a reply asked in ``kind`` in ``state`` (none when structured answers are off)."""
    asked = reply_in(kind, state)
    return asked["reply"].read(text) if asked else {}


def solution_of(text: str, state: Any) -> str:
    """A :data:`SOLUTION` reply's solution field, else the whole reply (for the text extractors)."""
    return structured_fields(text, SOLUTION, state).get("solution") or text
