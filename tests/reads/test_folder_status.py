"""How far a folder is read (reads/folder_status.py): the groups a first walk listed are unread until read, a file read
whole before its search index is built is indexing, and none of it wakes a sleeping session."""

from __future__ import annotations

from conftest import write_events
from events import created, say
from test_unread_groups import INDEX, walked, generate
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


def test_a_count_is_answered_again_until_counting_again_fits_its_share_of_a_core_or_what_is_asked_beside_changes(
        tmp_path):
    """A poll ten times a second over 20,000 sessions counts at most a share of a core: a share no count fits in
    holds the first count, whatever changed since, until a scan or a file read part way starts or ends."""
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
    assert fresh.of(library, (True, 0)) == (read, library.version)  # counted at each ask
    assert held.of(library, (True, 0)) == ({"sessions": 6, "unread": 6, "indexing": 0}, listed_at)
    assert held.of(library, (False, 0)) == (read, library.version)  # the scan ended: counted again
    assert held.of(library, (False, 1)) == (read, library.version)
