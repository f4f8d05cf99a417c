"""The full-text search index of one session: token -> sorted array of event positions.

Tokens come from an event's searchable text (content, tool names and arguments, agent names and ids), plus hidden
tokens for the qualifiers (agent:, role:, tool:). Only ever appended to; it catches up with the session after
each ingest batch and before every query.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections import defaultdict
from itertools import chain

from viewer.core import jsonio, model
from viewer.core.kept import Items, array_from, array_state
from viewer.core.incremental import Incremental
from viewer.core.model import Event
from viewer.core.positions import POSITIONS_TYPE, merge

from .packed import PackedPostings
from .words import tokens, word_postings

# A query takes in the events not indexed yet when there are at most this many (some tens of milliseconds):
# a session further behind (a big file being indexed in the background) is searched as far as it is indexed
# (`complete` says whether that is all), and the query never waits, nor makes other requests wait, for the rest.
QUERY_BUDGET = 4096

# Field tokens (what the qualifiers match) start with a character no word token contains, so they never
# collide with text.
AGENT, ROLE, KIND, TOOL = "\x01a:", "\x01r:", "\x01k:", "\x01t:"
CLASS_FIELDS = (ROLE, KIND)  # kept by class (see SearchIndex), not posted
EVENT_KINDS = {model.AGENT_CREATED: "created", model.PIECE_OF_TEXT: "piece"}  # role:created, role:piece


def far_behind(indexed: int, count: int) -> bool:
    """Whether an index of `indexed` of a session's `count` events is further behind than a query takes in."""
    return count - indexed > QUERY_BUDGET


def searchable_text(event: Event) -> str:
    """The text of an event that search matches and snippets are cut from."""
    parts = []
    if event.get("event_type") == model.AGENT_CREATED:
        parts.extend(str(event.get(k)) for k in ("name", "agent_id", "language_model") if event.get(k))
    content = model.content_of(event)
    if content:
        parts.append(content)
    for call in model.tool_calls_of(event):  # raw, not parsed: this runs for every event ingested
        name, arguments = _call_parts(call)
        parts.append(f"{name}({arguments})")
    if model.is_tool_result(event) and isinstance(event.get("name"), str):
        parts.append(event["name"])
    return "\n".join(parts)


def touches_tools(event: Event) -> bool:
    """Whether an event calls tools or is a tool's result (else it has no tool to find)."""
    return "tool_calls" in event or "tool_call_id" in event or event.get("role") == "tool"


def index_text(event: Event) -> str:
    """The text whose words the index posts for an event: its searchable text, which for most is its content."""
    content = event.get("content")
    if (type(content) is str and "name" not in event and event["event_type"] != model.AGENT_CREATED
            and not touches_tools(event)):
        return content
    return searchable_text(event)


def _call_parts(call: dict) -> tuple[str, str]:
    """A logged tool call's name and its arguments as text (the rule of model.LoggedCall, unparsed), as searched."""
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    arguments = function.get("arguments", call.get("arguments", ""))
    return model.call_name(call), _unescaped(arguments if isinstance(arguments, str) else jsonio.text(arguments))


def _unescaped(arguments: str) -> str:
    """Arguments' JSON text with its escaped line breaks, tabs and quotes made the characters they stand for: a
    word after a line break of a written file or a command is then a word of its own (not "nimport" of
    "\\nimport"), a phrase across lines is found, and a snippet shows the break as a space. An escaped backslash
    stays one backslash, so "\\\\new" keeps "new"."""
    if "\\" not in arguments:
        return arguments
    return "\\".join([part.replace("\\n", "\n").replace("\\t", "\t").replace("\\r", "\r").replace('\\"', '"')
                      for part in arguments.split("\\\\")])


def tool_names(s, position: int, event: Event | None = None, read: tuple[int, list] | None = None) -> set[str]:
    """Tools an entry calls, or the tool whose result it is (its `name`, else its call's); `event`: the entry at
    `position`, when the caller has it read already; `read`: (first position, events) the caller read together."""
    event = s.events[position] if event is None else event
    names = set(own_tool_names(event))
    if model.is_tool_result(event):
        names.update(called_tool_names(s, position, event["agent_id"], event.get("tool_call_id"), read))
    return names


