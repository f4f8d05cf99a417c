"""The search index and query language (viewer/search.py) and the perspective filters (viewer/filters.py)."""

from types import SimpleNamespace

import pytest
from werkzeug.datastructures import MultiDict

from conftest import write_events
from claude_lines import Transcript
from events import calls, created, result, say, system, tool_call, user
from viewer.reads import live_updates, queries
from viewer.search import count as search_count, query as search, index as search_index
from viewer.reads.filters import EntryFilter, tool_choices
from viewer.library.library import Library


def library_of(tmp_path, **sessions) -> Library:
    for name, events in sessions.items():
        write_events(tmp_path / f"{name}.jsonl", events)
    library = Library(tmp_path)
    library.scan()
    return library


def message_ids(data):
    return [h["message_id"] for h in data["hits"]]


CAFE = [
    created("m1", "agent_root", name="Root"),
    system("m2", "agent_root", "You coordinate a cafe discussion."),
    calls("m3", "agent_root", tool_call("c1", "task", name="Jack", system_prompt="You work in HR")),
    created("m4", "agent_jack", cause="m3", name="Jack"),
    result("m5", "agent_root", "c1", "Created subagent: Jack"),
    say("m6", "agent_jack", "Hello, I'm Jack. The Password is: hunter2!"),
    user("m7", "agent_root", "[Jack]: Hello, I'm Jack. The password is: [REDACTED]", substance="m6"),
    calls("m8", "agent_jack", tool_call("c2", "read_file", path="notes/cafe.md")),
    result("m9", "agent_jack", "c2", "Espresso costs 3 euros", name="read_file"),
]


# --- the query language --------------------------------------------------------------------------

def test_words_phrases_and_prefixes_are_parsed_case_insensitively():
    q = search.parse('Hello "The PASSWORD is" pass* api_key=[x] claude-sonnet')
    assert q.words == ["hello"]
    assert q.phrases == [["the", "password", "is"], ["api_key", "x"], ["claude", "sonnet"]]
    assert q.prefixes == ["pass"]
    assert not q.empty


def test_qualifiers_take_bare_or_quoted_values_and_repeat_as_alternatives():
    q = search.parse('agent:Jill agent:"Inner Voice" role:heard tool:read_file session:research word')
    assert (q.agents, q.roles, q.tools, q.sessions, q.words) == (
        ["jill", "inner voice"], ["heard"], ["read_file"], ["research"], ["word"])


def test_unknown_qualifiers_and_unclosed_quotes_are_searched_as_text():
    q = search.parse('http://example.com "unclosed phrase')
    assert q.phrases == [["http", "example", "com"], ["unclosed", "phrase"]]
    assert search.parse("").empty and search.parse('   ""  ').empty
    assert search.parse("session:x").empty  # only narrows sessions: no condition on events


# --- the index and the search ----------------------------------------------------------------------

def test_the_index_grows_with_each_ingest_and_is_cleared_on_restart(tmp_path):
    library = library_of(tmp_path, cafe=CAFE[:3])
    s = library.get("cafe")
    assert list(s.search.get("cafe")) == [1]
    assert list(s.search.get("jack")) == [2]  # from the tool call's arguments
    write_events(tmp_path / "cafe.jsonl", CAFE[3:], mode="a")
    library.refresh(str(tmp_path / "cafe.jsonl"))
    assert list(s.search.get("jack")) == [2, 3, 4, 5, 6]
    assert list(s.search.get("espresso")) == [8]
    write_events(tmp_path / "cafe.jsonl", CAFE[:1])  # replaced by a shorter file
    library.refresh(str(tmp_path / "cafe.jsonl"))
    assert s.epoch == 1 and s.search.get("jack") == search_index.array("i")


