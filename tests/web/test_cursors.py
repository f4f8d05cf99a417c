"""Every live feed's cursor: `after=0` and no `after` at all mean "from the start", as the API documents.

Cursors are `epoch-count`; clients written when they were whole numbers start with `after=0`. Each endpoint is
asked on a session whose file was replaced (its second reading), so "from the start" is told apart from
`0-0` (a cursor of the first reading: the page reloads), and each is checked against its cursor of now
(nothing new: 204 or no events).
"""

from __future__ import annotations

import json
import os

import pytest
from conftest import write_events
from events import created, say, user

from viewer.web.app import create_app

EVENTS = [created("c1", "a1", name="Alpha"), created("c2", "a2", name="Beta"),
          say("m1", "a1", "zebra crossing"), user("m2", "a2", "[Alpha]: zebra crossing", substance="m1"),
          say("m3", "a2", "a second zebra")]


@pytest.fixture
def served(tmp_path):
    """A client, the session's cursor of now; its file replaced once (the cursors' epoch is 1)."""
    path = write_events(tmp_path / "s.jsonl", EVENTS[:2])
    app = create_app(tmp_path, watch=False)
    library = app.extensions["agentview"].library
    write_events(tmp_path / "new.tmp", EVENTS)
    os.replace(tmp_path / "new.tmp", path)
    library.refresh(str(path))
    s = library.get("s")
    assert s.epoch == 1 and s.count == len(EVENTS)
    return app.test_client(), s.cursor


def answers(client, url: str) -> list:
    """The answers to `url` with after=0, after=000, after= and without after (each: status, body)."""
    out = []
    for after in ("&after=0", "&after=000", "&after=", ""):
        response = client.get(url + after)
        out.append((response.status_code, response.headers.get("HX-Refresh"), response.get_data(as_text=True)))
    return out


def test_the_events_api_reads_from_the_start(served):
    client, now = served
    got = answers(client, "/api/sessions/s/events?limit=100")
    assert len(set(got)) == 1 and got[0][0] == 200
    data = client.get("/api/sessions/s/events?after=0").get_json()
    assert [e["message_id"] for e in data["events"]] == [e["message_id"] for e in EVENTS]
    assert data["cursor"] == now and data["reset"] is False
    assert client.get(f"/api/sessions/s/events?after={now}").get_json()["events"] == []
    assert client.get("/api/sessions/s/events?after=0-0").get_json()["reset"] is True  # the first reading's
    for url in ("/api/sessions/s/events?after=5", "/s/s/poll/tree?after=1-", "/search/poll?q=z&after=s=5"):
        response = client.get(url)  # any other text is still refused, saying what a cursor is
        assert response.status_code == 400 and b"epoch-count" in response.data, url


@pytest.mark.parametrize("url, shown", [
    ("/s/s/poll/tree?x=1", ["Alpha", "Beta"]),
    ("/s/s/poll/agent?agent=a2", ["a second zebra"]),
    ("/s/s/poll/dialog?agents=a1,a2", ["zebra crossing"]),
])
def test_each_live_fragment_reads_from_the_start(served, url, shown):
    client, now = served
    got = answers(client, url)
    assert len(set(got)) == 1, url
    status, refresh, body = got[0]
    assert status == 200 and refresh is None and all(text in body for text in shown), body
    assert client.get(f"{url}&after={now}").status_code == 204
    assert client.get(f"{url}&after=0-0").headers.get("HX-Refresh") == "true"  # the first reading's


def test_the_search_poll_reads_from_the_start(served):
    client, now = served
    got = answers(client, "/search/poll?q=zebra")
    assert len(set(got)) == 1 and got[0][0] == 200 and got[0][2].count("zebra") >= 3
    assert client.get("/search/poll?q=zebra&after=s=0").get_data(as_text=True) == got[0][2]  # a session's part
    assert client.get(f"/search/poll?q=zebra&after=s={now}").status_code == 204
    first = client.get("/api/search?q=zebra&session=s&from=0").get_json()  # its pages' cursor, the same
    assert first == client.get("/api/search?q=zebra&session=s").get_json()
    assert {r["message_id"] for r in first["results"]} == {"m1", "m2", "m3"}


def test_a_poll_while_a_resumed_session_is_read_again_waits_and_never_reloads(tmp_path):
    """A settled Claude Code session resumed is read again from its start: meanwhile it holds fewer events under a
    later epoch, and its epoch comes back once every event read before is found where it was. A page polling
    meanwhile gets nothing new, then the new line in place: never a reload (HX-Refresh)."""
    import threading

    from claude_lines import Transcript
    from test_claude_settled import age

    transcript = Transcript("5e77-resumed")
    for n in range(1500):  # a read again long enough for many polls to fall inside it
        transcript.user(f"question {n}")
        transcript.response(f"msg_{n}", [{"type": "text", "text": f"answer {n}"}])
    path = transcript.write(tmp_path / "-home-dev-app" / "5e77-resumed.jsonl")
    age(tmp_path)
    app = create_app(tmp_path, watch=False)
    library = app.extensions["agentview"].library
    [s] = library.listing()
    assert s.normalizer.settled
    cursor, client = s.cursor, app.test_client()
    url = f"/s/{s.id}/poll/agent?agent=main&after={cursor}"
    assert client.get(url).status_code == 204
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps({**transcript.lines[-2], "uuid": "late-1", "parentUuid": transcript.last,
                            "message": {"role": "user", "content": "one more question"}}) + "\n")
    reader = threading.Thread(target=library.refresh, args=(str(path),))
    reader.start()
    answered = []
    while reader.is_alive():
        response = client.get(url)
        answered.append((response.status_code, response.headers.get("HX-Refresh")))
    reader.join()
    assert {refresh for _, refresh in answered} <= {None}
    response = client.get(url)
    assert s.epoch == int(cursor.split("-")[0]) and response.status_code == 200
    assert "one more question" in response.get_data(as_text=True) and response.headers.get("HX-Refresh") is None
