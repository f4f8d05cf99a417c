"""Full-text search: an inverted index kept up to date as events arrive, and the query language.

Each session holds a SearchIndex: token -> sorted array of event positions. Tokens come from
an event's searchable text (content, tool names and arguments, agent names and ids), plus
hidden facet tokens for the qualifiers. A query intersects postings (the rare ones first),
then checks phrases on those few candidates only, and stops once a page of hits is found.

Query language (case-insensitive): words (all must match, whole words; `word*` is a prefix),
"quoted phrases", and the qualifiers agent:, role:, tool: and session: (values may be quoted;
the same qualifier given twice means either).
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left, bisect_right
from collections import deque
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import Iterator

from . import jsonio, model
from .incremental import Incremental
from .redact import shown
from .model import Event

TOKEN = re.compile(r"\w+")
QUALIFIERS = ("agent", "role", "tool", "session")
SNIPPET_CHARS = 160
CHUNK = 2048  # driving positions intersected at a time
PHRASE_CHECKS = 5000  # phrase checks per request before a search hands back a continuation
# Facet tokens start with a character no word token contains, so they never collide with text.
AGENT, ROLE, KIND, TOOL = "\x01a:", "\x01r:", "\x01k:", "\x01t:"
FACETS = (ROLE, KIND)  # kept by class (see SearchIndex), not posted
EVENT_KINDS = {model.AGENT_CREATED: "created", model.PIECE_OF_TEXT: "piece"}  # role:created, role:piece


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


# ASCII text: the same tokens as TOKEN.findall(text.lower()), by a byte table (word characters
# lowercased, the separator of texts kept, every other character a space) and a split, far
# cheaper than a regex.
_SEPARATOR = "\x01"
_ASCII_WORDS = bytes(c if chr(c).isalnum() or chr(c) in "_" + _SEPARATOR else ord(" ")
                     for c in range(128)).lower() + bytes(range(128, 256))


def token_lists(texts: list[str]) -> list[list[str]]:
    """tokens(text) of each text, for many texts at once: one translation and split of them all."""
    # A text that is not ASCII is tokenized by the regex and stands as its tokens: translating
    # those (lowercase word characters and spaces, in UTF-8) changes nothing.
    joined = _SEPARATOR.join(texts)
    if not joined.isascii():
        joined = _SEPARATOR.join([text if text.isascii() else " ".join(tokens(text)) for text in texts])
    if joined.count(_SEPARATOR) != len(texts) - 1:  # a text holds the separator itself
        return [tokens(text) for text in texts]
    return [part.split() for part in joined.encode().translate(_ASCII_WORDS).decode().split(_SEPARATOR)]


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


def _call_parts(call: dict) -> tuple[str, str]:
    """A logged tool call's name and its arguments as text (the rule of model.LoggedCall, unparsed)."""
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    arguments = function.get("arguments", call.get("arguments", ""))
    return model.call_name(call), arguments if isinstance(arguments, str) else jsonio.text(arguments)


def tool_names(s, position: int) -> set[str]:
    """Tools an entry calls, or the tool whose result it is (its `name`, else its call's)."""
    return _tool_names(s, position, s.events[position])


def _tool_names(s, position: int, event: Event) -> set[str]:
    names = {model.call_tool_key(c) for c in model.tool_calls_of(event)}
    if model.is_tool_result(event):
        if isinstance(event.get("name"), str):
            names.add(model.tool_key(event["name"]))
        call_position = s.call_position_for_result(position)
        if call_position is not None:
            call_id = event.get("tool_call_id")
            names.update(model.call_tool_key(c) for c in model.tool_calls_of(s.events[call_position])
                         if c.get("id") == call_id)
    return names


class _Postings(dict):
    """token -> positions; looking up a new token makes its (empty) positions and files a word in the vocabulary."""

    __slots__ = ("vocabulary",)

    def __init__(self, vocabulary: dict[str, list[str]]) -> None:
        super().__init__()
        self.vocabulary = vocabulary

    def __missing__(self, key: str) -> array:
        positions = self[key] = array("i")
        if key[0] != "\x01":
            self.vocabulary.setdefault(key[:2], []).append(key)
        return positions


