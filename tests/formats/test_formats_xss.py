"""Hostile text in every field a format normalizer passes to the pages stays text."""

import json

from conftest import write_events
from dom import parse

EVIL = '"><script>alert(1)</script><img src=x onerror=alert(2)>'


def assert_inert(html: str) -> None:
    doc = parse(html)
    assert all(e.attrs.get("src", "").startswith("/static/") for e in doc.find_all("script"))
    assert not [e for e in doc.iter() if "onerror" in e.attrs or (e.tag == "img" and e.attrs.get("src") == "x")]
    assert "<script>alert" not in html


def test_hostile_claude_code_ai_agent_and_weakincentives_logs(tmp_path):
    from viewer.web.app import create_app

    project = tmp_path / "p"
    write_events(project / "s.jsonl", [
        {"type": "user", "uuid": "u", "parentUuid": None, "sessionId": "s", "timestamp": "2026-01-01T00:00:00Z",
         "message": {"role": "user", "content": [{"type": "text", "text": EVIL},
                                                 {"type": "image", "source": {"media_type": EVIL}}]}},
        {"type": "assistant", "uuid": "a", "parentUuid": "u", "sessionId": "s", "timestamp": EVIL, "requestId": EVIL,
         "message": {"id": "m", "model": EVIL, "content": [
             {"type": "thinking", "thinking": EVIL}, {"type": EVIL},
             {"type": "tool_use", "id": "t", "name": "Task", "input": {"description": EVIL, "prompt": EVIL}}],
             "usage": {"input_tokens": EVIL}}},
        {"type": EVIL, "uuid": "x", "sessionId": "s"},
        {"type": "system", "subtype": EVIL, "uuid": "y", "sessionId": "s"},
    ])
    (project / "s" / "subagents").mkdir(parents=True)
    (project / "s" / "subagents" / "agent-q.meta.json").write_text(json.dumps({"description": EVIL, "toolUseId": "t"}))
    write_events(project / "s" / "subagents" / "agent-q.jsonl", [
        {"type": "user", "uuid": "q1", "parentUuid": None, "isSidechain": True, "sessionId": "s",
         "timestamp": "2026-01-01T00:00:01Z", "message": {"role": "user", "content": EVIL}}])
    write_events(tmp_path / "wi.jsonl", [{"role": "assistant", "content": EVIL, "entry_id": EVIL, "source": f"subagent:{EVIL}",
                                          "sequence": 0, "created_at": EVIL, "tool_name": EVIL, "tool_call_id": EVIL}])
    (tmp_path / "snap.json").write_text(json.dumps({"version": 1, "reason": EVIL, "opTree": {
        "id": EVIL, "agentId": EVIL, "traceId": "t", "startedAt": 0, "totals": {"costUsd": EVIL},
        "turns": [{"index": EVIL, "attributes": {"prompts": {"user": EVIL}}, "ops": [
            {"opId": EVIL, "kind": "tool", "status": EVIL, "attributes": {"name": EVIL},
             "logs": [{"severity": EVIL, "message": EVIL}], "request": {"payload": EVIL}}]}]}}))
    client = create_app(tmp_path, watch=False).test_client()
    rows = client.get("/api/sessions").json["sessions"]
    assert {r["format"] for r in rows} == {"claude-code", "weakincentives", "ai-agent"}
    assert_inert(client.get("/").data.decode())
    for row in rows:
        response = client.get(row["url"])
        assert response.status_code == 200, row
        assert_inert(response.data.decode())
        for agent in client.get(f"/api/sessions/{row['id']}").json["agents"]:
            response = client.get(agent["url"])
            assert response.status_code == 200, agent
            html = response.data.decode()
            assert_inert(html)
            assert parse(html).by_id("av-entries") is not None
            assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # it is on the page, as text
