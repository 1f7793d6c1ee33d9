"""The plugin hooks of madeval.

Every hook but ``simulator_reply`` (the last) is a *register callback* hook, in the style of
simonw/llm: madeval calls the hook with a ``register`` function and the plugin calls it once for
every component it adds, so one plugin may add many components. Core owns the names: a name used
twice is an error naming both plugins, and an unknown name fails with the closest known names.

``register(name, factory, *, aliases=(), description="")``

* ``name``: the name used on the command line and in configuration files.
* ``factory``: a class or function called with the component's options as keyword arguments. Its
  keyword parameters *are* the component's options (``--decider-args key=value``).
* ``aliases``: other accepted names (``unanimity`` for ``unanimity_consensus``).
* ``description``: one line for ``madeval plugins``; defaults to the factory's docstring.

Implement a hook in a plugin module like this::

    from madeval import hookimpl

    @hookimpl
    def register_deciders(register):
        register("dictator", Dictator, description="Agent 0 decides alone.")

The base classes a factory should build on are exported by :mod:`madeval` (``madeval.__all__``).
"""

from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("madeval")
#: Marks a plugin's hook implementations; plugins import it as ``from madeval import hookimpl``.
hookimpl = pluggy.HookimplMarker("madeval")


@hookspec
def register_personas(register):
    """Add persona generators: who each agent is.

    The factory builds a :class:`madeval.core.components.PersonaGenerator`, whose ``generate`` returns
    one :class:`madeval.core.transcript.Persona` per call, given the personas made so far.
    """


@hookspec
def register_responders(register):
    """Add responders: how an agent writes a turn and how its reply is parsed.

    The factory builds a :class:`madeval.core.components.Responder`, which turns a
    :class:`madeval.core.components.SpeakContext` into chat messages and parses the reply into a
    :class:`madeval.core.components.Contribution` (text, solution, agreement, confidence).
    """


@hookspec
def register_paradigms(register):
    """Add paradigms: turn order and visibility.

    The factory builds a :class:`madeval.core.components.Paradigm`, which yields each turn's speaking
    steps (sequential or simultaneous, with each message's audience) and decides what each agent
    sees (``view``), so it may also reorder or hide messages per agent.
    """


@hookspec
def register_deciders(register):
    """Add deciders: when the debate stops and what the answer is.

    The factory builds a :class:`madeval.core.components.Decider`, consulted after every step and
    every turn; it may ask agents for votes or a judgment through the debate's LLM access, and it
    supplies the recorded fallback when the debate reaches ``max_turns``.
    """


@hookspec
def register_tasks(register):
    """Add task sources: folders of task YAML files.

    Call ``register(path)`` with a directory (a ``pathlib.Path`` or an
    ``importlib.resources`` folder); every ``*.yaml`` under it is a task or a task group.
    Later sources override earlier ones with the same task name, as ``--include-path`` does.
    """


@hookspec
def register_task_providers(register):
    """Add task providers: tasks that come from elsewhere than task YAML folders.

    Call ``register(prefix, factory)``; a task name ``prefix:NAME`` (``lm_eval:gsm8k``) is then
    resolved by the provider the factory builds (once per process, on first use, so a slow
    catalogue costs nothing to runs that do not name it). The factory is called with
    ``include_path``, the run's ``--include-path`` folders (a tuple). A provider with
    ``claims(data)`` takes the task files of those folders that are in its format (``data``: the
    file's keys; true: the task ``NAME`` is run as ``prefix:NAME``). The provider has ``names()`` (every name
    it knows, for ``madeval tasks --source prefix``), ``expand(name)`` (the task names a task, group
    or tag stands for, without the prefix) and ``load(name, extractors, metrics, settings)`` (a
    :class:`madeval.task.definition.Task` whose ``name`` carries the prefix; the registries are madeval's and
    ``settings`` the run's :class:`madeval.settings.config.RunSettings`, or ``None`` outside a run).
    It may also have ``group_spec(name)``: a :class:`madeval.task.files.GroupSpec` (prefixed names)
    saying how a group's tasks combine on the leaderboard, or ``None`` for a name that is no group.
    """


@hookspec
def register_metrics(register):
    """Add metrics that task YAMLs can name in ``metric_list``.

    The factory builds a :class:`madeval.metrics.base.Metric`, which scores one prediction against
    one item and says how its per-item scores aggregate.
    """


@hookspec
def register_extractors(register):
    """Add answer extractors that task YAMLs can chain in ``answer_extraction``.

    The factory, called with the extractor's options, returns a function ``text -> answer | None``.
    """


@hookspec
def register_presets(register):
    """Add presets: named bundles of configuration options, selected with ``--preset NAME``.

    The factory takes no arguments and returns a dictionary of configuration keys (``persona``,
    ``responder``, ``paradigm``, ``decider``, their ``*_args``, ``agents``, ``max_turns``, ...).
    Options the user gives explicitly override the preset's.
    """


@hookspec
def register_importers(register):
    """Add importers: readers of other tools' output files, run as ``madeval import NAME FILE...``.

    The factory builds a :class:`madeval.importers.base.Importer` (``from madeval import
    Importer``); its keyword parameters are the importer's options (``--filter`` of ``lm-eval``).
    ``Importer.read(path, task, label)`` returns the file as one configuration whose debates are
    :class:`madeval.importers.base.ImportedDebate` objects: the task item, the transcript (agents,
    messages with turn, agent, solution, extracted answer and agreement; the decision) and the
    repeat. madeval owns the rest: records, scores, the run folder, idempotence and the
    all-or-nothing write (:mod:`madeval.importers.writer`).
    """


@hookspec(firstresult=True)
def simulator_reply(prompt):
    """Teach the simulator to answer this plugin's own prompts.

    Unlike the hooks above this one is called for every request the simulator (``madeval
    simulator``, :func:`madeval.simulator.simulate`) answers. ``prompt`` is a
    :class:`madeval.simulator.SimulatedPrompt`: the request's messages, the gold answer, the agent's
    private answer, and the helpers that read the answers a prompt shows and give the agent's belief
    about them. Return ``(kind, text)`` for a prompt the plugin wrote (``kind`` names the request
    kind in the simulator's statistics, ``text`` is the reply), or ``None`` for any other prompt.
    The first plugin that answers wins; madeval's own prompts are answered when none does.
    """
