"""A group of Claude Code files listed before it is read (a first walk of a folder of thousands) holds no index yet:
the list shows it empty, anything that reads it makes its index then, and reading its files fills it as before."""

from __future__ import annotations

import sys

from conftest import REPO
from viewer.library.library import Library

sys.path.insert(0, str(REPO / "benchmarks"))

from claude_projects import generate  # noqa: E402

INDEX = ("events", "search", "facets", "tree", "by_id", "normalizer")  # what an index holds, made when first read


def walked(folder) -> tuple[Library, object]:
    """A library of `folder` and the context in which its groups are listed, not read (as the first scan does)."""
    library = Library(folder)
    return library, library.groups.read_after()


def test_a_group_listed_before_it_is_read_holds_no_index_and_shows_empty(tmp_path):
    made = generate(tmp_path, sessions=6, projects=2)
    library, walk = walked(made["projects_folder"])
    with walk:
        for path in library.folders.session_files(None):
            library.refresh(path)
        listed = library.listing()
        assert len(listed) == 6
        for s in listed:
            assert not set(INDEX) & set(vars(s)), s.id  # none made yet
            assert (s.count, s.shown_count, s.agent_count, s.problem_count, s.failure_count) == (0, 0, 0, 0, 0)
            assert s.title is None and s.first_time is None and s.members
        touched = listed[0]
        assert touched.agents == {} and touched.count == 0  # a page reading it: made empty, then and there
        assert set(INDEX) <= set(vars(touched)) and touched.asleep is None
    read = {s.id: (s.count, len(s.agents), s.title) for s in library.listing()}
    assert all(count and agents for count, agents, _ in read.values())
    again = Library(made["projects_folder"])
    again.scan()
    assert {s.id: (s.count, len(s.agents), s.title) for s in again.listing()} == read  # the one touched as well


def test_a_search_while_groups_are_listed_unread_passes_over_them_without_making_their_index(tmp_path):
    """A person searching while a folder of 20,000 groups is first walked: the groups not read yet hold no event to
    find, and are not made only to be searched (some 50 us and 12 kB each); the answer is what searching them says."""
    from viewer.search import query as search

    made = generate(tmp_path, sessions=6, projects=2)
    library, walk = walked(made["projects_folder"])
    with walk:
        for path in library.folders.session_files(None):
            library.refresh(path)
        found = search.search(library.listing(), made["common_word"], folder_words=library.folder_words,
                              count_budget=1000)
        assert not any(set(INDEX) & set(vars(s)) for s in library.listing())
        assert found["hits"] == [] and found["partial"] is None and found["total"]["count"] == 0
        unread = search.parse_cursor(found["cursor"])
        assert sorted(unread) == sorted(s.id for s in library.listing())
        assert all(library.sessions[sid].position_after(c) == 0 for sid, c in unread.items())
    found = search.search(library.listing(), made["common_word"], folder_words=library.folder_words)
    assert found["hits"]  # once read, found
