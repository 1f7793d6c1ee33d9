"""Structured answers (--structured-answers): reply schemas, reading hostile structured replies,
the response_format each endpoint is sent, refusals, and whole runs over loopback."""

from __future__ import annotations

import asyncio
import json

import pytest

from helpers import debate, run_quietly, settings_for
from madeval.llm.client import Endpoint, LLMClient, RetryPolicy
from madeval.llm.structured import (
    AGREEMENT,
    ANSWER_MAX_CHARS,
    IMPROVEMENT,
    JSON_OBJECT,
    JSON_SCHEMA,
    MAX_REPLY_CHARS,
    REASONING_MAX_CHARS,
    SOLUTION,
    refuses_response_format,
)
from madeval.records.folder import read_records
from madeval.settings.config import DebateConfig
from madeval.simulator import Faults, simulate
from madeval.simulator.http import SimulatorServer, run_in_thread
from madeval.testing import letter


def structured(**fields) -> str:
    return json.dumps({"reasoning": "Adding up.", **fields})


def answer(text: str) -> str | None:
    """The letter after "Final Solution:", or a lone capital letter (as arith_mc's extractors read)."""
    bare = (text or "").strip()
    return letter(text) or (bare if len(bare) == 1 and bare.isupper() else None)


# --- the schemas and their forms --------------------------------------------------------------

def test_a_schema_puts_the_bounded_reasoning_first_and_requires_every_field():
    schema = IMPROVEMENT.schema()
    assert list(schema["properties"]) == ["reasoning", "agreement", "solution"]
    assert schema["required"] == ["reasoning", "agreement", "solution"]
    assert schema["properties"]["reasoning"] == {"type": "string", "maxLength": REASONING_MAX_CHARS}
    assert schema["properties"]["agreement"] == {"type": "boolean"}
    assert schema["additionalProperties"] is False


def test_each_endpoint_form_of_response_format():
    assert SOLUTION.response_format(JSON_OBJECT) == {"type": "json_object", "schema": SOLUTION.schema()}
    assert SOLUTION.response_format(JSON_SCHEMA) == {
        "type": "json_schema", "json_schema": {"name": "solution", "schema": SOLUTION.schema(), "strict": True}}


def test_the_embedded_endpoint_is_sent_llama_cpps_own_form(monkeypatch):
    """The run's endpoint table gives the embedded server llama.cpp's own form (the server itself
    is stood in for: only the table is under test)."""
    from madeval.llm import embedded
    from madeval.run.engine import endpoints_for
    from madeval.settings.config import RunSettings

    class Started:
        base_url = "http://127.0.0.1:9/v1"

        def __enter__(self):
            return self

        def __exit__(self, *exc_info):
            return False

    monkeypatch.setattr(embedded, "EmbeddedServer", Started)
    with endpoints_for(RunSettings(tasks=["arith_mc"])) as (table, model):
        assert [endpoint.response_format for endpoint in table.values()] == [JSON_OBJECT]
    with endpoints_for(RunSettings(tasks=["arith_mc"], base_url="http://127.0.0.1:9/v1")) as (table, model):
        assert [endpoint.response_format for endpoint in table.values()] == [JSON_SCHEMA]


def test_a_choice_items_solution_field_is_one_of_its_letters(generated_tasks):
    task = generated_tasks["arith_mc"]
    item = task.items[0]
    options = task.prompt(item).options
    assert options == ("A", "B", "C", "D") and len(item.choices) == 4
    kind = IMPROVEMENT.answering(options)
    assert kind.schema()["properties"]["solution"] == {"type": "string", "enum": ["A", "B", "C", "D"]}
    assert kind.read(structured(agreement=False, solution="E")) == {"reasoning": "Adding up.", "agreement": False}
    assert kind.read(structured(agreement=False, solution="D"))["solution"] == "D"
    assert AGREEMENT.answering(options) is AGREEMENT  # no solution field: unchanged
    assert generated_tasks["arith_yesno"].prompt(generated_tasks["arith_yesno"].items[0]).options == ()


# --- reading structured replies ---------------------------------------------------------------

def test_structured_replies_of_each_kind_are_read():
    assert SOLUTION.read(structured(solution="B")) == {"reasoning": "Adding up.", "solution": "B"}
    assert IMPROVEMENT.read(structured(agreement=False, solution="C"))["agreement"] is False
    assert AGREEMENT.read(structured(agreement=True))["agreement"] is True


@pytest.mark.parametrize("reply, expected", [
    ("not json", {}),
    ("[1, 2]", {}),  # JSON, but not an object
    ('{"solution": "B"', {}),  # cut by max_tokens
    (structured(solution=7), {"reasoning": "Adding up."}),  # wrong type: the field is dropped
    (structured(solution="B" * (ANSWER_MAX_CHARS + 1)), {"reasoning": "Adding up."}),  # over its bound
    (json.dumps({"solution": "B", "extra": [1] * 100}), {"solution": "B"}),  # extra fields ignored
    (json.dumps({"reasoning": "no answer"}), {"reasoning": "no answer"}),  # answer missing
    (json.dumps({"solution": "B", "pad": "x" * MAX_REPLY_CHARS}), {}),  # too long to read as JSON
    ("[" * 100_000 + "]" * 100_000, {}),  # nested past the parser's depth
])
def test_hostile_structured_replies_give_only_the_fields_that_match(reply, expected):
    assert SOLUTION.read(reply) == expected


