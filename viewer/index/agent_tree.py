"""The agent tree of a session index and the links its events name: who spawned whom, and links that name
no message (yet) or close a cycle. SessionIndex holds one, made with the containers it reads (the events, the
message ids' positions, the line numbers, the problems) and extends it as events arrive."""

from __future__ import annotations

import weakref
from array import array
from bisect import bisect_left

from viewer.core import model
from viewer.core.kept import Items, array_from, array_state
from viewer.core.model import AgentNode, Event
from viewer.core.problems import Problem


def spawning_call(s, agent: AgentNode, event: Event) -> model.LoggedCall | None:
    """Which tool call of the cause message created this agent (a message may hold several)."""
    calls = model.tool_calls(event)
    created = s.events[agent.created_position] if agent.created_position is not None else {}
    wanted = created.get("spawn_call_id")  # set by format normalizers that know the exact call
    if isinstance(wanted, str):
        for call in calls:
            if call.id == wanted:
                return call
    if len(calls) <= 1:
        return calls[0] if calls else None
    for call in calls:
        if isinstance(call.arguments, dict) and agent.name and call.arguments.get("name") == agent.name:
            return call
    siblings = s.spawned.get(agent.cause, [])
    i = siblings.index(agent.agent_id) if agent.agent_id in siblings else 0
    return calls[min(i, len(calls) - 1)]


# Which call created each agent, as plain data: the "created by" its row shows, and where its status is read from.
# Found from the creating message (read back from its file) and its agent's creation; a session keeps every agent's
# in its cache entry, so the first page of a woken session of hundreds of sub-agents reads none of their messages.
# What was kept or found for every agent holds while the session has the events it had then: a message that grew,
# or an agent linked late, comes with an event. Callers hold the session's lock.

CREATION_MISSING = (None, None, None, None, None)  # its creating message is not read (yet)


def creation_found(s, agent: AgentNode) -> tuple | None:
    """(where the creating message is, that message's agent, the creating call's id, its tool, a summary of it: of
    the message's text when no call is found); CREATION_MISSING when the message is not read; None when none
    created it."""
    if agent.cause is None:
        return None
    position = s.by_id.get(agent.cause)
    if position is None:
        return CREATION_MISSING
    event = s.events[position]
    call = spawning_call(s, agent, event)
    if call is None:
        return position, event["agent_id"], None, None, model.content_of(event)[:80]
    return position, event["agent_id"], call.id, call.name, call.summary()


def _creations_kept(s, name: str = "creations") -> dict | None:
    """Every agent's (`name`: or where its creating call was answered), when what was kept or found still holds (see
    above), else None."""
    events = s.events  # a sleeping session wakes first: it takes them back
    kept = s.__dict__.get(name)
    return kept[2] if kept is not None and kept[0] is events and kept[1] == len(events) else None


def creation_of(s, agent: AgentNode) -> tuple | None:
    """`creation_found`'s answer, from those kept when they hold."""
    kept = _creations_kept(s) if agent.cause is not None else None
    made = kept.get(agent.agent_id) if kept is not None else None
    return made if made is not None else creation_found(s, agent)


def creations(s) -> dict[str, tuple]:
    """agent id -> `creation_found`'s answer for each agent some message created, kept until the session grows:
    their messages read in one pass (EventList.read_ahead)."""
    kept = _creations_kept(s)
    if kept is None:
        by_id, created = s.by_id, [agent for agent in s.agents.values() if agent.cause is not None]
        s.events.read_ahead([by_id[agent.cause] for agent in created if agent.cause in by_id])
        kept = {agent.agent_id: creation_found(s, agent) for agent in created}
        s.__dict__["creations"] = (s.events, len(s.events), kept)
    return kept


def answered_at(s, agent_id: str, creating: tuple) -> int:
    """Where the first result of the call that created the agent is (-1: none yet), `creating` being its
    `creation_of`; from those a cache entry kept while they hold: a woken session's tree reads no tool call."""
    kept = _creations_kept(s, "answers")
    found = kept.get(agent_id) if kept is not None else None
    if found is not None:
        return found
    position, caller, call_id, _, _ = creating
    results = s.result_positions_for_call(position, call_id, caller)
    return results[0] if results else -1


