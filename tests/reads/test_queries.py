"""SessionIndex + queries on constructed session files: tree, pairing, dialog, causality, live updates."""

from __future__ import annotations

import json

import pytest

from conftest import sample, write_events
from events import calls, created, ids, piece, result, run_with_timeout, say, system, tool_call, user
from viewer.reads import causality, dialogs, live_updates, queries
from viewer.index.session_index import SessionIndex
from viewer.library.library import Library
from viewer.reads.session_viewer import load_index
from viewer.files.tailer import FileTailer, Line


# --- builders ----------------------------------------------------------------------------------

def load(tmp_path, events, name="session.jsonl") -> SessionIndex:
    return load_index(write_events(tmp_path / name, events))


def summary(s, agent_id):
    return next(a for a in queries.agents(s) if a["agent_id"] == agent_id)


def tree_shape(nodes):
    """[(agent_id, [children shapes])] of queries.tree output."""
    return [(n["agent_id"], tree_shape(n["children"])) for n in nodes]


# A small two-level session used by several tests.
def family():
    return [
        created("m01", "root", name="Root"),
        user("m02", "root", "Build a team"),
        calls("m03", "root", tool_call("c1", name="Kid")),
        created("m04", "kid", cause="m03", name="Kid"),
        system("m05", "kid", "You are Kid"),
        result("m06", "root", "c1", "Created Kid"),
        calls("m07", "kid", tool_call("k1", name="Grandkid")),
        created("m08", "grandkid", cause="m07", name="Grandkid"),
        result("m09", "kid", "k1", "Created Grandkid"),
    ]


# --- parent resolution and the tree ---------------------------------------------------------------

def test_parent_is_the_agent_whose_transcript_holds_the_cause(tmp_path):
    s = load(tmp_path, family())
    assert s.agents["kid"].parent_id == "root"
    assert s.agents["grandkid"].parent_id == "kid"
    assert s.agents["root"].children == ["kid"]
    assert s.agents["kid"].children == ["grandkid"]
    assert s.roots == ["root"]
    assert tree_shape(queries.tree(s)) == [("root", [("kid", [("grandkid", [])])])]
    assert [a["agent_id"] for a in queries.lineage(s, "grandkid")] == ["root", "kid", "grandkid"]
    assert queries.subtree(s, "root") == ["root", "kid", "grandkid"]


def test_parent_comes_from_the_holder_of_the_cause_not_from_who_is_named(tmp_path):
    # the creation names a tool call that sits in "helper"'s transcript, although "boss" asked for it
    s = load(tmp_path, [
        created("m1", "boss"),
        created("m2", "helper"),
        user("m3", "boss", "please make a worker"),
        calls("m4", "helper", tool_call("h1", name="Worker")),
        created("m5", "worker", cause="m4", name="Worker"),
    ])
    assert s.agents["worker"].parent_id == "helper"
    assert tree_shape(queries.tree(s)) == [("boss", []), ("helper", [("worker", [])])]


def test_created_by_names_the_spawning_call(tmp_path):
    s = load(tmp_path, family())
    by = summary(s, "kid")["created_by"]
    assert by == {"message_id": "m03", "agent_id": "root", "call_id": "c1", "tool": "task",
                  "summary": "task(name=Kid)", "missing": False}
    assert summary(s, "root")["created_by"] is None


def test_created_by_picks_the_call_by_name_when_a_message_holds_several(tmp_path):
    s = load(tmp_path, [
        calls("m1", "root", tool_call("a", name="Alpha"), tool_call("b", name="Beta")),
        created("m2", "beta", cause="m1", name="Beta"),
        created("m3", "alpha", cause="m1", name="Alpha"),
    ])
    assert summary(s, "alpha")["created_by"]["call_id"] == "a"
    assert summary(s, "beta")["created_by"]["call_id"] == "b"


def test_several_roots_in_order_of_appearance(tmp_path):
    s = load(tmp_path, [
        created("m1", "first", name="First"),
        user("m2", "second", "no creation event for me"),
        created("m3", "third"),
        calls("m4", "third", tool_call("t1")),
        created("m5", "child", cause="m4"),
    ])
    assert s.roots == ["first", "second", "third"]
    assert tree_shape(queries.tree(s)) == [("first", []), ("second", []), ("third", [("child", [])])]
    assert queries.agent_names(s) == {"first": "First", "second": "second", "third": "third", "child": "child"}


def test_implicit_agent_is_a_root_named_by_its_id(tmp_path):
    s = load(tmp_path, [user("m1", "agent_watcher", "File changed"), say("m2", "agent_watcher", "Reloading")])
    (info,) = queries.agents(s)
    assert info["agent_id"] == "agent_watcher"
    assert info["name"] == "agent_watcher"
    assert info["implicit"] is True
    assert info["parent_id"] is None
    assert info["entries"] == 2
    assert info["flags"] == []
    assert s.roots == ["agent_watcher"]


def test_implicit_root_with_an_explicit_child_like_seed_example3(tmp_path):
    s = load_index(sample("example3_hook_intervention"))
    assert tree_shape(queries.tree(s)) == [("agent_root", [("agent_resource_hook", [])])]
    assert summary(s, "agent_root")["implicit"] is True
    assert summary(s, "agent_resource_hook")["implicit"] is False
    assert summary(s, "agent_resource_hook")["parent_ordinal"] == summary(s, "agent_root")["ordinal"]


def test_agent_known_only_from_a_piece_of_text_is_listed(tmp_path):
    s = load(tmp_path, [piece("m1", "narrator", "Once upon a time", cause="m0")])
    assert queries.agent_names(s) == {"narrator": "narrator"}


