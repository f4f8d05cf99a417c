"""The agent tree of a session index and the links its events name: who spawned whom, and links that name
no message (yet) or close a cycle. A part of SessionIndex (a mixin: it reads and extends the index's own
containers), kept apart so the store's module stays about storing."""

from __future__ import annotations

from array import array
from bisect import bisect_left

from viewer.core import model
from viewer.core.model import AgentNode, Event


class AgentTree:
    """The agent tree and link checks of SessionIndex (which defines the containers used here)."""

    @property
    def roots(self) -> list[str]:
        """Agents with no parent (yet), in order of first appearance."""
        return [agent_id for agent_id, agent in self.agents.items() if agent.parent_id is None]

    def _reclassify_entry(self, position: int) -> None:
        """An entry that grew in place may have changed kind (said -> did): file it again."""
        event = self.events[position]
        agent = self.agents.get(event["agent_id"])
        if agent is None or event.get("event_type") != model.TRANSCRIPT_ENTRY:
            return
        kind = model.perspective_kind(event)
        for name, positions in agent.by_kind.items():
            i = bisect_left(positions, position)
            if i < len(positions) and positions[i] == position and name != kind:
                positions.pop(i)
                target = agent.by_kind.setdefault(kind, array("q"))
                target.insert(bisect_left(target, position), position)
                break
        i = bisect_left(agent.dialog_entries, position)
        listed = i < len(agent.dialog_entries) and agent.dialog_entries[i] == position
        if listed != model.is_dialog_entry(event):
            if listed:
                agent.dialog_entries.pop(i)
                agent.dialog_originals.pop(i)
            else:
                agent.dialog_entries.insert(i, position)
                agent.dialog_originals.insert(i, self.by_id.get(model.substance_key(event), -1))
            self.dialog_orders.clear()

    def _grown(self, event: Event) -> None:
        """A message grew in place (Claude Code: more lines of one response): index its new tool calls."""
        grown = self.by_id.get(event.get("grows"))
        if grown is None:
            return
        position = len(self.events) - 1  # this event's (add appended it)
        if grown < position:
            self.growth_positions.append(position)
            self.grown_positions.append(grown)
        self._reclassify_entry(grown)
        grown_event = self.events[grown]
        if "usage" in grown_event or "model" in grown_event:  # it may name them only now
            lists = [self.usage_positions]
            if grown_event.get("agent_id") in self.agents:
                lists.append(self.agents[grown_event["agent_id"]].usage_entries)
            for positions in lists:
                i = bisect_left(positions, grown)
                if i == len(positions) or positions[i] != grown:
                    positions.insert(i, grown)
        self.usage_totals.clear()  # its usage may have changed: summed again on the next request
        agent_id, calls = grown_event["agent_id"], model.tool_calls_of(grown_event)
        self.tool_names.update(model.call_tool_key(c) for c in calls)
        for call in calls:
            if isinstance(call.get("id"), str) and (agent_id, call["id"]) not in self.call_positions:
                self.call_positions[(agent_id, call["id"])] = grown  # its only position (see positions.file_at)

    def _linked(self, event: Event, position: int) -> None:
        """An agent whose parent a format found later moves under the agent holding `cause`: a root, one listed
        under another until then ("unlinked"), or one whose inferred parent the log now names (`inferred` absent:
        the badge goes, as if the log had named it from the start)."""
        agent = self.agents.get(event.get("links"))
        cause = event.get("cause")
        if agent is None or cause not in self.by_id:
            return
        inferred = bool(event.get("inferred"))
        if isinstance(event.get("name"), str) and event["name"]:
            agent.name = event["name"]
        if agent.cause is not None:
            if inferred or "parent_inferred" not in agent.flags:
                return  # an inferred link never overrides a parent the log named
            agent.flags.remove("parent_inferred")
            if agent.cause == cause:
                self.tree_changes.append((position, agent.agent_id))  # drawn again, without its badge
                return
            self.spawned[agent.cause].remove(agent.agent_id)
            agent.cause = None
        elif agent.parent_id is not None and "unlinked" not in agent.flags:
            return  # a parent some other way (a native log's own): kept
        if agent.parent_id is not None:  # leaves the parent it was shown under
            self.agents[agent.parent_id].children.remove(agent.agent_id)
            agent.parent_id = None
        if "unlinked" in agent.flags:
            agent.flags.remove("unlinked")
        agent.cause = cause
        if agent.created_position is not None:
            self.events.materialize(agent.created_position)["spawn_call_id"] = event.get("spawn_call_id")
        self.spawned.setdefault(cause, []).append(agent.agent_id)
        if inferred:
            agent.flags.append("parent_inferred")
        self._resolve_parent(agent, position)

    def _links(self, event: Event, position: int, line_number: int, causes, substance: str | None) -> None:
        """Flag substance and cause links that name no message (yet), and the cycles they close."""
        message_id = event["message_id"]
        awaited = self._dangling.pop(message_id, ()) if self._dangling else ()
        for problem in awaited:  # rare: a link named this message before it was written
            self.problems.remove(problem)
        # an agent's cause is checked with the tree
        named_causes = causes if causes and event["event_type"] != model.AGENT_CREATED else ()
        # Links only point back in an append-only file; a cycle needs a link that was dangling,
        # so it can only close here when this message was awaited (or names itself).
        if (awaited and self._closes_cycle(message_id)) or substance == message_id or message_id in named_causes:
            kind = "substance_cycle" if substance is not None else "cause_cycle"
            self._problem(kind, line_number, f"following {message_id}'s links leads back to it", message_id)
        by_id = self.by_id
        if substance is not None and substance not in by_id:
            self._dangling_link("substance", substance, line_number, message_id)
        for cause in named_causes:
            if cause not in by_id:
                self._dangling_link("cause", cause, line_number, message_id)

    def _dangling_link(self, link: str, target: str, line_number: int, message_id: str) -> None:
        problem = self._problem(f"dangling_{link}", line_number, f"{link} {target!r} names no message", message_id)
        self._dangling.setdefault(target, []).append(problem)

    def _closes_cycle(self, message_id: str, limit: int = 10_000) -> bool:
        """Whether following first links (substance, else first cause) from a message comes back to it."""
        current, seen = message_id, set()
        while len(seen) < limit:
            event = self.events[self.by_id[current]]
            links = [event["substance"]] if model.is_delivery(event) else model.causes_of(event)
            if not links or links[0] not in self.by_id or links[0] in seen:
                return False
            current = links[0]
            if current == message_id:
                return True
            seen.add(current)
        return False

    def _agent(self, agent_id: str, position: int) -> AgentNode:
        agent = self.agents.get(agent_id)
        if agent is None:
            agent = AgentNode(agent_id=agent_id, ordinal=len(self.agents), first_position=position)
            self.agents[agent_id] = agent
            self.tree_changes.append((position, agent_id))
        return agent

    def _agent_created(self, event: Event, position: int, line_number: int, causes, format_keys: bool) -> None:
        """An agent_created event; `format_keys`: its `inferred` and "in progress" marker are the viewer's own
        (Format.adds_keys)."""
        agent_id = event["agent_id"]
        existing = self.agents.get(agent_id)
        if existing is not None and existing.created_position is not None:
            self._problem("duplicate_agent_created", line_number,
                          f"{agent_id} was already created by {self.events[existing.created_position]['message_id']}",
                          event["message_id"])
            return
        agent = self._agent(agent_id, position)
        agent.created_position = position
        if isinstance(event.get("name"), str) and event["name"]:
            agent.name = event["name"]
        if isinstance(event.get("language_model"), str):
            agent.language_model = event["language_model"]
        if format_keys:
            if event.get("inferred"):
                agent.flags.append("parent_inferred")
            if "in progress" in (event.get("markers") or ()):
                agent.flags.append("in_progress")
        if causes:
            agent.cause = causes[0]
            self.spawned.setdefault(agent.cause, []).append(agent_id)
            if agent.cause in self.by_id:
                self._resolve_parent(agent, position)
            else:
                self._awaiting_cause.setdefault(agent.cause, []).append(agent_id)
                agent.flags.append("cause_missing")
        elif format_keys and event.get("listed_under") in self.agents and event["listed_under"] != agent_id:
            # nothing in the log names its parent (yet): shown under the agent its format says, marked so
            agent.parent_id = event["listed_under"]
            self.agents[agent.parent_id].children.append(agent_id)
            agent.flags.append("unlinked")

    def _resolve_parent(self, agent: AgentNode, position: int) -> None:
        """Parent = the agent whose transcript holds the message the creation names."""
        if "cause_missing" in agent.flags:
            agent.flags.remove("cause_missing")
        holder = self.events[self.by_id[agent.cause]]["agent_id"]
        if holder not in self.agents:  # the cause is an event of an unknown type
            agent.flags.append("cause_not_an_agent_message")
            return
        ancestor: str | None = holder
        while ancestor is not None:
            if ancestor == agent.agent_id:
                agent.flags.append("cause_cycle")
                self._problem("cause_cycle", self.line_numbers[agent.created_position],
                              f"{agent.agent_id}'s creation names a message of its own subtree", agent.cause)
                return
            ancestor = self.agents[ancestor].parent_id
        agent.parent_id = holder
        self.agents[holder].children.append(agent.agent_id)
        self.tree_changes.append((position, agent.agent_id))

