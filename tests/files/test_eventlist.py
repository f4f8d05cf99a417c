"""A native line is kept as where it is in its file and read back as the same event; anything else as it must be."""

import gzip
import json
import os

from conftest import write_events
from events import created, say
from viewer.core.host import Host
from viewer.core.tuning import Tuning
from viewer.reads import asof
from viewer.web.app import create_app
from viewer.library.library import Library
from viewer.files.file_source import FileSource


def _library(folder, tuning=None):
    library = Library(folder, host=Host(tuning))
    library.scan()
    return library


def test_native_events_are_kept_as_offsets_in_their_file_and_read_back_whole(tmp_path):
    events = [{"message_id": f"m{i}", "event_type": "transcript_entry", "agent_id": "a", "role": "user",
               "content": f"caf\u00e9 {i}", "extra": {"nested": [i, None, True]}} for i in range(50)]
    write_events(tmp_path / "s.jsonl", events)
    s = _library(tmp_path).get("s")
    assert {s.events.kept_as(p) for p in range(s.count)} == {"file"}
    assert [s.events[p] for p in range(s.count)] == events
    assert list(s.events) == events and s.events[-1] == events[-1] and s.events[10:12] == events[10:12]


def test_a_one_off_read_keeps_its_events_parsed_and_still_knows_their_lines(tmp_path):
    """A one-off read (Tuning.one_off: `agentview share` walks every event again): each event stays the dict ingest made, a walk
    gives those very dicts, and each line is still found where it was read."""
    events = [created("m1", "a")] + [say(f"m{i}", "a", f"said {i}") for i in range(2, 40)]
    path = write_events(tmp_path / "s.jsonl", events)
    s = _library(tmp_path, Tuning(one_off=True)).get("s")
    assert {s.events.kept_as(p) for p in range(s.count)} == {"dict"}
    walked = s.events.walk(0, s.count)
    assert walked == events and all(walked[p] is s.events[p] for p in range(s.count))
    lines = path.read_bytes().splitlines()
    assert [s.events.line(p) for p in range(s.count)] == lines


def test_lines_with_blanks_and_crlf_are_read_back_from_the_right_bytes(tmp_path):
    lines = [json.dumps(created("m1", "a")), "  " + json.dumps(say("m2", "a", "padded")) + " \t",
             "", json.dumps(say("m3", "a", "crlf")) + "\r", json.dumps(say("m4", "a", "last"))]
    (tmp_path / "s.jsonl").write_bytes(("\n".join(lines) + "\n").encode())
    s = _library(tmp_path).get("s")
    assert [s.events.kept_as(p) for p in range(s.count)] == ["file"] * 4
    assert [s.events[p].get("content") for p in range(s.count)] == [None, "padded", "crlf", "last"]


def test_appended_lines_are_read_at_their_offsets(tmp_path):
    path = write_events(tmp_path / "s.jsonl", [created("m1", "a")])
    library = _library(tmp_path)
    write_events(path, [say(f"m{i}", "a", f"line {i}") for i in range(2, 40)], mode="a")
    library.refresh(str(path))
    s = library.get("s")
    assert [s.events[p]["message_id"] for p in range(s.count)] == [f"m{i}" for i in range(1, 40)]
    assert s.events[38]["content"] == "line 39"


def test_a_line_with_bytes_that_are_not_utf8_is_kept_as_the_event_shown(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"message_id": "m1", "event_type": "transcript_entry", "agent_id": "a", "role": "user", '
                     b'"content": "bad \xff byte"}\n')
    s = _library(tmp_path).get("s")
    assert s.events.kept_as(0) == "dict" and s.events[0]["content"] == "bad \ufffd byte"


def test_a_changed_event_is_kept_as_changed(tmp_path):
    path = write_events(tmp_path / "s.jsonl", [{"message_id": "m1", "event_type": "agent_created", "agent_id": "a"}])
    s = _library(tmp_path).get("s")
    s.events.materialize(0)["note"] = "kept"
    assert s.events[0]["note"] == "kept" and s.events.kept_as(0) == "dict"
    assert json.loads(path.read_text()) == {"message_id": "m1", "event_type": "agent_created", "agent_id": "a"}


