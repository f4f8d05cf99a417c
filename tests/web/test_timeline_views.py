"""The timeline page, its JSON twin, its live fragment and the link from a bar to its entry, on a real server."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request

import pytest

from conftest import serve, wait_for, write_events
from test_timeline import session as timed_session  # noqa: F401  (a fixture)
from test_timeline import timed
from events import created, say
from viewer.web import shapes
from viewer.web.shape_check import conforms


def get(url: str):
    request = urllib.request.Request(url)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode(), response.geturl()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(), url


def test_the_twin_the_page_the_live_fragment_and_a_bar_s_link(timed_session):  # noqa: F811
    folder = timed_session.parent
    with serve(folder) as server:
        server.wait_for_session("run", events=14)
        status, body, _ = get(f"{server.url}/api/sessions/run/timeline")
        data = json.loads(body)
        assert status == 200 and data["url"] == "/s/run/timeline" and data["axis"] == "time"
        conforms(shapes.Timeline, data, "/api/sessions/run/timeline")
        status, page, _ = get(f"{server.url}/s/run/timeline")
        assert status == 200 and page.count('role="listitem"') == 2 and "Longest calls" in page
        # Nothing new: the poll costs what any empty poll costs.
        poll = f"{server.url}/s/run/poll/timeline?after={data['cursor']}"
        assert get(poll)[0] == 204
        write_events(timed_session, [timed(created("c9", "late", cause="a3", name="Latecomer"), 42),
                                     timed(say("l1", "late", "here"), 43)], mode="a")
        grown = wait_for(lambda: (lambda answer: answer if answer[0] == 200 else None)(get(poll)), timeout=20)
        assert "Latecomer" in grown[1] and 'id="av-timeline"' in grown[1]
        # A bar's link opens its entry on its agent's page.
        failed = next(bar for lane in data["lanes"] for bar in lane["bars"] if bar["failed"])
        status, _, landed = get(f"{server.url}/s/run/timeline/at/{failed['position']}")
        assert status == 200 and landed == f"{server.url}/s/run/agents/lead#a2"
        assert get(f"{server.url}/s/run/timeline/at/999")[0] == 404
        assert get(f"{server.url}/api/sessions/run/timeline?start=x")[0] == 400
        ranged = json.loads(get(f"{server.url}/api/sessions/run/timeline?start={data['first'] + 11}"
                                f"&end={data['first'] + 20}")[1])
        assert ranged["start"] == data["first"] + 11 and ranged["url"].startswith("/s/run/timeline?start=")


POLLS = {"tree": "/s/example1_jack_and_jill/poll/tree?after=0-2",
         "agent": "/s/example1_jack_and_jill/poll/agent?agent=agent_root&after=0-2",
         "dialog": "/s/example1_jack_and_jill/poll/dialog?agents=agent_jack,agent_jill&after=0-2",
         "timeline": "/s/example1_jack_and_jill/poll/timeline?after=0-2"}


def _gone(library, path):
    path.unlink()
    library.refresh(str(path))


def _moved(library, path):
    os.rename(path, path.with_name("renamed.jsonl"))
    library.move(str(path), str(path.with_name("renamed.jsonl")))


def _reset(library, path):
    path.write_text(path.read_text().splitlines()[0] + "\n")  # shorter: read again from the start
    library.refresh(str(path))


@pytest.mark.parametrize("change, expected", [
    (_gone, (286, None, "none", True)),  # polling stops; the banner comes out of band, the chart stays
    (_moved, (200, "true", None, False)),  # the reload redirects to the new name
    (_reset, (200, "true", None, False)),  # the reload draws the file as it is now
])
def test_the_timeline_poll_ends_as_every_live_fragment_does(session_dir, app, client, change, expected):
    change(app.extensions["agentview"].library, session_dir / "example1_jack_and_jill.jsonl")
    answers = {}
    for name, url in POLLS.items():
        response = client.get(url)
        answers[name] = (response.status_code, response.headers.get("HX-Refresh"),
                         response.headers.get("HX-Reswap"), b'id="av-gone"' in response.data)
    assert answers == dict.fromkeys(POLLS, expected)
    if change is _moved:
        page = client.get("/s/example1_jack_and_jill/timeline")
        assert page.status_code == 302 and page.headers["Location"].endswith("/s/renamed/timeline")
