"""A file rewritten under the watcher ends showing exactly its final content.

Appends, truncations, rewrites in place with more bytes and replacements by rename, in a fast
random loop, with the real watcher reading as they happen. Each rewrite starts a new generation of
events (other ids, another agent): content from an earlier generation must not survive, nor be
filed under the later one's ids. Within 2 s of the last write: the events API, the agent page, the
message pages and the search show exactly the file's final content; no "changed on disk"
placeholder, no 404, no problem.
"""

from __future__ import annotations

import json
import os
import random
import time

import pytest

from conftest import wait_for
from events import created, say
from viewer.web.app import create_app


def generation_events(generation: int, start: int, count: int) -> list[dict]:
    agent = f"agent{generation}"
    head = [created(f"g{generation}-c", agent)] if start == 0 else []
    return head + [say(f"g{generation}-m{j}", agent, f"gen{generation}word{j} said") for j in range(start, start + count)]


def encoded(events: list[dict]) -> bytes:
    return b"".join(json.dumps(e).encode() + b"\n" for e in events)


@pytest.fixture
def watched(tmp_path):
    folder = tmp_path / "live"
    folder.mkdir()
    app = create_app(folder)
    app.extensions["agentview"].watcher.ready.wait(10)
    yield folder, app
    app.extensions["agentview"].watcher.stop()


def as_shown(events: list[dict]) -> list[tuple]:
    return [(e["message_id"], e["agent_id"], e.get("content")) for e in events]


def shown(client) -> list[tuple] | None:
    response = client.get("/api/sessions/s/events?limit=100000")
    if response.status_code != 200:
        return None
    return [(e.get("message_id"), e.get("agent_id"), e.get("content")) for e in response.get_json()["events"]]


@pytest.mark.parametrize("seed", [13, 14])
def test_appends_truncations_and_rewrites_end_showing_exactly_the_final_content(watched, seed):
    folder, app = watched
    client = app.test_client()
    path = folder / "s.jsonl"
    rng = random.Random(seed)
    generation, events = 0, generation_events(0, 0, 3)
    path.write_bytes(encoded(events))
    for step in range(120):
        action = rng.choice(["append", "append", "truncate", "in place, longer", "rename"])
        if action == "append":
            more = generation_events(generation, len(events) - 1, rng.randint(1, 4))
            with open(path, "ab") as f:
                f.write(encoded(more))
            events += more
        else:
            generation += 1
            events = generation_events(generation, 0, rng.randint(1, 12))
            data = encoded(events)
            if action == "truncate":
                with open(path, "wb") as f:
                    f.write(data)
            elif action == "in place, longer":  # same inode, more bytes than before: looks like an append
                old = path.stat().st_size
                data = data + encoded(generation_events(generation, len(events) - 1, 1 + old // 60))
                events = [json.loads(line) for line in data.splitlines()]
                with open(path, "r+b") as f:
                    f.write(data)
                    f.truncate()
            else:
                tmp = folder / "s.jsonl.tmp"
                tmp.write_bytes(data)
                os.replace(tmp, path)
        if rng.random() < 0.25:  # now and then the watcher catches up before the next write; else writes pile up
            wait_for(lambda: shown(client) == as_shown(events), timeout=5)
    # the last write: a rewrite in place with more bytes, right after a read
    wait_for(lambda: shown(client) == as_shown(events), timeout=5)
    generation += 1
    old = path.stat().st_size
    events = generation_events(generation, 0, 2 + old // 60)
    with open(path, "r+b") as f:
        f.write(encoded(events))
    written = time.monotonic()
    expected = as_shown(events)
    wait_for(lambda: shown(client) == expected, timeout=2.0)
    assert time.monotonic() - written < 2.0

    agent = f"agent{generation}"
    page = client.get(f"/s/s/agents/{agent}")
    assert page.status_code == 200
    assert b"changed on disk" not in page.data and events[-1]["content"].encode() in page.data
    for event in events:
        assert client.get(f"/api/sessions/s/messages/{event['message_id']}").status_code == 200
        assert client.get(f"/s/s/messages/{event['message_id']}").status_code == 200
    problems = client.get("/api/sessions/s/problems").get_json()["problems"]
    assert problems == []
    last = events[-1]
    hits = client.get(f"/api/search?q={last['content'].split()[0]}&session=s").get_json()["results"]
    assert [h["message_id"] for h in hits] == [last["message_id"]]
    earlier = client.get(f"/api/search?q=gen{generation - 1}word0&session=s").get_json()["results"]
    assert earlier == []
    assert client.get(f"/api/sessions/s/messages/g{generation - 1}-c").status_code == 404
