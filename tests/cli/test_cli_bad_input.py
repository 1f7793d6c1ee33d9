"""Bad input: one clear line on standard error, exit status 2, and no output folder."""

from __future__ import annotations

import subprocess
import sys

import pytest

from helpers import madeval_in_process


def madeval(*args: str, cwd) -> subprocess.CompletedProcess:
    return madeval_in_process(*args, cwd=cwd)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--tasks", "arith_mc", "--decider", "unanimty"], "did you mean unanimity"),
        (["--tasks", "arith_mx"], "unknown task 'arith_mx'; did you mean arith_mc"),
        (["--tasks", "arith_mc", "--paradigm", "memroy"], "unknown paradigm 'memroy'; did you mean memory"),
        (["--tasks", "arith_mc", "--agents", "0"], "agents must be at least 1"),
        (["--tasks", "arith_mc", "--max-turns", "zero"], "'zero' is not a valid integer"),
        (["--tasks", "arith_mc", "--decider-args", "after_turns"], "expected key=value"),
        (["--tasks", "arith_mc", "--decider", "counting", "--decider-args", "rounds=2"], "has no option rounds"),
        (["--tasks", "arith_mc", "--paradigm", "collective_refinement"], "counts agreement"),
        (["--tasks", "arith_mc", "--temperature", "3"], "temperature must be between 0 and 2"),
        (["--tasks", "arith_mc", "--base-url", "http://127.0.0.1:9/v1"], "cannot reach endpoint"),
        (["--config", "missing.yaml", "--tasks", "arith_mc"], "cannot read config missing.yaml"),
        (["--tasks", "arith_mc", "--bogus-flag"], "No such option"),
    ],
)
def test_bad_input_is_one_line_and_status_2(tmp_path, args, expected):
    result = madeval(*args, "--output-path", "out", "--cache", "off", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("madeval: error: ")
    assert expected in lines[0]
    assert not (tmp_path / "out").exists()
    assert result.stdout == ""


def test_malformed_config_yaml_names_the_line(tmp_path):
    (tmp_path / "bad.yaml").write_text("tasks: arith_mc\ndecider: [unclosed\n")
    result = madeval("--config", "bad.yaml", "--output-path", "out", cwd=tmp_path)
    assert result.returncode == 2
    assert "malformed YAML in bad.yaml" in result.stderr and "line" in result.stderr
    assert not (tmp_path / "out").exists()


def test_malformed_task_yaml_in_include_path(tmp_path):
    folder = tmp_path / "mytasks"
    folder.mkdir()
    (folder / "broken.yaml").write_text("task: broken\ninstruction: 'unterminated\n")
    result = madeval("--tasks", "broken", "--include-path", str(folder), "--output-path", "out", cwd=tmp_path)
    assert result.returncode == 2
    assert "malformed YAML" in result.stderr and "broken.yaml" in result.stderr
    assert not (tmp_path / "out").exists()


# Every run below names an unused loopback port as the endpoint, so a check that came after the
# endpoint check would fail as "cannot reach endpoint" (and none of them can start the embedded
# model); output must stay absent.
UNREACHABLE = ["--base-url", "http://127.0.0.1:9/v1"]


def one_error_line(result, tmp_path) -> str:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("madeval: error: "), result.stderr
    assert not (tmp_path / "out").exists() and result.stdout == ""
    return lines[0]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("agents: three", "config bad.yaml: agents must be an integer, got 'three'"),
        ("concurrency: lots", "config bad.yaml: concurrency must be an integer, got 'lots'"),
        ("limit: 0", "config bad.yaml: limit must be at least 1, got 0"),
        ("limit: 2.5", "config bad.yaml: limit must be an integer, got 2.5"),
        ("decider_args: 5", "config bad.yaml: decider_args must be a mapping of options (key: value), got 5"),
        ("max-turns: [1, 2]", "config bad.yaml: max_turns must be an integer, got [1, 2]"),
        ("temperature: hot", "config bad.yaml: temperature must be a number, got 'hot'"),
        ("temperature: 2.5", "config bad.yaml: temperature must be between 0 and 2, got 2.5"),
        ("all_agents_draft_first: maybe", "config bad.yaml: all_agents_draft_first must be true or false, got 'maybe'"),
        ("endpoint_concurrency: 0", "config bad.yaml: endpoint_concurrency must be at least 1, got 0"),
        ("extract: regex", "config bad.yaml: extract must be one of task, llm, got 'regex'"),
        ("transport: pigeon", "config bad.yaml: transport must be one of aiohttp, openai, batch, got 'pigeon'"),
        ("sample: some", "config bad.yaml: sample must be 'all', 'fpc' or a number of items, got 'some'"),
        ("tasks: {arith_mc: 1}", "config bad.yaml: tasks must be a name, names separated by commas or a list"),
        ("leaderboard: [bh]", "config bad.yaml: leaderboard must be a mapping of leaderboard options"),
        ("temprature: 1", "config bad.yaml: unknown option temprature; did you mean temperature?"),
        ("grid: {agents: [2, three]}", "config bad.yaml: grid agents must be an integer, got 'three'"),
        ("runs: [{max_turns: 0}]", "config bad.yaml: runs[0] max_turns must be at least 1, got 0"),
        ("common: {decider_args: [1]}", "config bad.yaml: common decider_args must be a mapping of options"),
    ],
)
def test_bad_config_value_names_key_and_file(tmp_path, body, expected):
    (tmp_path / "bad.yaml").write_text(f"tasks: arith_mc\n{body}\n")
    result = madeval("--config", "bad.yaml", *UNREACHABLE, "--output-path", "out", "--cache", "off", cwd=tmp_path)
    assert expected in one_error_line(result, tmp_path)


