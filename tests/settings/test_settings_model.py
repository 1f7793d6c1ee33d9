"""The settings model is the one declaration of every run option: the command line (``madeval run
--help``), the config-file keys, ``rescore``'s shared options and the component-option converter
are all checked against it here, computed from the model and from the CLI, never from a list."""

from __future__ import annotations

import re
from dataclasses import MISSING, fields

import pytest
from click.testing import CliRunner

from madeval.cli.main import cli
from madeval.cli.rescore_cmd import rescore
from madeval.cli.run_cmd import run
from madeval.cli.settings_options import given_options
from madeval.core.options import convert_component_option
from madeval.errors import UsageError
from madeval.settings.board_options import LeaderboardOptions
from madeval.settings.config import DebateConfig, RunSettings, build_settings, read_config_file

NOT_SETTINGS = {"--config", "--no-progress", "--help"}  # plain click options of ``madeval run``


def declared(*models: type) -> dict[str, tuple]:
    """Every declared option of the models (the run's by default): name -> (declaration, default)."""
    found = {}
    for cls in models or (DebateConfig, RunSettings):
        for spec in fields(cls):
            if "option" in spec.metadata:
                default = spec.default_factory() if spec.default_factory is not MISSING else spec.default
                found[spec.name] = (spec.metadata["option"], default)
    return found


def help_entries(*command: str) -> dict[str, str]:
    """``madeval COMMAND --help`` parsed: each long flag -> its help text (wrapped lines joined)."""
    result = CliRunner().invoke(cli, [*(command or ("run",)), "--help"], terminal_width=1000, max_content_width=1000)
    assert result.exit_code == 0, result.output
    body = result.output.split("Options:\n", 1)[1]
    entries: dict[str, str] = {}
    flag = None
    for line in body.splitlines():
        # A long flag and its metavar may fill the first column: the help then starts on the next line.
        # A yes/no option on by default shows its --no- form beside it: "--share-calls / --no-share-calls".
        match = re.match(r"^  (?:-\w, )?(--[\w-]+)(?: / --no-[\w-]+)?(?: [A-Z\[][\w|\]]*)?(?:\s+(.*))?$", line)
        if match:
            flag = match.group(1)
            assert flag not in entries, f"{flag} appears twice in --help"
            entries[flag] = (match.group(2) or "").strip()
        elif flag and line.strip():
            entries[flag] = (entries[flag] + " " + line.strip()).strip()
    return entries


@pytest.mark.parametrize("command, models, not_settings", [
    (("run",), (DebateConfig, RunSettings), NOT_SETTINGS),
    # Files, not options: where a merged board goes and which history file to show on its page; and
    # --explain, the run option that prints the whole board (shared: test_explain_is_one_run_option).
    (("leaderboard", "show"), (LeaderboardOptions,), {"--help", "--output", "--history", "--explain"}),
])
def test_every_option_has_one_cli_flag_showing_the_model_default(command, models, not_settings):
    entries = help_entries(*command)
    model = declared(*models)
    on_cli = {name: item for name, item in model.items() if item[0].cli}
    flags = {}
    for name, (option, default) in on_cli.items():
        long_flags = [f for f in option.flags if f.startswith("--")] or [f"--{name.replace('_', '-')}"]
        assert len(long_flags) == 1
        flags[long_flags[0]] = name
        text = entries[long_flags[0]]
        assert text.startswith(option.help.rstrip(".")), (name, text)
        # The default is appended from the model, never written by hand in the help.
        assert "[" not in option.help, name
        if option.shown_default is not None:
            assert f"[{option.shown_default}]" in text
        elif default not in (None, "", [], {}) and not isinstance(default, bool):
            assert f"[{default}]" in text, (name, default, text)
        else:
            assert "[" not in text, (name, text)
    # Every flag of the command is one model option, except those that are not settings.
    assert set(entries) - set(flags) == not_settings
    assert len(flags) == len(on_cli)