def own_tool_names(event: Event) -> tuple[str, ...]:
    """The tools an entry calls, and the `name` a tool result gives itself: what the entry alone says."""
    names = {model.call_tool_key(c) for c in model.tool_calls_of(event)}
    if model.is_tool_result(event) and isinstance(event.get("name"), str):
        names.add(model.tool_key(event["name"]))
    return tuple(names)


def called_tool_names(s, position: int, agent_id: str, call_id, read: tuple[int, list] | None = None) -> set[str]:
    """The tools of the call a tool result at `position` answers (its agent's latest call of that id before it).

    `read`: (first position, events) already read by the caller; a call is mostly a few events before its result,
    so indexing a batch takes it from there instead of reading its line again (a Claude Code entry is read back
    from its file)."""
    call_position = s.call_position_of(agent_id, call_id, position)
    if call_position is None:
        return set()
    call = event_at(s, call_position, read)
    return {model.call_tool_key(c) for c in model.tool_calls_of(call) if c.get("id") == call_id}


def event_at(s, position: int, read: tuple[int, list] | None) -> Event:
    """The session's event at `position`: from `read` ((first position, events) a walk read together) if it holds
    it, else read on its own (a line read and parsed again, for an event not cached)."""
    first, events = read or (0, ())
    return events[position - first] if first <= position < first + len(events) else s.events[position]


def calls_answered_within(events: list, infos: list[tuple]) -> dict[int, set[str]]:
    """What `called_tool_names` finds for each tool result among consecutive `events` whose call is among them too
    (by the index's filing rule: a transcript entry's calls with a string id, the latest before the result or in
    it): {offset in events: the call's tools}. `infos` are their `event_fields`. A result whose call lies before
    them is not in it: it needs the session (the search worker sends these, so merging its run reads no call
    back from the file)."""
    latest: dict[tuple, dict] = {}  # (agent, call id) -> the entry holding its latest call so far
    answered = {}
    for offset, (event, (agent_id, event_type, _, _, _, result, call_id)) in enumerate(zip(events, infos)):
        if event_type == model.TRANSCRIPT_ENTRY and "tool_calls" in event:
            for call in model.tool_calls_of(event):
                if isinstance(call.get("id"), str):
                    latest[(agent_id, call["id"])] = event
        if result and isinstance(call_id, str) and (call := latest.get((agent_id, call_id))) is not None:
            answered[offset] = {model.call_tool_key(c) for c in model.tool_calls_of(call) if c.get("id") == call_id}
    return answered


def event_fields(event: Event) -> tuple:
    """What indexing an event needs of it besides its words (see run_postings): (agent, type, role, perspective kind
    (None unless it touches tools: else its type and role decide it), the tools it names itself, whether it is a
    tool result, the call id it answers)."""
    role = event.get("role")
    role = role if type(role) is str else None
    if not touches_tools(event):
        return event["agent_id"], event["event_type"], role, None, (), False, None
    result = model.is_tool_result(event)
    return (event["agent_id"], event["event_type"], role, model.perspective_kind(event), own_tool_names(event),
            result, event.get("tool_call_id") if result else None)


