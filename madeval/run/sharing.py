"""The run's side of shared calls (:mod:`madeval.llm.shared`): who asks, which groups are open, the journal.

With ``share_calls`` on (the default) and more than one configuration, each debate asks as its unit
(:class:`~madeval.llm.shared.Asker`: its unit key, and the group of the units of the same task,
item and repeat, the debates whose calls can be identical). A group's replies are kept while it has
units left to run in this process and forgotten when the last one is done, finished or failed. The
run folder's journal (:mod:`madeval.records.shared_replies`) keeps every reply made, and a resumed
run reads back those of the groups it still has units in.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from madeval.llm.client import LLMClient
from madeval.llm.shared import Asker, SharedCalls
from madeval.records.shared_replies import SharedJournal
from madeval.records.unit import Unit
from madeval.run.plan import Plan


def group_of(unit: Unit) -> str:
    """The group of ``unit``: the units of its task, item and repeat (one per configuration)."""
    return json.dumps([unit.task, unit.item, unit.repeat])


def sharing_wanted(plan: Plan) -> bool:
    """Whether the run shares calls: ``share_calls`` is on and there are configurations to share between."""
    return plan.settings.share_calls and len(plan.configs) > 1


class RunSharing:
    """The groups of the units left, the client's :class:`SharedCalls` and the folder's journal."""

    def __init__(self, plan: Plan, folder: Path, finished: set[str], client: LLMClient):
        #: units left to run per group (a group is forgotten when it reaches 0)
        self.left = Counter(group_of(unit) for unit in plan.units() if unit.key() not in finished)
        #: groups with a unit that failed in this process (their replies stay in the journal)
        self.unfinished: set[str] = set()
        self.journal = SharedJournal(folder)
        self.calls = SharedCalls(on_made=self.journal.append)
        for group, key, made in self.journal.resume(set(self.left)):
            self.calls.keep(group, key, made)
        self.client = client
        client.sharing = self.calls

    def asker(self, unit: Unit) -> Asker:
        """How the debate of ``unit`` asks its calls."""
        return Asker(group_of(unit), unit.key())

    def done(self, unit: Unit, finished: bool) -> None:
        """``unit`` is recorded (``finished``) or failed: its group is forgotten once none is left."""
        group = group_of(unit)
        if not finished:
            self.unfinished.add(group)
        self.left[group] -= 1
        if self.left[group] <= 0:
            del self.left[group]
            self.calls.forget(group)

    def close(self) -> None:
        """Stop sharing; the journal keeps the replies of the groups a resume will run again."""
        self.client.sharing = None
        self.journal.close(self.unfinished | set(self.left))