def test_every_config_key_is_a_model_field(tmp_path):
    model = declared()
    # A file that sets every option (file-only ones included) to its default is read as written
    # and builds the default settings.
    lines = ["tasks: arith_mc"]
    for name, (_option, default) in model.items():
        if name != "tasks":
            written = "null" if default is None else repr(default) if isinstance(default, str) else default
            lines.append(f"{name}: {written}")
    (tmp_path / "all.yaml").write_text("\n".join(lines) + "\n")
    settings = build_settings(read_config_file(tmp_path / "all.yaml"))
    defaults = build_settings({"tasks": "arith_mc", "base_url": "http://127.0.0.1:9/v1"})
    assert settings.public() == {**defaults.public(), "base_url": None}
    assert settings.configurations == defaults.configurations == [DebateConfig()]
    assert settings.public() == RunSettings(tasks=["arith_mc"]).public() and settings.fitted == {}
    # nothing given and no endpoint: the embedded model's settings where the defaults were
    embedded = build_settings({"tasks": "arith_mc"})
    assert embedded.public() == {**settings.public(), "max_tokens": 128}
    assert embedded.configurations == [DebateConfig(max_turns=3, structured_answers=True)]
    # A key that is not a field is refused, naming the closest field.
    (tmp_path / "bad.yaml").write_text("tasks: arith_mc\nmax_turn: 3\n")
    with pytest.raises(UsageError, match="unknown option max_turn; did you mean max_turns"):
        read_config_file(tmp_path / "bad.yaml")


def test_the_command_line_and_a_config_file_are_read_by_the_same_rules(tmp_path):
    args = ["-t", "arith_mc,arith_yesno", "--persona", "none,none", "--agents", "2", "--decider", "counting",
            "--decider-args", "after_turns=2", "--endpoint", "a=http://127.0.0.1:1/v1", "--endpoint",
            "b=http://127.0.0.1:2/v1", "--endpoint-concurrency", "a=3", "--include-path", "x,y",
            "--challenge", "plain, history", "--transport", "direct", "--sample", "FPC"]
    context = run.make_context("run", args)
    given = {key: value for key, value in context.params.items() if key not in ("config_file", "no_progress")}
    from_cli = build_settings(given_options(given))
    (tmp_path / "same.yaml").write_text(
        "tasks: [arith_mc, arith_yesno]\npersona: [none, none]\nagents: 2\ndecider: counting\n"
        "decider_args: {after_turns: '2'}\nendpoints: {a: 'http://127.0.0.1:1/v1', b: 'http://127.0.0.1:2/v1'}\n"
        "endpoint_concurrency: {a: 3}\ninclude_path: x,y\nchallenge: plain,history\ntransport: direct\n"
        "sample: FPC\n"
    )
    from_file = build_settings(read_config_file(tmp_path / "same.yaml"))
    assert from_cli.public() == from_file.public()
    assert from_cli.configurations == from_file.configurations
    assert from_cli.tasks == ["arith_mc", "arith_yesno"] and from_cli.include_path == ["x,y"]
    assert from_cli.endpoint_concurrency == {"a": 3} and from_cli.transport == "aiohttp"
    assert from_cli.sample == "fpc"
    config = from_cli.configurations[0]
    assert config.persona == ["none", "none"] and config.challenge == ["plain", "history"]
    assert config.decider_args == {"after_turns": "2"}


def test_a_yes_no_option_on_by_default_is_turned_off_by_its_no_flag(tmp_path):
    on_by_default = [name for name, (option, default) in declared().items() if default is True and option.cli]
    assert "share_calls" in on_by_default
    for name in on_by_default:
        flag = name.replace("_", "-")
        for args, expected in (([], True), ([f"--{flag}"], True), ([f"--no-{flag}"], False)):
            context = run.make_context("run", ["-t", "arith_mc", *args])
            given = {key: value for key, value in context.params.items() if key not in ("config_file", "no_progress")}
            assert getattr(build_settings(given_options(given)), name) is expected, (name, args)
    (tmp_path / "off.yaml").write_text("tasks: arith_mc\nshare_calls: off\n")
    assert build_settings(read_config_file(tmp_path / "off.yaml")).share_calls is False


