"""The sessions list's rows: each kept, and made again only when something it shows changed.

A row is made from its session's key (`key_of`: every value it shows, read under the session's lock) alone, so a
row kept under an equal key is the row that would be made now: it cannot go stale. A folder of 20,000 sessions is
listed at every poll; most rows are taken as kept (their key read, some microseconds), not made again.
"""

from __future__ import annotations

from collections.abc import Callable

from viewer.core import times


def key_of(s) -> tuple:
    """Every value the row of `s` shows (read without waking a sleeping session: see sleeping.LISTED)."""
    with s.lock:
        members = s.members
        return (s.id, s.name, s.relpath, s.shown_count, s.agent_count, s.problem_count, s.failure_count,
                s.updated_at, s.format, s.format_reason, s.project,
                tuple([m["rel"] for m in members.values()]) if members else None, s.title, s.first_time, s.last_time)


def row_of(key: tuple, url: str) -> dict:
    """The row a key shows, with the session's page at `url`."""
    (session_id, name, relpath, shown, agents, problems, failures, updated_at, fmt, reason, project, files, title,
     first_time, last_time) = key
    return {
        "id": session_id,
        "name": name,
        "path": relpath,
        "events": shown,  # what users see, not internal events
        "agents": agents,
        "problems": problems,
        "failures": failures,
        "updated_at": updated_at,
        "url": url,
        "format": fmt.name,
        "format_label": fmt.label,
        "format_reason": reason or None,
        "project": project,
        "files": list(files) if files is not None else None,
        "hides": sorted(fmt.hides),
        "title": title,
        "started_at": times.seconds(first_time),
        "active_at": times.seconds(last_time),
    }


class Rows:
    """The rows last made, by session id, with their keys (one per app: its URLs are its own)."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[tuple, dict]] = {}
        self._urls: str | None = None  # the URLs the kept rows hold (url_of of an empty id): others, none kept

    def rows(self, sessions: list, url_of: Callable[[str], str]) -> list[dict]:
        """The row of each session, in order; those whose key changed are made again. A row is shared: not
        to be changed (copy it to add to it)."""
        urls = url_of("")
        kept = self._kept if urls == self._urls else {}
        now: dict[str, tuple[tuple, dict]] = {}
        out = []
        for s in sessions:
            key = key_of(s)
            found = kept.get(key[0])
            if found is None or found[0] != key:
                found = (key, row_of(key, url_of(key[0])))
            now[key[0]] = found
            out.append(found[1])
        if len(now) >= len(kept):  # a whole listing: sessions gone from it are dropped
            self._kept, self._urls = now, urls
        else:
            kept.update(now)
        return out
