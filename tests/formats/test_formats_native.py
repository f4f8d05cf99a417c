"""The native line parser (formats/native.py): one line, one event or exactly one problem; and the records of
the formats a normalizer reads, read the same way."""

import json

from events import calls, dumps, ingest, problems, say
from viewer.formats import LEGACY, NATIVE
from viewer.formats.native import LineParser
from viewer.library.library import Library
from viewer.files.tailer import Line


def test_broken_lines_are_skipped_counted_and_never_hide_valid_ones(tmp_path):
    path = tmp_path / "s.jsonl"
    good = {"message_id": "m1", "event_type": "transcript_entry", "agent_id": "a", "role": "user", "content": "x"}
    path.write_text("\n".join([
        json.dumps(good), "{not json", "[1, 2]", "", json.dumps({**good, "message_id": "m2"}),
        json.dumps({"event_type": "transcript_entry", "agent_id": "a"}),
    ]) + "\n")
    library = Library(tmp_path)
    library.scan()
    (session,) = library.listing()
    assert [e["message_id"] for e in session.events] == ["m1", "m2"]
    assert [(p.kind, p.line) for p in session.problems] == [
        ("invalid_json", 2), ("not_an_object", 3), ("missing_message_id", 6)]


def test_blank_lines_are_neither_events_nor_problems():
    session = ingest([dumps(say("m1", "a", "hi")), b"", b"   \r", dumps(say("m2", "a", "again"))])
    assert session.count == 2 and session.problems == []
    assert list(session.line_numbers) == [1, 4]


def test_a_line_with_bytes_that_are_not_utf8_is_kept_with_replacement_characters():
    bad = b'{"message_id": "m1", "event_type": "transcript_entry", "agent_id": "a", "role": "user", "content": "caf\xe9"}'
    session = ingest([bad, b"\xff\xfe not json either", dumps(say("m2", "a", "fine"))])
    assert [e["message_id"] for e in session.events] == ["m1", "m2"]
    assert session.events[0]["content"] == "caf\ufffd"
    assert problems(session) == [("invalid_utf8", 1, "m1"), ("invalid_utf8", 2, None)]


def test_wrong_types_are_reported_and_the_event_kept():
    events = [
        {"message_id": "m1", "event_type": "transcript_entry", "agent_id": "a", "role": "user", "content": ["x", 1]},
        {"message_id": "m2", "event_type": "transcript_entry", "agent_id": "a", "role": "user", "content": 42},
        {"message_id": "m3", "event_type": "transcript_entry", "agent_id": "a", "role": "assistant", "tool_calls": {"id": "c"}},
        calls("m4", "a", {"id": "c1", "type": "function", "function": {"name": "task", "arguments": "{not json"}}),
        {"message_id": "m5", "event_type": "agent_created", "agent_id": "b", "name": 7, "cause": {"m": 1}},
    ]
    session = ingest([dumps(e) for e in events])
    assert session.count == 5
    assert [(p.kind, p.line, p.message_id) for p in session.problems] == [
        ("wrong_type", 1, "m1"), ("wrong_type", 2, "m2"), ("wrong_type", 3, "m3"),
        ("arguments_not_json", 4, "m4"), ("wrong_type", 5, "m5"), ("wrong_type", 5, "m5"),
    ]
    assert session.problems[1].detail == "content is a number, not a string"
    assert session.problems[2].detail == "tool_calls is an object, not a list (ignored)"


def test_a_record_with_bytes_that_are_not_utf8_is_read_and_reported_like_a_native_line(tmp_path):
    first = {"type": "user", "uuid": "u1", "sessionId": "s", "timestamp": "2025-01-01T00:00:00Z",
             "message": {"role": "user", "content": "hello"}}
    second = json.dumps({**first, "uuid": "u2", "message": {"role": "user", "content": "caf_"}}).encode()
    path = tmp_path / "s.jsonl"
    path.write_bytes(json.dumps(first).encode() + b"\n" + second.replace(b"caf_", b"caf\xe9") + b"\n"
                     + b"\xff\xfe not json either\n")
    library = Library(tmp_path)
    library.scan()
    (session,) = library.listing()
    assert session.format.name == "claude-code"
    assert [e["content"] for e in session.events if e["event_type"] == "transcript_entry"] == ["hello", "caf\ufffd"]
    assert [(p.kind, p.line) for p in session.problems] == [("invalid_utf8", 2), ("invalid_utf8", 3)]


def test_the_parser_reports_each_skipped_line_once_and_switches_a_legacy_file():
    reported, switched = [], []
    parser = LineParser(NATIVE, lambda *problem: reported.append(problem[:2]), lambda: switched.append(True))
    assert parser.parse(Line(1, b"  ")) is None and reported == []
    assert parser.parse(Line(2, b"[1]")) is None and reported == [("not_an_object", 2)]
    legacy_line = {"message_id": "m1", "agent_id": "a", "role": "user", "content": "hi"}
    event, raw, _, as_written = parser.parse(Line(3, json.dumps(legacy_line).encode()))
    assert switched == [True] and event["event_type"] == "transcript_entry" and not as_written
    assert LineParser(LEGACY, reported.append, switched.append).legacy is not None
