"""Every fault a session file can have: reported once, with a line and a kind; nothing valid lost."""

import gzip
import json
import os


from conftest import write_events
from events import created, dumps, ingest, problems, result, say, user
from viewer.library.library import Library
from viewer.reads.session_viewer import load_index
from viewer.files.tailer import FileTailer, Line


# --- lines that cannot be events ----------------------------------------------------------------

def test_a_50_megabyte_line_is_reported_with_a_short_excerpt_between_valid_lines(tmp_path):
    path = tmp_path / "big.jsonl"
    with open(path, "wb") as f:
        f.write(dumps(say("m1", "a", "before")) + b"\n")
        f.write(b'{"message_id": "huge", "content": "' + b"x" * (50 * 1024 * 1024) + b"\n")  # never closed
        f.write(dumps(say("m2", "a", "after")) + b"\n")
        f.write(dumps(say("m3", "a", "y" * (50 * 1024 * 1024))) + b"\n")  # a valid one is kept whole
    session = load_index(path)
    assert [e["message_id"] for e in session.events] == ["m1", "m2", "m3"]
    assert len(session.events[2]["content"]) == 50 * 1024 * 1024
    (problem,) = session.problems
    assert (problem.kind, problem.line) == ("invalid_json", 2)
    assert len(problem.detail) < 250 and problem.detail.endswith("…")


def test_a_long_line_written_slowly_is_read_once(tmp_path):
    path = tmp_path / "slow.jsonl"
    line = dumps(say("m1", "a", "z" * 3_000_000)) + b"\n"
    tailer = FileTailer(path)
    path.write_bytes(b"")
    reads = []

    for start in range(0, len(line), 100_000):
        with open(path, "ab") as f:
            f.write(line[start:start + 100_000])
        before = tailer.offset + len(tailer._partial)
        reads.append((before, tailer.read()))
    # each read started where the last one stopped: the partial line is never read twice
    assert [before for before, _ in reads] == list(range(0, len(line), 100_000))
    assert [len(r.lines) for _, r in reads][-1] == 1 and sum(len(r.lines) for _, r in reads) == 1


# --- fields of the wrong type: the event is kept, the fault reported -----------------------------

# --- links that resolve to nothing, and links that loop ------------------------------------------

def test_dangling_links_are_flagged_and_unflagged_when_the_message_arrives():
    events = [
        user("m1", "a", "heard", substance="later"),
        {"message_id": "m2", "event_type": "piece_of_text", "agent_id": "a", "content": "x", "cause": ["m1", "nowhere"]},
        result("m3", "a", "c9", "an answer to no call"),
        say("later", "b", "the original, written late"),
    ]
    session = ingest([dumps(e) for e in events[:3]])
    assert problems(session) == [("dangling_substance", 1, "m1"), ("dangling_cause", 2, "m2"),
                                 ("dangling_tool_call_id", 3, "m3")]
    session.ingest([Line(4, dumps(events[3]))])
    assert problems(session) == [("dangling_cause", 2, "m2"), ("dangling_tool_call_id", 3, "m3")]


def test_substance_and_cause_cycles_are_flagged_and_pages_still_answer(tmp_path):
    events = [
        user("m1", "a", "one", substance="m2"),
        user("m2", "b", "two", substance="m1"),
        user("m3", "a", "myself", substance="m3"),
        {"message_id": "p1", "event_type": "piece_of_text", "agent_id": "a", "content": "x", "cause": "p2"},
        {"message_id": "p2", "event_type": "piece_of_text", "agent_id": "a", "content": "y", "cause": "p1"},
    ]
    session = ingest([dumps(e) for e in events])
    assert problems(session) == [("substance_cycle", 2, "m2"), ("substance_cycle", 3, "m3"), ("cause_cycle", 5, "p2")]

    from viewer.web.app import create_app
    write_events(tmp_path / "loops.jsonl", events)
    client = create_app(tmp_path, watch=False).test_client()
    for url in ["/s/loops", "/s/loops/agents/a", "/s/loops/agents/a?sub=1", "/s/loops/dialog?agents=a,b",
                "/s/loops/messages/m1", "/s/loops/messages/m3", "/s/loops/messages/p2", "/s/loops/problems",
                "/api/sessions/loops/messages/p1"]:
        assert client.get(url).status_code == 200, url


