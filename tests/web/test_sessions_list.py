"""The sessions list (newest first, relative times, a filter box), Claude Code's bookkeeping records as one
line, an invalid filter said beside its form, and pages in their own words (no command-line options)."""

from __future__ import annotations

import os

from conftest import write_events
from dom import parse
from events import claude_user, created, say
from viewer.web.app import create_app
from viewer.web.shell import ago, when


def test_relative_times_read_as_people_say_them():
    assert ago(100, 100) == "just now"
    assert ago(100, 100 + 3 * 60 + 5) == "3 min ago"
    assert ago(0, 2 * 3600 + 1) == "2 h ago"
    assert ago(0, 86400) == "1 day ago" and ago(0, 5 * 86400) == "5 days ago"


def test_sessions_newest_first_with_relative_times_and_a_filter(tmp_path):
    for i, name in enumerate(["alpha", "beta", "gamma"]):
        path = write_events(tmp_path / f"{name}.jsonl", [created("c0", "root", name=name.title()), say("m1", "root", "hi")])
        os.utime(path, (1_700_000_000 + i * 600, 1_700_000_000 + i * 600))  # gamma newest, alpha oldest
    client = create_app(tmp_path, watch=False).test_client()
    doc = parse(client.get("/").data)
    rows = [tr for tr in doc.find_all("tr") if tr.attrs.get("id", "").startswith("av-session-")]
    assert [r.attrs["id"] for r in rows] == ["av-session-gamma", "av-session-beta", "av-session-alpha"]
    stamp = rows[0].find_all("time")[0]  # without scripts: an old time as a UTC date, the exact time its title
    assert stamp.text == "Nov 14 2023, 22:33 UTC" and stamp.attrs["datetime"] == "2023-11-14T22:33:20Z"
    assert stamp.attrs["title"] == "2023-11-14 22:33:20 UTC" and stamp.attrs["data-epoch"] == "1700001200"
    body = client.get("/?filter=BET").data.decode()
    assert "av-session-beta" in body and "av-session-alpha" not in body
    assert "1 of 3 sessions match" in body and 'value="BET"' in body
    assert "filter=BET" in body.split('id="av-sessions"')[1].split(">")[0]  # the live list keeps the filter
    assert "No session matches" in client.get("/?filter=nothing-like-it").data.decode()


def test_a_times_epoch_is_the_second_its_exact_time_says():
    """The script says a time from its epoch: the second the exact time shows, never the next one (a moment
    179.6 s ago, rounded, read as "2 min ago" where it was 3 min ago)."""
    stamp = parse(str(when(1_700_001_200.6, now=1_700_001_380.2))).find_all("time")[0]
    assert stamp.attrs["datetime"] == "2023-11-14T22:33:20Z" and stamp.attrs["title"] == "2023-11-14 22:33:20 UTC"
    assert stamp.attrs["data-epoch"] == "1700001200" and stamp.text == "2 min ago"


def test_claude_code_bookkeeping_records_are_one_compact_line(tmp_path):
    write_events(tmp_path / "cc.jsonl", [
        claude_user("u1", "hello there"),
        {"type": "file-history-snapshot", "messageId": "u1", "snapshot": {"trackedFileBackups": {}}, "isSnapshotUpdate": False},
        {"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-02-01T10:00:00.500Z", "sessionId": "s"},
        {"type": "ai-title", "title": "Greeting", "sessionId": "s"},
    ])
    client = create_app(tmp_path, watch=False).test_client()
    session = client.get("/api/sessions").get_json()["sessions"][0]
    agent = client.get(f"/api/sessions/{session['id']}").get_json()["agents"][0]["agent_id"]
    doc = parse(client.get(f"/s/{session['id']}/agents/{agent}").data)
    compact = [a for a in doc.find_all("article") if "bookkeeping" in a.attrs.get("class", "").split()]
    assert sorted(a.find_all("span", **{"class": "kind"})[0].text for a in compact) == [
        "ai-title", "file-history-snapshot", "queue-operation"]
    assert all(a.find_all("summary") and a.find_all("details") for a in compact)  # the record a click away


def test_an_unknown_kind_is_said_beside_the_filter_form(client):
    body = client.get("/s/example1_jack_and_jill/agents/agent_jack?kind=bogus,heard").data.decode()
    form = body.split('class="filters"')[1].split("</form>")[0]
    assert "No such kind of entry: <code>bogus</code>" in form
    assert 'value="heard" checked' in form


def test_pages_do_not_speak_in_command_line_options(client):
    answer = client.get("/s/example1_jack_and_jill/export/markdown?agent=agent_jack&agents=agent_jack,agent_jill")
    assert answer.status_code == 400
    text = answer.data.decode()
    assert "--agent" not in text and "of one agent (?agent=) or of a dialog (?agents=)" in text
    assert "--agent" not in client.get("/s/example1_jack_and_jill/export/json?agent=agent_jack").data.decode()


