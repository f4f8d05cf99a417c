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
    assert_every_page_inert(client, rows)


def assert_every_page_inert(client, rows) -> None:
    """`/`, each session's page and each of its agents' pages show the hostile text only as text."""
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


def test_hostile_gemini_and_copilot_logs(tmp_path):
    from viewer.web.app import create_app

    chats = tmp_path / "gemini" / EVIL.replace("/", "") / "chats"
    main = {"sessionId": "abcdef12-0", "projectHash": EVIL, "startTime": EVIL, "kind": "main"}
    write_events(chats / "session-2026-01-01T00-00-abcdef12.jsonl", [main, {"$set": {"summary": EVIL}}, {
        "id": EVIL, "timestamp": EVIL, "type": "gemini", "content": [{"text": EVIL}], "model": EVIL,
        "thoughts": [{"subject": EVIL, "description": EVIL}], "tokens": {"input": EVIL},
        "toolCalls": [{"id": EVIL, "name": EVIL, "args": {"x": EVIL}, "status": "error", "agentId": "s1",
                       "displayName": EVIL, "resultDisplay": {"fileDiff": EVIL},
                       "result": [{"functionResponse": {"id": EVIL, "name": EVIL, "response": {"error": EVIL}}}]}]}])
    write_events(chats / "abcdef12-0" / "s1.jsonl", [{**main, "sessionId": "s1", "kind": "subagent"},
                                                     {"id": "u", "type": "user", "content": EVIL}])
    write_events(tmp_path / "copilot" / "u" / "events.jsonl", [
        {"id": "1", "type": "session.start", "data": {"context": {"cwd": EVIL}, "selectedModel": EVIL}},
        {"id": "2", "type": "session.title_changed", "data": {"title": EVIL}},
        {"id": "3", "type": "assistant.message", "data": {"content": EVIL, "reasoningText": EVIL, "model": EVIL,
                                                          "toolRequests": [{"toolCallId": "t", "name": EVIL,
                                                                            "arguments": EVIL}]}},
        {"id": "4", "type": "subagent.started", "agentId": "a", "data": {"toolCallId": "t", "agentDisplayName": EVIL}},
        {"id": "5", "type": "user.message", "agentId": "a", "data": {"content": EVIL}},
        {"id": "6", "type": "subagent.failed", "data": {"toolCallId": "t", "agentName": EVIL, "error": EVIL}},
        {"id": "7", "type": EVIL, "data": {"message": EVIL}}])
    client = create_app(tmp_path, watch=False).test_client()
    rows = client.get("/api/sessions").json["sessions"]
    assert {r["format"] for r in rows} == {"gemini", "copilot"}
    assert_every_page_inert(client, rows)
