"""What the sessions of one project folder say of each other (Claude Code: a summary at the top of a later file
titles the session holding its leafUuid), passed between them as each is read (Normalizer.orphans / take)."""

from __future__ import annotations

from collections.abc import Callable

from viewer.index.session_index import SessionIndex


def pass_notes(notes: dict, session: SessionIndex, others: Callable[[], list[SessionIndex]]) -> bool:
    """What `session` just read goes into the project's `notes` and to the `others` (asked for only when there is
    something new), and what the notes hold, to it: also when its file arrives later, or is read again. True when a
    title changed."""
    with session.lock:
        orphans = session.normalizer.orphans()
        # A leaf the notes hold already was told to every session then, and every session reading on takes the notes
        # whole: only new leaves go to the others. (Claude Code has written the summaries of every earlier
        # conversation at the top of each new file of a project: told again and again, they made reading a
        # project's files cubic in their number.)
        new = {leaf: text for leaf, text in orphans.items() if leaf not in notes}
        notes.update(orphans)
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
