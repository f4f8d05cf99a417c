"""Files the viewer may not or cannot read (FIFOs, devices, symlinks out of the folder, permission denied)
are listed with a problem and 0 events, never read, and never stop the ingest of the others."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from conftest import REPO, serve, wait_for, write_events
from events import claude_user, run_with_timeout, say
from other_user import as_other_user
from viewer.library.library import Library
from viewer.index.session_ids import session_id_for

def get(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode()
    except urllib.error.HTTPError as error:
        return error.read().decode()


def api(server, path: str):
    return json.loads(get(f"{server.url}/api{path}"))


def listed(server) -> dict:
    return {s["id"]: s for s in api(server, "/sessions")["sessions"]}


def problem_kinds(server, session_id: str) -> list[str]:
    return [p["kind"] for p in api(server, f"/sessions/{session_id}/problems")["problems"]]


def sub_agent_line(uuid: str, agent: str, text: str) -> dict:
    """The first line of a Claude Code 2.1.x sub-agent file of session "s"."""
    return {**claude_user(uuid, text), "isSidechain": True, "agentId": agent}


def claude_session(folder: Path, agent: str = "f1") -> Path:
    """Project `proj` with session "s": its main file and one sub-agent file; returns the sub-agents' folder."""
    write_events(folder / "proj" / "s.jsonl", [claude_user("u1", "start")])
    subagents = folder / "proj" / "s" / "subagents"
    subagents.mkdir(parents=True)
    return subagents


def test_a_fifo_session_file_and_a_fifo_sidecar_never_stop_ingest(tmp_path):
    folder = tmp_path / "sessions"
    write_events(folder / "live.jsonl", [say("m1", "a", "first")])
    with serve(folder) as server:
        server.wait_for_session("live", 1)
        subagents = claude_session(folder)  # a sub-agent whose .meta.json is a FIFO nobody writes to
        os.mkfifo(subagents / "agent-f1.meta.json")
        write_events(subagents / "agent-f1.jsonl", [sub_agent_line("f1-1", "f1", "go")])
        os.mkfifo(folder / "pipe.jsonl")
        wait_for(lambda: "pipe" in listed(server), timeout=10)
        write_events(folder / "live.jsonl", [say("m2", "a", "appended after the FIFOs")], mode="a")
        server.wait_for_session("live", 2)  # ingest went on
        pipe = listed(server)["pipe"]
        assert pipe["events"] == 0 and pipe["format"] == "not-read" and pipe["problems"] == 1
        assert problem_kinds(server, "pipe") == ["not_a_regular_file"]
        assert "a FIFO" in get(f"{server.url}/s/pipe/problems")
        row = get(server.url + "/").split('id="av-session-pipe"')[1].split("</tr>")[0]
        assert "pipe.jsonl" in row and "not read" in row and "a FIFO" in row
        claude = wait_for(lambda: listed(server).get("proj:s"), timeout=10)
        assert claude["events"] > 0
        problems = api(server, "/sessions/proj:s/problems")["problems"]
        assert [p["kind"] for p in problems] == ["not_a_regular_file"]
        assert "agent-f1.meta.json" in problems[0]["detail"] and "FIFO" in problems[0]["detail"]
        os.unlink(folder / "pipe.jsonl")  # listed until it goes away
        wait_for(lambda: "pipe" not in listed(server), timeout=10)
        assert server.process.poll() is None


def test_a_fifo_a_program_writes_to_is_not_opened(tmp_path):
    os.mkfifo(tmp_path / "pipe.jsonl")
    opened = threading.Event()

    def writer():
        with open(tmp_path / "pipe.jsonl", "wb") as f:  # waits for a reader
            opened.set()
            f.write(b"{}\n")

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    library = Library(tmp_path)
    run_with_timeout(library.scan)
    library.refresh(str(tmp_path / "pipe.jsonl"))
    assert [p.kind for p in library.listing()[0].problems] == ["not_a_regular_file"]
    assert not opened.wait(0.5)  # the writer still waits: nobody opened its FIFO to read
    with open(tmp_path / "pipe.jsonl", "rb") as f:  # let it finish: an open to read is seen, and soon
        assert opened.wait(0.5)
        assert f.read() == b"{}\n"
    thread.join(5)