def answers(s) -> dict[str, int]:
    """agent id -> `answered_at` of each agent a call created: what a cache entry keeps of its tool calls' answers."""
    return {agent_id: answered_at(s, agent_id, made) for agent_id, made in creations(s).items() if made[2]}


def take_back_creations(s, kept: dict, answered: dict) -> None:
    """`creations`' and `answers`' answers as a cache entry kept them, for the session restored from that entry (the
    same index): one for each agent some message created, and each of those a call created."""
    created = {agent_id for agent_id, agent in s.agents.items() if agent.cause is not None}
    if set(kept) == created and all(len(made) == len(CREATION_MISSING) for made in kept.values()):
        s.__dict__["creations"] = (s.events, len(s.events), {agent_id: tuple(made) for agent_id, made in kept.items()})
        if set(answered) == {agent_id for agent_id, made in kept.items() if made[2]}:
            s.__dict__["answers"] = (s.events, len(s.events), answered)


def agent_state(a: AgentNode) -> tuple:
    return (a.agent_id, a.ordinal, a.first_position, a.name, a.language_model, a.created_position, a.cause,
            a.parent_id, array_state(a.entries), {k: array_state(v) for k, v in a.by_kind.items()},
            array_state(a.dialog_entries), array_state(a.usage_entries), a.children, a.flags,
            array_state(a.dialog_originals))


def agent_from(t: tuple) -> AgentNode:
    (agent_id, ordinal, first, name, language_model, created, cause, parent, entries, by_kind, dialog, usage,
     children, flags, originals) = t
    return AgentNode(agent_id, ordinal, first, name, language_model, created, cause, parent, array_from(entries),
                     {k: array_from(v) for k, v in by_kind.items()}, array_from(dialog), array_from(usage),
                     list(children), list(flags), dialog_originals=array_from(originals))


def _agent_bytes(a: AgentNode) -> int:
    return (len(a.entries) + len(a.dialog_entries)) * 16 + len(a.usage_entries) * 8  # its arrays, about