def test_a_session_is_named_by_its_title_and_timed_by_its_events_not_its_file(tmp_path):
    from claude_lines import Transcript

    t = Transcript("fe5e1c67-53e7-4b1a-9c2d-3e4f5a6b7c8d")
    t.user("Create a TODO app with Next.js.")
    t.response("msg_1", [{"type": "text", "text": "Scaffolding it."}])
    t.user("Add tests.")
    t.raw({"type": "ai-title", "aiTitle": "Create TODO app", "sessionId": t.session})
    path = t.write(tmp_path / "-home-dev-todo" / f"{t.session}.jsonl")
    os.utime(path, (1_900_000_000, 1_900_000_000))  # copied in long after it ran: the file's time says nothing
    write_events(tmp_path / "big.jsonl", [created("c0", "root"), *(say(f"m{i}", "root", "hi") for i in range(9))])
    client = create_app(tmp_path, watch=False).test_client()
    row = next(s for s in client.get("/api/sessions").get_json()["sessions"] if s["title"])
    first, last = t.lines[0]["timestamp"], t.lines[-2]["timestamp"]  # the ai-title record has no time
    assert (first, last) == ("2026-03-01T10:00:01.000Z", "2026-03-01T10:00:03.000Z")
    assert (row["started_at"], row["active_at"]) == (1772359201.0, 1772359203.0)
    doc = parse(client.get("/").data)
    (tr,) = [tr for tr in doc.find_all("tr") if tr.attrs.get("id") == f"av-session-{row['id']}"]
    assert tr.find_all("a")[0].text == "Create TODO app"
    assert [t.attrs["datetime"] for t in tr.find_all("time")] == ["2026-03-01T10:00:01Z", "2026-03-01T10:00:03Z"]
    assert tr.find_all("span", **{"class": "duration"})[0].text == "2.0 s"
    page = parse(client.get(row["url"]).data)
    assert page.find_all("h1")[0].text == "Create TODO app" and page.find_all("title")[0].text == "Create TODO app · agentview"
    # the newest first by its last event; by size the bigger first
    ids = [tr.attrs["id"] for tr in parse(client.get("/").data).find_all("tr") if tr.attrs.get("id")]
    assert ids == ["av-session-big", f"av-session-{row['id']}"]
    ids = [tr.attrs["id"] for tr in parse(client.get("/?sort=size").data).find_all("tr") if tr.attrs.get("id")]
    assert ids == ["av-session-big", f"av-session-{row['id']}"]
    os.utime(tmp_path / "big.jsonl", (1_700_000_000, 1_700_000_000))  # big: older than the Claude Code session ran
    client = create_app(tmp_path, watch=False).test_client()
    ids = [tr.attrs["id"] for tr in parse(client.get("/").data).find_all("tr") if tr.attrs.get("id")]
    assert ids == [f"av-session-{row['id']}", "av-session-big"]


def test_the_list_draws_its_newest_rows_and_says_how_many_more_there_are(tmp_path):
    """A folder of 20,000 sessions is not drawn whole (nor at each poll): `?shown=N` rows, newest first, then how
    many are left out, with links to more and to all; the live list keeps N."""
    names = ["s0", "s1", "s2", "s3", "s4"]
    for i, name in enumerate(names):
        path = write_events(tmp_path / f"{name}.jsonl", [created("c0", "root", name=name), say("m1", "root", "hi")])
        os.utime(path, (1_700_000_000 + i * 600, 1_700_000_000 + i * 600))  # s4 newest
    client = create_app(tmp_path, watch=False).test_client()

    def drawn(url: str) -> tuple[list[str], str]:
        body = client.get(url).data.decode()
        doc = parse(body)
        rows = [tr.attrs["id"] for tr in doc.find_all("tr") if tr.attrs.get("id", "").startswith("av-session-")]
        return rows, body

    rows, body = drawn("/?shown=2")
    assert rows == ["av-session-s4", "av-session-s3"]
    more = body.split('id="av-more-sessions"')[1].split("</p>")[0]
    assert "3 more sessions not shown" in more and "shown=4" in more and "shown=5" in more and "show all 5" in more
    assert "shown=2" in body.split('id="av-sessions"')[1].split(">")[0]  # the live list keeps it
    assert drawn("/poll/sessions?shown=2")[0] == rows
    assert drawn("/?shown=4&filter=s")[0] == ["av-session-s4", "av-session-s3", "av-session-s2", "av-session-s1"]
    rows, body = drawn("/")  # fewer than the list draws at first: all, and no word of more
    assert len(rows) == 5 and "av-more-sessions" not in body and "shown=" not in body