def test_words_match_whole_words_in_content_tool_names_arguments_agents_and_ids(tmp_path):
    sessions = library_of(tmp_path, cafe=CAFE).listing()
    find = lambda q: message_ids(search.search(sessions, q))  # noqa: E731
    assert find("hello") == ["m6", "m7"]
    assert find("HELLO jack") == ["m6", "m7"]
    assert find("hell") == []  # whole words only
    assert find("hell*") == ["m6", "m7"]
    assert find("read_file") == ["m8", "m9"]  # the call's name and the result's name
    assert find("notes") == ["m8"]  # an argument
    assert find("agent_jack") == ["m4"]  # the agent's creation names its id
    assert find("c*") == ["m2", "m5", "m8", "m9"]  # coordinate, created, cafe.md, costs


def test_words_of_arguments_after_an_escaped_line_break_or_tab_are_words_of_their_own(tmp_path):
    """Arguments are JSON text: a file written or a command run holds "\\n" and "\\t" escapes, whose letter must not
    glue to the next word; an escaped backslash stays a backslash (C:\\new keeps "new")."""
    code = "import os\nimport sys\n\tdef lonely():\n\treturn 'C:\\\\new'"
    native = [created("w1", "agent_root", name="Root"),
              calls("w2", "agent_root", tool_call("c1", "write_file", content=code))]
    write_events(tmp_path / "native" / "native.jsonl", native)
    claude = Transcript("11111111-2222-3333-4444-555555555555")
    claude.user("write the module")
    claude.response("msg_1", [{"type": "tool_use", "id": "toolu_1", "name": "Write",
                               "input": {"file_path": "/home/dev/app/m.py", "content": code}}])
    claude.write(tmp_path / "projects" / "-home-dev-app" / f"{claude.session}.jsonl")
    for folder, hit in ((tmp_path / "native", "w2"), (tmp_path / "projects", "11111111-0002")):
        library = Library(folder)
        library.scan()
        sessions = library.listing()
        found = search.search(sessions, '"import sys"')
        assert message_ids(found) == [hit], folder
        assert "import os import sys def lonely(): return" in found["hits"][0]["snippet"]
        for word, hits in (("def", 1), ("return", 1), ("new", 1), ("nimport", 0), ("tdef", 0), ("nnew", 0)):
            assert len(search.search(sessions, word)["hits"]) == hits, (folder, word)


def test_an_implicit_agent_is_found_by_its_id_at_its_first_event(tmp_path):
    sessions = library_of(tmp_path, s=[say("x1", "agent_watcher", "File changed"),
                                       say("x2", "agent_watcher", "Reloading")]).listing()
    assert message_ids(search.search(sessions, "agent_watcher")) == ["x1"]


def test_phrases_need_their_words_in_order(tmp_path):
    sessions = library_of(tmp_path, cafe=CAFE).listing()
    find = lambda q: message_ids(search.search(sessions, q))  # noqa: E731
    assert find('"the password is"') == ["m6", "m7"]
    assert find('"password the"') == []
    assert find('"password is: [redacted]"') == ["m7"]
    assert find('"is: hunter2"') == ["m6"]
    assert find('"assword is"') == []  # a phrase starts at a word boundary


def test_qualifiers_narrow_by_agent_role_tool_and_session(tmp_path):
    sessions = library_of(tmp_path, cafe=CAFE, other=[say("x1", "agent_jack", "Hello from elsewhere")]).listing()
    find = lambda q, **kw: [(h["session"], h["message_id"]) for h in search.search(sessions, q, **kw)["hits"]]  # noqa: E731
    assert find("hello agent:jack") == [("cafe", "m6"), ("other", "x1")]
    assert find("hello agent:JACK session:cafe") == [("cafe", "m6")]
    assert find("hello", session_id="other") == [("other", "x1")]
    assert find("hello role:user") == [("cafe", "m7")]
    assert find("hello role:heard") == [("cafe", "m7")]
    assert find("role:said") == [("cafe", "m6"), ("other", "x1")]
    assert find("tool:read_file") == [("cafe", "m8"), ("cafe", "m9")]
    assert find("tool:read_file role:tool") == [("cafe", "m9")]
    assert find("tool:task") == [("cafe", "m3"), ("cafe", "m5")]  # a result is found by its call's tool
    assert find("agent:nobody hello") == []
    assert find("jack role:created") == [("cafe", "m4")]