def test_name_falls_back_to_agent_id(tmp_path):
    s = load(tmp_path, [created("m1", "agent_x"), created("m2", "agent_y", name=""), created("m3", "agent_z", name="Zed")])
    assert queries.agent_names(s) == {"agent_x": "agent_x", "agent_y": "agent_y", "agent_z": "Zed"}


def test_cause_naming_a_missing_message_makes_a_flagged_root(tmp_path):
    s = load(tmp_path, [created("m1", "root"), created("m2", "orphan", cause="msg_nowhere", name="Orphan")])
    assert s.roots == ["root", "orphan"]
    info = summary(s, "orphan")
    assert info["parent_id"] is None
    assert info["flags"] == ["cause_missing"]
    assert info["created_by"] == {"message_id": "msg_nowhere", "missing": True}
    assert tree_shape(queries.tree(s)) == [("root", []), ("orphan", [])]


def test_missing_cause_is_resolved_when_the_message_appears_later(tmp_path):
    s = load(tmp_path, [
        created("m1", "root"),
        user("m2", "root", "go"),
        created("m3", "early", cause="m4", name="Early"),  # names a call logged after it
        calls("m4", "root", tool_call("c1", name="Early")),
        result("m5", "root", "c1", "ok"),
    ])
    assert s.agents["early"].parent_id == "root"
    assert s.agents["early"].flags == []
    assert s.roots == ["root"]
    assert tree_shape(queries.tree(s)) == [("root", [("early", [])])]
    assert summary(s, "early")["created_by"]["missing"] is False


def test_missing_cause_resolved_by_the_first_event_of_a_new_agent(tmp_path):
    s = load(tmp_path, [
        created("m1", "kid", cause="m2", name="Kid"),
        calls("m2", "boss", tool_call("c1", name="Kid")),  # boss has no agent_created; this is its first event
    ])
    assert s.agents["kid"].parent_id == "boss"
    assert s.agents["kid"].flags == []
    assert tree_shape(queries.tree(s)) == [("boss", [("kid", [])])]


def test_agent_created_after_the_agents_first_entries_reparents_it(tmp_path):
    s = load(tmp_path, [
        created("m1", "root", name="Root"),
        calls("m2", "root", tool_call("c1", name="Late")),
        user("m3", "late", "I spoke before my creation was logged"),
        say("m4", "late", "hello"),
        created("m5", "late", cause="m2", name="Late"),
    ])
    late = s.agents["late"]
    assert late.parent_id == "root"
    assert late.name == "Late"
    assert late.first_position == 2
    assert late.created_position == 4
    assert list(late.entries) == [2, 3]
    assert s.roots == ["root"]
    assert tree_shape(queries.tree(s)) == [("root", [("late", [])])]
    assert summary(s, "late")["implicit"] is False
    # a live page that had seen the first four events learns the agent moved
    updates = live_updates.tree_updates(s, 4)
    assert updates["appeared"] == []
    assert [n["agent_id"] for n in updates["moved"]] == ["late"]
    assert updates["moved"][0]["parent_id"] == "root"


def test_list_cause_in_agent_created_uses_its_first_element(tmp_path):
    s = load(tmp_path, [
        calls("m1", "a", tool_call("x")),
        calls("m2", "b", tool_call("y")),
        created("m3", "c", cause=["m2", "m1"]),
    ])
    assert s.agents["c"].parent_id == "b"
    assert s.agents["c"].cause == "m2"


def test_creation_cycle_terminates_and_is_flagged(tmp_path):
    events = [
        calls("m1", "a", tool_call("ca")),
        calls("m2", "b", tool_call("cb")),
        created("m3", "a", cause="m2"),  # a is a child of b
        created("m4", "b", cause="m1"),  # ... and b would be a child of a: a cycle
    ]
    s = run_with_timeout(lambda: load(tmp_path, events))
    assert s.agents["a"].parent_id == "b"
    assert s.agents["b"].parent_id is None
    assert "cause_cycle" in s.agents["b"].flags
    assert [p.kind for p in s.problems] == ["cause_cycle"]
    assert tree_shape(run_with_timeout(lambda: queries.tree(s))) == [("b", [("a", [])])]
    assert [a["agent_id"] for a in run_with_timeout(lambda: queries.lineage(s, "a"))] == ["b", "a"]


def test_agent_caused_by_its_own_message_stays_a_flagged_root(tmp_path):
    s = run_with_timeout(lambda: load(tmp_path, [calls("m1", "self", tool_call("c")), created("m2", "self", cause="m1")]))
    assert s.roots == ["self"]
    assert s.agents["self"].parent_id is None
    assert "cause_cycle" in s.agents["self"].flags


def test_duplicate_agent_created_is_a_problem_and_keeps_the_first(tmp_path):
    s = load(tmp_path, [created("m1", "a", name="First"), created("m2", "a", name="Second")])
    assert s.agents["a"].name == "First"
    assert [(p.kind, p.line, p.message_id) for p in s.problems] == [("duplicate_agent_created", 2, "m2")]


def test_duplicate_message_id_is_a_problem_and_lookups_keep_the_first(tmp_path):
    s = load(tmp_path, [say("m1", "a", "first"), say("m1", "a", "second")])
    assert s.event("m1")["content"] == "first"
    assert [(p.kind, p.line) for p in s.problems] == [("duplicate_message_id", 2)]
    assert [e["content"] for e in queries.transcript(s, "a")] == ["first", "second"]


# --- file order, never id order ------------------------------------------------------------------