class AgentTree:
    """The agents of one session and how they link, and the links of its messages that name nothing (yet)."""

    KEPT = ("agents", "spawned", "awaiting_cause", "changes", "dangling")  # what `state` gives
    MADE = ("_session", "_events", "_line_numbers", "_problems")  # its session, and the session's containers it reads

    def __init__(self, session, events, line_numbers: array, problems: list[Problem]):
        self._events, self._line_numbers, self._problems = events, line_numbers, problems
        self.belong_to(session)
        self.agents: dict[str, AgentNode] = {}
        self.spawned: dict[str, list[str]] = {}  # message id -> agents whose agent_created names it as cause
        self.awaiting_cause: dict[str, list[str]] = {}  # message id not seen yet -> agents created naming it
        # (position, agent_id) whenever an agent appears or moves in the tree; read by live polls
        self.changes: list[tuple[int, str]] = []
        # message id not seen yet -> the dangling_* problems naming it (dropped if it shows up)
        self.dangling: dict[str, list[Problem]] = {}

    def belong_to(self, session) -> None:
        """Read `session`'s message ids from now on (a sleeping session taking back its index). Read through it, never
        held: a map the session fills when first read (store.index_state's read later) is filled for the tree too.
        A weak reference: the session owns this, and a session's index holds no reference cycle."""
        self._session = weakref.ref(session)

    @property
    def _by_id(self) -> dict[str, int]:
        return self._session().by_id

    def copy(self, session, events, line_numbers: array, problems: list[Problem], shared) -> AgentTree:
        """An independent tree equal to this one over another session and its containers (SessionIndex.copy);
        `shared` wraps a map of lists so the copy shares them until it changes one (SharedLists)."""
        other = AgentTree(session, events, line_numbers, problems)
        other.agents = {agent_id: agent.copy() for agent_id, agent in self.agents.items()}
        other.spawned, other.awaiting_cause = shared(self.spawned), shared(self.awaiting_cause)
        other.dangling = shared(self.dangling)
        other.changes = list(self.changes)
        return other

    def state(self):
        """(name, plain value) of what it keeps: the agents one by one, the rest as it is."""
        yield "agents", Items(self.agents, agent_state, _agent_bytes)
        yield "spawned", self.spawned
        yield "awaiting_cause", self.awaiting_cause
        yield "changes", self.changes
        yield "dangling", {k: [p.state() for p in v] for k, v in self.dangling.items()}

    def restore(self, name: str, value) -> None:
        """Take back one part `state` gave (a map may come in several: each adds to it)."""
        if name not in self.KEPT:
            raise ValueError(f"an agent tree keeps no {name!r}")
        if name == "agents":
            self.agents.update((agent_id, agent_from(t)) for agent_id, t in value.items())
        elif name == "changes":
            self.changes.extend(tuple(change) for change in value)
        elif name == "dangling":
            self.dangling.update((k, [Problem(*p) for p in v]) for k, v in value.items())
        else:
            getattr(self, name).update(value)

    def _problem(self, kind: str, line: int | None, detail: str, message_id: str | None = None) -> Problem:
        problem = Problem(kind, line, detail, message_id)
        self._problems.append(problem)
        return problem

    @property
    def roots(self) -> list[str]:
        """Agents with no parent (yet), in order of first appearance."""
        return [agent_id for agent_id, agent in self.agents.items() if agent.parent_id is None]

    def reclassify(self, position: int) -> bool:
        """An entry that grew in place may have changed kind (said -> did): file it again. Whether its place in
        the dialog changed."""
        event = self._events[position]
        agent = self.agents.get(event["agent_id"])
        if agent is None or event.get("event_type") != model.TRANSCRIPT_ENTRY:
            return False
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
        if listed == model.is_dialog_entry(event):
            return False
        if listed:
            agent.dialog_entries.pop(i)
            agent.dialog_originals.pop(i)
        else:
            agent.dialog_entries.insert(i, position)
            agent.dialog_originals.insert(i, self._by_id.get(model.substance_key(event), -1))
        return True

    def message_arrived(self, message_id: str, position: int) -> None:
        """Agents created before the message their cause names: resolvable now that its agent is known."""
        for agent_id in self.awaiting_cause.pop(message_id, ()):
            self.resolve_parent(self.agents[agent_id], position)

    def linked(self, event: Event, position: int) -> None:
        """An agent whose parent a format found later moves under the agent holding `cause`: a root, one listed
        under another until then ("unlinked"), or one whose inferred parent the log now names (`inferred` absent:
        the badge goes, as if the log had named it from the start)."""
        agent = self.agents.get(event.get("links"))
        cause = event.get("cause")
        if agent is None or cause not in self._by_id:
            return
        inferred = bool(event.get("inferred"))
        if isinstance(event.get("name"), str) and event["name"]:
            agent.name = event["name"]
        if agent.cause is not None:
            if inferred or "parent_inferred" not in agent.flags:
                return  # an inferred link never overrides a parent the log named
            agent.flags.remove("parent_inferred")
            if agent.cause == cause:
                self.changes.append((position, agent.agent_id))  # drawn again, without its badge
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
            self._events.materialize(agent.created_position)["spawn_call_id"] = event.get("spawn_call_id")
        self.spawned.setdefault(cause, []).append(agent.agent_id)
        if inferred:
            agent.flags.append("parent_inferred")
        self.resolve_parent(agent, position)

    def links(self, event: Event, position: int, line_number: int, causes, substance: str | None) -> None:
        """Flag substance and cause links that name no message (yet), and the cycles they close."""
        message_id = event["message_id"]
        awaited = self.dangling.pop(message_id, ()) if self.dangling else ()
        for problem in awaited:  # rare: a link named this message before it was written
            self._problems.remove(problem)
        # an agent's cause is checked with the tree
        named_causes = causes if causes and event["event_type"] != model.AGENT_CREATED else ()
        # Links only point back in an append-only file; a cycle needs a link that was dangling,
        # so it can only close here when this message was awaited (or names itself).
        if (awaited and self._closes_cycle(message_id)) or substance == message_id or message_id in named_causes:
            kind = "substance_cycle" if substance is not None else "cause_cycle"
            self._problem(kind, line_number, f"following {message_id}'s links leads back to it", message_id)
        by_id = self._by_id
        if substance is not None and substance not in by_id:
            self._dangling_link("substance", substance, line_number, message_id)
        for cause in named_causes:
            if cause not in by_id:
                self._dangling_link("cause", cause, line_number, message_id)

    def _dangling_link(self, link: str, target: str, line_number: int, message_id: str) -> None:
        problem = self._problem(f"dangling_{link}", line_number, f"{link} {target!r} names no message", message_id)
        self.dangling.setdefault(target, []).append(problem)

    def _closes_cycle(self, message_id: str, limit: int = 10_000) -> bool:
        """Whether following first links (substance, else first cause) from a message comes back to it."""
        current, seen = message_id, set()
        while len(seen) < limit:
            event = self._events[self._by_id[current]]
            links = [event["substance"]] if model.is_delivery(event) else model.causes_of(event)
            if not links or links[0] not in self._by_id or links[0] in seen:
                return False
            current = links[0]
            if current == message_id:
                return True
            seen.add(current)
        return False

    def agent(self, agent_id: str, position: int) -> AgentNode:
        agent = self.agents.get(agent_id)
        if agent is None:
            agent = AgentNode(agent_id=agent_id, ordinal=len(self.agents), first_position=position)
            self.agents[agent_id] = agent
            self.changes.append((position, agent_id))
        return agent

    def agent_created(self, event: Event, position: int, line_number: int, causes, format_keys: bool) -> None:
        """An agent_created event; `format_keys`: its `inferred` and "in progress" marker are the viewer's own
        (Format.adds_keys)."""
        agent_id = event["agent_id"]
        existing = self.agents.get(agent_id)
        if existing is not None and existing.created_position is not None:
            self._problem("duplicate_agent_created", line_number,
                          f"{agent_id} was already created by {self._events[existing.created_position]['message_id']}",
                          event["message_id"])
            return
        agent = self.agent(agent_id, position)
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
            if agent.cause in self._by_id:
                self.resolve_parent(agent, position)
            else:
                self.awaiting_cause.setdefault(agent.cause, []).append(agent_id)
                agent.flags.append("cause_missing")
        elif format_keys and event.get("listed_under") in self.agents and event["listed_under"] != agent_id:
            # nothing in the log names its parent (yet): shown under the agent its format says, marked so
            agent.parent_id = event["listed_under"]
            self.agents[agent.parent_id].children.append(agent_id)
            agent.flags.append("unlinked")

    def resolve_parent(self, agent: AgentNode, position: int) -> None:
        """Parent = the agent whose transcript holds the message the creation names."""
        if "cause_missing" in agent.flags:
            agent.flags.remove("cause_missing")
        holder = self._events[self._by_id[agent.cause]]["agent_id"]
        if holder not in self.agents:  # the cause is an event of an unknown type
            agent.flags.append("cause_not_an_agent_message")
            return
        ancestor: str | None = holder
        while ancestor is not None:
            if ancestor == agent.agent_id:
                agent.flags.append("cause_cycle")
                self._problem("cause_cycle", self._line_numbers[agent.created_position],
                              f"{agent.agent_id}'s creation names a message of its own subtree", agent.cause)
                return
            ancestor = self.agents[ancestor].parent_id
        agent.parent_id = holder
        self.agents[holder].children.append(agent.agent_id)
        self.changes.append((position, agent.agent_id))