def test_hits_carry_session_agent_role_and_snippet(tmp_path):
    sessions = library_of(tmp_path, cafe=CAFE).listing()
    (said, heard) = search.search(sessions, "password")["hits"]
    assert (said["session"], said["agent_id"], said["agent_name"], said["role"], said["kind"]) == (
        "cafe", "agent_jack", "Jack", "assistant", "said")
    assert said["pieces"] == [("Hello, I'm Jack. The ", False), ("Password", True), (" is: hunter2!", False)]
    assert said["snippet"] == "Hello, I'm Jack. The Password is: hunter2!"
    assert heard["kind"] == "heard"


def test_results_page_through_sessions_with_a_continuation(tmp_path):
    many = [created("m0", "a")] + [say(f"m{i}", "a", f"ping {i}") for i in range(1, 8)]
    sessions = library_of(tmp_path, one=many, two=many[:4]).listing()
    first = search.search(sessions, "ping", limit=5)
    assert message_ids(first) == ["m1", "m2", "m3", "m4", "m5"] and first["next"] == "one=6"
    second = search.search(sessions, "ping", resume=first["next"], limit=5)
    assert [(h["session"], h["message_id"]) for h in second["hits"]] == [
        ("one", "m6"), ("one", "m7"), ("two", "m1"), ("two", "m2"), ("two", "m3")]
    assert second["next"] is None
    exact = search.search(sessions, "ping", limit=7)  # the page ends with a session: more in the next
    assert exact["next"] == "two=1"


def test_a_phrase_of_common_words_hands_back_a_continuation_after_its_budget(tmp_path):
    events = [created("m0", "a")] + [say(f"m{i}", "a", "alpha beta") for i in range(1, 30)]
    events.append(say("hit", "a", "beta alpha"))
    s = library_of(tmp_path, s=events).get("s")
    query = search.parse('"beta alpha"')
    found, more = search.matches(s, query, 0, 50, budget=10)
    assert found == [] and more == 11
    found, more = search.matches(s, query, more, 50, budget=100)
    assert found == [30] and more is None


def test_updates_find_hits_among_new_events_only(tmp_path):
    library = library_of(tmp_path, cafe=CAFE)
    first = search.search(library.listing(), "espresso")
    assert search.updates(library.listing(), "espresso", None, first["cursor"]) is None  # nothing new
    write_events(tmp_path / "cafe.jsonl", [say("m10", "agent_jack", "One espresso please"),
                                           say("m11", "agent_jack", "Thanks")], mode="a")
    write_events(tmp_path / "new.jsonl", [say("n1", "x", "Espresso elsewhere")])
    library.scan()
    news = search.updates(library.listing(), "espresso", None, first["cursor"])
    assert [(h["session"], h["message_id"]) for h in news["hits"]] == [("cafe", "m10"), ("new", "n1")]
    assert search.parse_cursor(news["cursor"]) == {"cafe": "0-11", "new": "0-1"}
    assert search.updates(library.listing(), "espresso", None, news["cursor"]) is None
    assert search.updates(library.listing(), "espresso", "cafe", "cafe=7-3")["reset"] is True


def test_snippets_show_a_window_around_the_first_match():
    text = "word " * 100 + "the needle is here " + "tail " * 100
    pieces = search.snippet(text, search.pattern(search.parse("needle")))
    assert pieces[0] == ("…", False) and pieces[-1] == ("…", False)
    assert ("needle", True) in pieces
    assert len("".join(p for p, _ in pieces)) <= search.SNIPPET_CHARS + 2
    assert search.snippet("short <b>text</b>", None) == [("short <b>text</b>", False)]


# --- the perspective filters --------------------------------------------------------------------