def unordered_ids():
    """msg_1000 is logged before msg_999 and msg_0002 before msg_10: ids are not in file order."""
    return [
        created("msg_50", "jack", name="Jack"),
        created("msg_7", "jill", name="Jill"),
        say("msg_1000", "jack", "Hello Jill"),
        user("msg_999", "jill", "[Jack]: Hello Jill", substance="msg_1000"),
        say("msg_0002", "jill", "Hi Jack"),
        user("msg_10", "jack", "[Jill]: Hi Jack", substance="msg_0002"),
        user("msg_2", "jill", "[Jack]: Hello Jill (again)", substance="msg_1000"),
        user("msg_1", "jill", "[Jill]: [Jack]: Hello Jill", substance="msg_999"),
    ]


def test_transcripts_keep_file_order(tmp_path):
    s = load(tmp_path, unordered_ids())
    assert ids(queries.transcript(s, "jill")) == ["msg_999", "msg_0002", "msg_2", "msg_1"]
    assert ids(queries.transcript(s, "jack")) == ["msg_1000", "msg_10"]
    assert ids(queries.transcript(s, "jill", start=1, limit=2)) == ["msg_0002", "msg_2"]


def test_agents_keep_order_of_first_appearance(tmp_path):
    s = load(tmp_path, unordered_ids())
    assert list(queries.agent_names(s)) == ["jack", "jill"]
    assert [a["ordinal"] for a in queries.agents(s)] == [0, 1]


def test_dialog_keeps_file_order(tmp_path):
    s = load(tmp_path, unordered_ids())
    items = dialogs.dialog(s, ["jack", "jill"])["items"]
    assert [i["message_id"] for i in items] == ["msg_1000", "msg_999", "msg_0002"]
    assert [i["key"] for i in items] == ["msg_1000", "msg_999", "msg_0002"]
    assert [d["message_id"] for d in items[0]["deliveries"]] == ["msg_999", "msg_2"]


def test_references_keep_file_order(tmp_path):
    s = load(tmp_path, unordered_ids())
    assert ids(causality.references(s, "msg_1000")) == ["msg_999", "msg_2", "msg_1"]
    assert ids(causality.references(s, "msg_0002")) == ["msg_10"]


def test_perspective_keeps_file_order(tmp_path):
    s = load(tmp_path, unordered_ids())
    data = queries.perspective(s, "jill", include_subagents=False)
    assert [i["message_id"] for i in data["items"]] == ["msg_999", "msg_0002", "msg_2", "msg_1"]
    assert data["total"] == 4
    window = queries.perspective(s, "jill", start=1, limit=2)
    assert [i["message_id"] for i in window["items"]] == ["msg_0002", "msg_2"]


# --- tool results pair within one agent ---------------------------------------------------------

def shared_call_ids():
    return [
        created("m1", "alice", name="Alice"),
        created("m2", "bob", name="Bob"),
        calls("m3", "alice", tool_call("c1", "search", q="cats")),
        calls("m4", "bob", tool_call("c1", "search", q="dogs")),
        result("m5", "bob", "c1", "dogs result", name="search"),
        result("m6", "alice", "c1", "cats result", name="search"),
    ]


def test_tool_result_pairs_with_the_call_in_its_own_agents_transcript(tmp_path):
    s = load(tmp_path, shared_call_ids())
    index = causality.causality_index(s)
    assert index["m5"] == "m4"
    assert index["m6"] == "m3"
    assert s.call_position_for_result(s.by_id["m6"]) == s.by_id["m3"]
    assert s.call_position_for_result(s.by_id["m5"]) == s.by_id["m4"]


def test_perspective_shows_each_agents_own_results_under_its_call(tmp_path):
    s = load(tmp_path, shared_call_ids())
    (alice_call,) = queries.perspective(s, "alice")["items"]
    assert alice_call["message_id"] == "m3"
    assert [r["message_id"] for r in alice_call["calls"][0]["results"]] == ["m6"]
    (bob_call,) = queries.perspective(s, "bob")["items"]
    assert [r["message_id"] for r in bob_call["calls"][0]["results"]] == ["m5"]
    assert bob_call["calls"][0]["results"][0]["paired_call"] == "m4"


def test_reused_call_id_pairs_with_the_latest_call_before_the_result(tmp_path):
    s = load(tmp_path, [
        calls("m1", "a", tool_call("c1", "t", n=1)),
        result("m2", "a", "c1", "one"),
        calls("m3", "a", tool_call("c1", "t", n=2)),
        result("m4", "a", "c1", "two"),
    ])
    assert causality.causality_index(s) == {"m2": "m1", "m4": "m3"}
    items = queries.perspective(s, "a")["items"]
    assert [(i["message_id"], [r["message_id"] for r in i["calls"][0]["results"]]) for i in items] == [
        ("m1", ["m2"]), ("m3", ["m4"])]


def test_tool_result_without_a_call_stands_alone(tmp_path):
    s = load(tmp_path, [
        result("m1", "a", "c9", "early result"),
        calls("m2", "b", tool_call("c9")),  # another agent's call with that id does not count
        calls("m3", "a", tool_call("c9")),  # nor does a later call of the same agent
    ])
    assert "m1" not in causality.causality_index(s)
    items = queries.perspective(s, "a")["items"]
    assert [(i["message_id"], i["kind"], i["paired_call"]) for i in items] == [
        ("m1", "received", None), ("m3", "did", None)]
    assert items[1]["calls"][0]["results"] == []


def test_a_tool_call_with_two_results(tmp_path):
    s = load_index(sample("example1_jack_and_jill"))
    call_position = s.by_id["msg_011"]
    assert [s.events[p]["message_id"] for p in s.result_positions_for_call(call_position, "c3")] == [
        "msg_016", "msg_019"]
    items = queries.perspective(s, "agent_root")["items"]
    assert [i["message_id"] for i in items] == ["msg_002", "msg_003", "msg_007", "msg_011"]
    discuss = items[-1]["calls"][0]
    assert discuss["name"] == "discuss"
    assert [r["message_id"] for r in discuss["results"]] == ["msg_016", "msg_019"]
    assert [r["content"] for r in discuss["results"]] == ["Hi, I'm Jack. *extends hand*",
                                                          "*smiles* Hello Jack, I'm Jill."]
    assert causality.causality_index(s)["msg_019"] == "msg_011"


