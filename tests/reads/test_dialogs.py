"""The dialog: each message once among the chosen agents, its recipients, modified deliveries, its polls."""

from __future__ import annotations

from conftest import sample, write_events
from events import calls, piece, result, say, system, tool_call, user
from viewer.reads import dialogs
from viewer.index.session_index import SessionIndex
from viewer.library.library import Library
from viewer.reads.session_viewer import load_index


def load(tmp_path, events, name="session.jsonl") -> SessionIndex:
    return load_index(write_events(tmp_path / name, events))


def test_dialog_of_seed_example1(tmp_path):
    s = load_index(sample("example1_jack_and_jill"))
    data = dialogs.dialog(s, ["agent_jack", "agent_jill"])
    assert data["total"] == 3
    items = data["items"]
    assert [(i["message_id"], i["speaker"], i["recipients"], i["modified"]) for i in items] == [
        ("msg_012", "agent_root", ["agent_jack", "agent_jill"], False),
        ("msg_015", "agent_jack", ["agent_jill"], False),
        ("msg_018", "agent_jill", ["agent_jack"], False),
    ]
    assert items[0]["event_type"] == "piece_of_text"
    assert [d["message_id"] for d in items[0]["deliveries"]] == ["msg_013", "msg_014"]
    assert items[1]["deliveries"] == [{"message_id": "msg_017", "agent_id": "agent_jill", "name": "Jill",
                                       "content": "[Jack]: Hi, I'm Jack. *extends hand*", "modified": False}]
    assert items[1]["speaker_name"] == "Jack"
    assert items[1]["recipient_names"] == ["Jill"]


def test_dialog_excludes_system_tool_calls_and_tool_results(tmp_path):
    s = load(tmp_path, [
        system("m1", "a", "You are A"),
        calls("m2", "a", tool_call("c1"), content="thinking aloud"),
        result("m3", "a", "c1", "tool output"),
        user("m4", "a", "a question"),
        say("m5", "a", "an answer"),
        {"message_id": "m6", "event_type": "transcript_entry", "agent_id": "a", "role": "assistant", "content": ""},
    ])
    assert [i["message_id"] for i in dialogs.dialog(s, ["a"])["items"]] == ["m4", "m5"]


def test_dialog_recipients_are_only_selected_agents(tmp_path):
    s = load(tmp_path, [
        say("m1", "jack", "Hello all"),
        user("m2", "jill", "[Jack]: Hello all", substance="m1"),
        user("m3", "joe", "[Jack]: Hello all", substance="m1"),
    ])
    (item,) = dialogs.dialog(s, ["jack", "jill"])["items"]
    assert item["recipients"] == ["jill"]
    (item,) = dialogs.dialog(s, ["jill"])["items"]
    # Jack is not selected but the original utterance is still the one shown, and Jack its speaker
    assert item["message_id"] == "m1"
    assert item["speaker"] == "jack"
    assert item["recipients"] == ["jill"]


def test_dialog_lists_a_recipient_once_even_when_it_heard_twice(tmp_path):
    s = load(tmp_path, [
        say("m1", "jack", "Hello"),
        user("m2", "jill", "[Jack]: Hello", substance="m1"),
        user("m3", "jill", "(repeated) [Jack]: Hello", substance="m1"),
    ])
    (item,) = dialogs.dialog(s, ["jack", "jill"])["items"]
    assert item["recipients"] == ["jill"]
    assert item["recipient_names"] == ["jill"]
    assert [d["message_id"] for d in item["deliveries"]] == ["m2", "m3"]


def test_dialog_marks_modified_deliveries(tmp_path):
    s = load(tmp_path, [
        say("m1", "jack", "password: 1234"),
        user("m2", "jill", "[Jack]: password: [REDACTED]", substance="m1"),
        user("m3", "joe", "[Jack]: password: 1234", substance="m1"),
    ])
    (item,) = dialogs.dialog(s, ["jack", "jill", "joe"])["items"]
    assert item["modified"] is True
    assert [(d["agent_id"], d["modified"]) for d in item["deliveries"]] == [("jill", True), ("joe", False)]
    (only_joe,) = dialogs.dialog(s, ["joe"])["items"]
    assert only_joe["modified"] is False