def test_bad_api_key_type_is_refused_without_echoing_it(tmp_path):
    (tmp_path / "bad.yaml").write_text("tasks: arith_mc\napi_key: [sk-do-not-print-me]\n")
    result = madeval("--config", "bad.yaml", *UNREACHABLE, "--output-path", "out", cwd=tmp_path)
    line = one_error_line(result, tmp_path)
    assert "config bad.yaml: api_key must be text" in line and "sk-do-not-print" not in result.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--endpoint-concurrency", "0"], "endpoint_concurrency must be at least 1, got 0"),
        (["--endpoint-concurrency", "many"], "endpoint_concurrency must be an integer or NAME=N,..., got 'many'"),
        (["--endpoint-concurrency", "default=0"], "endpoint_concurrency of endpoint default must be at least 1"),
        (["--endpoint-concurrency", "other=2"],
         "endpoint_concurrency names unknown endpoint 'other' (endpoints: default)"),
        (["--concurrency", "0"], "concurrency must be at least 1, got 0"),
        # Checked offline, before the (unreachable) endpoint is contacted:
        (["--decider", "counting", "--decider-args", "rounds=2"], "has no option rounds"),
        (["--decider", "counting", "--decider-args", "after_turns=x"],
         "decider 'counting' option after_turns must be an integer, got 'x'"),
        (["--paradigm", "collective_refinement"], "counts agreement"),
        (["--agent-models", "a,b,c@elsewhere"], "unknown endpoint 'elsewhere'"),
        (["--sample", "0"], "sample must be at least 1 item"),
    ],
)
def test_offline_checks_come_before_the_endpoint(tmp_path, args, expected):
    result = madeval("--tasks", "arith_mc", *args, *UNREACHABLE, "--output-path", "out", cwd=tmp_path)
    assert expected in one_error_line(result, tmp_path)


def test_component_option_types_from_a_config_file(tmp_path):
    (tmp_path / "bad.yaml").write_text("tasks: arith_mc\ndecider: counting\ndecider_args: {after_turns: 2.5}\n")
    result = madeval("--config", "bad.yaml", *UNREACHABLE, "--output-path", "out", cwd=tmp_path)
    assert "decider 'counting' option after_turns must be an integer, got 2.5" in one_error_line(result, tmp_path)


