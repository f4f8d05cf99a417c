"""Where a session's tool calls and their results are: each entry filed under (agent, call id) as it is read, so a
page pairs a call with its results without parsing either again, and every tool's name (the agent page's filter).
SessionIndex holds one and files each entry's calls and results in it as events arrive."""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from viewer.core import model
from viewer.core.model import Event
from viewer.core.positions import file_at, filed_at
from viewer.core.problems import Problem


SHARED_KEYS = 5_000  # Tuning.section_items' default: a bigger map is kept in sections of its own


class ToolCalls:
    """(agent, call id) -> the positions of the entries holding that call, and of those answering it."""

    KEPT = ("call_positions", "result_positions", "tool_names")  # what `state` gives
    MADE = ("_problems",)  # the session's problems, where a result answering no call is listed

    def __init__(self, problems: list[Problem]):
        self._problems = problems
        self.call_positions: dict[tuple[str, str], int | list[int]] = {}
        self.result_positions: dict[tuple[str, str], int | list[int]] = {}
        self.tool_names: set[str] = set()  # every tool called or answered, lowercased

    def copy(self, problems: list[Problem], shared) -> ToolCalls:
        """An independent copy listing its problems in `problems`; `shared` wraps a map of lists (SharedLists)."""
        other = ToolCalls(problems)
        other.call_positions, other.result_positions = shared(self.call_positions), shared(self.result_positions)
        other.tool_names = set(self.tool_names)
        return other

    # Its session's attributes for it: itself, its containers and the methods `add` calls, bound once (no hop per
    # event); taken back together when a woken session first reads one (sleeping.later_together)
    BOUND = ("calls", "call_positions", "result_positions", "tool_names", "_file_calls", "_file_result")

    def bound(self) -> dict:
        """BOUND's values (the session's attributes) for this."""
        return dict(zip(self.BOUND, (self, self.call_positions, self.result_positions, self.tool_names,
                                     self.file_calls, self.file_result)))

    def state(self):
        """(name, plain value) of what it keeps. A result's key is its call's own: marshal keeps an object held
        twice once, so a woken session makes half the keys (a third less to decode); not for maps of more than
        SHARED_KEYS, which are cut across sections of their own (each key kept in each anyway)."""
        results = self.result_positions
        if len(results) <= SHARED_KEYS:
            keys = {key: key for key in self.call_positions}
            results = {keys.get(key, key): positions for key, positions in results.items()}
        yield "call_positions", self.call_positions
        yield "result_positions", results
        yield "tool_names", self.tool_names

    def restore(self, name: str, value) -> None:
        """Take back one part `state` gave (a map may come in several: each adds to it)."""
        if name not in self.KEPT:
            raise ValueError(f"tool calls keep no {name!r}")
        getattr(self, name).update(value)

    def file_calls(self, agent_id: str, calls, position: int) -> None:
        """An entry's tool calls: their names, and the entry under (agent, call id) for the results to find.

        The agent's own copy of its id is passed: the keys share it, not one string per event.
        """
        tool_names, call_positions = self.tool_names, self.call_positions
        for call in calls:
            tool_names.add(model.call_tool_key(call))
            call_id = call.get("id")
            if isinstance(call_id, str):
                file_at(call_positions, (agent_id, call_id), position)

    def file_result(self, agent_id: str, event: Event, position: int, line_number: int) -> None:
        """A tool result: its tool's name, and the entry under (agent, call id) next to the call it answers."""
        name = event.get("name")
        if isinstance(name, str):
            self.tool_names.add(model.tool_key(name))
        call_id = event.get("tool_call_id")
        if isinstance(call_id, str):
            key = (agent_id, call_id)
            file_at(self.result_positions, key, position)
            if key not in self.call_positions:
                self._problems.append(Problem("dangling_tool_call_id", line_number,
                                              f"no earlier tool call {call_id!r} in {agent_id}'s transcript",
                                              event["message_id"]))

    def grew(self, agent_id: str, calls, position: int) -> None:
        """A message at `position` grew in place and now holds `calls` (model.tool_calls_of): new ones are filed."""
        self.tool_names.update(model.call_tool_key(c) for c in calls)
        for call in calls:
            if isinstance(call.get("id"), str) and (agent_id, call["id"]) not in self.call_positions:
                self.call_positions[(agent_id, call["id"])] = position  # its only position (see positions.file_at)

    def call_position_of(self, agent_id: str, call_id, position: int) -> int | None:
        """The entry holding the agent's latest call of that id before `position`."""
        calls = filed_at(self.call_positions, (agent_id, call_id))
        if not calls:
            return None
        i = bisect_right(calls, position)
        return calls[i - 1] if i else None

    def results_for_call(self, agent_id: str, call_id: str, position: int) -> list[int]:
        """The results answering the agent's call at `position`: those it logged after it and before its next call
        with the same id."""
        key = (agent_id, call_id)
        calls = filed_at(self.call_positions, key)
        i = bisect_right(calls, position)
        if not i or calls[i - 1] != position:
            return []
        results = filed_at(self.result_positions, key)
        stop = bisect_left(results, calls[i]) if i < len(calls) else len(results)
        return results[bisect_left(results, position):stop]  # an entry may answer one call and make another