class SearchIndex(Incremental):
    """token -> positions (ascending, each once) for one session; only ever appended to.

    Ingest does not wait for it: it holds the first `indexed` events and catches up (`catch_up`)
    in the background after each ingest batch, and before every query reads it, so a query
    always sees every event ingested.
    """

    def __init__(self, session=None) -> None:
        self.vocabulary: dict[str, list[str]] = {}  # the word tokens by their first two characters
        self._postings: dict[str, array] = _Postings(self.vocabulary)
        super().__init__(session)  # events 0 .. indexed-1 are in the postings
        # The role and kind facets are not posted per event: an event is in one class (its role and
        # kind tokens, a handful of classes per session), and a facet's positions are its class's,
        # or those of its classes merged when asked for.
        self._class_of: dict[tuple[str, ...], array] = {}  # role and kind tokens -> the class's positions
        self._classes_with: dict[str, list[array]] = {}  # role or kind token -> the positions of its classes
        self._merged: dict[str, tuple[array, int]] = {}  # role or kind token -> its positions, up to `indexed`
        # (agent, type, role[, kind]) -> its class's positions' append, (its agent token,), its agent's first position
        self._facets: dict[tuple, tuple] = {}

    @property
    def postings(self) -> dict[str, array]:
        self.catch_up()
        return self._postings

    def add(self, s, position: int) -> None:
        """Index the event at `position`, the next one not indexed."""
        self._extend(s, position, position + 1)

    def _extend(self, s, start: int, stop: int) -> None:
        """Index the events start .. stop-1 (start is `indexed`): the hot loop of building the index.

        Python code runs once per event, not per token: the batch's texts are tokenized together
        (`token_lists`), each event's tokens deduplicated by a set, what its agent, type and role
        decide is looked up once made (`_facets`), and the postings are appended to by a map.
        """
        facets = self._facets
        created, kind_of = model.AGENT_CREATED, model.perspective_kind
        texts: list[str] = []
        classes: list = []  # the append of each event's class's positions
        facet_keys: list[tuple[str, ...]] = []  # the agent and tool tokens of each event
        firsts: list[tuple[int, str]] = []  # events that are the first of their agent
        position = start
        for event in s.events[start:stop]:
            content = event.get("content")
            agent_id = event["agent_id"]
            event_type = event["event_type"]
            role = event.get("role")
            role = role if type(role) is str else None
            if "tool_calls" in event or "tool_call_id" in event or role == "tool":
                texts.append(searchable_text(event))
                kind = (agent_id, event_type, role, kind_of(event))
                names = _tool_names(s, position, event)
            else:  # (agent, type, role) decides the perspective kind; most texts are the content alone
                texts.append(content if type(content) is str and "name" not in event
                             and event_type != created else searchable_text(event))
                kind = (agent_id, event_type, role)
                names = None
            known = facets.get(kind)
            if known is None:
                known = self._facet(s, kind, event)
            append, agent_key, first = known
            classes.append(append)
            facet_keys.append(agent_key + tuple(TOOL + name for name in names) if names else agent_key)
            if first == position:
                firsts.append((position, agent_id))
            position += 1
        words = token_lists(texts)
        for position, agent_id in firsts:
            created_at = s.agents[agent_id].created_position
            if created_at is None or created_at > position:  # no agent_created named it yet: its first event does
                words[position - start].extend(tokens(agent_id))
        sets = list(map(set, words))
        self._post(sets, start)
        self._post(facet_keys, start)
        for append, position in zip(classes, range(start, stop)):
            append(position)
        self.indexed = stop

    def _facet(self, s, kind: tuple, event: Event) -> tuple:
        """What indexing an event of a (agent, type, role[, perspective kind]) takes: see `_facets`."""
        agent_id, event_type, role = kind[:3]
        keys = [KIND + (kind[3] if len(kind) > 3 else model.perspective_kind(event))]
        if role is not None:
            keys.append(ROLE + role.lower())
        if event_type in EVENT_KINDS:
            keys.append(KIND + EVENT_KINDS[event_type])
        keys = tuple(keys)
        positions = self._class_of.get(keys)
        if positions is None:
            positions = self._class_of[keys] = array("i")
            for key in keys:
                self._classes_with.setdefault(key, []).append(positions)
        agent = s.agents.get(agent_id)
        known = (positions.append, (AGENT + agent_id,), agent.first_position if agent is not None else -1)
        if agent is not None:  # an agent not known yet may be known later: not kept
            self._facets[kind] = known
        return known

    def _post(self, keys_of_events: list, start: int) -> None:
        """Append start, start+1 ... to the postings of the keys of each event (each key once per event)."""
        keys = chain.from_iterable(keys_of_events)
        counts = map(len, keys_of_events)
        positions = chain.from_iterable(map(repeat, range(start, start + len(keys_of_events)), counts))
        deque(map(array.append, map(self._postings.__getitem__, keys), positions), 0)

    def get(self, key: str) -> array:
        if key[:3] in FACETS:
            return self._facet_positions(key)
        return self.postings.get(key, _EMPTY)

    def _facet_positions(self, key: str) -> array:
        """The positions of a role or kind token: its class's, or its classes' merged (kept, extended as events come)."""
        self.catch_up()
        lists = self._classes_with.get(key, ())
        if len(lists) <= 1:
            return lists[0] if lists else _EMPTY
        merged, upto = self._merged.get(key, (None, 0))
        if merged is None or upto < self.indexed:
            tails = chain.from_iterable(positions[bisect_left(positions, upto):] for positions in lists)
            fresh = sorted(tails)  # a few ascending runs: sorting merges them
            if merged is None:
                merged = array("i", fresh)
            else:
                merged.extend(fresh)
            self._merged[key] = (merged, self.indexed)
        return merged

    def prefixed(self, prefix: str) -> list[str]:
        """Word tokens starting with `prefix`."""
        self.catch_up()
        buckets = ([self.vocabulary.get(prefix[:2], [])] if len(prefix) >= 2
                   else [words for key, words in self.vocabulary.items() if key.startswith(prefix)])
        return [t for words in buckets for t in words if t.startswith(prefix)]


