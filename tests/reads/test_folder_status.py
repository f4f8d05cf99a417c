"""How far a folder is read (reads/folder_status.py): the groups a first walk listed are unread until read, a file read
whole before its search index is built is indexing, and none of it wakes a sleeping session."""

from __future__ import annotations

import json
import os

from conftest import write_events
from events import created, say
from test_unread_groups import INDEX, walked, generate
from viewer.index import sleeping
from viewer.library.library import Library
from viewer.reads.folder_status import Counts, reading
from viewer.search.index import QUERY_BUDGET


def test_groups_listed_by_a_first_walk_are_unread_until_read_even_one_a_page_looked_at(tmp_path):
    made = generate(tmp_path, sessions=6, projects=2)
    library, walk = walked(made["projects_folder"])
    with walk:
        for path in library.folders.session_files(None):
            library.refresh(path)
        listed = library.listing()
        assert reading(listed) == {"sessions": 6, "unread": 6, "indexing": 0}
        assert not any(set(INDEX) & set(vars(s)) for s in listed)  # counted without making any index
        assert listed[0].count == 0  # a page looked at one: made empty, still not read
        assert reading(library.listing())["unread"] == 6
    assert reading(library.listing()) == {"sessions": 6, "unread": 0, "indexing": 0}


def test_a_file_read_whole_before_its_search_index_is_built_is_indexing_until_a_query_would_see_it_whole(tmp_path):
    """A query takes in the few events its session's index lacks (search.index.QUERY_BUDGET): the small session is
    searchable whole as it is; the big one is not until its index is built."""
    path = write_events(tmp_path / "big.jsonl", [created("c0", "root")] + [say(f"m{i}", "root", f"word{i}")
                                                                           for i in range(QUERY_BUDGET + 100)])
    write_events(tmp_path / "small.jsonl", [created("c0", "root"), say("m1", "root", "hi")])
    library = Library(tmp_path)
    library.scan()  # no ingest thread: nothing builds the big file's index in the background
    big = library.session_at(str(path))
    assert big.search.indexed < big.count
    assert reading(library.listing()) == {"sessions": 2, "unread": 0, "indexing": 1}
    with big.lock:
        big.search.catch_up(big.count - QUERY_BUDGET)
    assert reading(library.listing()) == {"sessions": 2, "unread": 0, "indexing": 0}


def test_a_count_takes_in_what_it_was_told_changed_at_once_and_is_answered_again_until_that_fits_its_share_of_a_core(
        tmp_path):
    """A poll ten times a second over 20,000 sessions counts at most a share of a core: after a count of every
    session, the next ask counts again those told changed since (the groups read); a share no count fits in then
    holds that count, whatever changed since, until a scan or a file read part way starts or ends."""
    made = generate(tmp_path, sessions=6, projects=2)
    library, walk = walked(made["projects_folder"])
    held, fresh = Counts(share=1e-12), Counts(share=float("inf"))
    with walk:
        for path in library.folders.session_files(None):
            library.refresh(path)
        listed_at = library.version
        assert held.of(library, (True, 0)) == fresh.of(library, (True, 0)) == (
            {"sessions": 6, "unread": 6, "indexing": 0}, listed_at)
    read = {"sessions": 6, "unread": 0, "indexing": 0}
    assert library.version > listed_at
    assert fresh.of(library, (True, 0)) == held.of(library, (True, 0)) == (read, library.version)
    read_at = library.version
    session = library.listing()[0]
    with open(session.path, "a") as f:  # a line more: the library is told
        f.write(json.dumps({"type": "user", "uuid": "u-more", "sessionId": os.path.basename(session.path)[:-6],
                            "timestamp": "2026-01-01T00:00:00Z", "message": {"role": "user", "content": "more"}})
                + "\n")
    library.refresh(session.path)
    assert library.version > read_at
    assert fresh.of(library, (True, 0)) == (read, library.version)  # counted at each ask
    assert held.of(library, (True, 0)) == (read, read_at)  # held
    assert held.of(library, (False, 0)) == (read, library.version)  # the scan ended: counted again
    assert held.of(library, (False, 1)) == (read, library.version)


def test_an_ask_counts_again_only_the_sessions_told_changed_and_those_indexing_and_every_one_once_one_left(
        tmp_path, monkeypatch):
    """A poll over 20,000 sessions being read looks at the few read since, not at every one: the library tells which
    changed (Library.bump), and a search index built in the background, which tells nobody, is looked at while it
    counts indexing. What it answers is what counting every session answers."""
    paths = [write_events(tmp_path / f"s{i}.jsonl", [created("c0", "root"), say("m1", "root", f"hi {i}")])
             for i in range(5)]
    big = write_events(tmp_path / "big.jsonl", [created("c0", "root")] + [say(f"m{i}", "root", f"word{i}")
                                                                          for i in range(QUERY_BUDGET + 100)])
    library = Library(tmp_path)
    library.scan()  # no ingest thread: nothing builds the big file's index in the background
    looked = []
    read_state = sleeping.read_state
    monkeypatch.setattr(sleeping, "read_state", lambda s: looked.append(s.relpath) or read_state(s))
    counts = Counts(share=float("inf"))  # counted again at each ask
    assert counts.of(library) == ({"sessions": 6, "unread": 0, "indexing": 1}, library.version)
    assert len(looked) == 6
    looked.clear()
    write_events(paths[1], [say("m2", "root", "more")], mode="a")
    library.refresh(str(paths[1]))
    assert counts.of(library) == ({"sessions": 6, "unread": 0, "indexing": 1}, library.version)
    assert sorted(looked) == ["big.jsonl", "s1.jsonl"]  # the one read since, and the one indexing
    session = library.session_at(str(big))
    with session.lock:  # its index built, the library not told
        session.search.catch_up(session.count - QUERY_BUDGET)
    looked.clear()
    assert counts.of(library) == ({"sessions": 6, "unread": 0, "indexing": 0}, library.version)
    assert looked == ["big.jsonl"]
    assert reading(library.listing()) == {"sessions": 6, "unread": 0, "indexing": 0}  # as counting every one
    looked.clear()
    assert counts.of(library) == ({"sessions": 6, "unread": 0, "indexing": 0}, library.version)
    assert looked == []  # nothing changed, nothing indexing: none looked at
    write_events(tmp_path / "new.jsonl", [created("c0", "root"), say("m1", "root", "new")])
    library.refresh(str(tmp_path / "new.jsonl"))
    assert counts.of(library) == ({"sessions": 7, "unread": 0, "indexing": 0}, library.version)
    assert looked == ["new.jsonl"]  # listed since: counted in
    for _ in range(library.bumps.maxlen):  # told so often that what was told before has left the library's list
        library.changed(session)
    looked.clear()
    assert counts.of(library) == ({"sessions": 7, "unread": 0, "indexing": 0}, library.version)
    assert len(looked) == 7  # every session counted again
    paths[2].unlink()
    library.forget(str(paths[2]))
    looked.clear()
    assert counts.of(library) == ({"sessions": 6, "unread": 0, "indexing": 0}, library.version)
    assert len(looked) == 6  # one left: every session counted again
