"""Rewinds in Claude Code sessions: when a person goes back to an earlier message and goes on from there, the branch
left behind is marked rewound (pages fold it) and the new branch's first prompt is marked "rewind"; the shapes that
only look like forks (parallel tool results, a record beside a response) are not rewinds. Lines as in
claude-code-log's test data `dag_compact_after_rewind.jsonl` (content invented)."""

from __future__ import annotations

import json

from events import scanned

SESSION = "5e55ee01-rewind"
SID = f"-tmp:{SESSION}"


def line(kind, uuid, parent, minute, **extra):
    return {"type": kind, "timestamp": f"2025-07-01T10:{minute:02d}:00.000Z", "parentUuid": parent,
            "isSidechain": False, "userType": "external", "cwd": "/tmp", "sessionId": SESSION, "version": "2.1.0",
            "uuid": uuid, **extra}


def user(uuid, parent, minute, text):
    return line("user", uuid, parent, minute, message={"role": "user", "content": [{"type": "text", "text": text}]})


def said(uuid, parent, minute, text, blocks=None):
    return line("assistant", uuid, parent, minute, requestId=f"req_{uuid}", message={
        "id": f"msg_{uuid}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-20250514",
        "content": blocks or [{"type": "text", "text": text}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 10, "output_tokens": 5}})


def rewound_session():
    return [
        user("u1", None, 0, "Start"), said("a1", "u1", 1, "Ready"),
        user("b1u", "a1", 2, "First attempt"), said("b1a", "b1u", 3, "First answer"),
        user("b2u", "a1", 10, "Second attempt"), said("b2a", "b2u", 11, "Second answer"),
        user("b2u2", "b2a", 20, "Keep going"), said("b2a2", "b2u2", 21, "Kept going"),
    ]


def write(folder, records):
    path = folder / "-tmp" / f"{SESSION}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_the_branch_left_by_a_rewind_is_marked_and_the_new_one_starts_with_a_rewind_mark(tmp_path):
    write(tmp_path, rewound_session())
    s = scanned(tmp_path).get(SID)
    rewound = {m: s.normalizer.rewound(s.event(m)) for m in ("u1", "a1", "b1u", "b1a", "b2u", "b2a", "b2u2", "b2a2")}
    assert rewound == {"u1": None, "a1": None, "b1u": "a1", "b1a": "a1", "b2u": None, "b2a": None, "b2u2": None,
                       "b2a2": None}
    assert "rewind" in s.event("b2u")["markers"] and s.event("b2u")["rewinds_to"] == "a1"
    assert s.normalizer.rewinds == ["b2u"]


def test_a_rewind_read_live_marks_what_was_already_read(tmp_path):
    records = rewound_session()
    path = write(tmp_path, records[:4])
    library = scanned(tmp_path)
    s = library.get(SID)
    assert s.normalizer.rewound(s.event("b1a")) is None
    with path.open("a") as f:
        f.write("".join(json.dumps(r) + "\n" for r in records[4:]))
    library.refresh(str(path))
    assert s.normalizer.rewound(s.event("b1u")) == "a1" and s.normalizer.rewound(s.event("b2a2")) is None


def test_parallel_tool_results_and_records_beside_a_response_are_not_rewinds(tmp_path):
    records = [
        user("u1", None, 0, "Read both files"),
        said("a1", "u1", 1, "", [{"type": "tool_use", "id": "toolu_A", "name": "Read", "input": {"file": "a"}}]),
        said("a2", "a1", 1, "", [{"type": "tool_use", "id": "toolu_B", "name": "Read", "input": {"file": "b"}}]),
        line("user", "r1", "a1", 2, message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_A", "content": "a"}]}),
        line("user", "r2", "a2", 2, message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_B", "content": "b"}]}),
        said("a3", "r2", 3, "Both read."),
        line("system", "sys", "a3", 4, subtype="turn_duration", durationMs=1200),
        user("u2", "a3", 5, "Thanks"),  # beside the record, not after it: no conversation was left behind
        said("a4", "u2", 6, "", [{"type": "tool_use", "id": "toolu_C", "name": "Bash", "input": {"cmd": "ls"}}]),
        said("a5", "a4", 6, "", [{"type": "tool_use", "id": "toolu_D", "name": "Bash", "input": {"cmd": "pwd"}}]),
        user("u3", "a4", 7, "[Request interrupted by user for tool use]"),  # answers the first of two calls
    ]
    write(tmp_path, records)
    s = scanned(tmp_path).get(SID)
    assert s.normalizer.rewinds == []
    assert all(s.normalizer.rewound(s.events[p]) is None for p in range(s.count))


def test_pages_fold_the_rewound_branch_on_the_agent_page_and_in_the_dialog(tmp_path):
    from viewer.web.app import create_app

    write(tmp_path, rewound_session())
    client = create_app(tmp_path, watch=False).test_client()
    for url in (f"/s/{SID}/agents/main", f"/s/{SID}/dialog?agents=main"):
        page = client.get(url).get_data(as_text=True)
        assert page.count('<details class="rewound-branch">') == 2, url
        assert 'class="badge rewound"' in page and "Second attempt" in page