def run_postings(events: list, start: int) -> tuple[dict, dict, list, list]:
    """What indexing consecutive events at positions start, start+1, ... adds that the events alone decide (the
    search worker finds it in its process; the index takes it in with `SearchIndex.take_run`):
    - classes: the role and kind tokens of a class of events (`class_keys`) -> its events' positions;
    - postings: token -> ascending positions: the words of each event's `index_text`, its agent token, and the
      tool tokens of the tools it names and of the call it answers when that call is among the events
      (`calls_answered_within`);
    - unanswered: (position, agent, call id, the tools it names itself) of each tool result whose call is before
      the events: the session finds that call's tools;
    - agents: the agents of the events (the session knows whose first event is among them)."""
    infos = list(map(event_fields, events))
    answered = calls_answered_within(events, infos)
    postings = word_postings(list(map(index_text, events)), start)
    keys_of: dict[tuple, tuple] = {}  # (type, role, perspective kind if it touches tools) -> its class's keys
    classes: dict[tuple, list[int]] = {}
    fields: dict[str, list[int]] = defaultdict(list)  # field token -> positions
    unanswered = []
    position = start
    for offset, (agent_id, event_type, role, tool_kind, names, result, call_id) in enumerate(infos):
        kind = (event_type, role, tool_kind)
        keys = keys_of.get(kind)
        if keys is None:  # the perspective kind of an event that does not touch tools: its type's and role's
            keys = keys_of[kind] = class_keys(event_type, role, tool_kind or model.perspective_kind(events[offset]))
        positions = classes.get(keys)
        if positions is None:
            classes[keys] = [position]
        else:
            positions.append(position)
        fields[AGENT + agent_id].append(position)
        if result:
            called = answered.get(offset)
            if called is None:
                unanswered.append((position, agent_id, call_id, names))
            else:
                names = set(names) | called
        for name in names:
            fields[TOOL + name].append(position)
        position += 1
    for token, positions in fields.items():
        postings[token] = array(POSITIONS_TYPE, positions)
    agents = [token[len(AGENT):] for token in fields if token.startswith(AGENT)]
    return classes, postings, unanswered, agents


def class_keys(event_type: str, role: str | None, perspective: str) -> tuple[str, ...]:
    """The role and kind tokens of the events of a type, role and perspective kind (their class: see SearchIndex)."""
    keys = [KIND + perspective]
    if role is not None:
        keys.append(ROLE + role.lower())
    if event_type in EVENT_KINDS:
        keys.append(KIND + EVENT_KINDS[event_type])
    return tuple(keys)


class _Postings(dict):
    """token -> positions; looking up a new token makes its (empty) positions, notes a new word for the folder's
    words (FolderWords) and files it in the vocabulary once that is made.

    The vocabulary (the word tokens by their first two characters, what a prefix looks up) is made when a prefix is
    first looked up: most sessions are read whole and packed before any prefix is."""

    __slots__ = ("_vocabulary", "noted")

    def __init__(self, noted: list[str] | None = None) -> None:
        super().__init__()
        self._vocabulary: dict[str, list[str]] | None = None
        self.noted = [] if noted is None else noted

    def __missing__(self, key: str) -> array:
        positions = self[key] = array(POSITIONS_TYPE)
        if key[0] != "\x01":
            if self._vocabulary is not None:
                self._vocabulary.setdefault(key[:2], []).append(key)
            self.noted.append(key)
        return positions

    def take_first(self, posted: dict[str, array]) -> None:
        """Take the postings of a first run into these empty ones as looking each token up would: the same arrays,
        each word noted, without a call per token."""
        dict.update(self, posted)
        self.noted.extend([token for token in posted if token[0] != "\x01"])
        self._vocabulary = None  # made again when a prefix is looked up, with these words

    @property
    def vocabulary(self) -> dict[str, list[str]]:
        vocabulary = self._vocabulary
        if vocabulary is None:  # made whole before it is kept: a reader never sees part of it
            vocabulary = {}
            for token in self:
                if token[0] != "\x01":
                    vocabulary.setdefault(token[:2], []).append(token)
            self._vocabulary = vocabulary
        return vocabulary


