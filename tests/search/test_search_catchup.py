"""The search index is off the ingest path: built after ingest, in the background and before each query."""

from conftest import wait_for, write_events
from viewer.library import background
from viewer.reads.filters import tool_choices
from viewer.search import query as search
from viewer.search.index import QUERY_BUDGET
from viewer.library.library import Library
from viewer.library.watcher import Watcher


def entry(mid, agent="a", content="hi"):
    return {"message_id": mid, "event_type": "transcript_entry", "agent_id": agent, "role": "user", "content": content}


def ids(data):
    return [h["message_id"] for h in data["hits"]]


def test_ingest_leaves_indexing_to_later_and_a_query_sees_every_event(tmp_path):
    write_events(tmp_path / "s.jsonl", [entry(f"m{i}", content=f"word{i % 3} common") for i in range(30)])
    library = Library(tmp_path)
    library.scan()
    s = library.get("s")
    assert s.count == 30 and s.search.indexed == 0  # ingest did not index
    assert ids(search.search(library.listing(), "word1")) == [f"m{i}" for i in range(1, 30, 3)]
    assert s.search.indexed == 30
    write_events(tmp_path / "s.jsonl", [entry("m30", content="word1 late")], mode="a")
    library.refresh(str(tmp_path / "s.jsonl"))
    assert s.search.indexed == 30
    assert ids(search.search(library.listing(), "late")) == ["m30"]
    assert search.updates(library.listing(), "word1", None, "s=0-30")["hits"][0]["message_id"] == "m30"


def test_the_indexes_catch_up_in_slices_in_the_order_of_the_events_search_first(tmp_path):
    write_events(tmp_path / "s.jsonl", [entry(f"m{i}", content=f"w{i}") for i in range(25)])
    library = Library(tmp_path)
    library.scan()
    s = library.get("s")
    steps = []
    while background.index_step(library, budget=10):
        steps.append((s.search.indexed, s.facets.indexed))
    # the facets from the read that builds the search index, while they stand where it does
    assert steps == [(10, 10), (20, 20), (25, 25)]
    assert list(s.search._postings["w24"]) == [24]
    write_events(tmp_path / "s.jsonl", [entry(f"m{i}", content=f"w{i}") for i in range(25, 50)], mode="a")
    library.refresh(str(tmp_path / "s.jsonl"))
    assert ids(search.search(library.listing(), "w40")) == ["m40"]  # a query caught the search index up alone
    steps = []
    while background.index_step(library, budget=10):
        steps.append((s.search.indexed, s.facets.indexed))
    assert steps == [(50, 35), (50, 45), (50, 50)]  # then the facets, on their own


def test_an_implicit_agent_is_found_by_its_id_at_its_first_event_even_once_created_later(tmp_path):
    created = {"message_id": "c", "event_type": "agent_created", "agent_id": "zed"}
    write_events(tmp_path / "s.jsonl", [entry("m1", agent="zed"), created])
    library = Library(tmp_path)
    library.scan()
    assert ids(search.search(library.listing(), "zed")) == ["m1", "c"]  # as if it had been indexed at once


def test_a_watched_folder_is_indexed_in_the_background_without_any_query(tmp_path):
    write_events(tmp_path / "s.jsonl", [entry(f"m{i}", content=f"w{i}") for i in range(5000)])
    library = Library(tmp_path)
    watcher = Watcher(library).start()
    try:
        assert watcher.ready.wait(10)
        s = library.get("s")
        wait_for(lambda: s.search.indexed == 5000, timeout=20)
        write_events(tmp_path / "s.jsonl", [entry("m5000", content="fresh")], mode="a")
        wait_for(lambda: s.count == 5001 and s.search.indexed == 5001, timeout=10)
        assert list(s.search._postings["fresh"]) == [5000]
    finally:
        watcher.stop()


def test_the_tool_filter_choices_are_known_without_the_search_index(tmp_path):
    from events import calls, result, tool_call
    write_events(tmp_path / "s.jsonl", [calls("m1", "a", tool_call("t1", "Read_File", path="x")),
                                        result("m2", "a", "t1", "text", name="read_file"),
                                        result("m3", "a", "t9", "text", name="Grep")])
    library = Library(tmp_path)
    library.scan()
    s = library.get("s")
    assert tool_choices(s) == ["grep", "read_file"] and s.search.indexed == 0
    assert sorted(k[len(search.TOOL):] for k in s.search.postings if k.startswith(search.TOOL)) == ["grep", "read_file"]


def test_a_query_far_ahead_of_the_index_answers_at_once_with_what_is_indexed_and_the_rest_comes_live(tmp_path):
    """A search never waits for (nor holds the session while) a big index is built: it searches what is indexed,
    says so, and its live poll brings the hits in the rest as the background indexing takes them in."""
    n = QUERY_BUDGET * 3
    write_events(tmp_path / "s.jsonl", [entry(f"m{i}", content="needle" if i % 1000 == 7 else "hay")
                                        for i in range(n)])
    library = Library(tmp_path)
    library.scan()
    s = library.get("s")
    first = search.search(library.listing(), "needle")
    assert first["hits"] == [] and first["partial"] == {"s": {"indexed": 0, "events": n}}
    assert s.search.indexed == 0  # the query took nothing in: too far behind
    background.index_step(library, budget=2500)
    cursor = search.search(library.listing(), "needle")["cursor"]
    assert cursor == "s=0-2500"
    seen = ids(search.search(library.listing(), "needle"))
    assert seen == ["m7", "m1007", "m2007"]
    while background.index_step(library, budget=2500):
        update = search.updates(library.listing(), "needle", None, cursor)
        if update is not None:  # None: nothing new since the cursor (the query itself caught up the last few)
            seen += ids(update)
            cursor = update["cursor"]
    assert seen == [f"m{i}" for i in range(7, n, 1000)]
    assert search.search(library.listing(), "needle")["partial"] is None