def test_a_gzip_file_keeps_its_lines_bytes(tmp_path):
    with gzip.open(tmp_path / "s.jsonl.gz", "wt") as f:
        f.write(json.dumps(created("m1", "a")) + "\n" + json.dumps(say("m2", "a", "zipped")) + "\n")
    (s,) = _library(tmp_path).sessions.values()
    assert [s.events.kept_as(p) for p in range(2)] == ["bytes", "bytes"] and s.events[1]["content"] == "zipped"


def test_with_one_descriptor_for_all_files_lines_stay_in_their_files_and_read_back(tmp_path):
    for name in ("s", "t", "u"):
        write_events(tmp_path / f"{name}.jsonl", [created("m1", "a"), say("m2", "a", f"said in {name}")])
    library = _library(tmp_path, Tuning(open_files=1))
    for _ in range(2):  # each read closes another file's descriptor and reopens its own
        for name in ("s", "t", "u"):
            s = library.get(name)
            assert [s.events.kept_as(p) for p in range(2)] == ["file", "file"]
            assert s.events.load(1)["content"] == f"said in {name}"
    assert library.host.files.held() == 1


def test_a_file_replaced_under_the_index_still_reads_what_was_indexed_until_read_again(tmp_path):
    path = write_events(tmp_path / "s.jsonl", [created("m1", "a"), say("m2", "a", "first version")])
    library = _library(tmp_path)
    replacement = write_events(tmp_path / "new.tmp", [created("n1", "b"), say("n2", "b", "second version")])
    os.replace(replacement, path)  # an editor's save: a new file (inode) at the same name
    s = library.get("s")
    assert s.events[1]["content"] == "first version"  # the open file is the one indexed
    library.refresh(str(path))
    assert [s.events[p].get("content") for p in range(s.count)] == [None, "second version"]


def test_a_file_rewritten_in_place_shows_a_placeholder_not_a_crash_until_read_again(tmp_path):
    path = write_events(tmp_path / "s.jsonl", [created("m1", "a")] + [say(f"m{i}", "a", f"said {i}") for i in range(2, 6)])
    app = create_app(tmp_path, watch=False)
    s = app.extensions["agentview"].library.get("s")
    path.write_text("x" * 10 + "\n")  # same inode, other bytes: not what the index read
    event = s.events.load(3)
    assert event["event_type"] == "changed_on_disk" and "changed on disk" in event["content"]
    client = app.test_client()
    for url in ("/s/s", "/s/s/agent/a", "/api/sessions/s/events", "/s/s/message/m4"):
        response = client.get(url)
        assert response.status_code in (200, 404), (url, response.status_code)
        assert b"Traceback" not in response.data
    app.extensions["agentview"].library.refresh(str(path))
    assert s.count == 0 and s.problems[0].kind == "invalid_json"


def test_an_as_of_snapshot_shares_the_live_sessions_storage(tmp_path):
    write_events(tmp_path / "s.jsonl", [created("m1", "a")] + [say(f"m{i}", "a", f"said {i}") for i in range(2, 9)])
    s = _library(tmp_path).get("s")
    frozen = asof.snapshot(s, 5)
    assert frozen.count == 5 and [frozen.events.kept_as(p) for p in range(5)] == ["file"] * 5
    assert [frozen.events[p]["message_id"] for p in range(5)] == [f"m{i}" for i in range(1, 6)]


def test_the_cache_keeps_the_events_read_last_within_its_bounds(tmp_path):
    write_events(tmp_path / "s.jsonl", [created("m0", "a")] + [say(f"m{i}", "a", "x" * 10_000) for i in range(1, 30)])
    s = _library(tmp_path, Tuning(event_cache_bytes=50_000)).get("s")
    for p in range(s.count):
        assert s.events[p]["message_id"] == f"m{p}"
        s.events[0]  # read again and again: the least recently read go first, not this one
    cached = list(s.events._cache)
    assert 0 in cached and cached[-1] == 0 and s.count - 1 in cached
    assert sum(s.events._lengths[p] for p in cached) <= 50_000 + 10_100 and len(cached) < 10