def test_call_items_list_the_agents_they_spawned(tmp_path):
    s = load(tmp_path, family())
    items = queries.perspective(s, "root")["items"]
    spawn_call = next(i for i in items if i["message_id"] == "m03")
    assert spawn_call["calls"][0]["spawned"] == [{"agent_id": "kid", "name": "Kid", "ordinal": 1, "entries": 3,
                                                   "cost_usd": None}]
    assert [r["message_id"] for r in spawn_call["calls"][0]["results"]] == ["m06"]


def test_invalid_json_arguments_are_kept_raw_in_call_items(tmp_path):
    bad = {"id": "c1", "function": {"name": "web_search", "arguments": '{"query": "x", "max'}}
    s = load(tmp_path, [calls("m1", "a", bad)])
    (item,) = queries.perspective(s, "a")["items"]
    call = item["calls"][0]
    assert call["arguments_valid"] is False
    assert call["arguments"] == '{"query": "x", "max'
    assert call["pretty_arguments"] == '{"query": "x", "max'


def test_a_responses_turn_starts_at_its_input_read_in_its_window_or_before_it(tmp_path):
    at = "2026-01-01T00:00:0{}Z".format
    s = load(tmp_path, [
        created("m1", "a"), system("m2", "a", "You are A") | {"timestamp": at(0)},
        user("m3", "a", "go") | {"timestamp": at(1)}, say("m4", "a", "ok") | {"timestamp": at(4)},
        say("m5", "a", "and more") | {"timestamp": at(5)},  # a later part of the same turn: no input of its own
        calls("m6", "a", tool_call("c1", "search")) | {"timestamp": at(6)},
        result("m7", "a", "c1", "found") | {"timestamp": at(7)}, say("m8", "a", "done") | {"timestamp": at(9)},
    ])
    whole = queries.perspective(s, "a")
    assert [(i["message_id"], i.get("answered_at")) for i in whole["items"]] == [
        ("m2", None), ("m3", None), ("m4", at(1)), ("m5", None), ("m6", None), ("m8", at(7))]
    for start in range(1, 7):  # each window, its first entry's input before it
        window = queries.perspective(s, "a", start=start, limit=2)
        assert [(i["message_id"], i.get("answered_at")) for i in window["items"]] == [
            item for item in [(i["message_id"], i.get("answered_at")) for i in whole["items"]]
            if item[0] in {s.events[p]["message_id"] for p in s.agents["a"].entries[start:start + 2]}]


def test_a_call_at_the_end_of_a_window_shows_its_result_logged_after_the_window(tmp_path):
    s = load(tmp_path, [created("m1", "a"), user("m2", "a", "go"), calls("m3", "a", tool_call("c1", "search")),
                        result("m4", "a", "c1", "found"), say("m5", "a", "done")])
    window = queries.perspective(s, "a", start=0, limit=2)
    assert [item["message_id"] for item in window["items"]] == ["m2", "m3"]
    assert [(r["message_id"], r["kind"]) for r in window["items"][1]["calls"][0]["results"]] == [("m4", "received")]


def test_said_items_list_who_heard_them(tmp_path):
    s = load(tmp_path, unordered_ids())
    (said,) = [i for i in queries.perspective(s, "jack")["items"] if i["kind"] == "said"]
    assert said["heard_by"] == [{"agent_id": "jill", "name": "Jill"}]


# --- causality --------------------------------------------------------------------------------------

def test_causality_index_rules(tmp_path):
    s = load(tmp_path, [
        created("m1", "root"),
        calls("m2", "root", tool_call("c1")),
        created("m3", "kid", cause="m2"),
        piece("m4", "root", "compiled", cause=["m2", "m3"]),
        user("m5", "kid", "compiled", substance="m4"),
        result("m6", "root", "c1", "done"),
        say("m7", "kid", "plain"),
    ])
    assert causality.causality_index(s) == {"m3": "m2", "m4": ["m2", "m3"], "m5": "m4", "m6": "m2"}


def test_substance_takes_precedence_over_cause(tmp_path):
    s = load(tmp_path, [say("m1", "a", "x"), {**user("m2", "b", "x", substance="m1"), "cause": "m9"}])
    assert causality.causality_index(s) == {"m2": "m1"}


def test_flow_follows_the_first_element_of_a_list_cause(tmp_path):
    s = load(tmp_path, [
        calls("m1", "a", tool_call("c1")),
        calls("m2", "a", tool_call("c2")),
        piece("m3", "a", "compiled", cause=["m2", "m1"]),
        user("m4", "b", "compiled", substance="m3"),
    ])
    assert ids(causality.causality_chain(s, "m4")) == ["m2", "m3", "m4"]


def test_flow_stops_at_a_gap_and_at_unknown_ids(tmp_path):
    s = load(tmp_path, [user("m1", "a", "x", substance="m_missing")])
    assert ids(causality.causality_chain(s, "m1")) == ["m1"]
    assert causality.causality_chain(s, "m_unknown") == []


def test_substance_cycle_does_not_hang(tmp_path):
    s = load(tmp_path, [user("m1", "a", "x", substance="m2"), user("m2", "b", "y", substance="m1")])
    assert ids(run_with_timeout(lambda: causality.causality_chain(s, "m1"))) == ["m2", "m1"]
    assert ids(run_with_timeout(lambda: causality.causality_chain(s, "m2"))) == ["m1", "m2"]
    assert ids(run_with_timeout(lambda: causality.references(s, "m1"))) == ["m2"]
    assert ids(run_with_timeout(lambda: causality.references(s, "m2"))) == ["m1"]
    items = run_with_timeout(lambda: dialogs.dialog(s, ["a", "b"])["items"])
    assert sorted(i["key"] for i in items) == ["m1", "m2"]


