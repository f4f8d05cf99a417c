"""The ingest thread takes files in turns, and keeps watching whatever fails.

A real `agentview serve` process on real files.
"""

import json
import statistics
import os
import time
import urllib.request
from contextlib import contextmanager

from conftest import serve, wait_for, write_events
from events import cut_chain, make_chain
from viewer.library.library import Library
from viewer.library.watcher import RESCAN_EVERY, Watcher

LINE = ('{"message_id": "a%07d", "event_type": "transcript_entry", "agent_id": "agent_a", "role": "assistant", '
        '"content": "' + "lorem ipsum dolor sit amet " * 9 + '"}\n')


def get_json(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def events_of(server, session_id):
    try:
        return get_json(f"{server.url}/api/sessions/{session_id}")["events"]
    except urllib.error.HTTPError:
        return 0


def test_a_line_appended_to_one_session_shows_while_a_big_file_is_still_being_read(tmp_path):
    folder = tmp_path / "sessions"
    write_events(folder / "b.jsonl", [{"message_id": "b1", "event_type": "transcript_entry", "agent_id": "agent_b",
                                       "role": "user", "content": "first"}])
    big = tmp_path / "a.jsonl"  # written outside, then moved in whole: one event for the watcher
    count = 600_000  # about 200 MB: seconds of reading on any machine
    with open(big, "w") as f:
        for start in range(0, count, 10_000):
            f.write("".join(LINE % n for n in range(start, start + 10_000)))
    with serve(folder) as server:
        server.wait_for_session("b", events=1)
        os.rename(big, folder / "a.jsonl")
        wait_for(lambda: events_of(server, "a") > 0, timeout=30)  # listed while it is read, not once read whole
        with open(folder / "b.jsonl", "a") as f:
            f.write(json.dumps({"message_id": "b2", "event_type": "transcript_entry", "agent_id": "agent_b",
                                "role": "assistant", "content": "second"}) + "\n")
        appended = time.monotonic()
        wait_for(lambda: events_of(server, "b") == 2, timeout=10, interval=0.02)
        shown_after = time.monotonic() - appended
        read_of_a = events_of(server, "a")
        assert shown_after < 2, shown_after
        assert read_of_a < count, "the big file was read whole before the other session's line"
        wait_for(lambda: events_of(server, "a") == count, timeout=120, interval=0.5)
        a = get_json(f"{server.url}/api/sessions/a/events?after=0-{count - 3}")
        assert [e["message_id"] for e in a["events"]] == [f"a{n:07d}" for n in range(count - 3, count)]


def library_problems(server):
    return get_json(f"{server.url}/api/sessions")["problems"]


def append_b(folder, n):
    with open(folder / "b.jsonl", "a") as f:
        f.write(json.dumps({"message_id": f"b{n}", "event_type": "transcript_entry", "agent_id": "agent_b",
                            "role": "assistant", "content": f"line {n}"}) + "\n")


def test_a_folder_watchdog_cannot_watch_is_walked_instead_and_said_so(tmp_path):
    folder = tmp_path / "sessions"
    write_events(folder / "b.jsonl", [{"message_id": "b1", "event_type": "transcript_entry", "agent_id": "agent_b",
                                       "role": "user", "content": "first"}])
    (folder / "deep").mkdir()
    make_chain(folder / "deep", 1_000)  # watchdog's recursive walk of it raises RecursionError
    try:
        check_walked_instead(folder)
    finally:
        cut_chain(folder / "deep")


def test_a_session_file_a_symlink_leads_to_is_hot_when_the_file_was_written_not_the_link(tmp_path):
    folder, outside = tmp_path / "sessions", tmp_path / "elsewhere"
    target = write_events(outside / "b.jsonl", [{"message_id": "b1", "event_type": "transcript_entry",
                                                 "agent_id": "agent_b", "role": "user", "content": "first"}])
    folder.mkdir()
    (folder / "b.jsonl").symlink_to(target)
    long_ago = time.time() - 3600
    os.utime(folder / "b.jsonl", (long_ago, long_ago), follow_symlinks=False)  # the link was made long ago
    (folder / "deep").mkdir()
    make_chain(folder / "deep", 1_000)
    try:
        check_walked_instead(folder, "--follow-symlinks")
    finally:
        cut_chain(folder / "deep")


def test_of_more_files_written_lately_than_are_hot_the_latest_written_are(tmp_path):
    from viewer.library.watcher import HOT_FILES

    folder = tmp_path / "sessions"
    for n in range(HOT_FILES + 16):  # written lately too, but before b; read after it (names in order)
        write_events(folder / f"c{n:03d}.jsonl", [{"message_id": f"c{n}", "event_type": "agent_created",
                                                   "agent_id": "agent_c"}])
    write_events(folder / "b.jsonl", [{"message_id": "b1", "event_type": "transcript_entry", "agent_id": "agent_b",
                                       "role": "user", "content": "first"}])
    (folder / "deep").mkdir()
    make_chain(folder / "deep", 1_000)
    try:
        check_walked_instead(folder)
    finally:
        cut_chain(folder / "deep")


def check_walked_instead(folder, *flags):
    with serve(folder, *flags) as server:
        server.wait_for_session("b", events=1, timeout=30)
        kinds = wait_for(lambda: {p["kind"] for p in library_problems(server)} >= {"watcher_failed"} and
                         {p["kind"] for p in library_problems(server)}, timeout=30)
        assert "watcher_restarted" in kinds
        append_b(folder, 2)  # still live: the folder is walked on a timer
        wait_for(lambda: events_of(server, "b") == 2, timeout=30)  # the next walk, on a loaded machine too
        # The walk found b written lately: it is looked at as often as a file the observer told of, so its next
        # lines show long before the next walk (RESCAN_EVERY), not at it.
        waited = []
        for n in range(3, 8):
            written = time.monotonic()
            append_b(folder, n)
            wait_for(lambda: events_of(server, "b") == n, timeout=30)
            waited.append(time.monotonic() - written)
        assert statistics.median(waited) < RESCAN_EVERY * 0.6, waited
        with urllib.request.urlopen(f"{server.url}/", timeout=10) as response:
            page = response.read().decode()
        assert "folder watcher" in page


class FailsOnce(Library):
    """A library whose refresh of one file fails the way nothing in it should: the thread must go on anyway."""

    failure: BaseException | None = None

    def refresh(self, path, entry=None):  # a walk gives its entry of the file too
        if path.endswith("boom.jsonl") and self.failure is not None:
            failure, self.failure = self.failure, None
            raise failure
        return super().refresh(path, entry)


@contextmanager
def watching(folder, library_class):
    """A watched folder of one session (b, one event): (its library of `library_class`, its started Watcher)."""
    write_events(folder / "b.jsonl", [{"message_id": "b1", "event_type": "transcript_entry", "agent_id": "agent_b",
                                       "role": "user", "content": "first"}])
    library = library_class(folder)
    watcher = Watcher(library).start()
    try:
        assert watcher.ready.wait(10) and watcher.watching.wait(10)
        yield library, watcher
    finally:
        watcher.stop()


def test_the_ingest_thread_outlives_what_kills_a_thread(tmp_path):
    with watching(tmp_path, FailsOnce) as (library, watcher):
        library.failure = SystemExit("a library that exits")  # not an Exception: ends the thread it is raised in
        write_events(tmp_path / "boom.jsonl", [{"message_id": "x", "event_type": "agent_created", "agent_id": "x"}])
        wait_for(lambda: not watcher._thread.is_alive(), timeout=30)
        append_b(tmp_path, 2)
        watcher.ensure_alive()  # what every sessions page asks
        wait_for(lambda: library.get("b") is not None and library.get("b").count == 2, timeout=30)
        assert "ingest_restarted" in {p.kind for p in library.problems}
        wait_for(lambda: library.get("boom") is not None, timeout=30)  # read on the new thread's first scan (after b)


class SlowWalk(Library):
    """A library whose walk of the folder costs `burn` seconds of the ingest thread's CPU, as a big folder's does."""

    burn = 0.0

    def paths_below(self, folder):
        end = time.thread_time() + self.burn
        while time.thread_time() < end:
            pass
        return super().paths_below(folder)


def test_the_folder_is_walked_as_seldom_as_keeps_its_walks_to_a_small_share_of_a_core(tmp_path):
    from viewer.library.watcher import SWEEP_AT_MOST, SWEEP_EVERY, SWEEP_SHARE

    with watching(tmp_path, SlowWalk) as (library, watcher):
        def walk_now(burn, then):
            """Make a walk due that costs `burn` s of CPU; `then(wait)`: what the wait after it must be."""
            library.burn = burn
            watcher._last_walk = -SWEEP_AT_MOST  # due: the ingest thread walks at its next look
            watcher.mark(str(tmp_path / "b.jsonl"))
            wait_for(lambda: watcher._last_walk > 0 and then(watcher._sweep_every), timeout=30)

        assert watcher._sweep_every == SWEEP_EVERY  # a small folder's first scan costs little: the usual wait
        walk_now(0.3, lambda wait: 0.3 / SWEEP_SHARE <= wait < SWEEP_AT_MOST)  # 0.3 s of CPU: 30 s or more to the next
        walk_now(SWEEP_AT_MOST * SWEEP_SHARE + 0.5, lambda wait: wait == SWEEP_AT_MOST)  # never longer than that
        walk_now(0.0, lambda wait: wait == SWEEP_EVERY)
