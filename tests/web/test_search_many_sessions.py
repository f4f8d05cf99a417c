"""Search over thousands of sessions: an answer's size follows its hits, paging loses and repeats nothing, and
the live fragment goes on from a long cursor's name (Flask test client on a real folder)."""

import json
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from conftest import wait_for, write_events
from dom import parse
from events import created, say, user
from viewer.web.app import close_app, create_app


def folder_of(root, sessions: int, words) -> None:
    """`sessions` native sessions s0000...; session i says words(i) (a list of texts, one event each)."""
    for i in range(sessions):
        events = [created(f"s{i}-c", "a")] + [user(f"s{i}-m{n}", "a", text) for n, text in enumerate(words(i))]
        write_events(root / f"s{i:04d}.jsonl", events)


def searched_whole(client, q: str) -> dict:
    """The first answer once every session's search index is built (none is searched in part)."""
    answers = []
    wait_for(lambda: answers.append(json.loads(client.get(f"/api/search?q={q}").data)) or not answers[-1]["partial"],
             timeout=120)
    return answers[-1]


@pytest.fixture
def many(tmp_path):
    root = tmp_path / "many"
    folder_of(root, 2000, lambda i: ["plain words here", "quetzalcoatlus flies" if i == 1999 else "nothing rare",
                                     *([f"common {i}", f"common again {i}"] if i % 97 == 0 else ())])
    app = create_app(root, watch=False)
    yield root, app
    close_app(app)


def poll_after(doc) -> str:
    return parse_qs(urlsplit(doc.by_id("av-poller").attrs["hx-get"]).query)["after"][0]


def test_one_hit_in_2000_sessions_is_a_small_answer_and_its_page_polls_on(many):
    root, app = many
    client = app.test_client()
    answer = client.get("/api/search?q=quetzalcoatlus")
    data = searched_whole(client, "quetzalcoatlus")
    assert [hit["session"] for hit in data["results"]] == ["s1999"]
    assert len(answer.data) < 3000  # the cursor of 2,000 sessions is a short name, not 2,000 entries
    assert data["cursor"].startswith("~") and len(data["cursor"]) < 40
    page = client.get("/search?q=quetzalcoatlus")
    assert len(page.data) < 60_000  # without names: over 100 kB of cursor in the poll URL alone
    after = poll_after(parse(page.data))
    assert client.get(f"/search/poll?q=quetzalcoatlus&after={quote(after)}").status_code == 204
    # a new hit in one session, new words without one in another: the poll shows the new hit alone, once
    write_events(root / "s1500.jsonl", [say("late", "a", "a quetzalcoatlus lands")], mode="a")
    write_events(root / "s0007.jsonl", [say("other", "a", "still nothing")], mode="a")
    app.extensions["agentview"].library.scan()
    polled = client.get(f"/search/poll?q=quetzalcoatlus&after={quote(after)}")
    doc = parse(polled.data)
    assert [li.attrs["id"] for li in doc.find_all("li")] == ["av-hit-s1500-3"]
    assert len(polled.data) < 20_000
    assert client.get(f"/search/poll?q=quetzalcoatlus&after={quote(poll_after(doc))}").status_code == 204


def test_a_cursor_name_the_server_no_longer_knows_reloads_the_page(many):
    _, app = many
    client = app.test_client()
    searched_whole(client, "quetzalcoatlus")
    unknown = client.get(f"/search/poll?q=quetzalcoatlus&after=~{'0' * 20}.80000")
    assert unknown.status_code == 200 and unknown.headers["HX-Refresh"] == "true"
    assert client.get("/search/poll?q=quetzalcoatlus&after=~nothex.1").status_code == 400


def test_paging_through_hits_spread_over_2000_sessions_loses_and_repeats_nothing(many):
    _, app = many
    client = app.test_client()
    searched_whole(client, "common")
    expected = [(f"s{i:04d}", f"s{i}-m{n}") for i in range(0, 2000, 97) for n in (2, 3)]
    seen, url, pages = [], "/api/search?q=common&limit=5", 0
    while url:
        response = client.get(url)
        data = json.loads(response.data)
        assert len(response.data) < 1000 + 400 * len(data["results"])  # grows with the hits, not the sessions
        seen += [(hit["session"], hit["message_id"]) for hit in data["results"]]
        url, pages = data["next"], pages + 1
    assert seen == expected and pages == -(-len(expected) // 5)