_EMPTY = array("i")


# --- the query language ------------------------------------------------------------------------

@dataclass
class Query:
    words: list[str] = field(default_factory=list)      # whole tokens
    prefixes: list[str] = field(default_factory=list)   # `word*`
    phrases: list[list[str]] = field(default_factory=list)  # token sequences, checked on candidates
    agents: list[str] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.words or self.prefixes or self.phrases or self.agents or self.roles or self.tools)


PART = re.compile(r'(?:(\w+):)?(?:"([^"]*)"?|(\S+))')


def parse(text: str) -> Query:
    """Parse a query string; never fails (unknown `x:` is searched as text)."""
    query = Query()
    for match in PART.finditer(text or ""):
        qualifier, quoted, bare = match.group(1), match.group(2), match.group(3)
        value = quoted if quoted is not None else bare
        if qualifier and qualifier.lower() in QUALIFIERS:
            value = value.strip().lower()
            if value:
                getattr(query, qualifier.lower() + "s").append(value)
            continue
        if qualifier:  # not a qualifier we know: search the whole thing as text
            value = match.group(0)
            quoted = None
        if quoted is None and value.endswith("*") and len(tokens(value)) == 1:
            query.prefixes.append(tokens(value)[0])
            continue
        words = tokens(value)
        if len(words) == 1 and quoted is None:
            query.words.append(words[0])
        elif words:
            query.phrases.append(words)
    return query


def pattern(query: Query) -> re.Pattern | None:
    """A regex finding every word, prefix and phrase of the query in a text (for checks and marks)."""
    alternatives = [r"\W+".join(map(re.escape, p)) for p in query.phrases]
    alternatives += [re.escape(w) for w in query.words]
    alternatives += [re.escape(p) + r"\w*" for p in query.prefixes]
    if not alternatives:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(sorted(alternatives, key=len, reverse=True)) + r")(?!\w)",
                      re.IGNORECASE)


class Phrase:
    """Whether a text holds a phrase: its words in order, separated by anything but word characters."""

    def __init__(self, words: list[str]):
        # Starting with a literal (no look-behind, no IGNORECASE) lets re skip ahead fast;
        # the left word boundary is checked by hand.
        self.regex = re.compile(r"\W+".join(map(re.escape, words)) + r"(?!\w)")

    def __call__(self, lowered: str) -> bool:
        found = self.regex.search(lowered)
        while found is not None:
            start = found.start()
            if start == 0 or not _WORD_CHAR.match(lowered, start - 1):
                return True
            found = self.regex.search(lowered, start + 1)
        return False


_WORD_CHAR = re.compile(r"\w")


# --- candidates ------------------------------------------------------------------------------------

def _union(lists: list) -> list[int] | array:
    lists = [l for l in lists if len(l)]
    if len(lists) <= 1:
        return lists[0] if lists else _EMPTY
    return sorted(set().union(*lists))


def _contains(sorted_positions, p: int, lo: int, hi: int) -> bool:
    i = bisect_left(sorted_positions, p, lo, hi)
    return i < hi and sorted_positions[i] == p