def test_filters_come_from_the_url_and_go_back_into_it():
    f = EntryFilter.from_args(MultiDict([("kind", "heard,said"), ("kind", "bogus"), ("tool", " read_file "),
                                         ("modified", "1")]))
    assert f == EntryFilter(("heard", "said"), "read_file", True)
    assert f.args() == {"kind": "heard,said", "tool": "read_file", "modified": 1}
    assert not EntryFilter.from_args(MultiDict())
    assert EntryFilter().args() == {"kind": None, "tool": None, "modified": None}


@pytest.mark.parametrize("filters, expected", [
    (EntryFilter(("heard",)), ["m7"]),
    (EntryFilter(("system", "did")), ["m2", "m3"]),
    (EntryFilter(modified=True), ["m7"]),
    (EntryFilter(tool="task"), ["m3"]),  # its result shows under it
    (EntryFilter(("received",)), ["m5"]),  # its call is filtered out: the result shows alone
    (EntryFilter(("received",), tool="read_file"), []),
])
def test_perspective_keeps_only_what_the_filters_pass(tmp_path, filters, expected):
    s = library_of(tmp_path, cafe=CAFE).get("cafe")
    view = queries.perspective(s, "agent_root", filters=filters)
    assert [i["message_id"] for i in view["items"]] == expected
    assert view["total"] == len(expected) or filters.tool == "task"
    if filters.tool == "task":
        assert [r["message_id"] for r in view["items"][0]["calls"][0]["results"]] == ["m5"]


def test_filtered_live_updates_use_the_same_rule(tmp_path):
    s = library_of(tmp_path, cafe=CAFE).get("cafe")
    updates = live_updates.perspective_updates(s, "agent_root", False, 0, EntryFilter(("received",)))
    assert [i["message_id"] for i in updates["items"]] == ["m5"] and updates["results"] == []
    updates = live_updates.perspective_updates(s, "agent_jack", False, 8, EntryFilter(tool="read_file"))
    assert updates["items"] == [] and [r["item"]["message_id"] for r in updates["results"]] == ["m9"]


def test_agent_neighbours_follow_the_tree_top_to_bottom(tmp_path):
    events = CAFE + [calls("m20", "agent_root", tool_call("c3", "task", name="Jill")),
                     created("m21", "agent_jill", cause="m20", name="Jill"),
                     say("x", "agent_loner", "implicit root")]
    s = library_of(tmp_path, cafe=events).get("cafe")
    assert queries.agent_neighbours(s, "agent_root") == (None, "agent_jack")
    assert queries.agent_neighbours(s, "agent_jack") == ("agent_root", "agent_jill")
    assert queries.agent_neighbours(s, "agent_loner") == ("agent_jill", None)


def test_tool_choices_are_every_tool_seen(tmp_path):
    s = library_of(tmp_path, cafe=CAFE).get("cafe")
    assert tool_choices(s) == ["read_file", "task"]
    assert search_index.tool_names(SimpleNamespace(events=[say("q", "a", "x")]), 0) == set()


