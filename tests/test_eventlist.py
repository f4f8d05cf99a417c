"""Native lines are kept as their bytes and read back as the same events; anything else stays a dict."""

import json

from conftest import write_events
from viewer.index import Library


def test_native_events_are_kept_as_bytes_and_read_back_whole(tmp_path):
    events = [{"message_id": f"m{i}", "event_type": "transcript_entry", "agent_id": "a", "role": "user",
               "content": f"caf\u00e9 {i}", "extra": {"nested": [i, None, True]}} for i in range(50)]
    write_events(tmp_path / "s.jsonl", events)
    library = Library(tmp_path)
    library.scan()
    s = library.get("s")
    assert all(type(item) is bytes for item in s.events.raw(s.count))
    assert [s.events[p] for p in range(s.count)] == events
    assert list(s.events) == events and s.events[-1] == events[-1] and s.events[10:12] == events[10:12]


def test_a_line_with_bytes_that_are_not_utf8_is_kept_as_the_event_shown(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"message_id": "m1", "event_type": "transcript_entry", "agent_id": "a", "role": "user", '
                     b'"content": "bad \xff byte"}\n')
    library = Library(tmp_path)
    library.scan()
    s = library.get("s")
    (item,) = s.events.raw(1)
    assert type(item) is dict and s.events[0]["content"] == "bad \ufffd byte"


def test_a_changed_event_is_kept_as_changed(tmp_path):
    path = write_events(tmp_path / "s.jsonl", [{"message_id": "m1", "event_type": "agent_created", "agent_id": "a"}])
    library = Library(tmp_path)
    library.scan()
    s = library.get("s")
    s.events.materialize(0)["note"] = "kept"
    assert s.events[0]["note"] == "kept" and type(s.events.raw(1)[0]) is dict
    assert json.loads(path.read_text()) == {"message_id": "m1", "event_type": "agent_created", "agent_id": "a"}
