"""The simulator: an OpenAI-compatible server of synthetic agents with known truth.

Use :func:`simulate` in tests and scripts::

    with simulate(tasks=[task], accuracy=0.6) as sim:
        ... point madeval at sim.base_url ...

and ``madeval simulator`` from the command line. The synthetic agents are described in
:mod:`madeval.simulator.agents`, the HTTP transport and fault injection in
:mod:`madeval.simulator.http`, the gold answers in :mod:`madeval.simulator.truth`, and a server
that sabotages a share of the requests (``madeval simulator --hostile``) in
:mod:`madeval.simulator.hostile`.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from madeval.simulator.agents import AgentProfile, SimulatedPrompt, SyntheticAgents
from madeval.simulator.http import Faults, SimulatorServer, run_in_thread
from madeval.simulator.truth import GoldIndex


@dataclass
class Simulation:
    """A running simulator: its URL, the synthetic agents and the server statistics."""

    server: SimulatorServer
    agents: SyntheticAgents

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (``http://127.0.0.1:PORT/v1``)."""
        return self.server.base_url


@contextlib.contextmanager
def simulate(
    *,
    tasks: Iterable[Any] = (),
    truth: GoldIndex | None = None,
    accuracy: float = 0.6,
    conformity: float = 0.0,
    persuasion: float = 0.0,
    self_doubt: float = 0.0,
    profiles: dict[str, AgentProfile] | None = None,
    latency_s: float = 0.0,
    faults: Faults | None = None,
    api_key: str | None = None,
    seed: int = 0,
    port: int = 0,
    unknown: str | None = None,
    served: Iterable[str] = (),
    decode_s_per_token: float = 0.0,
) -> Iterator[Simulation]:
    """Run a simulator in a background thread for the duration of the ``with`` block.

    The agents know the gold answers of every item of ``tasks`` (madeval Task objects) and of
    ``truth``; ``accuracy``, ``conformity``, ``persuasion`` and ``self_doubt`` are the default
    :class:`AgentProfile` (the model is in :mod:`madeval.simulator.agents`), and ``profiles`` maps
    model names to their own profiles. ``self_doubt`` is the chance that an agent asked to
    double-check its answer with no peer answer shown (Society-of-Minds' self-check prompt, which
    an agent cut off by a communication attack gets) abandons its current answer for a different
    one: self-correction without external feedback degrades answers (Huang et al., "Large Language
    Models Cannot Self-Correct Reasoning Yet", ICLR 2024). The default 0 never doubts.
    ``unknown``: what a prompt quoting no known question gets, "error" (HTTP 400, the default when
    the agents know any question) or "answer" (at random, the default when they know none).
    ``served`` are the only model names ``/v1/models`` lists (vLLM's ``--served-model-name``); by
    default "simulator" and every name asked for. ``latency_s`` delays every reply, and
    ``decode_s_per_token`` each token of an answered one (a server that decodes 1 / that tokens a second).
    """
    index = GoldIndex()
    if truth is not None:
        index.update(truth)
    index.update(GoldIndex.from_tasks(tasks))
    agents = SyntheticAgents(
        index, default=AgentProfile(accuracy, conformity, persuasion, self_doubt), profiles=profiles,
        seed=seed, unknown=unknown,
    )
    server = SimulatorServer(agents, port=port, latency_s=latency_s, faults=faults, api_key=api_key,
                             models=profiles or (), served=served, decode_s_per_token=decode_s_per_token)
    with run_in_thread(server) as running:
        yield Simulation(running, agents)


__all__ = ["AgentProfile", "Faults", "GoldIndex", "SimulatedPrompt", "Simulation", "SyntheticAgents", "simulate"]