def test_the_total_counts_every_hit_from_the_postings_and_says_when_it_is_a_lower_bound(tmp_path):
    # one: 12 "ping pong" (by a, b and c in turn), 12 "ping" alone; two: 3 "ping pong" by a. Pages of 5.
    one = [created("c", "a"), created("cb", "b"), created("cc", "c")]
    one += [say(f"m{i}", "abc"[i % 3], "ping pong" if i % 2 else "ping") for i in range(24)]
    two = [created("c", "a")] + [say(f"t{i}", "a", "pong then ping") for i in range(3)]
    library_of(tmp_path, one=one, two=two)

    def counter():
        """Totals on a new reading of the folder (counts are kept per reading of a file, as far as they got, in
        what an app keeps between requests)."""
        library = Library(tmp_path)
        library.scan()
        sessions = library.listing()
        kept = search_count.counts()

        def total(q, budget=1000, **kw):
            return search.search(sessions, q, limit=5, count_budget=budget, counts=kept, **kw)["total"]

        return library, sessions, total

    # A budget of looks (a position of the shortest list looked for in another): 3 of one's 12 "pong"s...
    assert counter()[2]("ping pong", budget=3) == {"count": 5, "exact": False, "at_most": 15}  # the page found 5
    # ... or all 12 and none of two's; with three lists, two looks per position.
    assert counter()[2]("ping pong", budget=12) == {"count": 12, "exact": False, "at_most": 15}  # at most: the pongs
    assert counter()[2]("agent:a ping pong", budget=2) == {"count": 5, "exact": False, "at_most": 12}  # a's 9, two's 3
    # At most so many sessions are visited: past them, no upper bound is known.
    sessions = counter()[1]
    assert search.search(sessions, "ping pong", limit=5, count_budget=1000, count_sessions=1)["total"] == {
        "count": 12, "exact": False, "at_most": None}
    # Each view goes on from where the last one stopped: a big count is exact after a few.
    total = counter()[2]
    assert [total("ping pong", budget=6) for _ in range(3)] == [
        {"count": 6, "exact": False, "at_most": 15}, {"count": 12, "exact": False, "at_most": 15},
        {"count": 15, "exact": True, "at_most": None}]
    assert total("pong ping", budget=0) == {"count": 15, "exact": True, "at_most": None}  # kept: free

    library, sessions, total = counter()
    # Phrases are checked on the page's window only: a lower bound, and how many events hold the words.
    assert total('"ping pong"', budget=3) == {"count": 5, "exact": False, "at_most": 15}  # the "pong"s, uncounted
    assert total('"ping pong"') == {"count": 5, "exact": False, "at_most": 15}
    assert total('"pong then ping"') == {"count": 3, "exact": True, "at_most": None}  # all on the page
    assert total("ping") == {"count": 27, "exact": True, "at_most": None}  # one list: its length
    assert total("ping pong") == {"count": 15, "exact": True, "at_most": None}  # intersected
    assert total("ping pong", resume="one=9")["count"] == 15  # every page counts the whole query
    assert total("agent:a ping pong") == {"count": 7, "exact": True, "at_most": None}  # a in one: 4, in two: 3
    assert total("agent:b agent:c ping pong")["count"] == 8  # several agents: each one's postings in turn
    assert total("ping nowhere") == {"count": 0, "exact": True, "at_most": None}
    # A session that grew counts only its new events.
    write_events(tmp_path / "two.jsonl", [say("t3", "a", "ping pong"), say("t4", "a", "pong, ping")], mode="a")
    library.scan()
    assert total("ping pong", budget=1) == {"count": 16, "exact": False, "at_most": 17}  # the new: 2 looks
    assert total("ping pong", budget=1) == {"count": 17, "exact": True, "at_most": None}
    # An agent named later matches its agent: value from then on, with its earlier events.
    write_events(tmp_path / "two.jsonl", [say(f"q{i}", "q", "ping") for i in range(6)], mode="a")  # q: no name
    library.scan()
    assert total("agent:zed ping") == {"count": 0, "exact": True, "at_most": None}
    write_events(tmp_path / "two.jsonl", [created("late", "q", name="Zed")], mode="a")
    library.scan()
    assert total("agent:zed ping") == {"count": 6, "exact": True, "at_most": None}  # q's 6 "ping"s
    assert "total" not in search.search(sessions, "ping")  # only asked for by the page


def test_one_sessions_cursor_is_found_in_a_cursor_of_many_as_parsing_them_all_finds_it():
    cursors = search.format_cursor({"xa": "1-2", "a": "3-4", "p:a": "5-6", "a:b": "7-8", "b": "9-10"})
    for session_id in ("a", "xa", "p:a", "a:b", "b", "missing", "x"):
        assert search.cursor_of(cursors, session_id) == search.parse_cursor(cursors).get(session_id), session_id
    assert search.cursor_of("", "a") is None
