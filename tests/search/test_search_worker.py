"""The words of a big session's search index, built in a worker process, make exactly the index built in-process:
for varied sessions, when runs fail or the worker dies, and when the file is read again meanwhile."""

import json
import os
import signal
import subprocess
import threading
import time
import urllib.request

import pytest

from conftest import SAMPLES, serve, wait_for, write_events
from events import calls, created, entry, result, tool_call, user
from viewer.library import background
from viewer.search import query as search, index as search_index, worker as search_worker
from viewer.library.library import Library
from viewer.search.index import called_tool_names


def _varied(folder):
    """The research team sample, then events the index treats each its own way: an agent whose first event
    precedes its creation, tool calls and results, non-ASCII words, blank and broken lines, a line that is not
    UTF-8 (kept as a dict: its run is indexed in-process)."""
    lines = (SAMPLES / "research_team.jsonl").read_bytes().splitlines()
    extra = [user("x1", "late", "Zürich straße naïve café 東京 words"),
             created("x2", "late", name="Late Agent"),
             entry("x3", "late", "assistant", "calling", tool_calls=[
                 {"id": "c1", "type": "function", "function": {"name": "web_search", "arguments": '{"q": "hörbar"}'}}]),
             entry("x4", "late", "tool", "found it", tool_call_id="c1", name="web_search")]
    lines += [json.dumps(e).encode() for e in extra]
    lines += [b"", b"{broken", b"   "]
    lines.append(b'{"message_id": "x5", "event_type": "transcript_entry", "agent_id": "late", "role": "user", '
                 b'"content": "bad \xff byte"}')
    lines += [json.dumps(user(f"y{i}", f"agent_{i % 4}", f"more words {i} with café {i % 7}")).encode()
              for i in range(200)]
    path = folder / "s.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _index(folder, words=None):
    library = Library(folder)
    library.scan()
    while background.index_step(library, words=words):
        pass
    return library


def _state(library):
    s = library.get("s")
    index = s.search
    return {"indexed": index.indexed, "count": s.count,
            "postings": {token: list(positions) for token, positions in index._postings.items() if positions},
            "vocabulary": {key: sorted(words) for key, words in index.vocabulary.items()},
            "classes": {key: list(positions) for key, positions in index._class_of.items()},
            "searches": [[hit["message_id"] for hit in search.search(library.listing(), q)["hits"]]
                         for q in ("café", "web_search", "agent:late", "tool:web_search", "late", "東京", "more")]}


@pytest.fixture
def worker():
    words = search_worker.WordWorker(min_behind=1, job_events=7)
    yield words
    words.stop()


def test_the_worker_builds_the_same_index_as_the_server(tmp_path, worker):
    _varied(tmp_path)
    alone = _state(_index(tmp_path))
    helped = _state(_index(tmp_path, worker))
    assert helped == alone
    assert alone["indexed"] == alone["count"] > 500
    assert worker.merged > 50 and worker.left >= 1  # it built the runs, but the one holding a line kept as a dict


def test_several_worker_processes_build_the_same_index_as_the_server(tmp_path):
    """Runs go to whichever process is free (a core each): merged in order, they make the same index."""
    _varied(tmp_path)
    alone = _state(_index(tmp_path))
    words = search_worker.WordWorker(min_behind=1, job_events=5, processes=3)
    try:
        helped = _state(_index(tmp_path, words))
        answered = [process.answered for process in words._processes]
        popens = [process.popen for process in words._processes]
    finally:
        words.stop()
    assert all(popen.returncode is not None for popen in popens)  # stopped, and reaped
    assert wait_for(lambda: not [t for t in threading.enumerate() if t.name.startswith("agentview-search")] or None,
                    timeout=5)
    assert helped == alone
    assert len(answered) == 3 and min(answered) > 0, answered  # each process built runs
    assert words.merged > 80


