import json

from conftest import write_events
from viewer.index.session_index import SessionIndex
from viewer.library.library import Library




def _filed(session) -> dict:
    """Everything the index files events under, as plain values."""
    return {
        "by_id": dict(session.by_id),
        "agents": {a.agent_id: (list(a.entries), {k: list(v) for k, v in a.by_kind.items() if v},
                                list(a.dialog_entries), list(a.usage_entries), a.parent_id, a.children, a.flags,
                                a.cause, a.name, a.language_model, a.created_position)
                   for a in session.agents.values()},
        "roots": session.roots, "references": session.references, "caused": session.caused,
        "spawned": session.spawned, "calls": session.call_positions, "results": session.result_positions,
        "tool_names": session.tool_names, "usage": list(session.usage_positions), "tree": session.tree_changes,
        "problems": [(p.kind, p.line, p.detail, p.message_id) for p in session.problems if not p.of_line],
    }


def test_ingest_files_every_event_as_its_facts_say_on_either_path(tmp_path):
    """Lines read by ingest (facts found while checking them) and the same events added as dicts
    (facts found by model.facts_of) are filed alike, odd shapes included."""
    from events import calls, created, entry, piece, result, say, system, tool_call, user

    events = [
        created("m1", "root", name="Root", language_model="lm"),
        system("m2", "root", "You are Root."),
        user("m3", "root", "Go"),
        calls("m4", "root", tool_call("c1", "task", name="Jack"), {"id": "c2", "function": {"name": "Run", "arguments": "{bad"}}),
        created("m5", "jack", cause="m4", name="Jack"),
        result("m6", "root", "c1", "ok", name="Task"),
        result("m7", "root", "nope", "dangling"),
        say("m8", "jack", "Hello"),
        user("m9", "root", "[Jack]: Hello", substance="m8"),
        user("m10", "root", "[?]: x", substance="m99"),
        piece("m11", "jack", "broadcast", ["m8", "m10", 3]),
        entry("m12", "jack", "developer", [{"type": "text", "text": "x"}]),
        entry("m13", "jack", "assistant", {"k": 1}, model="gpt", usage={"input_tokens": 3}),
        entry("m14", "ghost", "user", "implicit agent", tool_call_id="c9"),
        entry("m8", "jack", "assistant", "a duplicate id"),
        entry("m15", "jack", "assistant", None, tool_calls="nope", name=5),
        user("m16", "jack", "self", substance="m16"),
        created("m17", "late", cause="m18"),
        say("m18", "root", "named before it was written"),
        entry("m19", "root", "tool", "a result without an id", name="Search"),
        {"message_id": "m20", "event_type": "something_else", "agent_id": "root", "tool_calls": [tool_call("c5", "Odd")]},
    ]
    path = write_events(tmp_path / "s.jsonl", events)
    library = Library(tmp_path)
    library.scan()
    read = library.get("s")
    added = SessionIndex("d", str(path), "s.jsonl")
    for number, event in enumerate(json.loads(json.dumps(events)), 1):
        added.add(event, number)
    assert _filed(read) == _filed(added)
    jack = read.agents["jack"]
    assert {k: list(v) for k, v in jack.by_kind.items()} == {"said": [7, 12, 14, 15], "noted": [11], "heard": [16]}
    assert read.tool_names == {"task", "run", "odd", "search"}
    assert {p.kind for p in read.problems} >= {"dangling_tool_call_id", "dangling_substance", "duplicate_message_id",
                                               "substance_cycle", "wrong_type", "arguments_not_json",
                                               "unknown_event_type"}
