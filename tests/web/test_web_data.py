"""A page and its JSON twin show one data object (viewer/web/resource_views.py): what the twin says, the page shows."""

from test_api import get_json


def test_the_agent_page_shows_its_twins_lineage_and_sub_agents(client):
    data = get_json(client, "/api/sessions/example2_inner_monologue/agents/agent_jill")
    assert [a["agent_id"] for a in data["lineage"]] == ["agent_root", "agent_jill"]
    assert [c["agent_id"] for c in data["children"]] == ["agent_jill_inner"]
    assert data["children"][0]["name"] == "Inner" and isinstance(data["usage"], dict)
    page = client.get(data["url"]).get_data(as_text=True)
    for agent in data["lineage"] + data["children"]:
        assert f'/s/example2_inner_monologue/agents/{agent["agent_id"]}"' in page, agent["agent_id"]
    leaf = get_json(client, "/api/sessions/example2_inner_monologue/agents/agent_jill_inner")
    assert leaf["children"] == [] and leaf["lineage"][-1]["agent_id"] == "agent_jill_inner"


def test_the_session_page_lists_the_agents_of_its_twin(client):
    data = get_json(client, "/api/sessions/research_team")
    page = client.get(data["url"]).get_data(as_text=True)
    for agent in data["agents"]:
        assert agent["url"] in page, agent["agent_id"]
    assert len(data["agents"]) > 3


def test_the_message_page_shows_its_twins_chain_and_references(client):
    data = get_json(client, "/api/sessions/example1_jack_and_jill/messages/msg_012")
    assert data["event"]["message_id"] == "msg_012"
    page = client.get(data["url"]).get_data(as_text=True)
    for event in data["flow"] + data["references"]:
        assert event["message_id"] in page
    assert {e["message_id"] for e in data["references"]} >= {"msg_013", "msg_014"}