@pytest.mark.parametrize(("cores", "processes", "spare"), [(1, 1, False), (2, 2, False), (3, 3, False),
                                                          (16, 4, True)])
def test_one_worker_process_a_core_at_most_four(cores, processes, spare):
    assert search_worker.worker_count(cores) == processes
    assert search_worker.WordWorker(available=cores).spares_a_core is spare  # a core left for the facets beside them


def test_the_cores_are_those_this_process_may_run_on():
    assert search_worker.cores() == len(os.sched_getaffinity(0)) >= 1


def _tool_answers(folder):
    """Tool results whose calls the index finds each its own way: an id used again (the latest call before the
    result answers), another agent's call with the same id, an entry that answers a call it makes itself, a call
    in an event that is no transcript entry (filed nowhere), an id that is not a string, a result with no call,
    and calls a little and far before their results (within a run of the worker, and runs before it)."""
    events = [created("t0", "ann", name="Ann"), created("t1", "bob", name="Bob"),
              calls("t2", "ann", tool_call("c1", "read_file", path="a")),
              calls("t3", "bob", tool_call("c1", "write_file", path="b")),
              result("t4", "ann", "c1", "read a", name="r"),
              calls("t5", "ann", tool_call("c1", "grep", pattern="x"), tool_call("c2", "ls")),
              result("t6", "ann", "c1", "grepped", name="r"),
              result("t7", "ann", "c2", "listed", name="r"),
              entry("t8", "ann", "tool", "both", tool_call_id="c3", name="r", tool_calls=[tool_call("c3", "self_tool")]),
              {**created("t9", "cat", name="Cat"), "tool_calls": [tool_call("c4", "hidden_tool")]},
              result("t10", "cat", "c4", "no call filed", name="r"),
              entry("t11", "ann", "tool", "odd id", tool_call_id=5, name="r"),
              result("t12", "bob", "c9", "dangling", name="r"),
              calls("t13", "bob", tool_call("c5", "far_tool"))]
    events += [user(f"f{i}", "bob", f"filler {i}") for i in range(40)]
    events += [result("t14", "bob", "c5", "far answer", name="r"), result("t15", "ann", "c2", "again", name="r")]
    write_events(folder / "s.jsonl", events)


@pytest.mark.parametrize("job_events", [3, 64])
def test_tool_results_are_filed_under_their_calls_tools_by_the_worker_as_in_process(tmp_path, job_events):
    _tool_answers(tmp_path)
    alone = _index(tmp_path)
    words = search_worker.WordWorker(min_behind=1, job_events=job_events)
    try:
        helped = _index(tmp_path, words)
    finally:
        words.stop()
    assert _state(helped) == _state(alone) and words.merged >= 1
    found = {q: [hit["message_id"] for hit in search.search(helped.listing(), q)["hits"]]
             for q in ("tool:grep", "tool:read_file", "tool:ls", "tool:self_tool", "tool:hidden_tool", "tool:far_tool",
                       "tool:write_file")}
    assert found == {"tool:grep": ["t5", "t6"], "tool:read_file": ["t2", "t4"], "tool:ls": ["t5", "t7", "t15"],
                     "tool:self_tool": ["t8"], "tool:hidden_tool": ["t9"], "tool:far_tool": ["t13", "t14"],
                     "tool:write_file": ["t3"]}


def test_a_run_finds_the_calls_its_results_answer_within_it(tmp_path):
    """What the worker sends beside a run's words: the tools of each result's call found in the run itself; the
    results whose call is not (or is filed nowhere) are left to the session's index."""
    _tool_answers(tmp_path)
    events = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    fields = list(map(search_index.event_fields, events))
    assert search_index.calls_answered_within(events, fields) == {
        4: {"read_file"}, 6: {"grep"}, 7: {"ls"}, 8: {"self_tool"}, 54: {"far_tool"}, 55: {"ls"}}
    assert search_index.calls_answered_within(events[13:], fields[13:]) == {41: {"far_tool"}}  # t15's call is before