def test_a_raw_line_break_inside_a_string_is_read():
    # llama.cpp's grammar lets control characters into strings; strict JSON would refuse the reply
    assert SOLUTION.read('{"reasoning": "2 + 2\n= 4", "solution": "B"}')["solution"] == "B"


def test_booleans_are_not_numbers_and_numbers_not_booleans():
    from madeval.builtins.voting import SimpleVoting

    kind = SimpleVoting.ballot_kind
    assert kind.read(structured(vote=True)) == {"reasoning": "Adding up."}
    assert kind.read(structured(vote=2)) == {"reasoning": "Adding up.", "vote": 2}
    assert kind.read(structured(vote=-1)) == {"reasoning": "Adding up."}
    assert AGREEMENT.read(structured(agreement=1)) == {"reasoning": "Adding up."}


# --- debates with scripted structured replies -------------------------------------------------

def test_a_debate_reads_solutions_and_agreement_from_the_structured_fields():
    replies = {
        (1, 0): structured(solution="B"),
        (1, 1): structured(agreement=True, solution="B"),
        (1, 2): structured(agreement=False, solution="C"),  # disagrees: its own solution
    }
    transcript, llm = debate(replies, agents=3, max_turns=1, decider="unanimity_consensus",
                             structured_answers=True, extract=answer)
    first, second, third = transcript.messages
    assert (first.solution, first.answer, first.agreement) == ("B", "B", None)
    assert (second.agreement, second.answer, second.backs) == (True, "B", 0)
    assert (third.agreement, third.solution, third.answer) == (False, "C", "C")
    assert first.text == replies[(1, 0)]  # the reply is recorded whole
    assert [kind.name for kind in llm.schemas] == ["solution", "improvement", "improvement"]


def test_a_reply_that_is_not_structured_is_read_as_text():
    replies = {
        (1, 0): "I think so. Final Solution: D",  # the endpoint ignored the schema
        (1, 1): json.dumps({"reasoning": "[AGREE] Final Solution: D", "agreement": "yes"}),  # wrong type
    }
    transcript, _ = debate(replies, agents=2, max_turns=1, structured_answers=True, extract=answer)
    first, second = transcript.messages
    assert first.answer == "D"
    assert second.agreement is True and second.backs == 0  # the text's [AGREE] marker


def test_an_unreadable_structured_answer_is_a_parse_failure():
    transcript, _ = debate({(1, 0): structured(solution=4), (1, 1): structured(agreement=True, solution="x")},
                           agents=2, max_turns=1, structured_answers=True, extract=answer)
    assert transcript.messages[0].answer is None  # the JSON text holds no "Final Solution:" letter


def test_without_the_option_no_schema_is_asked_and_json_is_plain_text():
    reply = structured(solution="B")
    transcript, llm = debate({(1, 0): reply, (1, 1): reply}, agents=2, max_turns=1, extract=answer)
    assert llm.schemas == [None, None]
    assert transcript.messages[0].solution == reply  # read as text, as before the option


@pytest.mark.parametrize("decider, ballot, field", [
    ("simple_voting", 2, "vote"),
    ("approval_voting", [2], "approved"),
    ("ranked_voting", [2, 1], "ranking"),
    ("cumulative_voting", {"2": 10}, "points"),
])
def test_ballots_are_read_from_the_structured_field(decider, ballot, field):
    def script(turn, agent, purpose, messages):
        if purpose == "vote":
            return structured(**{field: ballot})
        return f"Final Solution: {'AB'[agent]}"

    transcript, llm = debate(script, agents=2, max_turns=1, decider=decider,
                             decider_args={"vote_after_turns": 1}, paradigm="collective_refinement",
                             structured_answers=True, extract=answer)
    assert transcript.decision.answer.endswith("B") and transcript.decision.success
    votes = [kind.name for kind, (_, _, purpose, _) in zip(llm.schemas, llm.requests) if purpose == "vote"]
    assert len(votes) == 2 and len(set(votes)) == 1


def test_a_ballot_with_a_wrong_type_falls_back_to_the_text():
    def script(turn, agent, purpose, messages):
        if purpose == "vote":
            return json.dumps({"reasoning": "Solution 2 is right", "vote": "two"})
        return f"Final Solution: {'AB'[agent]}"

    transcript, _ = debate(script, agents=2, max_turns=1, decider="simple_voting",
                           decider_args={"vote_after_turns": 1, "max_reasks": 0},
                           paradigm="collective_refinement", structured_answers=True)
    event = next(e for e in transcript.events if e["kind"] == "vote")
    # "Solution 2" in the JSON text is read as the ballot, as it would be in a text reply
    assert [b["ballot"] for b in event["ballots"]] == [2, 2]


