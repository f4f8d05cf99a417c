"""A session's, agent's, dialog's and message's page and JSON are one view (web/resource_views.py): the page is rendered
from the very data object the JSON answers, and that object has its declared shape (web/shapes.py)."""

from __future__ import annotations

import pytest
from flask import template_rendered

from viewer.core.redact import masking
from viewer.web import render, shapes
from viewer.web.render import as_json

RESOURCES = [
    "/sessions/research_team",
    "/sessions/research_team/agents/agent_root?limit=5&start=2",
    "/sessions/research_team/agents/agent_root?limit=7&sub=1&perspective=1",
    "/sessions/research_team/agents/agent_root?limit=4&kind=said",
    "/sessions/example2_inner_monologue/dialog?agents=agent_jill,agent_jill_inner&limit=3",
    "/sessions/example1_jack_and_jill/messages/msg_012",
]


@pytest.mark.parametrize("resource", RESOURCES)
def test_the_page_is_rendered_from_the_data_its_json_answers(app, client, resource):
    rendered = []

    def seen(sender, template, context, **extra):
        rendered.append(context)

    page_url = "/s/" + resource.removeprefix("/sessions/")
    with template_rendered.connected_to(seen, app):
        assert client.get(page_url).status_code == 200
    twin = client.get("/api" + resource)
    assert twin.status_code == 200
    page_data = rendered[0]["data"]
    with app.test_request_context("/api" + resource), masking(True):  # secrets masked, as every answer's
        assert as_json(page_data).data == twin.data  # byte for byte: one object, two formats


def test_a_view_whose_data_strays_from_its_shape_fails_in_test_and_debug_runs(app, monkeypatch):
    fine = {"agents": [], "messages": [], "start": 0, "total": 0, "url": "/s/x/dialog"}
    with app.test_request_context("/"):
        assert render.built(shapes.Dialog, fine) is fine
        for strayed in ({**fine, "undeclared": 1}, {k: v for k, v in fine.items() if k != "total"}):
            with pytest.raises(AssertionError, match="Dialog"):
                render.built(shapes.Dialog, strayed)
        monkeypatch.setenv(render.CHECK_ENV, "0")  # a served run, not in debug: not checked
        assert render.built(shapes.Dialog, {**fine, "undeclared": 1})["undeclared"] == 1


def test_the_links_a_view_makes_follow_the_moment_and_the_path_it_is_served_under(client):
    """A view's links are made once and kept (web/url_cache.py), by what they depend on: each answer, live, as of
    an event or under another path, links its own, whichever came first."""
    session = "/api/sessions/example1_jack_and_jill"
    for _ in range(2):
        for at, root in ((None, ""), (6, ""), (None, "/av"), (6, "/av"), (9, "")):
            asked = {"base_url": f"http://localhost{root}/", "query_string": {"at": at, "limit": 1}}
            moment = "" if at is None else f"?at={at}"
            whole = client.get(session, **asked).get_json()
            assert whole["url"] == f"{root}/s/example1_jack_and_jill{moment}"
            assert [a["url"] for a in whole["agents"]] == [
                f"{root}/s/example1_jack_and_jill/agents/{a['agent_id']}{moment}" for a in whole["agents"]]
            window = client.get(session + "/agents/agent_jack", **asked).get_json()
            assert window["url"] == f"{root}/s/example1_jack_and_jill/agents/agent_jack{moment}"