def test_merging_a_run_looks_up_only_the_calls_not_in_it(tmp_path, monkeypatch):
    """The point of sending them: a result whose call is in its run costs the merge no lookup in the session (for a
    big file, no read of the call's line back from disk)."""
    _tool_answers(tmp_path)
    library = Library(tmp_path)
    library.scan()
    s = library.get("s")
    s.search.catch_up(s.count, 5)  # the worker's one run starts at event 5: t4's call is before it, t6's in it
    looked_up = []
    monkeypatch.setattr(search_index, "called_tool_names",
                        lambda s, position, *rest: looked_up.append(position) or called_tool_names(s, position, *rest))
    words = search_worker.WordWorker(min_behind=1, job_events=64)
    try:
        while s.search.indexed < s.count:
            if words.step(s) is None:
                words.wait(5)
    finally:
        words.stop()
    assert words.merged == 1
    assert looked_up == [10, 11, 12]  # a call filed nowhere, an id not a string, no call


def test_handing_out_runs_never_waits_for_the_worker(tmp_path):
    """The ingest thread hands out runs ahead of the worker, which reads the next only once it has built one: a
    worker reading none (stopped here) must not hold the ingest thread. The runs out take more than a pipe holds
    (IN_FLIGHT runs of 2,000 events, 24 KB of offsets and lengths each)."""
    job_events = 2000
    count = search_worker.IN_FLIGHT * job_events + 10
    write_events(tmp_path / "s.jsonl", [user(f"m{i}", "a", f"word{i % 50}") for i in range(count)])
    library = Library(tmp_path)
    library.scan()
    s = library.get("s")
    words = search_worker.WordWorker(min_behind=1, job_events=job_events)
    try:
        assert words._start()
        for pid in words.pids():
            os.kill(pid, signal.SIGSTOP)
        handing = threading.Thread(target=words.step, args=(s,), daemon=True)
        handing.start()
        handing.join(timeout=10)
        assert not handing.is_alive(), "handing out runs waited for the worker"
        assert len(words._runs) == search_worker.IN_FLIGHT
        for pid in words.pids():
            os.kill(pid, signal.SIGCONT)
        while s.search.indexed < s.count:
            if words.step(s) is None:
                words.wait(5)
    finally:
        for pid in words.pids():
            os.kill(pid, signal.SIGCONT)
        words.stop()
    assert (words.merged, words.left) == (search_worker.IN_FLIGHT + 1, 0)  # every run built by the worker
    assert [hit["message_id"] for hit in search.search(library.listing(), "word7")["hits"]][:2] == ["m7", "m57"]


def test_stopping_with_runs_unanswered_leaves_nothing_behind(tmp_path):
    """The server stops while every worker holds runs it has not answered (stopped here, so it never will): each
    process is ended and reaped, and no thread talking to one is left."""
    write_events(tmp_path / "s.jsonl", [user(f"m{i}", "a", f"word{i % 50}") for i in range(3000)])
    library = Library(tmp_path)
    library.scan()
    words = search_worker.WordWorker(min_behind=1, job_events=100, processes=2)
    assert words._start()
    popens = [process.popen for process in words._processes]
    for pid in words.pids():
        os.kill(pid, signal.SIGSTOP)
    words.step(library.get("s"))
    full = 2 * search_worker.AHEAD
    assert wait_for(lambda: sum(process.sent for process in words._processes) == full or None)
    words.stop()
    assert all(popen.returncode is not None for popen in popens)
    assert wait_for(lambda: not [t for t in threading.enumerate() if t.name.startswith("agentview-search")] or None,
                    timeout=5)


def test_runs_the_worker_cannot_build_and_a_dead_worker_leave_the_server_to_it(tmp_path, worker):
    _varied(tmp_path)
    alone = _state(_index(tmp_path))
    library = Library(tmp_path)
    library.scan()
    s = library.get("s")
    while s.search.indexed < 100:
        background.index_step(library, words=worker)
    os.kill(worker.pids()[0], signal.SIGKILL)  # mid-way, runs handed out and not answered
    while background.index_step(library, words=worker):
        pass
    assert _state(library) == alone
    assert worker._broken