def test_cause_cycle_does_not_hang(tmp_path):
    s = load(tmp_path, [
        piece("p1", "a", "one", cause="p3"),
        piece("p2", "a", "two", cause="p1"),
        piece("p3", "a", "three", cause=["p2"]),
    ])
    assert ids(run_with_timeout(lambda: causality.causality_chain(s, "p3"))) == ["p1", "p2", "p3"]
    assert ids(run_with_timeout(lambda: causality.causality_chain(s, "p1"))) == ["p2", "p3", "p1"]


def test_self_substance_does_not_hang(tmp_path):
    s = load(tmp_path, [user("m1", "a", "x", substance="m1")])
    assert ids(run_with_timeout(lambda: causality.causality_chain(s, "m1"))) == ["m1"]
    assert run_with_timeout(lambda: causality.references(s, "m1")) == []


def test_references_are_transitive(tmp_path):
    s = load(tmp_path, [
        say("m1", "a", "orig"),
        user("m2", "b", "[A]: orig", substance="m1"),
        user("m3", "c", "[B]: [A]: orig", substance="m2"),
        user("m4", "d", "[A]: orig", substance="m1"),
        piece("m5", "x", "not an entry", cause="m1"),
    ])
    assert ids(causality.references(s, "m1")) == ["m2", "m3", "m4"]
    assert ids(causality.references(s, "m2")) == ["m3"]
    assert causality.references(s, "m4") == []


# --- incremental ingest -----------------------------------------------------------------------------

def snapshot(s: SessionIndex) -> dict:
    """Everything the queries say about a session, to compare two ways of reading it."""
    agent_ids = list(s.agents)
    return {
        "events": list(s.events),
        "agents": queries.agents(s),
        "tree": queries.tree(s),
        "roots": list(s.roots),
        "causality": causality.causality_index(s),
        "dialog": dialogs.dialog(s, agent_ids),
        "perspectives": {a: queries.perspective(s, a, include_subagents=True) for a in agent_ids},
        "flows": {e["message_id"]: ids(causality.causality_chain(s, e["message_id"])) for e in s.events},
        "references": {e["message_id"]: ids(causality.references(s, e["message_id"])) for e in s.events},
        "problems": [p.as_dict() for p in s.problems],
    }


def raw_lines(path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1]


def tricky_events():
    """Late agent_created, late cause, cycles, shared call ids, a broken line (added in the file)."""
    return [
        created("m01", "root", name="Root"),
        user("m02", "late", "spoke first"),
        created("m03", "early", cause="m05", name="Early"),
        calls("m04", "root", tool_call("c1", name="Late")),
        calls("m05", "root", tool_call("c2", name="Early")),
        created("m06", "late", cause="m04", name="Late"),
        result("m07", "root", "c1", "created Late"),
        calls("m08", "late", tool_call("c1", "search", q="x")),
        result("m09", "late", "c1", "x found"),
        say("m10", "late", "Hello"),
        user("m11", "early", "[Late]: Hello", substance="m10"),
        user("m12", "root", "[Late]: H***o", substance="m10"),
        user("m13", "early", "loop", substance="m14"),
        user("m14", "early", "loop", substance="m13"),
        result("m15", "root", "c2", "created Early"),
    ]


@pytest.mark.parametrize("batch", [1, 2, 3, 7])
def test_ingest_in_batches_equals_a_one_shot_read(tmp_path, batch):
    path = write_events(tmp_path / "s.jsonl", tricky_events())
    with open(path, "a") as f:
        f.write("{broken json\n")
    write_events(path, [say("m16", "root", "after the broken line")], mode="a")
    whole = load_index(path)
    lines = [Line(i + 1, raw) for i, raw in enumerate(raw_lines(path))]
    pieces = SessionIndex("s", str(path), "s.jsonl")
    for start in range(0, len(lines), batch):
        pieces.ingest(lines[start:start + batch])
    assert snapshot(pieces) == snapshot(whole)
    assert whole.count == 16
    assert [(p["kind"], p["line"]) for p in snapshot(whole)["problems"]] == [("substance_cycle", 14), ("invalid_json", 16)]


@pytest.mark.parametrize("name", ["example1_jack_and_jill", "example2_inner_monologue",
                                  "example3_hook_intervention", "example4_external_trigger", "research_team"])
def test_samples_ingested_line_by_line_equal_a_one_shot_read(name):
    path = sample(name)
    whole = load_index(path)
    pieces = SessionIndex(name, str(path), path.name)
    for i, raw in enumerate(raw_lines(path)):
        assert pieces.ingest([Line(i + 1, raw)]) == 1
    assert snapshot(pieces) == snapshot(whole)


def test_file_tailer_with_partial_lines_equals_a_one_shot_read(tmp_path):
    source = write_events(tmp_path / "source.jsonl", tricky_events())
    data = source.read_bytes()
    target = tmp_path / "live.jsonl"
    target.write_bytes(b"")
    tailer = FileTailer(target)
    live = SessionIndex("live", str(target), "live.jsonl")
    counts = []
    for start in range(0, len(data), 97):  # chunks that cut lines in the middle
        with open(target, "ab") as f:
            f.write(data[start:start + 97])
        read = tailer.read()
        assert read.restarted is False
        live.ingest(read.lines)
        counts.append(live.count)
    assert counts == sorted(counts)
    assert snapshot(live) == snapshot(load_index(source))
    assert list(live.line_numbers) == list(range(1, 16))


