"""Each part of a session says what it keeps between runs (`state()`) and takes it back (`restore()`): the
session itself, its tool calls, its agent tree, its search index, its facets and its events. A session made again
from its parts' states alone, each passed through marshal as the cache keeps it, shows exactly what the session
read from its file does."""

from __future__ import annotations

import marshal

from test_session_cache import folder, views  # noqa: F401  (a fixture, and what the JSON twins say)
from viewer.core.kept import Items
from viewer.index.session_index import SessionIndex
from viewer.library import background
from viewer.web.app import create_app


def plain(value):
    """A part's value as the cache keeps it: its maps' values made plain, through marshal and back."""
    if isinstance(value, Items):
        value = {k: v if value.encode is None else value.encode(v) for k, v in value.mapping.items()}
    return marshal.loads(marshal.dumps(value))


def made_again(s: SessionIndex, source) -> SessionIndex:
    """A new, empty index of the same file, given back each part's state."""
    again = SessionIndex(s.id, s.path, s.relpath, s.format)
    for part, into in ((s, again), (s.calls, again.calls), (s.tree, again.tree), (s.search, again.search),
                       (s.facets, again.facets)):
        for name, value in part.state():
            into.restore(name, plain(value))
    again.events.extend(plain(s.events.part(0, s.count)))
    again.events.read_from(source)
    return again


def test_a_session_made_again_from_its_parts_states_shows_the_same(folder):  # noqa: F811
    app = create_app(folder, watch=False)
    library = app.extensions["agentview"].library
    library.scan()
    while background.index_step(library):
        pass
    before = views(app)
    files = library.settled_files()
    assert len(files) == len(list(folder.glob("*.jsonl"))) == 2
    for _, session, reader in files:
        with session.lock:
            again = made_again(session, reader.source)
        assert again.count == session.count and again.tree is not session.tree
        library.sessions[session.id] = again  # served in its place
    assert {s.id for s in library.sessions.values()} == {s.id for _, s, _ in files}
    assert all(s not in library.sessions.values() for _, s, _ in files)
    assert views(app) == before


def test_a_part_refuses_what_it_does_not_keep(folder):  # noqa: F811
    """A section no part knows is not taken silently: a part raises, and the cache reads the file instead."""
    s = SessionIndex("x", str(folder / "x.jsonl"), "x.jsonl")
    for part in (s, s.calls, s.tree, s.search, s.facets):
        try:
            part.restore("no such part", {})
        except ValueError:
            continue
        raise AssertionError(f"{type(part).__name__} took a part it does not keep")