def test_rescore_shares_the_run_options_declarations():
    run_params = {p.name: p for p in run.params}
    shared = [p for p in rescore.params if p.name in run_params]
    assert {p.name for p in shared} == {"base_url", "endpoints", "concurrency", "cache", "explain"}
    for param in shared:
        mine, theirs = param, run_params[param.name]
        assert (mine.opts, mine.multiple, type(mine.type)) == (theirs.opts, theirs.multiple, type(theirs.type))


def test_explain_is_one_run_option_every_command_that_prints_a_board_shares():
    from madeval.cli.import_cmd import import_
    from madeval.cli.leaderboard_cmd import show

    theirs = next(p for p in run.params if p.name == "explain")
    assert theirs.opts == ["--explain"] and theirs.is_flag
    for command in (rescore, show, import_):
        mine = next(p for p in command.params if p.name == "explain")
        assert (mine.opts, mine.is_flag, mine.help) == (theirs.opts, theirs.is_flag, theirs.help)


@pytest.mark.parametrize(
    ("value", "default", "expected"),
    [
        ("2", 0, 2), (2, 0, 2), ("0.5", 1.0, 0.5), (2, 1.0, 2), ("yes", False, True), ("off", True, False),
        (True, False, True), ("a; b;", (1, 2), ["a", "b"]), ([1, 2], (3, 4), [1, 2]), ("inverse", "x", "inverse"),
        ("anything", None, "anything"), (5, ..., 5),
    ],
)
def test_component_options_are_read_by_the_type_of_their_default(value, default, expected):
    converted = convert_component_option("decider", "d", "k", value, default)
    assert converted == expected and type(converted) is type(expected)


@pytest.mark.parametrize(
    ("value", "default", "message"),
    [
        ("abc", 0, "decider 'counting' option after_turns must be an integer, got 'abc'"),
        (2.5, 0, "decider 'counting' option after_turns must be an integer, got 2.5"),
        (True, 0, "decider 'counting' option after_turns must be an integer, got true"),
        ("high", 1.0, "decider 'counting' option after_turns must be a number, got 'high'"),
        ("maybe", False, "decider 'counting' option after_turns must be true or false, got 'maybe'"),
        (3, "text", "decider 'counting' option after_turns must be text, got 3"),
        (3, (1,), "decider 'counting' option after_turns must be a list (items separated by ';'), got 3"),
    ],
)
def test_a_bad_component_option_names_the_component_and_the_option(value, default, message):
    with pytest.raises(UsageError) as raised:
        convert_component_option("decider", "counting", "after_turns", value, default)
    assert str(raised.value) == message


def test_decider_args_error_on_the_command_line_is_one_line(tmp_path):
    result = CliRunner().invoke(cli, ["--tasks", "arith_mc", "--decider", "counting", "--decider-args",
                                      "after_turns=abc", "--base-url", "http://127.0.0.1:9/v1",
                                      "--output-path", str(tmp_path / "out")])
    assert isinstance(result.exception, UsageError)
    assert str(result.exception) == "decider 'counting' option after_turns must be an integer, got 'abc'"
    assert not (tmp_path / "out").exists()


def test_rescore_decider_options_use_the_same_converter():
    from madeval.core.plugins import registries
    from madeval.run.rescore import parse_deciders

    with pytest.raises(UsageError, match="^decider 'counting' option after_turns must be an integer, got 'abc'$"):
        parse_deciders("counting:after_turns=abc", registries())
    specs = parse_deciders(" counting:after_turns=2, ,counting", registries())
    assert [(s.name, s.options) for s in specs] == [("counting", {"after_turns": 2}), ("counting", {})]
