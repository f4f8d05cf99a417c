"""Every view on every session of every format answers (and shows log text only escaped)."""

import shutil
from urllib.parse import quote

import pytest

from conftest import SAMPLES

FOLDERS = ("legacy", "claude_code", "weakincentives", "ai_agent", "gemini", "copilot")


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    from viewer.web.app import create_app

    folder = tmp_path_factory.mktemp("formats")
    for name in FOLDERS:
        shutil.copytree(SAMPLES / name, folder / name, ignore=shutil.ignore_patterns("*.py"))
    return create_app(folder, watch=False).test_client()


def sessions(client):
    return client.get("/api/sessions").json["sessions"]


def test_every_sample_is_read_in_its_format_without_problems(client):
    found = {s["id"]: s["format"] for s in sessions(client)}
    assert sorted(set(found.values())) == ["ai-agent", "claude-code", "copilot", "gemini", "legacy", "weakincentives"]
    assert len(found) == 3 + 3 + 2 + 2 + 2 + 1
    # the Copilot sample's one problem is its failed sub-agent, as the log says
    assert {s["format"]: s["problems"] for s in sessions(client) if s["problems"]} == {"copilot": 1}


def test_every_view_of_every_session_answers(client):
    for row in sessions(client):
        sid = row["id"]
        detail = client.get(f"/api/sessions/{sid}").json
        agents = [a["agent_id"] for a in detail["agents"]]
        events = client.get(f"/api/sessions/{sid}/events").json
        message_ids = [e["message_id"] for e in events.get("events", [])][:5]
        chosen = "&".join(f"agents={quote(a, safe='')}" for a in agents)
        urls = [f"/s/{sid}", f"/s/{sid}/problems", f"/s/{sid}/dialog?{chosen}", f"/api/sessions/{sid}/dialog?{chosen}",
                f"/s/{sid}/chart", f"/s/{sid}/spawn", f"/s/{sid}/hooks", f"/api/sessions/{sid}/chart",
                f"/s/{sid}?at=3", f"/search?q=the&session={sid}", f"/api/search?q=the&session={sid}"]
        urls += [f"/s/{sid}/export/{fmt}" for fmt in ("trace", "dot", "json")]
        for agent in agents:
            urls += [f"/s/{sid}/agents/{quote(agent, safe='')}", f"/s/{sid}/agents/{quote(agent, safe='')}?sub=1",
                     f"/api/sessions/{sid}/agents/{quote(agent, safe='')}",
                     f"/s/{sid}/export/markdown?agent={quote(agent, safe='')}"]
        for message_id in message_ids:
            urls += [f"/s/{sid}/messages/{quote(message_id, safe='')}",
                     f"/s/{sid}/trace/{quote(message_id, safe='')}"]
        for url in urls:
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code, response.data[:300])


def test_hook_audit_link_is_hidden_where_it_does_not_apply(client):
    for row in sessions(client):
        page = client.get(f"/s/{row['id']}").data.decode()
        assert ("hook audit" in page) == (row["format"] == "legacy"), row["id"]
