"""web/render.py: the helpers every view answers through."""

from flask import url_for

from viewer.web.app import create_app
from viewer.web.render import agent_urls


def test_agent_urls_are_what_url_for_writes_for_any_id(tmp_path):
    app = create_app(tmp_path, watch=False)
    with app.test_request_context("/s/x~7Ey?at=3"):
        url_of = agent_urls("x~7Ey")
        for agent_id in ["plain", "a/b", "c#d", "e?f", "g h%", "ünï", "a:b,c;d@e!$&'()*+=", "~agent~x", "%2F"]:
            assert url_of(agent_id) == url_for("pages.agent", session_id="x~7Ey", agent_id=agent_id), agent_id
        assert url_of("plain").endswith("?at=3")  # a page frozen at event N links to agents at N