def test_library_refresh_after_appends_equals_a_one_shot_read(tmp_path):
    events = tricky_events()
    folder = tmp_path / "sessions"
    path = write_events(folder / "team.jsonl", events[:4])
    library = Library(folder)
    library.scan()
    write_events(path, events[4:9], mode="a")
    library.refresh(str(path))
    write_events(path, events[9:], mode="a")
    library.refresh(str(path))
    session = library.get("team")
    assert snapshot(session) == snapshot(load(tmp_path, events, "whole.jsonl"))


def test_library_restarts_a_truncated_file(tmp_path):
    folder = tmp_path / "sessions"
    path = write_events(folder / "s.jsonl", family())
    library = Library(folder)
    library.scan()
    session = library.get("s")
    epoch = session.epoch
    write_events(path, [user("n1", "fresh", "new file")])
    library.refresh(str(path))
    assert session.epoch == epoch + 1
    assert ids(session.events) == ["n1"]
    assert queries.agent_names(session) == {"fresh": "fresh"}
    assert session.position_after(f"{epoch}-3") is None
    assert session.position_after(f"{epoch + 1}-1") == 1


def test_the_tree_read_in_order_follows_every_event_that_changes_it(tmp_path):
    """An agent page reads its subtree and neighbours from the tree's order kept since the last read: an agent
    added or moved by an appended event, or a file replaced by one of as many events, shows in the next read."""
    folder = tmp_path / "sessions"
    path = write_events(folder / "s.jsonl", family())
    library = Library(folder)
    library.scan()
    s = library.get("s")
    assert queries.subtree(s, "root") == ["root", "kid", "grandkid"]
    assert queries.agent_neighbours(s, "grandkid") == ("kid", None)
    write_events(path, [calls("m10", "root", tool_call("c2", name="Sister")), created("m11", "sister", cause="m10"),
                        user("m12", "late", "I spoke before my creation was logged")], mode="a")
    library.refresh(str(path))
    assert queries.subtree(s, "root") == ["root", "kid", "grandkid", "sister"]
    assert queries.agent_neighbours(s, "grandkid") == ("kid", "sister")
    assert queries.agent_neighbours(s, "late") == ("sister", None)
    write_events(path, [calls("m13", "kid", tool_call("k2", name="Late")), created("m14", "late", cause="m13")],
                 mode="a")
    library.refresh(str(path))  # "late" moves under "kid"
    assert queries.subtree(s, "kid") == ["kid", "grandkid", "late"]
    assert queries.tree_order(s) == [("root", 0, 0), ("kid", 1, 0), ("grandkid", 2, 1), ("late", 2, 2),
                                     ("sister", 1, 2)]
    epoch, count = s.epoch, s.count
    write_events(path, [created(f"r{i:02d}", f"r{i:02d}") for i in range(count)])  # replaced: as many roots
    library.refresh(str(path))
    assert (s.epoch, s.count) == (epoch + 1, count)
    assert queries.subtree(s, "r00") == ["r00"]
    assert queries.agent_neighbours(s, "r03") == ("r02", "r04")


# --- live updates ----------------------------------------------------------------------------------

def live_events():
    return [
        created("m01", "root", name="Root"),                      # 0
        calls("m02", "root", tool_call("c1", name="Kid")),               # 1
        created("m03", "kid", cause="m02", name="Kid"),           # 2
        say("m04", "kid", "hello root"),                          # 3
        user("m05", "root", "[Kid]: hello root", substance="m04"),  # 4
        # ---- a page loaded up to here (after = 5)
        result("m06", "root", "c1", "created Kid"),               # 5: result of a call before 5
        calls("m07", "root", tool_call("c2", name="Other")),             # 6
        created("m08", "other", cause="m07", name="Other"),       # 7
        result("m09", "root", "c2", "created Other"),             # 8: result of a call after 5
        user("m10", "other", "[Kid]: hello root", substance="m04"),  # 9: old group gains a recipient
        say("m11", "other", "hi all"),                            # 10: new group
        user("m12", "kid", "[Other]: hi all", substance="m11"),   # 11
        created("m13", "kid2", cause="m02", name="Kid2"),         # 12: spawned by a call before 5
        user("m14", "solo", "external"),                          # 13: implicit agent
    ]


def test_tree_updates_list_exactly_the_agents_that_appeared(tmp_path):
    s = load(tmp_path, live_events())
    updates = live_updates.tree_updates(s, 5)
    assert [a["agent_id"] for a in updates["appeared"]] == ["other", "kid2", "solo"]
    assert [a["parent_id"] for a in updates["appeared"]] == ["root", "root", None]
    assert updates["moved"] == []
    assert updates["counts"] == {"root": 5, "other": 2, "kid": 2, "solo": 1}
    assert live_updates.tree_updates(s, s.count) == {"appeared": [], "moved": [], "counts": {}, "ordinals": {}}
    assert [a["agent_id"] for a in live_updates.tree_updates(s, 0)["appeared"]] == ["root", "kid", "other", "kid2", "solo"]


def test_tree_updates_report_a_late_resolved_parent_as_moved(tmp_path):
    s = load(tmp_path, [
        created("m1", "root"),
        created("m2", "kid", cause="m4"),
        user("m3", "root", "go"),
        calls("m4", "root", tool_call("c1")),
    ])
    updates = live_updates.tree_updates(s, 3)
    assert updates["appeared"] == []
    assert [(n["agent_id"], n["parent_id"], n["flags"]) for n in updates["moved"]] == [("kid", "root", [])]