def test_a_session_file_swapped_for_a_fifo_is_listed_and_read_again_once_regular(tmp_path):
    write_events(tmp_path / "s.jsonl", [say("m1", "a", "hello")])
    library = Library(tmp_path)
    library.scan()
    assert library.get("s").count == 1
    os.mkfifo(tmp_path / "new")
    os.replace(tmp_path / "new", tmp_path / "s.jsonl")
    run_with_timeout(lambda: library.refresh(str(tmp_path / "s.jsonl")))
    refused = library.get("s")
    assert refused.count == 0 and [p.kind for p in refused.problems] == ["not_a_regular_file"]
    write_events(tmp_path / "new", [say("x1", "a", "other"), say("x2", "a", "again")])
    os.replace(tmp_path / "new", tmp_path / "s.jsonl")
    library.refresh(str(tmp_path / "s.jsonl"))
    session = library.get("s")
    assert session.count == 2 and session.problems == [] and session.format.name == "native"
    # each is a new epoch: a page polling with an older cursor reloads, never takes x2 for what followed m1
    assert 0 < refused.epoch < session.epoch and session.position_after("0-1") is None


@pytest.mark.parametrize("name", ["device.jsonl", "device.jsonl.gz", "device.json"])
def test_a_device_is_listed_never_read(tmp_path, name):
    (tmp_path / name).symlink_to("/dev/zero")
    library = run_with_timeout(lambda: Library(tmp_path))
    run_with_timeout(library.scan)
    (session,) = library.listing()
    assert session.count == 0 and [p.kind for p in session.problems] == ["not_a_regular_file"]
    assert "character device" in session.problems[0].detail


def claude_session_with_a_sub_agent_then_a_fifo(tmp_path):
    """A Claude Code session read with its sub-agent file f1, which is then swapped for a FIFO."""
    subagents = claude_session(tmp_path)
    write_events(subagents / "agent-f1.jsonl", [sub_agent_line("f1-1", "f1", "go")])
    library = Library(tmp_path)
    library.scan()
    session = library.get("proj:s")
    assert {"u1", "f1-1"} <= set(session.by_id)
    position = session.by_id["f1-1"]
    os.mkfifo(tmp_path / "fifo")
    os.replace(tmp_path / "fifo", subagents / "agent-f1.jsonl")
    return library, session, position, subagents


def test_a_stored_entry_of_a_file_swapped_for_a_fifo_is_shown_as_changed(tmp_path):
    _, session, position, _ = claude_session_with_a_sub_agent_then_a_fifo(tmp_path)
    with session.lock:
        session.events.forget_cached()
    event = run_with_timeout(lambda: session.events[position])
    assert "file changed" in event["markers"] and "go" not in event["content"]


def test_a_file_of_a_claude_code_session_swapped_for_a_fifo_leaves_it_and_is_listed(tmp_path):
    library, session, _, subagents = claude_session_with_a_sub_agent_then_a_fifo(tmp_path)
    run_with_timeout(lambda: library.refresh(str(tmp_path / "proj" / "s.jsonl")))  # the group reads every file
    assert library.get("proj:s") is session and "u1" in session.by_id and "f1-1" not in session.by_id
    sub = library.get(session_id_for("proj/s/subagents/agent-f1.jsonl"))
    assert sub.count == 0 and [p.kind for p in sub.problems] == ["not_a_regular_file"]
    os.unlink(subagents / "agent-f1.jsonl")
    os.mkfifo(tmp_path / "fifo")
    os.replace(tmp_path / "fifo", tmp_path / "proj" / "s.jsonl")  # the main file: listed unread under its id
    run_with_timeout(lambda: library.refresh(str(tmp_path / "proj" / "s.jsonl")))
    run_with_timeout(lambda: library.refresh(str(subagents / "agent-f1.jsonl")))
    main = library.get("proj:s")
    assert main.count == 0 and [p.kind for p in main.problems] == ["not_a_regular_file"]
    assert [s.id for s in library.listing()] == ["proj:s"]