class SearchIndex(Incremental):
    """token -> positions (ascending, each once) for one session; only ever appended to.

    Ingest does not wait for it: it holds the first `indexed` events and catches up (`catch_up`)
    in the background after each ingest batch, and before a query reads it when few events wait,
    so a query sees every event ingested unless the index is far behind (then it says it is partial).
    """

    def __init__(self, session=None) -> None:
        # The word tokens first posted since the events before `noted_from` were indexed: what the folder's words
        # (search.folder_words) have not been told of this session yet
        self.noted: list[str] = []
        self.noted_from = 0
        self._postings: _Postings | PackedPostings = _Postings(self.noted)
        super().__init__(session)  # events 0 .. indexed-1 are in the postings
        # The role and kind field tokens are not posted per event: an event is in one class (its role and
        # kind tokens, a handful of classes per session), and a token's positions are its class's,
        # or those of its classes merged when asked for.
        self._class_of: dict[tuple[str, ...], array] = {}  # role and kind tokens -> the class's positions
        self._classes_with: dict[str, list[array]] = {}  # role or kind token -> the positions of its classes
        self._merged: dict[str, tuple[array, int]] = {}  # role or kind token -> its positions, up to `indexed`

    # What it holds: each kept by `state`, or made again from what is (the classes by token) or
    # when asked for (merged lists), or the session it reads
    HOLDS = frozenset({"_postings", "indexed", "_session", "_class_of", "_classes_with", "_merged",
                       "noted", "noted_from"})

    def state(self):
        """(name, plain value) of what it keeps (see the persistent cache: store.index_state); the postings of a
        token may be cut in pieces, given back in order."""
        yield "indexed", self.indexed
        yield "classes", {k: array_state(v) for k, v in self._class_of.items()}
        if self.packed:
            yield "packed_postings", self._postings.state()
        else:
            yield "postings", Items(self._postings, array_state, pieces=True)

    def restore(self, name: str, value) -> None:
        """Take back one part `state` gave (the postings may come in several: each adds to them)."""
        if name == "indexed":
            self.indexed = value
        elif name == "classes":
            for keys, kept in value.items():
                positions = self._class_of[keys] = array_from(kept)
                for key in keys:
                    self._classes_with.setdefault(key, []).append(positions)
        elif name == "packed_postings":
            self._postings = PackedPostings.from_state(value)
        elif name == "postings":
            postings = self._postings
            for token, kept in value.items():
                postings[token].frombytes(kept[1])
        else:
            raise ValueError(f"a search index keeps no {name!r}")
        # what it took back is what it was built from: noted as of its events indexed (FolderWords.take)
        self.noted.clear()
        self.noted_from = self.indexed

    @property
    def postings(self) -> dict[str, array]:
        self._catch_up_if_close()
        return self._postings

    def _catch_up_if_close(self) -> None:
        """Before a read: take in the events not indexed yet when they are few; else read what is indexed.

        All or nothing, so the lists one query reads (under the session's lock, which indexing takes too)
        are all of the same events."""
        s = self._session() if self._session is not None else None
        if s is not None and not far_behind(self.indexed, s.count):
            self.catch_up(s.count)

    @property
    def complete(self) -> bool:
        """Whether every event of the session is indexed (else a query sees only the first `indexed`)."""
        s = self._session() if self._session is not None else None
        return s is None or self.indexed >= s.count

    def add(self, s, position: int) -> None:
        """Index the event at `position`, the next one not indexed."""
        self._extend(s, position, position + 1)

    def _extend(self, s, start: int, stop: int, events: list | None = None) -> None:
        """Index the events start .. stop-1 (start is `indexed`)."""
        if events is None:
            events = s.events.walk(start, stop)  # read together, not cached
        self.take_run(s, start, stop, run_postings(events, start))

    def pack(self, interned: bool = True) -> bool:
        """Pack the postings of a complete index whose session will not grow (see search_packed); whether it did.
        `interned`: see PackedPostings.packed (False for a session whose index is saved and dropped at once)."""
        if self.packed or not self.complete:
            return False
        self._postings = PackedPostings.packed(self._postings, self.indexed, interned)
        return True

    @property
    def vocabulary(self) -> dict[str, list[str]]:
        """The word tokens of an unpacked index by their first two characters (a packed one looks prefixes up by
        bisection)."""
        return {} if self.packed else self._postings.vocabulary

    @property
    def packed(self) -> bool:
        return isinstance(self._postings, PackedPostings)

    def _unpacked(self) -> _Postings:
        """The postings to extend: packed ones (a session that grew after all) made a dict of arrays again."""
        if self.packed:
            packed, self._postings = self._postings, _Postings(self.noted)
            noted = len(self.noted)
            for token, positions in packed.items():
                self._postings[token].fromlist(positions.tolist())  # packed positions may be 2 bytes each
            del self.noted[noted:]  # posted before: not new words
        return self._postings

    def take_run(self, s, start: int, stop: int, run: tuple[dict, dict, list, list]) -> None:
        """Index the events start .. stop-1 (start is `indexed`): `run` is their `run_postings`, found here or by
        the search worker (reading them elsewhere).

        Python code runs once per class and token of the run, not per event: the events' texts are tokenized
        together (`word_postings`) and their field tokens posted where they were read; here each token's and
        each class's positions extend the index's. Only what needs the session is looked up: the tools of a
        result whose call came before the run, and the agents whose first event is in it."""
        classes, posted, unanswered, agents = run
        postings, class_of = self._unpacked(), self._class_of
        for keys, positions in classes.items():
            class_positions = class_of.get(keys)
            if class_positions is None:
                class_positions = class_of[keys] = array(POSITIONS_TYPE)
                for key in keys:
                    self._classes_with.setdefault(key, []).append(class_positions)
            class_positions.extend(positions)
        called: dict[str, list[int]] = {}  # tool token -> results whose call came before the run
        for position, agent_id, call_id, own in unanswered:
            for name in called_tool_names(s, position, agent_id, call_id).difference(own):
                called.setdefault(TOOL + name, []).append(position)
        for token, positions in called.items():
            before = posted.get(token)
            posted[token] = array(POSITIONS_TYPE, sorted(chain(before, positions)) if before else positions)
        if postings:
            for token, positions in posted.items():  # each run's positions come after every one posted before
                postings[token].extend(positions)
        else:  # the first run (a small session's only one): its arrays are taken as they are, its words noted at once
            postings.take_first(posted)
        # An agent's first event holds its id's words (unless an agent_created named it first), in their place.
        for agent_id in agents:
            agent = s.agents.get(agent_id)
            position = agent.first_position if agent is not None else -1
            if not start <= position < stop or (agent.created_position is not None
                                                and agent.created_position <= position):
                continue
            for word in set(tokens(agent.agent_id)):
                positions = postings[word]
                at = bisect_left(positions, position)
                if at == len(positions) or positions[at] != position:
                    positions.insert(at, position)
        self.indexed = stop

    def get(self, key: str) -> array:
        if key[:3] in CLASS_FIELDS:
            return self._class_positions(key)
        return self.postings.get(key, _EMPTY)

    def _class_positions(self, key: str) -> array:
        """The positions of a role or kind token: its class's, or its classes' merged (kept, extended as events come)."""
        self._catch_up_if_close()
        lists = self._classes_with.get(key, ())
        if len(lists) <= 1:
            return lists[0] if lists else _EMPTY
        merged, upto = self._merged.get(key, (None, 0))
        if merged is None or upto < self.indexed:
            fresh = merge([kept[bisect_left(kept, upto):] for kept in lists])
            if merged is None:
                merged = array(POSITIONS_TYPE, fresh)
            else:
                merged.extend(fresh)
            self._merged[key] = (merged, self.indexed)
        return merged

    def words(self) -> list[str]:
        """Every word token it holds (not the field tokens)."""
        if self.packed:
            return self._postings.prefixed("")
        return [token for token in self._postings if token[0] != "\x01"]

    def prefixed(self, prefix: str) -> list[str]:
        """Word tokens starting with `prefix`."""
        self._catch_up_if_close()
        if self.packed:
            return self._postings.prefixed(prefix)
        buckets = ([self.vocabulary.get(prefix[:2], [])] if len(prefix) >= 2
                   else [words for key, words in self.vocabulary.items() if key.startswith(prefix)])
        return [t for words in buckets for t in words if t.startswith(prefix)]


_EMPTY = array(POSITIONS_TYPE)