def matching_agents(s, values: list[str]) -> list[str]:
    """Agents whose id or name contains any of the values (case-insensitive)."""
    return [a for a in s.agent_order
            if any(v in a.lower() or v in s.agents[a].display_name.lower() for v in values)]


def requirements(s, query: Query) -> tuple[list, set[str] | None]:
    """One sorted position list per condition (a hit is in all), and the agents a hit must belong to.

    Several matching agents are checked on the candidates rather than merged into one long list.
    """
    index: SearchIndex = s.search
    words = dict.fromkeys(query.words + [w for phrase in query.phrases for w in phrase])
    lists: list = [index.get(w) for w in words]
    lists += [_union([index.get(t) for t in index.prefixed(prefix)]) for prefix in query.prefixes]
    if query.roles:
        lists.append(_union([index.get(ROLE + r) for r in query.roles] + [index.get(KIND + r) for r in query.roles]))
    if query.tools:
        lists.append(_union([index.get(TOOL + t) for t in query.tools]))
    agents = None
    if query.agents:
        matched = matching_agents(s, query.agents)
        if len(matched) <= 1 or not lists:
            lists.append(_union([index.get(AGENT + a) for a in matched]))
        else:
            agents = set(matched)
    return lists, agents


def candidates(s, query: Query, start: int = 0) -> Iterator[int]:
    """Positions >= start meeting every requirement, ascending (callers hold the session lock).

    The shortest list drives, a chunk at a time, so a page of hits costs a chunk or two. Within
    a chunk each other list is checked by binary search when it is much longer than what is
    left, else by a set of its positions in the chunk's range.
    """
    lists, agents = requirements(s, query)
    if not lists or any(not len(l) for l in lists):
        return
    lists.sort(key=len)
    driver, others = lists[0], lists[1:]
    events = s.events
    i = bisect_left(driver, start)
    while i < len(driver):
        chunk = list(driver[i:i + CHUNK])
        i += CHUNK
        lo, hi = chunk[0], chunk[-1]
        for other in others:
            a = bisect_left(other, lo)
            b = bisect_right(other, hi, a)
            if b - a > 16 * len(chunk):
                chunk = [p for p in chunk if _contains(other, p, a, b)]
            else:
                inside = set(other[a:b])
                chunk = [p for p in chunk if p in inside]
            if not chunk:
                break
        if agents is not None:
            chunk = [p for p in chunk if events[p]["agent_id"] in agents]
        yield from chunk


def matches(s, query: Query, start: int = 0, limit: int | None = None,
            budget: int = PHRASE_CHECKS) -> tuple[list[int], int | None]:
    """Up to `limit` hit positions from `start`, and the position to continue from (None: no more).

    Phrases are checked on the text of each candidate; after `budget` checks the search stops
    and hands back where to continue, so one request stays fast even when the words of a rare
    phrase are each common.
    """
    checks = [Phrase(words) for words in query.phrases]
    found: list[int] = []
    for p in candidates(s, query, start):
        if limit is not None and len(found) == limit:
            return found, p
        if checks:
            if budget == 0:
                return found, p
            budget -= 1
            text = searchable_text(s.events[p]).lower()
            if not all(check(text) for check in checks):
                continue
        found.append(p)
    return found, None


# --- snippets: the one place a hit's log text is cut out for display ------------------------------