def test_config_values_are_read_like_the_command_line(tmp_path):
    from madeval.settings.config import build_settings, read_config_file

    (tmp_path / "ok.yaml").write_text(
        'tasks: "arith_mc, arith_yesno"\nlimit: "2"\nagents: 4\nsample: 100\npersona: none,none,none,none\n'
        "decider_args: after_turns=2\nendpoint_concurrency: {default: 3}\ntemperature: 1\n"
    )
    settings = build_settings(read_config_file(tmp_path / "ok.yaml"))
    assert settings.tasks == ["arith_mc", "arith_yesno"] and settings.limit == 2 and settings.sample == "100"
    assert settings.endpoint_concurrency == {"default": 3} and settings.temperature == 1.0
    config = settings.configurations[0]
    assert config.agents == 4 and config.persona == ["none"] * 4 and config.decider_args == {"after_turns": "2"}


def test_offline_errors_never_start_the_embedded_model(monkeypatch, tmp_path):
    """With no endpoint given, bad options fail before the embedded server would start."""
    from madeval.errors import UsageError
    from madeval.evaluation import run
    from madeval.llm import embedded
    from madeval.settings.config import DebateConfig, RunSettings

    class NoServer:
        def __init__(self, *args, **kwargs):
            raise AssertionError("the embedded model was started")

    monkeypatch.setattr(embedded, "EmbeddedServer", NoServer)
    for config, message in (
        (DebateConfig(decider="counting", decider_args={"rounds": "2"}), "has no option rounds"),
        (DebateConfig(paradigm="collective_refinement"), "counts agreement"),
        (DebateConfig(decider="counting", decider_args={"after_turns": [1]}),
         r"decider 'counting' option after_turns must be an integer, got \[1\]"),
    ):
        settings = RunSettings(tasks=["arith_mc"], configurations=[config], output_path=str(tmp_path / "out"))
        with pytest.raises(UsageError, match=message):
            run(settings, show_progress=False)
    settings = RunSettings(tasks=["arith_mc"], configurations=[DebateConfig()], model="gpt-4")
    with pytest.raises(UsageError, match="unknown model 'gpt-4': the embedded endpoint serves only smollm2"):
        run(settings, show_progress=False)
    assert not (tmp_path / "out").exists()


def test_unknown_model_names_the_closest_listed(sim, tmp_path):
    # The simulator lists "simulator" and every model it has been asked for.
    result = madeval("--tasks", "arith_mc", "--base-url", sim.base_url, "--model", "simulatr",
                     "--output-path", "out", "--cache", "off", cwd=tmp_path)
    line = one_error_line(result, tmp_path)
    assert "unknown model 'simulatr': endpoint 'default' lists" in line and line.endswith("closest: simulator")


@pytest.mark.parametrize("option",
                         [("--agent-models", "simulator,simulatro,simulator"), ("--judge-model", "simulatro")])
def test_unknown_agent_or_judge_model_is_refused_before_anything_is_written(sim, tmp_path, option):
    result = madeval("--tasks", "arith_mc", "--base-url", sim.base_url, "--model", "simulator", *option,
                     "--decider", "judge", "--output-path", "out", "--cache", "off", cwd=tmp_path)
    line = one_error_line(result, tmp_path)
    assert "unknown model 'simulatro': endpoint 'default' lists" in line and "closest: simulator" in line


def test_an_endpoint_of_several_models_needs_model_only_when_an_agent_uses_the_default(generated_tasks, tmp_path):
    from helpers import run_quietly, settings_for
    from madeval.errors import UsageError
    from madeval.evaluation import run
    from madeval.simulator import AgentProfile, simulate

    profiles = {"oracle": AgentProfile(accuracy=1.0), "fool": AgentProfile(accuracy=0.0)}
    with simulate(tasks=generated_tasks.values(), profiles=profiles) as sim:  # lists simulator, oracle, fool
        with pytest.raises(UsageError, match="^endpoint 'default' serves 3 models; choose one with --model$"):
            run(settings_for(sim.base_url, tmp_path, limit=2, cache="off"), show_progress=False)
        with pytest.raises(UsageError, match="^agent_models lists 1 models for 2 agents$"):  # checked in Python too
            run(settings_for(sim.base_url, tmp_path, limit=2, cache="off", agents=2, agent_models=["oracle"]),
                show_progress=False)
        assert not (tmp_path / "run").exists()
        result, _ = run_quietly(settings_for(sim.base_url, tmp_path, limit=2, cache="off", agents=2,
                                             agent_models=["oracle", "fool"], decider="counting", max_turns=1,
                                             paradigm="collective_refinement"))
        assert result.outcome.finished == 2