def outside_sidecar(tmp_path) -> Path:
    """A session whose sub-agent's .meta.json is a symlink to a JSON file outside the folder."""
    (tmp_path / "outside.json").write_text(json.dumps({"description": "OUTSIDE-DESCRIPTION", "agentType": "x"}))
    folder = tmp_path / "sessions"
    subagents = claude_session(folder)
    (subagents / "agent-f1.meta.json").symlink_to(tmp_path / "outside.json")
    write_events(subagents / "agent-f1.jsonl", [sub_agent_line("f1-1", "f1", "go")])
    return folder


def test_a_sidecar_symlinked_out_of_the_folder_is_never_shown(tmp_path):
    from viewer.web.app import create_app

    folder = outside_sidecar(tmp_path)
    client = create_app(folder, watch=False).test_client()
    pages = ["/", "/s/proj:s", "/api/sessions/proj:s", "/s/proj:s/agents/agent-f1", "/s/proj:s/spawn",
             "/api/sessions/proj:s/agents/agent-f1"]
    for page in pages:
        response = client.get(page)
        assert response.status_code == 200 and b"OUTSIDE-DESCRIPTION" not in response.data, page
    problems = client.get("/api/sessions/proj:s/problems").get_json()["problems"]
    assert [p["kind"] for p in problems] == ["outside_folder"] and "agent-f1.meta.json" in problems[0]["detail"]
    assert b"outside_folder" in client.get("/s/proj:s/problems").data
    following = create_app(folder, watch=False, follow_symlinks=True).test_client()  # asked for: shown
    assert b"OUTSIDE-DESCRIPTION" in following.get("/s/proj:s").data


def test_a_sidecar_leading_to_dev_zero_is_refused_without_reading_it(tmp_path):
    """Run in a process whose address space is capped: reading /dev/zero would exhaust it."""
    subagents = claude_session(tmp_path)
    (subagents / "agent-f1.meta.json").symlink_to("/dev/zero")
    write_events(subagents / "agent-f1.jsonl", [sub_agent_line("f1-1", "f1", "go")])
    script = ("import json, resource, sys\n"
              "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
              "from viewer.library.library import Library\n"
              "library = Library(sys.argv[1]); library.scan()\n"
              "s = library.get('proj:s')\n"
              "print(json.dumps({'events': s.count, 'problems': [p.as_dict() for p in s.problems],\n"
              "                  'name': s.agents['agent-f1'].name}))\n")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], cwd=REPO, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["events"] > 0 and [p["kind"] for p in report["problems"]] == ["not_a_regular_file"]
    assert "character device" in report["problems"][0]["detail"] and report["name"] == "agent-f1"


def test_a_sidecar_over_a_megabyte_is_not_read(tmp_path):
    subagents = claude_session(tmp_path)
    padding = " " * (1024 * 1024)
    (subagents / "agent-f1.meta.json").write_text(json.dumps({"description": "BIG-DESCRIPTION"}) + padding)
    write_events(subagents / "agent-f1.jsonl", [sub_agent_line("f1-1", "f1", "go")])
    library = Library(tmp_path)
    library.scan()
    session = library.get("proj:s")
    assert session.agents["agent-f1"].name == "agent-f1"
    assert [p.kind for p in session.problems] == ["too_large"] and "agent-f1.meta.json" in session.problems[0].detail