def test_a_walk_reads_runs_of_lines_together_and_gives_what_load_gives(tmp_path, monkeypatch):
    """Blank and broken lines between events, a line that is not UTF-8 (kept as a dict), padded lines: a walk
    over any range is exactly the events one by one, in few reads; a line changed on disk since shows as
    changed, as a single read shows it."""
    lines = []
    for i in range(300):
        lines.append(json.dumps(say(f"m{i}", "a", f"words {i} " * (i % 7))))
        if i % 50 == 7:
            lines += ["", "{not json", "   "]
        if i == 100:
            lines.append('{"message_id": "bad", "event_type": "transcript_entry", "agent_id": "a", "role": "user", '
                         '"content": "bad \xff byte"}')
    (tmp_path / "s.jsonl").write_bytes(("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")
                                       .replace("\xff".encode(), b"\xff"))
    s = _library(tmp_path, Tuning(walk_read=4096)).get("s")
    assert s.count == 301 and "dict" in {s.events.kept_as(p) for p in range(s.count)}
    one_by_one = [s.events.load(p) for p in range(s.count)]
    reads = []
    real_read = FileSource.read
    monkeypatch.setattr(FileSource, "read", lambda self, offset, length: reads.append(length) or real_read(self, offset, length))
    for start, stop in [(0, s.count), (5, 6), (99, 103), (250, 301)]:
        assert s.events.walk(start, stop) == one_by_one[start:stop]
    assert len(reads) < s.count / 4 and max(reads) <= 4096  # runs of lines, each read within the bound
    with open(tmp_path / "s.jsonl", "r+b") as f:  # rewrite the 3rd line in place: same length, not JSON
        f.seek(sum(len(line.encode("utf-8", "surrogateescape")) + 1 for line in lines[:2]))
        f.write(b"#" * len(lines[2]))
    walked = s.events.walk(0, 4)
    assert walked[2]["event_type"] == "changed_on_disk" and walked[2] == s.events.load(2)
    assert walked[:2] + walked[3:] == one_by_one[:2] + one_by_one[3:4]


def test_events_read_ahead_are_those_read_one_by_one_and_served_from_the_cache_after(tmp_path):
    """read_ahead reads scattered events of a format's loaders together (each file opened once) into the cache:
    each is what reading it alone gives, and reading it next takes nothing from its file."""
    from claude_lines import Transcript

    session = Transcript("ahead-session", "mn")
    session.user("Plan the work")
    for n in range(30):
        session.response(f"msg_{n}", [{"type": "text", "text": f"step {n} of the plan"},
                                      {"type": "tool_use", "id": f"toolu_{n}", "name": "Read",
                                       "input": {"file_path": f"/src/{n}.py"}}])
        session.result(f"toolu_{n}", f"contents of {n}.py")
    path = session.write(tmp_path / "-home-dev-app" / "ahead-session.jsonl")
    s = _library(tmp_path).get("-home-dev-app:ahead-session")
    scattered = [p for p in range(s.count) if s.events.kept_as(p) == "loader"][::3]
    assert len(scattered) > 10
    alone = {p: s.events.load(p) for p in scattered}
    s.events.forget_cached()
    s.events.read_ahead(scattered[::-1])  # in any order
    os.rename(path, tmp_path / "gone.jsonl")  # a read from the file now shows it changed
    assert {p: s.events[p] for p in scattered} == alone
    assert all("file changed" not in (event.get("markers") or ()) for event in alone.values())


def test_parts_taken_back_encoded_are_decoded_when_first_read_and_equal_those_taken_back_at_once(tmp_path):
    """A woken session's events (index_state.restore): counted at once, decoded only when a slot is first read."""
    import marshal

    from viewer.files.eventlist import EventList

    events = [created("m1", "a")] + [say(f"m{i}", "a", f"said {i}") for i in range(2, 40)]
    write_events(tmp_path / "s.jsonl", events)
    s = _library(tmp_path).get("s")
    parts = [s.events.part(start, start + 15) for start in range(0, s.count, 15)]
    at_once, later = EventList(), EventList()
    paused = []
    for part in parts:
        at_once.extend(part)
        later.extend_later(marshal.dumps(part), len(part[0]), paused=lambda: paused.append(1) or s.host.gc.batch())
    later.read_from(s.events.file_spans(0, 1)[0])
    at_once.read_from(s.events.file_spans(0, 1)[0])
    assert len(later) == len(events) and later and later._later is not None  # counted, nothing decoded
    assert later[5] == events[5] and later._later is None and paused == [1]  # the first read decoded every part
    assert list(later) == list(at_once) == events and later.part(0, 40) == at_once.part(0, 40)
    later.extend_later(marshal.dumps(parts[0]), len(parts[0][0]))  # onto slots already read: taken at once
    assert later._later is None and len(later) == len(events) + 15 and later[len(events)] == events[0]
