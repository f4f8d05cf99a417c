"""Full-text search over the sessions' search indexes: the query language, hits and polls.

A query intersects the postings of its words and qualifiers (the rarest first), checks phrases on those candidates
only, and stops at a page of hits. Words must all match (`word*` a prefix), "phrases", and agent:, role:, tool:,
session: (values may be quoted; a qualifier given twice means either); `is:error` keeps the entries that failed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import is_
from typing import Iterator

from viewer.core import model
from viewer.core.bounded_map import BoundedMap
from viewer.core.positions import intersection_chunks, union
from viewer.core.redact import shown

from .count import COUNT_SESSIONS, Tally
from .folder_words import FolderWords
from .index import AGENT, KIND, ROLE, TOOL, SearchIndex, searchable_text, tokens

QUALIFIERS = ("agent", "role", "tool", "session")
STATES = {"error": "failed", "failed": "failed", "failure": "failed"}  # is:<state> -> the Query flag it sets
SNIPPET_CHARS = 160
PHRASE_CHECKS = 5000  # phrase checks per request before a search hands back a continuation


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
    failed: bool = False  # is:error: only entries that failed (core/failures.py, filed by the facets)

    @property
    def empty(self) -> bool:
        return not (self.words or self.prefixes or self.phrases or self.agents or self.roles or self.tools
                    or self.failed)


PART = re.compile(r'(?:(\w+):)?(?:"([^"]*)"?|(\S+))')


def parse(text: str) -> Query:
    """Parse a query string; never fails (unknown `x:` is searched as text)."""
    query = Query()
    for match in PART.finditer(text or ""):
        qualifier, quoted, bare = match.group(1), match.group(2), match.group(3)
        value = quoted if quoted is not None else bare
        if qualifier and qualifier.lower() == "is" and quoted is None and value.lower() in STATES:
            setattr(query, STATES[value.lower()], True)
            continue
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
    lists += [union([index.get(t) for t in index.prefixed(prefix)]) for prefix in query.prefixes]
    if query.roles:
        lists.append(union([index.get(ROLE + r) for r in query.roles] + [index.get(KIND + r) for r in query.roles]))
    if query.tools:
        lists.append(union([index.get(TOOL + t) for t in query.tools]))
    if query.failed:  # the facets' list, caught up as a query catches the search index up
        s.facets.catch_up(s.count)
        lists.append(s.facets.failed)
    agents = None
    if query.agents:
        matched = matching_agents(s, query.agents)
        if len(matched) <= 1 or not lists:
            lists.append(union([index.get(AGENT + a) for a in matched]))
        else:
            agents = set(matched)
    return lists, agents


def requirements_key(s, query: Query) -> tuple:
    """What `requirements` make of a query in a session, besides its events, as the key of a count kept
    (search_count): the words, prefixes, roles and tools, and the agents its agent: values match now (an
    agent named later may match: then it is another count)."""
    words = sorted(set(query.words + [w for phrase in query.phrases for w in phrase]))
    agents = tuple(matching_agents(s, query.agents)) if query.agents else None
    return (tuple(words), tuple(sorted(query.prefixes)), tuple(sorted(query.roles)), tuple(sorted(query.tools)), agents,
            query.failed)


def candidates(s, query: Query, start: int = 0, required: tuple | None = None) -> Iterator[int]:
    """Positions >= start meeting every requirement, ascending (callers hold the session lock).

    The requirements (`required`, else made here) are intersected a chunk at a time
    (positions.intersection_chunks), so a page of hits costs a chunk or two.
    """
    lists, agents = required or requirements(s, query)
    for chunk in intersection_chunks(lists, start):
        if agents is not None:
            events = s.events  # read only here: a sleeping session without candidates stays asleep (sleeping)
            chunk = [p for p in chunk if events[p]["agent_id"] in agents]
        yield from chunk


def matches(s, query: Query, start: int = 0, limit: int | None = None,
            budget: int = PHRASE_CHECKS, required: tuple | None = None) -> tuple[list[int], int | None]:
    """Up to `limit` hit positions from `start`, and the position to continue from (None: no more).

    Phrases are checked on the text of each candidate; after `budget` checks the search stops
    and hands back where to continue, so one request stays fast even when the words of a rare
    phrase are each common.
    """
    checks = [Phrase(words) for words in query.phrases]
    found: list[int] = []
    for p in candidates(s, query, start, required):
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
           limit: int = 50, count_budget: int | None = None, count_sessions: int = COUNT_SESSIONS,
           counts: BoundedMap | None = None, folder_words: FolderWords | None = None,
           version: int | None = None) -> dict:
    """A page of hits in (session, file order), from `resume` ("<session>=<position>", as `next` gave).

    With `count_budget`, "total" says how many hits the query has in all (search_count.Tally), counted on the
    position lists the page's search intersects, session by session (at most `count_sessions` of them), before
    and after the page too; how far counts got is kept in `counts` (the app's) for the next page.
    With `folder_words` (the library's), a session it knows whole and that holds not every word of the query is
    passed over: the answer is the same, without looking into it. `version`: the library's, read before it listed
    `sessions`; what may be passed over is then kept until the library or the folder's words change.
    """
    query = parse(text)
    marker = pattern(query)
    scope = in_scope(sessions, query, session_id)
    words = list(dict.fromkeys(query.words + [w for phrase in query.phrases for w in phrase]))
    holding = (folder_words.holding(words, scope, version if scope is sessions else None)
               if folder_words is not None and words else None)
    hits: list[dict] = []
    parts: list[str] = []  # the cursor's, in the listing's order: `id=cursor` of each session paged
    following = None
    resume_id, resume_at = _split(resume)
    first = 0 if resume_id is None else next((i for i, s in enumerate(scope) if s.id == resume_id), len(scope))
    tally = Tally(count_budget, count_sessions, counts) if count_budget is not None else None
    same_key = None if query.agents else requirements_key(None, query)  # the same in every session: made once
    partial: dict[str, dict] = {}
    passed = holding.passed_over() if holding is not None else [None] * len(scope)
    looked = list(compress(range(len(scope)), map(is_, passed, repeat(None))))
    done = 0  # the sessions before it are searched, counted or passed over
    for i in [*looked, len(scope)] if not query.empty else ():
        # the sessions passed over since: no hit, searched whole, nothing counted (a visit each), as searching
        # each would have said; the parts of their cursors were made when their words were told
        paged_from = min(max(first, done), i) if following is None else i
        parts += passed[paged_from:i]
        if tally is not None:
            tally.pass_over(paged_from - done)
            tally.add_nothing(i - paged_from)
        done = i + 1
        if i == len(scope):
            break
        s = scope[i]
        paged = first <= i and following is None
        if not paged and (tally is None or tally.spent):
            if tally is not None:
                tally.skip()
            continue
        lacking = holding.lacks(s) if holding is not None else None
        if lacking is None and s.count == 0:  # no event (a group listed, not read yet): nothing to find or to make
            lacking = s.cursor_at(0)
        if lacking is not None:  # as one passed over: no hit, searched whole, nothing counted
            if paged:
                parts.append(f"{s.id}={lacking}")
            if tally is not None:
                tally.add_nothing()
            continue
        with s.lock:
            required = requirements(s, query)
            upto = _searched_upto(s, partial)  # searched and counted as far as its index is built
            if folder_words is not None:
                folder_words.take(s)
            if paged:
                start = resume_at if s.id == resume_id else 0
                found, more = matches(s, query, start, limit - len(hits), required=required)
                hits.extend(hit(s, p, marker) for p in found)
                parts.append(f"{s.id}={s.cursor_at(upto)}")
                if more is not None:
                    following = f"{s.id}={more}"
            if tally is not None:
                tally.add(s, required, same_key or requirements_key(s, query))
    data = {"query": text, "parsed": _describe(query), "hits": hits, "next": following,
            "cursor": ",".join(parts), "empty_query": query.empty, "partial": partial or None}
    if tally is not None:
        data["total"] = tally.total(bool(query.phrases), len(hits), whole=resume is None and following is None)
        if partial:  # the rest of the events are not searched yet: a lower bound
            data["total"] = {**data["total"], "exact": False, "at_most": None}
    return data


def _searched_upto(s, partial: dict) -> int:
    """Where a query of `s` (its lock held, `requirements` read) has looked: every event, or as far as its
    search index is built (the rest comes with later polls, as the index catches up); a session searched in
    part is noted in `partial`."""
    if s.search.complete:
        return s.count
    partial[s.id] = {"indexed": s.search.indexed, "events": s.count}
    return s.search.indexed


def updates(sessions: list, text: str, session_id: str | None, cursor: str, limit: int = 200) -> dict | None:
    """Hits among events that arrived after `cursor`; None when nothing arrived anywhere in scope.

    "reset" is True when a session's file was replaced since the cursor (the page reloads).
    """
    query = parse(text)
    marker = pattern(query)
    known = parse_cursor(cursor)
    hits, cursors, changed, reset, partial = [], {}, False, False, {}
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
            upto = _searched_upto(s, partial)
            # a burst: the rest comes with the next poll; else as far as the index was built
            cursors[s.id] = s.cursor_at(more if more is not None else max(after, upto))
    if not changed and not reset:
        return None
    return {"hits": hits, "cursor": format_cursor(cursors), "reset": reset, "partial": partial or None}


def unclosed_quote(text: str) -> str | None:
    """The phrase an unclosed quote runs to the end of the query (searched as a phrase all the same)."""
    if (text or "").count('"') % 2 == 0:
        return None
    return text[text.rindex('"') + 1 :].strip()


def format_cursor(cursors: dict[str, str]) -> str:
    """`<session>=<epoch>-<count>` joined by commas ('=' and ',' never occur in a session id)."""
    return ",".join(f"{sid}={c}" for sid, c in cursors.items())


def cursor_of(text: str, session_id: str) -> str | None:
    """One session's cursor in a `format_cursor` text (found without parsing them all: one a session of thousands)."""
    at = -1
    while (at := text.find(f"{session_id}=", at + 1)) != -1:
        if at == 0 or text[at - 1] == ",":
            end = text.find(",", at)
            return text[at + len(session_id) + 1:end if end != -1 else len(text)]
    return None


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