def test_dialog_with_a_missing_original_shows_the_groups_first_entry(tmp_path):
    s = load(tmp_path, [
        user("m1", "jill", "[Ghost]: boo", substance="m_gone"),
        user("m2", "jack", "[Ghost]: boo!", substance="m_gone"),
    ])
    (item,) = dialogs.dialog(s, ["jack", "jill"])["items"]
    assert item["message_id"] == "m1"
    assert item["key"] == "m_gone"
    assert item["original_missing"] is True
    assert item["speaker"] is None
    assert item["recipients"] == ["jill", "jack"]
    assert [d["modified"] for d in item["deliveries"]] == [None, None]
    assert item["modified"] is False


def test_dialog_orders_groups_by_the_originals_position(tmp_path):
    s = load(tmp_path, [
        piece("p1", "host", "Topic one", cause="x"),
        say("u1", "jack", "Early remark"),
        user("d1", "jill", "[Jack]: Early remark", substance="u1"),
        user("d2", "jill", "Topic one", substance="p1"),  # heard late, but the original is first
    ])
    items = dialogs.dialog(s, ["jack", "jill"])["items"]
    assert [i["message_id"] for i in items] == ["p1", "u1"]
    windowed = dialogs.dialog(s, ["jack", "jill"], start=1, limit=1)
    assert [i["message_id"] for i in windowed["items"]] == ["u1"]
    assert (windowed["start"], windowed["end"], windowed["total"]) == (1, 2, 2)


def test_a_dialog_read_as_its_session_grows_is_the_dialog_read_at_once(tmp_path):
    """The dialog's order is extended from where it stopped, placing each entry by the original the index found
    when it read the entry: a delivery heard before its original is logged, an original logged after (the item
    moves to it), a message id used twice and an entry for itself must end as a dialog read in one go."""
    events = [
        user("d1", "jill", "[Jack]: early", substance="u9"),  # its original comes later
        say("u1", "jack", "Hello Jill"),
        user("d2", "jill", "[Jack]: Hello Jill", substance="u1"),
        user("d3", "jill", "[Ghost]: boo", substance="gone"),  # never logged
        say("u2", "jill", "Hi Jack"),
        user("d4", "jack", "[Jill]: Hi Jack", substance="u2"),
        say("u9", "jack", "early"),
        user("d5", "jill", "[Jack]: early, again", substance="u9"),
        say("u1", "jack", "the same id again"),  # a duplicate id: the item is the first u1's
        user("d6", "jack", "[Ghost]: boo", substance="gone"),
        say("u3", "jack", "Bye"),
        user("d7", "jill", "[Jack]: Bye", substance="u3"),
    ]
    path = write_events(tmp_path / "g" / "grown.jsonl", events[:2])  # both agents are known
    library = Library(path.parent)
    library.scan()
    for n in range(2, len(events) + 1):
        if n > 2:
            write_events(path, events[n - 1:n], mode="a")
            library.refresh(str(path))
        grown = dialogs.dialog(library.get("grown"), ["jack", "jill"])
        fresh = dialogs.dialog(load(tmp_path / "fresh", events[:n]), ["jack", "jill"])
        assert grown == fresh, n
    assert [i["key"] for i in grown["items"]] == ["u1", "gone", "u2", "u9", "u3"]
    jill = library.get("grown").agents["jill"]  # what the index found as it read each: -1 for an original not logged
    assert list(zip(jill.dialog_entries, jill.dialog_originals)) == [(0, -1), (2, 1), (3, -1), (4, 4), (7, 6), (11, 10)]