def test_a_session_symlink_swapped_in_and_out_never_serves_the_outside(tmp_path):
    outside = tmp_path / "outside"
    write_events(outside / "secret.jsonl", [say(f"secret-{i}", "a", f"OUTSIDE-SECRET {'x' * 200}")
                                            for i in range(3000)])
    folder = tmp_path / "sessions"
    inside = write_events(folder / "keep" / "inside.jsonl", [say(f"m{i}", "a", f"inside {'y' * 200}")
                                                            for i in range(3000)])
    link = folder / "s.jsonl"
    link.symlink_to(inside)
    seen: list[str] = []
    asked: list[str] = []  # the pages asked for, as they are asked
    stop = threading.Event()

    def poll(server):
        pages = ["/api/sessions", "/api/sessions/s", "/api/sessions/s/agents/a?limit=5000", "/s/s/agents/a",
                 "/api/sessions/s/events", "/api/search?q=OUTSIDE", "/api/sessions/s/messages/secret-1",
                 "/s/s/problems"]
        while not stop.is_set():
            for page in pages:
                asked.append(page)
                text = get(server.url + page)
                if "OUTSIDE-SECRET" in text or '"secret-' in text:
                    seen.append(page)

    def point(target):
        temporary = folder / "s.tmp"
        temporary.symlink_to(target)
        os.replace(temporary, link)

    with serve(folder) as server:
        server.wait_for_session("s", 3000)
        pollers = [threading.Thread(target=poll, args=(server,)) for _ in range(2)]
        for poller in pollers:
            poller.start()
        try:
            deadline, swaps = time.monotonic() + 5, 0
            while time.monotonic() < deadline and not seen:
                for target in (outside / "secret.jsonl", inside):  # each swapped back while a page is made
                    point(target)
                    before = len(asked)
                    wait_for(lambda: len(asked) > before)
                swaps += 1
            assert seen == [], f"the outside file was served by {sorted(set(seen))}"
            assert swaps > 20 and len(asked) > 2 * swaps  # the pages were asked for all along the swaps
            point(outside / "secret.jsonl")  # left pointing out: listed, never read
            wait_for(lambda: "s" in listed(server) and problem_kinds(server, "s") == ["outside_folder"], timeout=10)
            assert listed(server)["s"]["events"] == 0
            point(inside)  # and back in: read again
            server.wait_for_session("s", 3000)
        finally:
            stop.set()
            for poller in pollers:
                poller.join(timeout=30)
        assert server.process.poll() is None
    assert seen == []


@pytest.fixture
def private_folder():
    """A folder every user may enter (not below pytest's private temp folder), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="agentview-perm-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_an_unreadable_file_is_listed_with_permission_denied_until_it_can_be_read(private_folder):
    as_root = os.geteuid() == 0  # root reads any file: the server runs as nobody, the files stay root's
    write_events(private_folder / "open.jsonl", [say("m1", "a", "readable")])
    secret = write_events(private_folder / "closed.jsonl", [say("c1", "a", "CLOSED-CONTENT")])
    for path in (private_folder / "open.jsonl", secret):
        path.chmod(0o644)
    secret.chmod(0o600 if as_root else 0o000)
    with serve(private_folder, user=as_other_user()) as server:
        server.wait_for_session("open", 1)
        closed = wait_for(lambda: listed(server).get("closed"), timeout=10)
        assert closed["events"] == 0 and closed["format"] == "not-read"
        assert problem_kinds(server, "closed") == ["permission_denied"]
        assert "permission denied" in get(f"{server.url}/s/closed/problems")
        assert "CLOSED-CONTENT" not in get(f"{server.url}/api/sessions/closed")
        secret.chmod(0o644)  # readable now: read like any other, as soon as the mode changed (not at the next walk)
        server.wait_for_session("closed", 1, timeout=3)
        assert problem_kinds(server, "closed") == [] and "CLOSED-CONTENT" in get(f"{server.url}/s/closed/agents/a")