# --- the configuration -------------------------------------------------------------------------

def test_the_option_is_part_of_the_configuration_id_and_absent_when_off():
    plain, on = DebateConfig(), DebateConfig(structured_answers=True)
    assert "structured_answers" not in plain.identity()
    assert on.identity()["structured_answers"] is True
    assert plain.config_id() != on.config_id()


# --- endpoints: what is sent, refusals ----------------------------------------------------------

def recording_server():
    """A server that keeps every chat request and answers with a structured solution."""
    seen = []

    def behaviour(request):
        seen.append(request)
        return structured(solution="B"), 1, 1

    return SimulatorServer(behaviour), seen


def complete(base_url: str, form: str = JSON_SCHEMA, attempts: int = 3, transport: str = "aiohttp"):
    async def go():
        client = LLMClient({"e": Endpoint("e", base_url, transport=transport, response_format=form)},
                           retry=RetryPolicy(max_attempts=attempts, base_delay_s=0))
        try:
            first = await client.complete("e", "m", [{"role": "user", "content": "q"}], {}, ("s",), reply=SOLUTION)
            second = await client.complete("e", "m", [{"role": "user", "content": "q"}], {}, ("s",), reply=SOLUTION)
            return first, second, client
        finally:
            await client.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("form", [JSON_SCHEMA, JSON_OBJECT])
def test_the_endpoints_form_is_sent(form):
    server, seen = recording_server()
    with run_in_thread(server) as running:
        first, _, _ = complete(running.base_url, form)
    assert seen[0]["response_format"] == SOLUTION.response_format(form)
    assert first.text == structured(solution="B")


@pytest.mark.parametrize("transport", ["aiohttp", "openai"])
@pytest.mark.parametrize("status", [400, 500])
def test_a_refusal_is_not_retried_and_later_calls_go_without_it(status, transport, capsys, generated_tasks):
    # the request "q" quotes no known question: answered at random, as this test is about the refusal
    with simulate(tasks=generated_tasks.values(), faults=Faults(refuse_response_format=status),
                  unknown="answer") as sim:
        first, second, client = complete(sim.base_url, attempts=8, transport=transport)
        refused = sim.server.stats.faults["response_format"]
    assert refused == 1  # one refusal: not retried, and not asked again
    assert first.attempts == 1 and second.attempts == 1  # the text requests went through at once
    assert client.refuse_response_format == {"e"}
    warnings = [line for line in capsys.readouterr().err.splitlines() if "refused structured answers" in line]
    assert len(warnings) == 1 and f"HTTP {status}" in warnings[0]


def test_a_server_error_without_a_validation_message_is_still_retried():
    assert refuses_response_format(500, "1 validation error for CreateChatCompletionRequest")
    assert refuses_response_format(400, "HTTP 400: response_format is not supported.")
    assert refuses_response_format(422, "Unprocessable: json_schema is not a valid type")
    # A 400 about the request's content (vLLM: the prompt is longer than the context) refuses this
    # one call, not structured answers: the endpoint keeps them.
    assert not refuses_response_format(400, "This model's maximum context length is 2048 tokens")
    assert not refuses_response_format(400, "")
    assert not refuses_response_format(500, "out of memory")
    assert not refuses_response_format(503, "validation")
    assert not refuses_response_format(429, "")


# --- whole runs over loopback -----------------------------------------------------------------

def test_a_structured_run_on_the_simulator_keeps_whole_replies_and_parses_them(sim, tmp_path):
    settings = settings_for(sim.base_url, tmp_path, limit=6, max_turns=3, cache="off", structured_answers=True)
    result, _ = run_quietly(settings)
    assert result.outcome.failed == 0
    records = list(read_records(result.folder))
    assert len(records) == 6 and not any(r["parse_failure"] for r in records)
    for record in records:
        for message in record["transcript"]["messages"]:
            data = json.loads(message["text"])  # the whole structured reply is the message text
            if message["solution"] is not None and message["backs"] == message["id"]:
                assert message["solution"] == data["solution"]


def test_a_run_against_a_refusing_endpoint_warns_once_and_completes_with_text(generated_tasks, tmp_path, capsys):
    with simulate(tasks=generated_tasks.values(), faults=Faults(refuse_response_format=500)) as refusing:
        settings = settings_for(refusing.base_url, tmp_path, limit=4, max_turns=2, cache="off",
                                structured_answers=True, concurrency=1)
        result, _ = run_quietly(settings)
        refused = refusing.server.stats.faults["response_format"]
    assert result.outcome.failed == 0 and refused == 1
    records = list(read_records(result.folder))
    assert len(records) == 4 and not any(r["parse_failure"] for r in records)
    assert all("Final Solution:" in m["text"] for r in records for m in r["transcript"]["messages"])
    err = capsys.readouterr().err
    assert err.count("refused structured answers") == 1