def test_perspective_updates_return_only_entries_after_the_position(tmp_path):
    s = load(tmp_path, live_events())
    updates = live_updates.perspective_updates(s, "root", False, 5)
    assert [i["message_id"] for i in updates["items"]] == ["m07"]
    assert [r["message_id"] for r in updates["items"][0]["calls"][0]["results"]] == ["m09"]
    assert [(r["call_position"], r["call_index"], r["item"]["message_id"]) for r in updates["results"]] == [
        (1, 0, "m06")]
    assert updates["spawned"] == [{"call_position": 1, "call_index": 0, "agent_id": "kid2", "name": "Kid2",
                                   "entries": 0, "cost_usd": None}]


def test_perspective_updates_with_subagents(tmp_path):
    s = load(tmp_path, live_events())
    updates = live_updates.perspective_updates(s, "root", True, 5)
    assert [i["message_id"] for i in updates["items"]] == ["m07", "m10", "m11", "m12"]
    assert live_updates.perspective_updates(s, "root", True, s.count) == {"items": [], "results": [], "spawned": [], "stop": s.count}


def test_calls_to_redraw_are_those_whose_result_came_or_whose_agents_wrote_since(tmp_path):
    s = load(tmp_path, [calls("m1", "root", tool_call("c1", name="Kid"), tool_call("c2", "grep")),
                        created("m2", "kid", cause="m1", name="Kid"), say("m3", "kid", "one"),
                        calls("m4", "root", tool_call("c3", "grep")),
                        say("m5", "kid", "two"), result("m6", "root", "c3", "found", name="grep")])
    updates = live_updates.perspective_updates(s, "root", False, 4)
    redrawn = live_updates.calls_to_redraw(s, ["root"], 4, updates["stop"], updates["results"])
    assert sorted(redrawn) == [(0, 0), (3, 0)]  # Kid wrote (its call), c3's result came; c2 unchanged
    assert redrawn[(0, 0)]["call"]["spawned"][0]["entries"] == 2
    assert [r["message_id"] for r in redrawn[(3, 0)]["call"]["results"]] == ["m6"]
    assert live_updates.calls_to_redraw(s, ["root"], s.count, s.count, []) == {}


def test_perspective_updates_spawned_follows_a_list_cause(tmp_path):
    s = load(tmp_path, [calls("m1", "root", tool_call("c1", name="Kid")), created("m2", "kid", cause=["m1"], name="Kid")])
    (call_item,) = queries.perspective(s, "root")["items"]
    assert call_item["calls"][0]["spawned"] == [{"agent_id": "kid", "name": "Kid", "ordinal": 1, "entries": 0,
                                                   "cost_usd": None}]
    assert live_updates.perspective_updates(s, "root", False, 1)["spawned"] == [
        {"call_position": 0, "call_index": 0, "agent_id": "kid", "name": "Kid", "entries": 0, "cost_usd": None}]


def test_perspective_updates_ignore_a_duplicate_agent_created(tmp_path):
    s = load(tmp_path, [
        calls("m1", "root", tool_call("c1", name="Kid")),
        created("m2", "kid", cause="m1", name="Kid"),
        say("m3", "root", "done"),
        created("m4", "kid", cause="m1", name="Kid"),  # duplicate: ignored by the index
    ])
    assert [p.kind for p in s.problems] == ["duplicate_agent_created"]
    assert [len(i["calls"][0]["spawned"]) for i in queries.perspective(s, "root")["items"] if i["calls"]] == [1]
    assert live_updates.perspective_updates(s, "root", False, 3)["spawned"] == []


def test_dialog_updates_report_new_and_updated_groups(tmp_path):
    s = load(tmp_path, live_events())
    selected = ["root", "kid", "other"]
    updates = dialogs.dialog_updates(s, selected, 5)
    assert [(i["message_id"], i["recipients"]) for i in updates["items"]] == [("m11", ["kid"])]
    assert [(i["message_id"], i["recipients"]) for i in updates["updated"]] == [("m04", ["root", "other"])]
    assert dialogs.dialog_updates(s, selected, s.count) == {"items": [], "updated": [], "stop": s.count}


UNBOUNDED = 10**9  # a live update with no window: what a page gets from the polls it follows (see below)


def followed_perspective(s, agent_id, include, after, limit):
    """What a page at `after` adds by following windowed polls to the end, folded as the page folds them:
    a result under a call an earlier poll of the chain added goes into that item, not beside it."""
    items, results, spawned, polls = [], [], [], 0
    added = {}  # position -> item added by the chain
    while after < s.count:
        upd = live_updates.perspective_updates(s, agent_id, include, after, limit=limit)
        assert upd["stop"] > after and len(upd["items"]) + len(upd["results"]) <= limit
        polls += 1
        for item in upd["items"]:
            items.append(item)
            added[item["position"]] = item
        for r in upd["results"]:
            if r["call_position"] in added:
                added[r["call_position"]]["calls"][r["call_index"]]["results"].append(r["item"])
            else:
                results.append(r)
        for a in upd["spawned"]:
            if a["call_position"] in added:
                added[a["call_position"]]["calls"][a["call_index"]]["spawned"].append(
                    {"agent_id": a["agent_id"], "name": a["name"], "ordinal": s.agents[a["agent_id"]].ordinal,
                     "entries": a["entries"], "cost_usd": a["cost_usd"]})
            else:
                spawned.append(a)
        after = upd["stop"]
    return {"items": items, "results": results, "spawned": spawned, "stop": s.count}, polls


def followed_dialog(s, agent_ids, after, limit):
    """The dialog items a page at `after` adds by following windowed polls, each key's latest version."""
    new_keys, latest = [], {}
    while after < s.count:
        upd = dialogs.dialog_updates(s, agent_ids, after, limit=limit)
        assert upd["stop"] > after
        for item in upd["items"]:
            new_keys.append(item["key"])
            latest[item["key"]] = item
        for item in upd["updated"]:
            latest[item["key"]] = item
        after = upd["stop"]
    return new_keys, latest


