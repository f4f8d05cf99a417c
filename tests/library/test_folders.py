"""Folders that cannot be read, or are too deep, are listed as problems of the folder; nothing crashes.

Permission tests run the server as user nobody when we are root (root reads any folder), on a folder
in /tmp that nobody may traverse (tests/other_user.py).
"""

import json
import os
import shutil
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import serve, wait_for, write_events
from events import cut_chain, make_chain, scanned, user
from other_user import as_other_user
from viewer.library.folders import MAX_FOLDER_DEPTH
from viewer.library.watcher import SWEEP_EVERY


def _get(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.status == 200
        return response.read().decode("utf-8")


def _sessions(server):
    return json.loads(_get(f"{server.url}/api/sessions"))


@pytest.fixture
def open_folder():
    """A folder in /tmp that anyone may traverse (pytest's tmp_path is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="agentview-folders-"))
    folder.chmod(0o755)
    yield folder
    for path, dirs, _ in os.walk(folder):
        for name in dirs:
            os.chmod(os.path.join(path, name), 0o755)
    shutil.rmtree(folder)


def _readable_session(path: Path, message_id: str) -> None:
    write_events(path, [user(message_id, "main", "hello")])
    path.chmod(0o644)
    for parent in path.parents:
        if parent == Path(tempfile.gettempdir()):
            break
        parent.chmod(0o755)


def test_a_folder_that_cannot_be_read_is_a_problem_on_the_sessions_page(open_folder):
    _readable_session(open_folder / "ok.jsonl", "m1")
    _readable_session(open_folder / "locked" / "hidden.jsonl", "m2")
    _readable_session(open_folder / "team" / "shut" / "deep.jsonl", "m3")
    (open_folder / "locked").chmod(0o700 if os.geteuid() == 0 else 0o000)
    (open_folder / "team" / "shut").chmod(0o700 if os.geteuid() == 0 else 0o000)
    with serve(open_folder, user=as_other_user()) as server:
        server.wait_for_session("ok")
        answer = wait_for(lambda: (a := _sessions(server))["problems"] and len(a["problems"]) == 2 and a)
        assert [s["id"] for s in answer["sessions"]] == ["ok"]
        assert sorted((p["kind"], p["path"]) for p in answer["problems"]) == [
            ("permission_denied", "locked"), ("permission_denied", "team/shut")]
        page = _get(f"{server.url}/")
        assert "2</span> problems in the folder" in page
        assert "<code>locked</code>" in page and "<code>team/shut</code>" in page and "permission_denied" in page

        # readable again: listed, and the problem is gone
        (open_folder / "locked").chmod(0o755)
        server.wait_for_session("locked:hidden")
        assert [(p["kind"], p["path"]) for p in _sessions(server)["problems"]] == [("permission_denied", "team/shut")]
        assert "1</span> problem in the folder" in _get(f"{server.url}/")


@pytest.fixture
def chains():
    """make_chain, and the chains made cut into pieces afterwards (pytest removes tmp_path with rmtree)."""
    made = []

    def make(root: Path, depth: int, name: str = "d") -> None:
        make_chain(root, depth, name)
        made.append((root, name))

    yield make
    for root, name in made:
        if os.path.isdir(root / name):
            cut_chain(root, name)


def _too_deep_path(name: str) -> str:
    return "/".join([name] * (MAX_FOLDER_DEPTH + 1))


def test_a_thousand_folders_deep_is_scanned_without_recursion_and_listed_as_a_problem(tmp_path, chains):
    write_events(tmp_path / "a.jsonl", [user("m1", "main", "hello")])
    chains(tmp_path, 1000, "d")
    write_events(tmp_path / "z" / "b.jsonl", [user("m2", "main", "hello")])  # walked after the deep folder
    write_events(tmp_path / "/".join(["d"] * MAX_FOLDER_DEPTH) / "edge.jsonl", [user("m3", "main", "deepest read")])
    library = scanned(tmp_path)
    assert [s.relpath for s in library.listing()] == [
        "a.jsonl", "/".join(["d"] * MAX_FOLDER_DEPTH) + "/edge.jsonl", "z/b.jsonl"]
    assert [(p.kind, p.path) for p in library.problems] == [("too_deep_folder", _too_deep_path("d"))]
    library.scan()  # again: the same problem, once
    assert len(library.problems) == 1


def test_a_folder_path_longer_than_the_system_allows_is_a_problem(tmp_path, chains):
    write_events(tmp_path / "a.jsonl", [user("m1", "main", "hello")])
    chains(tmp_path, 20, "n" * 250)  # ~5,000 bytes: more than PATH_MAX long before the depth limit
    library = scanned(tmp_path)
    assert [s.relpath for s in library.listing()] == ["a.jsonl"]
    (problem,) = library.problems
    assert problem.kind == "too_deep_folder" and "longer than the system allows" in problem.detail
    assert problem.path.count("/") < 20


def test_a_server_with_a_deep_folder_starts_and_stays_live(tmp_path, chains):
    """Folder names long enough that the path passes PATH_MAX (watchdog's own walk stops there)."""
    name = "f" * 16
    write_events(tmp_path / "a.jsonl", [user("m1", "main", "hello")])
    chains(tmp_path, 1000, name)
    with serve(tmp_path) as server:
        server.wait_for_session("a")
        problems = wait_for(lambda: _sessions(server)["problems"])
        assert [(p["kind"], p["path"]) for p in problems] == [("too_deep_folder", _too_deep_path(name))]
        assert "1</span> problem in the folder" in _get(f"{server.url}/")

        (tmp_path / "later").mkdir()
        # Created while running; 300 levels (5,100 bytes) pass PATH_MAX as surely as 1,000 do, and spare watchdog
        # most of its quadratic re-walk of a chain growing under it.
        chains(tmp_path / "later", 300, name)
        write_events(tmp_path / "a.jsonl", [user("m2", "main", "after")], mode="a")
        # Usually within 1-2 s (benchmarks/folder_walk.py --live). watchdog 7.1 can fall far behind on a chain
        # growing under it; then the watcher's own walk of the folder (every SWEEP_EVERY s) finds the changes.
        server.wait_for_session("a", 2, timeout=2 * SWEEP_EVERY + 10)
        write_events(tmp_path / "b.jsonl", [user("m3", "main", "a new session")])
        server.wait_for_session("b", 1, timeout=2 * SWEEP_EVERY + 10)
        assert server.process.poll() is None
        assert wait_for(lambda: len(_sessions(server)["problems"]) == 2, timeout=2 * SWEEP_EVERY + 10)

        moved_out = tmp_path.parent / f"{tmp_path.name}-moved-out"
        os.rename(tmp_path / name, moved_out)  # gone: so is its problem
        cut_chain(moved_out, name)
        later = "/".join(["later"] + [name] * MAX_FOLDER_DEPTH)  # the first folder more than 64 below DIR
        assert wait_for(lambda: [p["path"] for p in _sessions(server)["problems"]] == [later],
                        timeout=2 * SWEEP_EVERY + 10)


def test_a_server_with_a_thousand_short_folders_starts_and_stays_live(tmp_path, chains):
    # watchdog's recursive walk fails on such a folder (RecursionError, at start and on a new folder): the
    # watcher says so and walks the folder itself instead (see test_watcher_turns)
    write_events(tmp_path / "a.jsonl", [user("m1", "main", "hello")])
    chains(tmp_path, 1000, "d")
    with serve(tmp_path) as server:
        server.wait_for_session("a")
        kinds = [p["kind"] for p in wait_for(lambda: _sessions(server)["problems"])]
        assert [k for k in kinds if k not in ("watcher_restarted", "watcher_failed")] == ["too_deep_folder"]
        (tmp_path / "later").mkdir()
        chains(tmp_path / "later", 1000, "d")
        write_events(tmp_path / "a.jsonl", [user("m2", "main", "after")], mode="a")
        server.wait_for_session("a", 2)


@pytest.mark.parametrize("root", ["/tmp/x", "/", "/tmp/x/", "/home/u/.claude/projects"])
def test_a_path_below_the_folder_is_named_as_os_path_relpath_names_it(root):
    """Folders.relpath takes a quick way for the usual path (a million calls on a big folder): the same answer."""
    import os
    from pathlib import Path

    from viewer.library.folders import Folders

    folders = Folders(root)
    for path in ["/tmp/x", "/tmp/x/a.jsonl", "/tmp/x/a/b/c.jsonl", "/tmp/x/.hidden/a.jsonl", "/tmp/xy/a.jsonl",
                 "/tmp/x/a/", "/tmp", "/tmp/x/\udcff.jsonl", "/tmp/x/a/../b.jsonl", "/tmp/x/a/./b.jsonl"]:
        assert folders.relpath(path) == Path(os.path.relpath(path, folders.root)).as_posix(), (root, path)
    below = os.path.join(folders.root, "")
    for path in [f"{below}a/.b/c.jsonl", f"{below}.a/..b/c.jsonl", f"{below}a/./b.jsonl", f"{below}a/../b.jsonl",
                 f"{below}a//b.jsonl", f"{below}a/.", f"{below}a/.."]:
        assert folders.relpath(path) == Path(os.path.relpath(path, folders.root)).as_posix(), (root, path)


def test_a_folder_below_a_dot_folder_names_its_files_the_quick_way(monkeypatch):
    """~/.claude/projects: the dot-folder above DIR leaves its files named without os.path.relpath (five calls a
    file on a restart of thousands)."""
    import os

    from viewer.library.folders import Folders

    folders = Folders("/home/u/.claude/projects")
    slow = []
    relpath = os.path.relpath
    monkeypatch.setattr(os.path, "relpath", lambda *args: slow.append(args) or relpath(*args))
    assert folders.relpath("/home/u/.claude/projects/-home-u-src/1f2e.jsonl") == "-home-u-src/1f2e.jsonl"
    assert folders.relpath("/home/u/.claude/projects/-home-u-src/1f2e/subagents/agent-a1.jsonl") == (
        "-home-u-src/1f2e/subagents/agent-a1.jsonl")
    assert slow == []


STALL = 5.0  # s: longer than a live update takes on a loaded machine, shorter than the watcher's restarts (9 s)


def test_a_folder_too_deep_made_while_serving_keeps_live_updates_flowing(tmp_path, chains):
    """watchdog's walk of a new folder 1,100 deep fails and its threads die: the watcher starts another and, in
    the end, walks the folder itself. All the while, lines appended to a session show up: none waits for the
    restarts (a stall would last as long as they do, about 9 s; a live update takes well under 1 s at rest, its
    latency is measured by benchmarks/live.py, not here)."""
    write_events(tmp_path / "a.jsonl", [user("m0", "main", "hello")])
    with serve(tmp_path) as server:
        server.wait_for_session("a", 1)
        maker = threading.Thread(target=chains, args=(tmp_path, 1100, "d"))
        maker.start()
        shown_after, until = [], time.monotonic() + 15  # longer than the watcher's restarts took (9 s)
        while maker.is_alive() or time.monotonic() < until:
            written = time.monotonic()
            write_events(tmp_path / "a.jsonl", [user(f"m{len(shown_after) + 1}", "main", "later")], mode="a")
            server.wait_for_session("a", len(shown_after) + 2, timeout=STALL)
            shown_after.append(time.monotonic() - written)
        maker.join()
        print(f"appended lines shown after at most {max(shown_after):.2f} s (of {len(shown_after)})")
        assert max(shown_after) < STALL
        kinds = [p["kind"] for p in wait_for(lambda: _sessions(server)["problems"])]
        assert [k for k in kinds if k not in ("watcher_restarted", "watcher_failed")] == ["too_deep_folder"]
