"""Loading and empty states: a file read part way says how far; a session without readable events says so."""

from __future__ import annotations

import json

from conftest import write_events
from events import created, say
from viewer.core.host import Host
from viewer.core.tuning import Tuning
from viewer.library import library as library_module
from viewer.library.groups import Groups
from viewer.web.app import create_app
from viewer.web.state import KEY


def big_session(path, n=200):
    return write_events(path, [created("c0", "root", name="Root")] +
                        [say(f"m{i}", "root", f"answer {i} " + "x" * 80) for i in range(n)])


def test_progress_tells_how_far_a_file_read_in_slices_is(tmp_path):
    path = big_session(tmp_path / "big.jsonl")
    lib = library_module.Library(tmp_path, host=Host(Tuning(batch_bytes=4096)))
    lib.slices_per_read = 1
    lib.refresh(str(path))
    progress = lib.progress()
    assert list(progress) == ["big.jsonl"]
    assert 0 < progress["big.jsonl"]["read"] < progress["big.jsonl"]["size"] == path.stat().st_size
    assert lib.progress_of(str(path)) == progress["big.jsonl"]  # one file's, as its session page asks
    while lib.take_unfinished():
        lib.refresh(str(path))
    assert lib.progress() == {} and lib.progress_of(str(path)) is None
    assert lib.get("big").count == 201


def test_pages_say_a_file_is_being_read(tmp_path):
    app = create_app(tmp_path, watch=False, tuning=Tuning(batch_bytes=4096))
    lib = app.extensions[KEY].library
    lib.slices_per_read = 1
    path = big_session(tmp_path / "big.jsonl")
    lib.refresh(str(path))
    client = app.test_client()
    index = client.get("/").get_data(as_text=True)
    assert "reading <code>big.jsonl</code>:" in index and f"of {path.stat().st_size:,} bytes" in index
    assert "-reading" in index  # the list keeps polling while a file is read
    session = client.get("/s/big").get_data(as_text=True)
    assert "reading the file:" in session
    while lib.take_unfinished():
        lib.refresh(str(path))
    assert "reading the file" not in client.get("/s/big").get_data(as_text=True)


def test_a_session_without_readable_events_says_so(tmp_path):
    (tmp_path / "broken.jsonl").write_text("{not json\n" + json.dumps({"x": 1})[:-1] + "\n", encoding="utf-8")
    client = create_app(tmp_path, watch=False).test_client()
    page = client.get("/s/broken").get_data(as_text=True)
    assert "No readable events — <a href=\"/s/broken/problems\">2 problems</a>" in page
    assert 'id="av-tree"' not in page and 'id="av-at"' not in page and "Expand all" not in page


def test_a_poll_of_a_page_without_events_reloads_it_once_events_come(tmp_path):
    path = tmp_path / "late.jsonl"
    path.write_text("{not json\n", encoding="utf-8")
    app = create_app(tmp_path, watch=False)
    client = app.test_client()
    page = client.get("/s/late").get_data(as_text=True)
    poll = page.split('hx-get="')[-1].split('"')[0].replace("&amp;", "&")
    assert client.get(poll).status_code == 204
    write_events(path, [say("m1", "root", "now there is one")], mode="a")
    app.extensions[KEY].library.refresh(str(path))
    answer = client.get(poll)
    assert answer.headers.get("HX-Refresh") == "true"


def test_a_scan_lists_every_claude_code_session_before_reading_any_and_they_say_they_are_being_read(tmp_path,
                                                                                                     monkeypatch):
    """A folder of many Claude Code sessions: each is on `/` as soon as the scan has found it (0 events, "reading
    the file: 0 of N bytes"), not only once its files are read, which takes minutes for thousands of them."""
    from claude_lines import Transcript

    project = tmp_path / "-home-dev-app"
    sessions = [f"0000000{i}-aaaa-bbbb-cccc-dddddddddddd" for i in range(3)]
    for sid in sessions:
        transcript = Transcript(sid)
        transcript.user("hello")
        transcript.write(project / f"{sid}.jsonl")
    lib = library_module.Library(tmp_path)
    seen = []
    read_group = Groups.read

    def watched(self, session):
        if not seen:  # the first group read: what is listed then, and what its page would say
            seen.append(({s.id: s.count for s in lib.sessions.values()},
                         [lib.progress_of(s.path) for s in lib.sessions.values()]))
        read_group(self, session)

    monkeypatch.setattr(Groups, "read", watched)
    lib.scan()
    listed, progress = seen[0]
    assert len(listed) == 3 and set(listed.values()) == {0}
    assert all(p == {"read": 0, "size": (project / f"{sid}.jsonl").stat().st_size}
               for p, sid in zip(progress, sorted(sessions)))
    assert all(s.count > 0 for s in lib.sessions.values())  # and then read
    assert all(lib.progress_of(s.path) is None for s in lib.sessions.values())


def test_a_scan_reads_the_sessions_written_last_first(tmp_path, monkeypatch):
    """Of thousands of Claude Code sessions, those worked in last are read, and so searchable, first."""
    import os

    from claude_lines import Transcript

    project = tmp_path / "-home-dev-app"
    written = {"00000001-aaaa-bbbb-cccc-dddddddddddd": 100, "00000002-aaaa-bbbb-cccc-dddddddddddd": 300,
               "00000003-aaaa-bbbb-cccc-dddddddddddd": 200}
    for sid, when in written.items():
        transcript = Transcript(sid)
        transcript.user("hello")
        path = transcript.write(project / f"{sid}.jsonl")
        os.utime(path, (1_700_000_000 + when,) * 2)
    lib = library_module.Library(tmp_path)
    read, read_group = [], Groups.read
    monkeypatch.setattr(Groups, "read", lambda self, session: read.append(session.id) or read_group(self, session))
    lib.scan()
    assert [next(sid for sid in written if sid in id_read) for id_read in read] == sorted(written, key=written.get,
                                                                                         reverse=True)
