"""How far the server has come with its folder: the sessions listed, those not read yet and those whose search index
is still being built. What `/` says while a first read of thousands of sessions goes on, and what `/api/status`
answers a script waiting for a folder to be searchable whole."""

from __future__ import annotations

from collections import Counter

from viewer.index import sleeping


def reading(sessions) -> dict:
    """{"sessions", "unread", "indexing"} of `sessions` (read without their locks and without waking any: a count
    a poll may ask for ten times a second over 20,000 sessions)."""
    states = Counter(map(sleeping.read_state, sessions))
    return {"sessions": len(sessions), "unread": states["unread"], "indexing": states["indexing"]}
