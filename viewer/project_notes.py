"""What the sessions of one project folder say of each other (Claude Code: a summary at the top of a later file
titles the session holding its leafUuid), passed between them as each is read (Normalizer.orphans / take)."""

from __future__ import annotations

from collections.abc import Callable

from .index import SessionIndex


def pass_notes(notes: dict, session: SessionIndex, others: Callable[[], list[SessionIndex]]) -> bool:
    """What `session` just read goes into the project's `notes` and to the `others` (asked for only when there is
    something new), and what the notes hold, to it: also when its file arrives later, or is read again. True when a
    title changed."""
    with session.lock:
        new = session.normalizer.orphans()
        notes.update(new)
        changed = bool(notes) and session.normalizer.take(notes)
        if changed:
            session.title = session.normalizer.title
    for other in others() if new else ():
        if other is not session and other.normalizer is not None:
            with other.lock:
                if other.normalizer.take(new):
                    other.title = other.normalizer.title
                    changed = True
    return changed