def snippet(text: str, marker: re.Pattern | None, width: int = SNIPPET_CHARS) -> list[tuple[str, bool]]:
    """A window of `text` around its first match, as (piece, is_match) pairs.

    Pages wrap the matching pieces in <mark> through autoescape, so no log text is ever markup.
    Callers pass text already masked (redact.shown), so a window never cuts a secret in two.
    """
    text = " ".join(text.split())
    first = marker.search(text) if marker else None
    begin = 0
    if first is not None and first.end() > width:
        begin = max(0, first.start() - width // 3)
    end = min(len(text), begin + width)
    if first is not None and first.end() > end:  # a long phrase: show it whole
        end = first.end()
    window = text[begin:end]
    pieces: list[tuple[str, bool]] = [("…", False)] if begin else []
    at = 0
    for m in (marker.finditer(window) if marker else ()):
        if m.start() > at:
            pieces.append((window[at:m.start()], False))
        pieces.append((m.group(0), True))
        at = m.end()
    if at < len(window):
        pieces.append((window[at:], False))
    if end < len(text):
        pieces.append(("…", False))
    return pieces


# --- searching sessions: hits as plain data (the views add where each is shown) ------------------------------------

def hit(s, position: int, marker: re.Pattern | None) -> dict:
    event = s.events[position]
    agent = s.agents.get(event["agent_id"])
    pieces = snippet(shown(searchable_text(event)), marker)
    return {
        "session": s.id,
        "session_name": s.name,
        "position": position,
        "message_id": event["message_id"],
        "agent_id": event["agent_id"],
        "agent_name": agent.display_name if agent else event["agent_id"],
        "role": event.get("role") if isinstance(event.get("role"), str) else None,
        "kind": model.perspective_kind(event),
        "event_type": event["event_type"],
        "pieces": pieces,
        "snippet": "".join(text for text, _ in pieces),
    }


def in_scope(sessions: list, query: Query, session_id: str | None) -> list:
    """The sessions a query looks at: one (`session_id`) or all, narrowed by session: qualifiers."""
    if session_id:
        sessions = [s for s in sessions if s.id == session_id]
    if query.sessions:
        sessions = [s for s in sessions
                    if any(v in s.id.lower() or v in s.name.lower() for v in query.sessions)]
    return sessions


def search(sessions: list, text: str, session_id: str | None = None, resume: str | None = None,
           limit: int = 50) -> dict:
    """A page of hits in (session, file order), from `resume` ("<session>=<position>", as `next` gave)."""
    query = parse(text)
    marker = pattern(query)
    scope = in_scope(sessions, query, session_id)
    hits: list[dict] = []
    cursors: dict[str, str] = {}
    following = None
    resume_id, resume_at = _split(resume)
    if resume_id is not None:
        ids = [s.id for s in scope]
        scope = scope[ids.index(resume_id):] if resume_id in ids else []
    if not query.empty:
        for s in scope:
            start = resume_at if s.id == resume_id else 0
            with s.lock:
                found, more = matches(s, query, start, limit - len(hits))
                hits.extend(hit(s, p, marker) for p in found)
                cursors[s.id] = s.cursor
            if more is not None:
                following = f"{s.id}={more}"
                break
    return {"query": text, "parsed": _describe(query), "hits": hits, "next": following,
            "cursor": format_cursor(cursors), "empty_query": query.empty}


def updates(sessions: list, text: str, session_id: str | None, cursor: str, limit: int = 200) -> dict | None:
    """Hits among events that arrived after `cursor`; None when nothing arrived anywhere in scope.

    "reset" is True when a session's file was replaced since the cursor (the page reloads).
    """
    query = parse(text)
    marker = pattern(query)
    known = parse_cursor(cursor)
    hits, cursors, changed, reset = [], {}, False, False
    for s in in_scope(sessions, query, session_id):
        with s.lock:
            after = s.position_after(known[s.id]) if s.id in known else 0
            if after is None:
                reset = True
                continue
            cursors[s.id] = s.cursor
            if after == s.count:
                continue
            changed = True
            if query.empty:
                continue
            found, more = matches(s, query, after, limit)
            hits.extend(hit(s, p, marker) for p in found)
            if more is not None:  # a burst: the rest comes with the next poll
                cursors[s.id] = s.cursor_at(more)
    if not changed and not reset:
        return None
    return {"hits": hits, "cursor": format_cursor(cursors), "reset": reset}


def format_cursor(cursors: dict[str, str]) -> str:
    """`<session>=<epoch>-<count>` joined by commas ('=' and ',' never occur in a session id)."""
    return ",".join(f"{sid}={c}" for sid, c in cursors.items())


def parse_cursor(text: str | None) -> dict[str, str]:
    out = {}
    for part in (text or "").split(","):
        sid, sep, value = part.partition("=")
        if sep and sid:
            out[sid] = value
    return out


def _split(resume: str | None) -> tuple[str | None, int]:
    if not resume:
        return None, 0
    sid, _, position = resume.rpartition("=")
    try:
        return (sid or None), max(0, int(position))
    except ValueError:
        return None, 0


def _describe(query: Query) -> dict:
    return {"words": query.words, "prefixes": query.prefixes, "phrases": [" ".join(p) for p in query.phrases],
            "agent": query.agents, "role": query.roles, "tool": query.tools, "session": query.sessions}


def tool_choices(s) -> list[str]:
    """Every tool name the session has called or answered, for the agent page's filter."""
    return sorted(s.tool_names)  # kept at ingest: the page does not wait for the search index
