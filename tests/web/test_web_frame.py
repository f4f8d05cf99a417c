"""The templates' url_for caches the URLs it made (the frame's static files and icons, a page's links), and still
writes what url_for writes: under the path the app is served at, with the page's ?at=N. Each template's globals
are one dict."""

import re

from flask import url_for

from viewer.web.app import create_app


def frame_links(html: str) -> list[str]:
    return re.findall(r'(?:href|src)="([^"]*(?:/static/|/usage)[^"]*)"', html)


def test_a_page_drawn_again_builds_none_of_its_urls(session_dir):
    app = create_app(session_dir, watch=False)
    built = []
    app.url_defaults(lambda endpoint, values: built.append(endpoint))  # called by every URL url_for builds
    client = app.test_client()
    first = client.get("/s/research_team").get_data(as_text=True)
    assert built.count("static") >= 9 and "usage.usage" in built and "pages.problems" in built
    built.clear()
    again = client.get("/s/research_team").get_data(as_text=True)
    assert again == first and not {"static", "usage.usage", "pages.index", "pages.problems"} & set(built)
    frozen = client.get("/s/research_team?at=5").get_data(as_text=True)
    assert "hooks.audit" in built and "static" not in built  # a frozen page's links are its own, not the frame's
    assert 'action="/search?at=5"' in frozen and 'action="/search"' in first
    assert set(frame_links(first)) <= set(frame_links(frozen)) and "at=" not in "".join(frame_links(frozen))


def test_the_frames_links_follow_the_path_the_app_is_served_under(session_dir):
    client = create_app(session_dir, watch=False).test_client()
    for root in ("/av", "", "/other/place", "/av"):  # each path in turn, one after another, and back
        page = client.get("/s/research_team", base_url=f"http://localhost{root}/").get_data(as_text=True)
        links = frame_links(page)
        assert len(links) >= 20, links
        assert all(link.startswith(f"{root}/static/") or link == f"{root}/usage" for link in links), (root, links)
        assert f'class="brand" href="{root}/"' in page


def test_the_cached_url_for_writes_what_url_for_writes(tmp_path):
    app = create_app(tmp_path, watch=False)
    cached = app.jinja_env.globals["url_for"]
    asked = [("pages.agent", {"session_id": "s", "agent_id": "a/b", "sub": value}) for value in (True, 1, 1.0, "1")]
    asked += [("pages.index", {"filter": ["x", "y"]}), ("pages.message", {"session_id": "s", "message_id": "m",
                                                                          "_anchor": "a b"}),
              ("pages.session", {"session_id": "s", "_external": True}), ("static", {"filename": "agentview.css"})]
    for path in ("/s/s", "/s/s?at=3", "/s/s?at=x"):
        for base in ("http://localhost/", "http://other:8080/av/"):
            for _ in range(2):  # made, then cached
                with app.test_request_context(path, base_url=base):
                    for endpoint, values in asked:
                        assert cached(endpoint, **values) == url_for(endpoint, **values), (path, base, endpoint, values)


def test_every_template_has_every_global_of_the_app_in_one_dict(session_dir):
    app = create_app(session_dir, watch=False)
    assert app.test_client().get("/s/research_team").status_code == 200  # templates loaded by a page, others later
    env = app.jinja_env
    for name in env.list_templates():
        template = env.get_template(name)
        assert type(template.globals) is dict and env.globals.items() <= template.globals.items(), name
