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


def test_entry_links_are_what_url_for_writes_for_any_id_and_anchor(tmp_path):
    from viewer.web.render import link_url

    app = create_app(tmp_path, watch=False)
    odd = ["plain", "a/b", "c#d", "e?f", "g h%", "ünï", "a:b,c;d@e!$&'()*+=", "~slot~x", "%2F"]
    with app.test_request_context("/s/x~7Ey?at=3"):
        for value in odd:
            assert link_url("pages.message", "x~7Ey", value) == url_for("pages.message", session_id="x~7Ey",
                                                                          message_id=value), value
            for anchor in (None, "m-1", "a b#c?d/é"):
                assert link_url("pages.agent", "x~7Ey", value, anchor) == url_for(
                    "pages.agent", session_id="x~7Ey", agent_id=value, _anchor=anchor), (value, anchor)
    with app.test_request_context("/s/other"):  # a request of its own: no URL kept from another
        assert link_url("pages.message", "other", "m") == "/s/other/messages/m"


def test_query_urls_are_what_url_for_writes_for_any_value(tmp_path):
    from viewer.web.render import query_urls

    app = create_app(tmp_path, watch=False)
    odd = ["plain", "a/b", "c#d", "e?f", "g h%", "ünï", "a:b,c;d@e!$&'()*+=", "~slot~x", "%2F", "a+b"]
    for asked in ("/s/x~7Ey?at=3", "/s/x~7Ey"):
        with app.test_request_context(asked):
            url_of = query_urls("pages.failures", "agent", session_id="x~7Ey")
            for value in odd:
                assert url_of(value) == url_for("pages.failures", session_id="x~7Ey", agent=value), (asked, value)
