"""The frame every page is drawn in: its fixed links (static files, the sessions list, icons) are made once per
path the app is served under, and still follow that path and the page's ?at=N as url_for does."""

import re

from viewer.web.app import create_app


def frame_links(html: str) -> list[str]:
    return re.findall(r'(?:href|src)="([^"]*(?:/static/|/usage)[^"]*)"', html)


def test_a_second_page_builds_none_of_the_frames_fixed_urls(session_dir):
    app = create_app(session_dir, watch=False)
    built = []
    app.url_defaults(lambda endpoint, values: built.append(endpoint))  # called by every URL url_for builds
    client = app.test_client()
    assert client.get("/s/research_team").status_code == 200
    assert built.count("static") >= 9 and "usage.usage" in built  # the first page makes them
    built.clear()
    page = client.get("/s/research_team").get_data(as_text=True)
    assert "static" not in built and "usage.usage" not in built and "pages.index" not in built
    assert "pages.session" in built  # a link to a session is made for each page
    assert 'href="/static/agentview.css"' in page and 'href="/static/lucide-sprite.svg#layers"' in page


def test_the_frames_links_follow_the_path_the_app_is_served_under(session_dir):
    client = create_app(session_dir, watch=False).test_client()
    for root in ("/av", "", "/other/place", "/av"):  # each path in turn, one after another, and back
        page = client.get("/s/research_team", base_url=f"http://localhost{root}/").get_data(as_text=True)
        links = frame_links(page)
        assert len(links) >= 20, links
        assert all(link.startswith(f"{root}/static/") or link == f"{root}/usage" for link in links), (root, links)
        assert f'class="brand" href="{root}/"' in page


def test_a_page_frozen_at_an_event_keeps_its_frames_fixed_links_without_it(session_dir):
    client = create_app(session_dir, watch=False).test_client()
    live = client.get("/s/research_team").get_data(as_text=True)
    frozen = client.get("/s/research_team?at=5").get_data(as_text=True)
    assert set(frame_links(live)) <= set(frame_links(frozen))
    assert not [link for link in frame_links(frozen) if "at=" in link]
    assert 'action="/search?at=5"' in frozen  # links that carry ?at=N still do
