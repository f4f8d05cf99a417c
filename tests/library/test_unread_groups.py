"""A group of Claude Code files listed before it is read (a first walk of a folder of thousands) holds no index yet:
the list shows it empty, anything that reads it makes its index then, and reading its files fills it as before."""

from __future__ import annotations

import os
import sys

from conftest import REPO
from viewer.library.library import Library
from viewer.web.render import Rows

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


def test_a_first_walk_lists_every_session_before_it_looks_into_their_sub_agents_folders(tmp_path):
    """Level by level: every project's main files (every session) come before any `<id>/subagents/` file, so a folder
    of 20,000 is listed whole while two thirds of its walk are still to go. Nothing is read twice or left out."""
    made = generate(tmp_path, sessions=12, projects=3)
    library = Library(made["projects_folder"])
    walked_paths = list(library.folders.session_files(None))
    below = [i for i, path in enumerate(walked_paths) if f"{os.sep}subagents{os.sep}" in path]
    mains = [i for i, path in enumerate(walked_paths) if f"{os.sep}subagents{os.sep}" not in path]
    assert below and len(mains) == 12 and max(mains) < min(below)
    found = sorted(os.path.join(folder, name) for folder, _, names in os.walk(made["projects_folder"])
                   for name in names if library.is_session_file(name))
    assert sorted(walked_paths) == found


def test_a_listed_groups_row_shows_each_file_that_joins_it_before_it_is_read(tmp_path):
    """A poll of the list while a first walk runs makes a group's row once its main file is found; a sub-agent's file
    found later joins it, and the row shows it at the next poll (not when the group is read, minutes later)."""
    made = generate(tmp_path, sessions=6, projects=2)
    library, walk = walked(made["projects_folder"])
    rows = Rows()
    with walk:
        for path in library.folders.session_files(None):
            library.refresh(path)
            rows.rows(library, library.listing(), str)  # a poll after each file
        assert {row["path"]: row["files"] for row in rows.rows(library, library.listing(), str)} == {
            s.relpath: [m["rel"] for m in s.members.values()] for s in library.listing()}
        assert any(len(s.members) > 1 for s in library.listing())
