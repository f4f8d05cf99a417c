"""The compare page and its JSON twin GET /api/compare, on a folder holding two runs of the demo."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from aio import write_demo

from viewer.web import shapes
from viewer.web.app import create_app
from viewer.web.shape_check import conforms

PROMPT = "Analyst: the beta numbers the post can quote, please."


@pytest.fixture(scope="module")
def demo_file(tmp_path_factory) -> Path:
    return write_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture
def two_runs(tmp_path, demo_file) -> Path:
    """run-a/demo.jsonl as the demo wrote it, run-b/demo.jsonl with one prompt changed."""
    for name in ("run-a", "run-b"):
        (tmp_path / name).mkdir()
        shutil.copy(demo_file, tmp_path / name / "demo.jsonl")
    changed = tmp_path / "run-b" / "demo.jsonl"
    changed.write_text(changed.read_text().replace(PROMPT, "Analyst: only the rating, please."))
    return tmp_path


@pytest.fixture
def client(two_runs):
    return create_app(two_runs, watch=False).test_client()


def ids(client) -> tuple[str, str]:
    listed = {row["path"]: row["id"] for row in client.get("/api/sessions").get_json()["sessions"]}
    return listed["run-a/demo.jsonl"], listed["run-b/demo.jsonl"]


def test_the_json_twin_finds_the_planted_divergence_and_links_it(client):
    a, b = ids(client)
    response = client.get(f"/api/compare?a={a}&b={b}")
    assert response.status_code == 200
    data = response.get_json()
    conforms(shapes.Compare, data, "/api/compare")
    first = data["first_divergence"]
    assert data["agree"] is False and first["a"]["name"] == "Coordinator"
    assert PROMPT in first["a_entry"]["text"] and "only the rating" in first["b_entry"]["text"]
    assert first["a_entry"]["url"].startswith(f"/s/{a}/agents/agent_001") and first["a_entry"]["url"].endswith(
        "#" + first["a_entry"]["message_id"])
    assert data["url"] == f"/compare?a={a}&b={b}"
    page = client.get(first["a_entry"]["url"].split("#")[0])
    assert page.status_code == 200 and f'id="{first["a_entry"]["message_id"]}"' in page.get_data(as_text=True)


def test_the_page_shows_the_verdict_first_and_each_pair(client):
    a, b = ids(client)
    html = client.get(f"/compare?a={a}&b={b}").get_data(as_text=True)
    assert html.index("The runs differ") < html.index("Agent by agent")
    assert "First divergence" in html and "only the rating, please." in html
    assert html.count('class="compare-pair') == 5
    same = client.get(f"/compare?a={a}&b={a}").get_data(as_text=True)
    assert "The runs agree" in same and "differs" not in same


def test_one_session_as_of_two_points_and_one_agent_subtree(client):
    a, _ = ids(client)
    data = client.get(f"/api/compare?a={a}&b={a}&a_at=20").get_json()
    assert data["a"]["as_of"] == 20 and data["b"]["as_of"] is None and data["agree"] is False
    linked = [e["url"] for p in data["pairs"] for h in p["hunks"] for e in h.get("a", []) + [h.get("a_first")] if e]
    assert linked and all("at=20" in url for url in linked)
    data = client.get(f"/api/compare?a={a}&b={a}&a_agent=agent_002&b_agent=agent_002").get_json()
    assert [p["a"]["name"] for p in data["pairs"]] == ["Writer", "Inner"] and data["agree"]


def test_bad_requests_say_why(client):
    a, _ = ids(client)
    assert client.get(f"/api/compare?a={a}").status_code == 400
    assert client.get(f"/api/compare?a={a}&b=nope").status_code == 404
    assert client.get(f"/api/compare?a={a}&b={a}&a_at=x").status_code == 400
    assert client.get(f"/api/compare?a={a}&b={a}&a_agent=nobody").status_code == 404
    error = client.get(f"/api/compare?a={a}&b=nope").get_json()
    conforms(shapes.Error, error, "/api/compare")


def test_without_two_sessions_the_page_offers_them(client):
    a, b = ids(client)
    html = client.get(f"/compare?a={a}").get_data(as_text=True)
    assert f'value="{a}" selected' in html and f'value="{b}"' in html
