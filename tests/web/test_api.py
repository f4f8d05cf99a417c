"""The JSON API contract: these names are promised to scripts."""

from conftest import write_events


def get_json(client, url, status=200):
    response = client.get(url)
    assert response.status_code == status, (url, response.data[:300])
    assert response.mimetype == "application/json"
    return response.get_json()


def test_sessions(client):
    sessions = {s["id"]: s for s in get_json(client, "/api/sessions")["sessions"]}
    s = sessions["example1_jack_and_jill"]
    assert {k: s[k] for k in ("id", "name", "path", "events", "agents", "url")} == {
        "id": "example1_jack_and_jill", "name": "example1_jack_and_jill", "path": "example1_jack_and_jill.jsonl",
        "events": 20, "agents": 3, "url": "/s/example1_jack_and_jill"}


def test_session_ids_from_nested_paths_are_one_segment(session_dir, app, client):
    write_events(session_dir / "team a" / "run 1.jsonl", [{"message_id": "m", "event_type": "agent_created",
                                                            "agent_id": "x"}])
    app.extensions["agentview"].library.scan()
    (s,) = [s for s in get_json(client, "/api/sessions")["sessions"] if s["name"] == "run 1"]
    assert s["path"] == "team a/run 1.jsonl" and "/" not in s["id"]
    assert get_json(client, f"/api/sessions/{s['id']}")["path"] == "team a/run 1.jsonl"
    assert client.get(s["url"]).status_code == 200


def test_session_agents_are_flat_with_parents(client):
    data = get_json(client, "/api/sessions/example2_inner_monologue")
    assert (data["id"], data["name"], data["path"]) == (
        "example2_inner_monologue", "example2_inner_monologue", "example2_inner_monologue.jsonl")
    agents = {a["agent_id"]: a for a in data["agents"]}
    assert {a: (v["name"], v["parent_id"], v["entries"]) for a, v in agents.items()} == {
        "agent_root": ("agent_root", None, 8), "agent_jack": ("Jack", "agent_root", 4),
        "agent_jill": ("Jill", "agent_root", 7), "agent_jill_inner": ("Inner", "agent_jill", 3)}
    assert agents["agent_jill"]["language_model"] == "anthropic/claude-sonnet-4-5-20250929"
    assert agents["agent_jill"]["url"] == "/s/example2_inner_monologue/agents/agent_jill"


def test_agent_transcript_is_the_events_as_logged(client, session_dir):
    data = get_json(client, "/api/sessions/example1_jack_and_jill/agents/agent_jill")
    assert (data["agent_id"], data["name"], data["parent_id"]) == ("agent_jill", "Jill", "agent_root")
    assert data["transcript"][1] == {"message_id": "msg_014", "event_type": "transcript_entry",
                                     "agent_id": "agent_jill", "role": "user",
                                     "content": "You meet in a cafe. Introduce yourselves.", "substance": "msg_012"}
    assert [e["message_id"] for e in data["transcript"]] == ["msg_009", "msg_014", "msg_017", "msg_018"]


def test_agent_transcript_pages(client):
    first = get_json(client, "/api/sessions/research_team/agents/agent_root?limit=10")
    assert len(first["transcript"]) == 10 and first["total"] > 10
    second = get_json(client, first["next"])
    assert second["transcript"][0]["message_id"] != first["transcript"][-1]["message_id"]
    assert second["start"] == 10
    whole = get_json(client, "/api/sessions/research_team/agents/agent_root")
    assert whole["next"] is None and len(whole["transcript"]) == whole["total"] == first["total"]
    assert first["transcript"] + second["transcript"] == whole["transcript"][:10 + len(second["transcript"])]


def test_dialog(client):
    data = get_json(client, "/api/sessions/example1_jack_and_jill/dialog?agents=agent_jack,agent_jill")
    assert [(m["message_id"], m["speaker"], m["recipients"], m["modified"]) for m in data["messages"]] == [
        ("msg_012", "agent_root", ["agent_jack", "agent_jill"], False),
        ("msg_015", "agent_jack", ["agent_jill"], False),
        ("msg_018", "agent_jill", ["agent_jack"], False)]
    assert data["messages"][0]["event_type"] == "piece_of_text"


def test_dialog_flags_modified(client):
    data = get_json(client, "/api/sessions/research_team/dialog?agents=agent_researcher,agent_writer")
    (redacted,) = [m for m in data["messages"] if m["message_id"] == "msg_109"]
    assert redacted["modified"] is True and redacted["recipients"] == ["agent_writer"]


def test_message(client):
    data = get_json(client, "/api/sessions/example1_jack_and_jill/messages/msg_013")
    assert data["event"]["message_id"] == "msg_013"
    assert [e["message_id"] for e in data["flow"]] == ["msg_011", "msg_012", "msg_013"]
    assert data["references"] == []
    data = get_json(client, "/api/sessions/example1_jack_and_jill/messages/msg_012")
    assert [e["message_id"] for e in data["references"]] == ["msg_013", "msg_014"]


def test_events_after_a_cursor(client, session_dir, app):
    data = get_json(client, "/api/sessions/example1_jack_and_jill/events")
    assert len(data["events"]) == 20 and data["cursor"] == "0-20"
    assert get_json(client, "/api/sessions/example1_jack_and_jill/events?after=0-20")["events"] == []
    write_events(session_dir / "example1_jack_and_jill.jsonl", [
        {"message_id": "msg_021", "event_type": "transcript_entry", "agent_id": "agent_jack", "role": "assistant",
         "content": "Nice to meet you."}], mode="a")
    app.extensions["agentview"].library.scan()
    data = get_json(client, "/api/sessions/example1_jack_and_jill/events?after=0-20")
    assert [e["message_id"] for e in data["events"]] == ["msg_021"] and data["cursor"] == "0-21"
    page = get_json(client, "/api/sessions/example1_jack_and_jill/events?after=0-5&limit=3")
    assert [e["message_id"] for e in page["events"]] == ["msg_006", "msg_007", "msg_008"]
    assert page["cursor"] == "0-8"


def test_404s_are_json(client):
    for url in ["/api/sessions/nope", "/api/sessions/example1_jack_and_jill/agents/nobody",
                "/api/sessions/example1_jack_and_jill/messages/nothing",
                "/api/sessions/example1_jack_and_jill/dialog?agents=ghost",
                "/api/sessions/nope/events"]:
        data = get_json(client, url, 404)
        assert data["error"] == "Not Found" and data["detail"]


def test_each_listed_url_is_what_url_for_writes_for_its_id(session_dir, app, client):
    """The list makes its URLs from one url_for (render.session_rows): the quoting of every id is url_for's."""
    from flask import url_for

    for name in ("a b#c", "per%cent", "ünï?cödé", "semi;colon&amp"):
        write_events(session_dir / f"{name}.jsonl", [{"message_id": "m", "event_type": "agent_created",
                                                      "agent_id": "x"}])
    app.extensions["agentview"].library.scan()
    rows = get_json(client, "/api/sessions")["sessions"]
    with app.test_request_context():
        assert [r["url"] for r in rows] == [url_for("pages.session", session_id=r["id"]) for r in rows]
    assert all(client.get(r["url"]).status_code == 200 for r in rows)
