"""weakincentives: TranscriptEntry slice files and transcript.entry log records, one agent per source."""

import pytest

from conftest import write_events
from events import copy_samples, scanned
from viewer.reads import dialogs, queries

SLICE, LOG = "review.transcript.TranscriptEntry", "fix-tests.log"


@pytest.fixture
def library(tmp_path):
    return scanned(copy_samples("weakincentives", tmp_path / "wi"))


@pytest.mark.parametrize("session_id, sub", [(SLICE, "subagent:9f2c"), (LOG, "subagent:b7")])
def test_sources_are_agents_and_sub_agents_children_of_the_primary(library, session_id, sub):
    s = library.get(session_id)
    assert s.format.name == "weakincentives" and s.problems == []
    (root,) = queries.tree(s)
    assert root["agent_id"] == "primary" and [c["agent_id"] for c in root["children"]] == [sub]


def test_slice_tool_entries_pair_with_their_call_and_link_the_sub_agent(library):
    s = library.get(SLICE)
    view = queries.perspective(s, "primary")
    assert [i["kind"] for i in view["items"]] == ["system", "heard", "did", "did", "said"]
    read = view["items"][2]
    assert read["calls"][0]["name"] == "read_file" and read["calls"][0]["results"][0]["content"].startswith("def main")
    first = s.event("5c1a0000-0000-4000-8000-000000000000")
    assert first["substance"] == "0d7e5a52-0004-4c8e-a1f0-000000000004"
    assert s.event("0d7e5a52-0005-4c8e-a1f0-000000000005")["substance"] == "5c1a0000-0001-4000-8000-000000000001"
    dialog = dialogs.dialog(s, ["primary", "subagent:9f2c"])
    assert "Yes: main() always divides by zero." in [i["content"] for i in dialog["items"]]


@pytest.mark.parametrize("session_id, sub, call, answer", [
    (SLICE, "subagent:9f2c", "0d7e5a52-0004-4c8e-a1f0-000000000004", "5c1a0000-0001-4000-8000-000000000001"),
    (LOG, "subagent:b7", "w-a1", "w-s2")])
def test_dialog_delivers_the_spawning_call_to_the_sub_agent_and_its_answer_between(library, session_id, sub, call,
                                                                                   answer):
    dialog = dialogs.dialog(library.get(session_id), ["primary", sub])
    items = dialog["items"]
    assert [(i["speaker"], i["event"]["role"]) for i in items] == [
        ("primary", "user"), ("primary", "assistant"), (sub, "assistant"), ("primary", "assistant")]
    assert items[1]["message_id"] == call and items[1]["recipients"] == [sub]
    assert not items[1]["deliveries"][0]["modified"]
    assert items[2]["message_id"] == answer


def test_log_records_use_the_embedded_claude_code_line(library):
    s = library.get(LOG)
    call = s.event("w-a1")
    assert call["tool_calls"][0]["id"] == "toolu_W1" and call["model"] == "claude-sonnet-4-5"
    assert s.event("w-r1")["tool_call_id"] == "toolu_W1" and s.event("w-r1")["substance"] == "w-s2"
    kinds = [e.get("markers") for e in s.events if e.get("markers")]
    assert ["token_usage"] in kinds and ["something_new"] in kinds  # unknown entry types kept, not errors
    assert any(e.get("thinking") for e in s.events)


def test_order_is_by_sequence_within_a_source_and_time_across(tmp_path):
    def entry(seq, source, t, text):
        return {"role": "assistant", "content": text, "created_at": f"2026-01-01T00:00:0{t}+00:00",
                "entry_id": f"{source}-{seq}", "source": source, "sequence": seq}
    write_events(tmp_path / "t.jsonl", [entry(1, "primary", 3, "second"), entry(0, "primary", 1, "first"),
                                        entry(0, "subagent:x", 2, "sub")])
    library = scanned(tmp_path)
    s = library.get("t")
    assert [e["content"] for e in s.events if e["event_type"] == "transcript_entry"] == ["first", "sub", "second"]


def test_live_append(tmp_path):
    path = tmp_path / "live.jsonl"
    write_events(path, [{"role": "user", "content": "hi", "created_at": "2026-01-01T00:00:00+00:00",
                         "entry_id": "e0", "source": "primary", "sequence": 0}])
    library = scanned(tmp_path)
    write_events(path, [{"role": "assistant", "content": "hello", "created_at": "2026-01-01T00:00:01+00:00",
                         "entry_id": "e1", "source": "subagent:z", "sequence": 0}], mode="a")
    library.refresh(str(path))
    s = library.get("live")
    assert s.event("e1")["agent_id"] == "subagent:z" and s.agents["subagent:z"].parent_id == "primary"