def test_a_file_read_again_while_runs_are_out_is_indexed_as_it_is_now(tmp_path, worker):
    path = _varied(tmp_path)
    library = Library(tmp_path)
    library.scan()
    s = library.get("s")
    background.index_step(library, words=worker)  # runs handed out for what the file held
    assert worker._runs
    events = [user(f"n{i}", "b", f"new content {i} replaced") for i in range(300)]
    write_events(path, events)  # rewritten: shorter, other words
    os.utime(path, (time.time() + 5, time.time() + 5))
    library.refresh(str(path))
    assert library.get("s").count == 300
    while background.index_step(library, words=worker):
        pass
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    write_events(fresh / "s.jsonl", events)
    assert _state(library) == _state(_index(fresh))
    assert "café" not in library.get("s").search._postings


def test_a_served_big_session_is_searched_whole_with_the_worker(tmp_path):
    """A real `agentview serve`: a session past MIN_BEHIND events gets a worker process, and every search
    answers exactly what the file holds."""
    count = search_worker.MIN_BEHIND + 4000
    words = " ".join(f"w{k}" for k in range(40))  # answers of some 100 KB a run: pipes fill unless both ends read
    write_events(tmp_path / "big.jsonl", [created("m0", "a", name="Ann")] + [
        user(f"m{i}", "a", f"entry {i} says {'needle' if i % 997 == 0 else 'hay'} {words} v{i}") for i in range(1, count)])
    with serve(tmp_path, "--no-cache") as server:
        def answer():
            with urllib.request.urlopen(f"{server.url}/api/search?q=needle&session=big&limit=100") as r:
                data = json.load(r)
            return data if not data.get("partial") and data["results"] else None
        data = wait_for(answer, timeout=60)
        children = subprocess.run(["ps", "-ww", "--ppid", str(server.process.pid), "-o", "args="],
                                  capture_output=True, text=True).stdout
    assert [hit["message_id"] for hit in data["results"]] == [f"m{i}" for i in range(997, count, 997)]
    assert "viewer.search.worker" in children  # the words were built by a worker process


def test_the_worker_runs_below_the_server(tmp_path, worker):
    """Background work: on a busy machine the server's threads answering requests get the cores first."""
    _varied(tmp_path)
    _index(tmp_path, words=worker)
    assert worker.pids()
    below = min(19, os.getpriority(os.PRIO_PROCESS, 0) + search_worker.NICENESS)
    assert wait_for(lambda: all(os.getpriority(os.PRIO_PROCESS, pid) == below for pid in worker.pids()) or None,
                    timeout=10)


@pytest.mark.parametrize("spare", [False, True])
def test_the_facets_wait_for_the_search_unless_a_core_is_spare(tmp_path, spare):
    """While worker processes build a session's words, the facets catch up meanwhile only if a core is left for the
    ingest thread beside them; else the search index is completed first (a person searches first)."""
    cores = 3  # as if the machine had three (two processes at most, whatever it has)
    write_events(tmp_path / "s.jsonl", [user(f"m{i}", "a", f"word{i % 50} more words") for i in range(3000)])
    library = Library(tmp_path)
    library.scan()
    s = library.get("s")
    words = search_worker.WordWorker(min_behind=1, job_events=50, processes=cores - 1 if spare else cores,
                                     available=cores)
    seen = []
    try:
        while background.index_step(library, words=words):
            seen.append((s.search.indexed, s.facets.indexed))
    finally:
        words.stop()
    assert s.search.indexed == s.facets.indexed == s.count
    faceted_before_searched = [facets for searched, facets in seen if searched < s.count and facets]
    assert bool(faceted_before_searched) == spare
    assert words.merged > 10