# --- files: compressed, renamed, outside the folder ----------------------------------------------

def test_gzip_sessions_are_read_whole_and_again_when_they_change(tmp_path):
    path = tmp_path / "old.jsonl.gz"
    with gzip.open(path, "wt") as f:
        f.write(json.dumps(say("m1", "a", "hi")) + "\n" + json.dumps(say("m2", "a", "no newline at the end")))
    library = Library(tmp_path)
    library.scan()
    session = library.get("old.jsonl.gz")
    assert session.name == "old" and session.count == 2
    library.refresh(str(path))
    assert session.count == 2 and session.epoch == 0  # unchanged: not read again
    with gzip.open(path, "wt") as f:
        f.write(json.dumps(say("m3", "a", "rewritten")) + "\n")
    os.utime(path, ns=(1, 1))
    library.refresh(str(path))
    assert [e["message_id"] for e in session.events] == ["m3"] and session.epoch == 1


def test_a_truncated_gzip_keeps_the_lines_before_the_fault(tmp_path):
    data = gzip.compress(b"".join(dumps(say(f"m{i}", "a", "x" * 200)) + b"\n" for i in range(200)))
    (tmp_path / "cut.jsonl.gz").write_bytes(data[: len(data) // 2])
    session = load_index(tmp_path / "cut.jsonl.gz")
    assert 0 < session.count < 200
    assert [e["message_id"] for e in session.events] == [f"m{i}" for i in range(session.count)]
    (problem,) = session.problems
    assert problem.kind == "unreadable_file" and "gzip" in problem.detail


def test_symlinks_out_of_the_folder_are_listed_unread_unless_asked(tmp_path):
    outside = tmp_path / "outside"
    write_events(outside / "secret.jsonl", [say("s1", "a", "private")])
    folder = tmp_path / "sessions"
    write_events(folder / "inside.jsonl", [say("m1", "a", "public")])
    os.symlink(outside / "secret.jsonl", folder / "link.jsonl")
    os.symlink(outside, folder / "linked-folder")
    os.symlink(folder / "inside.jsonl", folder / "alias.jsonl")  # inside the folder: harmless
    library = Library(folder)
    library.scan()
    assert sorted(library.sessions) == ["alias", "inside", "link"]  # the link is listed, never read
    library.refresh(str(folder / "link.jsonl"))  # a file event for it changes nothing
    link = library.get("link")
    assert link.count == 0 and [p.kind for p in link.problems] == ["outside_folder"]
    assert "s1" not in link.by_id and not link.agents
    following = Library(folder, follow_symlinks=True)
    following.scan()
    assert sorted(following.sessions) == ["alias", "inside", "link", "linked-folder:secret"]


def test_a_renamed_file_keeps_its_index_and_old_links_redirect(tmp_path):
    from viewer.web.app import create_app
    write_events(tmp_path / "before.jsonl", [created("m1", "a", name="A"), say("m2", "a", "hi")])
    app = create_app(tmp_path, watch=False)
    library = app.extensions["agentview"].library
    os.rename(tmp_path / "before.jsonl", tmp_path / "after.jsonl")
    library.move(str(tmp_path / "before.jsonl"), str(tmp_path / "after.jsonl"))
    client = app.test_client()
    response = client.get("/s/before/agents/a?sub=1")
    assert response.status_code == 302 and response.headers["Location"] == "/s/after/agents/a?sub=1"
    assert client.get("/api/sessions/before").headers["Location"] == "/api/sessions/after"
    poll = client.get("/s/before/poll/tree?after=0-0")
    assert poll.headers.get("HX-Refresh") == "true"  # the open page reloads, and is redirected
    assert client.get("/s/after").status_code == 200
    assert client.get("/s/nothing").status_code == 404