def test_a_listed_model_passes_and_an_endpoint_without_a_list_gets_the_benefit_of_the_doubt():
    import asyncio

    from madeval.debate.session import ModelRef
    from madeval.errors import UsageError
    from madeval.run.engine import check_models

    class Listing:
        def __init__(self, names):
            self.names = names
            self.asked = 0

        async def list_models(self, endpoint):
            self.asked += 1
            return self.names

    asyncio.run(check_models(Listing([]), [ModelRef("anything", "default")]))
    listing = Listing(["gpt-4o", "gpt-4o-mini"])
    asyncio.run(check_models(listing, [ModelRef("gpt-4o", "default"), ModelRef("gpt-4o-mini", "default")]))
    assert listing.asked == 1  # one /models request per endpoint, however many models use it
    with pytest.raises(UsageError,
                       match=r"unknown model 'gpt4o': endpoint 'default' lists 3 models; closest: gpt-4o, "):
        asyncio.run(check_models(Listing(["gpt-4o", "gpt-4o-mini", "llama"]), [ModelRef("gpt4o", "default")]))


# --- endpoints: checked before anything is written (issue 12, defects 7 and 8) ------------------


class GatewayWithoutBackend:
    """A loopback server that answers every request with 502, as a proxy or gateway with nothing
    behind it does: reachable at the TCP level, unable to serve a single call."""

    def __enter__(self):
        import http.server
        import threading

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                body = b'{"error": {"message": "no upstream"}}'
                self.send_response(502)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("transport", ["aiohttp", "openai"])
def test_hostile_unreachable_endpoint_is_refused_up_front_without_its_credentials(tmp_path, transport):
    """--model given (so no model list is needed) and credentials in the URL: one line, exit 2,
    no folder, and the line shows the URL without user info or query."""
    url = "http://alice:hunter2-pw@127.0.0.1:9/v1?api-key=sekret-query"
    result = madeval("--tasks", "arith_mc", "--base-url", url, "--model", "m", "--transport", transport,
                     "--output-path", "out", "--cache", "off", cwd=tmp_path)
    line = one_error_line(result, tmp_path)
    assert line.startswith("madeval: error: cannot reach endpoint http://127.0.0.1:9/v1 (")
    assert "hunter2-pw" not in result.stderr and "sekret-query" not in result.stderr and "alice" not in result.stderr


def test_hostile_gateway_that_answers_only_5xx_is_refused_up_front(tmp_path):
    with GatewayWithoutBackend() as gateway:
        result = madeval("--tasks", "arith_mc", "--base-url", gateway.url, "--model", "m", "--limit", "2",
                         "--max-attempts", "2", "--output-path", "out", "--cache", "off", cwd=tmp_path)
    line = one_error_line(result, tmp_path)
    assert line == f"madeval: error: cannot reach endpoint {gateway.url} (HTTP 502)"


def test_hostile_api_key_with_a_line_break_is_refused_up_front_not_retried(tmp_path, sim):
    import os

    env = {**os.environ, "MADEVAL_API_KEY": "sk-abcd\r\nX-Injected: yes"}
    before = sim.server.stats.requests
    result = subprocess.run(
        [sys.executable, "-m", "madeval", "--tasks", "arith_mc", "--base-url", sim.base_url, "--model", "simulator",
         "--output-path", "out", "--cache", "off"], cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    line = one_error_line(result, tmp_path)
    assert line.startswith(f"madeval: error: endpoint {sim.base_url}: invalid request: ")
    assert "sk-abcd" not in result.stderr
    assert sim.server.stats.requests == before  # nothing was sent