@pytest.mark.parametrize("limit", [1, 3])
def test_windowed_polls_followed_to_the_end_add_what_one_unbounded_update_adds(limit):
    s = load_index(sample("research_team"))
    polls = 0
    for after in range(0, s.count + 1, 11):
        for agent_id in s.agent_order:
            for include in (False, True):
                whole = live_updates.perspective_updates(s, agent_id, include, after, limit=UNBOUNDED)
                followed, n = followed_perspective(s, agent_id, include, after, limit)
                polls += n
                assert followed == whole, (after, agent_id, include)
        everyone = list(s.agents)
        whole = dialogs.dialog_updates(s, everyone, after, limit=UNBOUNDED)
        new_keys, latest = followed_dialog(s, everyone, after, limit)
        assert new_keys == [i["key"] for i in whole["items"]], after
        for item in whole["items"] + whole["updated"]:
            assert latest[item["key"]] == item, (after, item["key"])
    assert polls > s.count  # the windows were small enough to split every backlog


def test_a_poll_renders_at_most_its_window_and_says_where_the_next_starts(tmp_path):
    path = write_events(tmp_path / "s.jsonl", [created("c0", "root")] + [say(f"m{i:04}", "root", f"line {i}") for i in range(450)])
    s = load_index(path)
    first = live_updates.perspective_updates(s, "root", False, 0)
    assert len(first["items"]) == live_updates.POLL_ENTRIES and first["stop"] == first["items"][-1]["position"] + 1
    second = live_updates.perspective_updates(s, "root", False, first["stop"])
    third = live_updates.perspective_updates(s, "root", False, second["stop"])
    assert len(second["items"]) == live_updates.POLL_ENTRIES and len(third["items"]) == 50 and third["stop"] == s.count


def prefix_index(tmp_path, events, n):
    return load(tmp_path, events[:n], name=f"prefix_{n}.jsonl")


@pytest.mark.parametrize("name", ["example1_jack_and_jill", "example2_inner_monologue", "research_team"])
def test_live_helpers_agree_with_full_reads_at_every_position(tmp_path, name):
    events = [json.loads(raw) for raw in raw_lines(sample(name))]
    full = load_index(sample(name))
    everyone = list(full.agents)
    full_dialog = {i["key"]: i for i in dialogs.dialog(full, everyone)["items"]}
    full_persp = {a: queries.perspective(full, a, True)["items"] for a in everyone}
    step = 1 if len(events) < 60 else 13
    for n in range(0, len(events) + 1, step):
        before = prefix_index(tmp_path, events, n)
        # tree: exactly the agents unknown at n appear
        appeared = [a["agent_id"] for a in live_updates.tree_updates(full, n)["appeared"]]
        assert appeared == [a for a in everyone if a not in before.agents], n
        # dialog: new groups are the ones a page at n did not have; updated ones are the ones that changed
        before_dialog = {i["key"]: i for i in dialogs.dialog(before, list(before.agents))["items"]}
        updates = dialogs.dialog_updates(full, everyone, n, limit=UNBOUNDED)
        assert [i["key"] for i in updates["items"]] == [k for k in full_dialog if k not in before_dialog], n
        changed = {k for k in before_dialog if before_dialog[k]["deliveries"] != full_dialog[k]["deliveries"]}
        assert {i["key"] for i in updates["updated"]} >= changed, n
        for item in updates["updated"]:
            assert item == full_dialog[item["key"]]
        # perspective: new top-level items, and new results under calls already shown
        for agent_id in everyone:
            upd = live_updates.perspective_updates(full, agent_id, True, n, limit=UNBOUNDED)
            assert [i["position"] for i in upd["items"]] == [
                i["position"] for i in full_persp[agent_id] if i["position"] >= n], (n, agent_id)
            expected_results = [
                (i["position"], r["position"]) for i in full_persp[agent_id] if i["position"] < n
                for c in i["calls"] for r in c["results"] if r["position"] >= n]
            assert sorted((r["call_position"], r["item"]["position"]) for r in upd["results"]) == sorted(
                expected_results), (n, agent_id)


def test_updates_after_any_cursor_add_exactly_what_a_reload_shows():
    s = load_index(sample("research_team"))
    results = spawned = 0
    for agent_id in s.agent_order:
        for include in (False, True):
            whole = queries.perspective(s, agent_id, include)
            creations = {a.created_position for a in s.agents.values() if a.created_position is not None}
            for after in sorted(set(range(0, s.count + 1, 17)) | creations):  # a cursor just before each creation too
                updates = live_updates.perspective_updates(s, agent_id, include, after, limit=UNBOUNDED)
                assert [i["position"] for i in updates["items"]] == \
                    [i["position"] for i in whole["items"] if i["position"] >= after]
                on_page = {i["position"]: i for i in whole["items"] if i["position"] < after}
                for added in updates["results"]:  # a result under a call already shown, as a reload pairs it
                    assert added["item"]["position"] >= after
                    assert added["item"]["paired_call"] == s.events[added["call_position"]]["message_id"]
                    assert added["call_position"] in on_page
                    results += 1
                # an agent created since, under the call already shown that a reload lists it under
                assert sorted((a["call_position"], a["call_index"], a["agent_id"]) for a in updates["spawned"]) == \
                    sorted((p, c["index"], a["agent_id"]) for p, i in on_page.items() for c in i["calls"]
                           for a in c["spawned"] if s.agents[a["agent_id"]].created_position >= after)
                spawned += len(updates["spawned"])
    assert results and spawned  # the sample exercises both
