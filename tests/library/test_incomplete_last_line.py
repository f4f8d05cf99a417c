"""A Claude Code session whose last line stops in the middle of a record, served live by a real server with its
watcher: once the file has been idle for Tuning.incomplete_after it is one `incomplete_last_line` problem, on the
session and in its row on `/` (an open `/` page's poll sees it), never reported twice; when the rest of the line
is written the problem goes and the record is read. The session is a group (main file and a 2.0.x agent file)."""

from __future__ import annotations

import json
import os
import time
import urllib.request

import pytest
from claude_lines import Transcript
from conftest import serve_app, wait_for
from events import scanned
from test_formats_claude_unlinked import PROJECT, WARMED, write_warmed_sessions
from viewer.core.tuning import Tuning
from viewer.web.app import close_app, create_app
from viewer.web.state import KEY

SESSION = next(iter(WARMED))
SID = f"{PROJECT}:{SESSION}"


@pytest.fixture
def served(tmp_path):
    """A real server with its watcher on `tmp_path`, an open last line reported after a second."""
    write_warmed_sessions(tmp_path)
    app = create_app(tmp_path, tuning=Tuning(incomplete_after=1.0))
    try:
        with serve_app(app) as url:
            yield tmp_path, app.extensions[KEY].library, url
    finally:
        close_app(app)


def age(path, seconds: float = 60.0) -> None:
    """The file as if last written `seconds` ago."""
    then = time.time() - seconds
    os.utime(path, (then, then))


def get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status, response.read().decode()


def problems(url: str) -> list[str]:
    return [p["kind"] for p in json.loads(get(f"{url}/api/sessions/{SID}/problems")[1])["problems"]]


def row(url: str) -> dict:
    return next(r for r in json.loads(get(f"{url}/api/sessions")[1])["sessions"] if r["id"] == SID)


def test_a_record_cut_short_is_reported_once_idle_and_goes_when_its_line_is_finished(served):
    folder, library, url = served
    wait_for(lambda: library.get(SID) is not None and library.get(SID).count >= 5, timeout=10)
    seen = library.version  # what an open `/` page last drew
    main = folder / PROJECT / f"{SESSION}.jsonl"
    t = Transcript(SESSION, "late")
    t.n = 40
    record = json.dumps(t.user("And the tests too")) + "\n"
    cut = len(record) // 2
    with open(main, "a") as f:
        f.write(record[:cut])
    wait_for(lambda: problems(url) == ["incomplete_last_line"], timeout=10)
    assert time.time() - main.stat().st_mtime >= 1.0  # not before the file was idle that long
    assert row(url)["problems"] == 1
    status, page = get(f"{url}/poll/sessions?v={seen}")
    assert status == 200 and 'class="badge warn"' in page  # `/` redraws with the count
    for _ in range(3):  # more looks at the idle file (the watcher's, and these) report nothing more
        library.refresh(str(main))
    assert problems(url) == ["incomplete_last_line"] and row(url)["problems"] == 1
    count = library.get(SID).count
    with open(main, "a") as f:
        f.write(record[cut:])
    wait_for(lambda: problems(url) == [], timeout=10)
    wait_for(lambda: library.get(SID).count == count + 1, timeout=10)
    assert library.get(SID).event("late-0041")["content"] == "And the tests too"
    assert row(url)["problems"] == 0


def test_a_cut_record_that_grows_but_stays_cut_is_still_one_problem(tmp_path):
    write_warmed_sessions(tmp_path)
    main = tmp_path / PROJECT / f"{SESSION}.jsonl"
    with open(main, "a") as f:
        f.write('{"parentUuid": "132b2f66-0002", "isSidechain": false, "type": "user", "message": {"role": "us')
    age(main)
    library = scanned(tmp_path, Tuning(incomplete_after=5.0))
    s = library.get(SID)
    assert [p.kind for p in s.problems] == ["incomplete_last_line"]
    with open(main, "a") as f:
        f.write('er", "content": "And the')
    library.refresh(str(main))
    assert s.problems == []  # it grew: judged again once idle
    age(main)
    for _ in range(3):
        library.refresh(str(main))
    assert [p.kind for p in s.problems] == ["incomplete_last_line"] and s.problem_count == 1
    assert "117 bytes" in s.problems[0].detail  # what is there now


def test_a_restart_taking_the_session_from_the_cache_does_not_report_it_again(tmp_path):
    from test_group_cache import read_what_is_due, run

    root = tmp_path / "root"
    write_warmed_sessions(root)
    main = root / PROJECT / f"{SESSION}.jsonl"
    with open(main, "a") as f:
        f.write('{"parentUuid": "132b2f66-0002", "isSidechain": false, "type": "user", "message": {"role": "us')
    for path in (root / PROJECT).iterdir():
        age(path, 7200)  # left alone: the session settles and is kept
    tuning = Tuning(settle_after=60.0)
    assert [p.kind for p in run(root, tmp_path / "cache", tuning=tuning).get(SID).problems] == ["incomplete_last_line"]
    again = run(root, tmp_path / "cache", tuning=tuning)
    s = again.get(SID)
    assert again.cache.restored == 2
    for _ in range(2):
        again.refresh(str(main))  # the file looked at again (its tailer goes on from where it was kept)
    assert [p.kind for p in s.problems] == ["incomplete_last_line"] and s.problem_count == 1
    with open(main, "a") as f:
        f.write('er", "content": "And the tests too"}, "uuid": "late-0041", "timestamp": "2026-01-06T10:00:00.000Z"}\n')
    again.refresh(str(main))
    read_what_is_due(again)
    assert s.problems == [] and s.event("late-0041")["content"] == "And the tests too"
