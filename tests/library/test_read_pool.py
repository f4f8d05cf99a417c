"""A first read of many Claude Code sessions spread over worker processes (library/read_pool.py) leaves exactly what
the ingest thread's own read leaves: the same sessions, events, titles, problems and search answers, the same cache
entries, the same restart; and a worker that dies or hangs, a file refused or broken, costs nothing but time."""

from __future__ import annotations

import gc
import marshal
import os
import signal
import sys
from pathlib import Path

import pytest

from conftest import REPO
from test_claude_settled import age, pages
from test_group_cache import searched
from viewer.core.host import Host
from viewer.core.tuning import Limits, Tuning
from viewer.library import background, read_pool
from viewer.library.library import Library
from viewer.library.read_pool import ReadPool
from viewer.library.read_worker import read_group
from viewer.library.runtime import Runtime
from viewer.search import worker as search_worker
from viewer.store.session_cache import SessionCache

sys.path.insert(0, str(REPO / "benchmarks"))

from claude_projects import generate  # noqa: E402

WORDS = ("warehouse", "def", "error", "quetzalcoatlus", "return import")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """40 sessions over 4 projects, sub-agents included, then hostile files among them: a sub-agent's file that is a
    FIFO, one that is a symlink out of the folder, a line longer than the limit and a line of broken JSON."""
    home = tmp_path_factory.mktemp("home")
    made = generate(home, sessions=40, projects=4)
    root = Path(made["projects_folder"])
    mains = sorted(p for p in root.rglob("*.jsonl") if "subagents" not in p.parts)
    with open(mains[0], "ab") as f:
        f.write(b'{"type": "user", "broken\n' + b'{"type": "user", "message": {"content": "' + b"x" * 5000 + b'"}}\n')
    beside = mains[1].with_suffix("") / "subagents"
    beside.mkdir(parents=True, exist_ok=True)
    os.mkfifo(beside / "agent-fifo.jsonl")
    outside = tmp_path_factory.mktemp("outside") / "agent-out.jsonl"
    outside.write_bytes(mains[2].read_bytes())
    os.symlink(outside, beside / "agent-out.jsonl")
    age(root)
    return root


def _read(root, cache, workers: int, **tuning) -> Runtime:
    return Runtime(root, watch=False, cache_dir=str(cache), tuning=Tuning(
        read_workers=workers, read_pool_from=1, limits=Limits(max_line_bytes=4096), **tuning))


def _listed(library: Library) -> dict:
    """What the sessions list shows of each session, read before anything wakes one."""
    with library.lock:
        sessions = sorted(library.sessions.values(), key=lambda s: s.id)
    listed = {}
    for s in sessions:
        with s.lock:
            listed[s.id] = {**s.summary(), "name": s.name, "project": s.project, "members": sorted(s.members),
                            "asleep": s.asleep is not None}
    return listed


def _holding(library: Library) -> dict:
    """The sessions holding each word of the folder's words, as filed (a worker's words are filed by the server)."""
    words = library.folder_words
    return {word: sorted(words.holding([word]).ids) for word in sorted(words.words)}


def _entries(library: Library) -> dict:
    """Each group's cache entry, decoded, but for the shapes its packed values use (a table that grows with every
    session its process read: the same shapes, more or fewer others); its events' slots too (kept encoded: marshal's
    bytes of equal values made in two processes may differ), its search index (marshal's bytes differ as its
    words were interned or not: a session kept by the process that read it packs them uninterned), and when its
    files' facts were taken (group_cache.racy: the moment each read took them)."""
    cache = library.cache
    entries = {}
    for path, (key, _, _) in sorted(cache._entries.items()):
        sections = []
        for section in cache.store.sections(key):
            if type(section) is bytes:  # an events part's slots after its count, or a search index's after its name
                name, value = sections[-1]
                sections[-1] = (name, (value, marshal.loads(section)) if name == "events" else marshal.loads(section))
            elif section[0] == "files":
                sections.append(("files", {path: {k: v for k, v in was.items() if k != "taken"}
                                           for path, was in section[1].items()}))
            elif section[0] != "shapes":
                sections.append(section)
        entries[path] = sections
    return entries


class _Groups:
    def __init__(self, library: Library) -> None:
        self.listing = lambda: [s for s in library.listing() if s.members]


def _all(library: Library) -> dict:
    listed, holding, entries = _listed(library), _holding(library), _entries(library)
    alone = {s.id: (s.format.name, [p.kind for p in s.problems]) for s in library.listing() if not s.members}
    return {"listed": listed, "holding": holding, "entries": entries, "pages": pages(_Groups(library)),
            "alone": alone, "searched": searched(library, WORDS)}


@pytest.fixture(scope="module")
def alone(folder, tmp_path_factory):
    with _read(folder, tmp_path_factory.mktemp("cache"), 0) as runtime:
        assert runtime.library.groups.pool.pids() == []
        return _all(runtime.library)


def test_worker_processes_read_the_same_sessions_the_ingest_thread_reads(folder, tmp_path, alone):
    library, pool = _pool_of(folder, tmp_path / "cache", 2, shares=False)
    library.scan()
    assert library.cache.read_elsewhere == pool.taken == 40 and pool.left == 0  # broken lines too, told as in-process
    helped = _all(library)
    pool.stop()
    for part in alone:
        assert helped[part] == alone[part], part


def test_the_ingest_thread_reads_groups_while_the_workers_do(folder, tmp_path, alone):
    with _read(folder, tmp_path / "cache", 1) as runtime:
        assert len(runtime.library.groups.pool.pids()) == 1
        assert _all(runtime.library) == alone
    # the hostile files are there, and told as ever
    assert {p for page in alone["pages"].values() for p in page["problems"]} == {"invalid_json", "line_too_long"}
    assert sorted(alone["alone"].values()) == [("not-read", ["not_a_regular_file"]), ("not-read", ["outside_folder"])]
    assert len(alone["holding"]["quetzalcoatlus"]) == 1


def _idle(library: Library) -> None:
    """Background work done at once, the folder's entry written (as a server leaves it when idle)."""
    while True:
        library.look_after = float("-inf")
        if not background.step(library):
            return


def test_a_restart_takes_what_the_workers_kept_and_starts_none(folder, tmp_path, alone):
    library, pool = _pool_of(folder, tmp_path / "cache", shares=False)
    library.scan()
    assert pool.taken == 40
    _idle(library)  # the folder's entry written: it lists every group the workers read
    library.cache.flush()
    pool.stop()
    with _read(folder, tmp_path / "cache", 1) as again:
        assert again.library.groups.pool.pids() == [] and again.library.cache.restored_listed == 40
        assert pages(_Groups(again.library)) == alone["pages"]


def _pool_of(root, cache, processes: int = 1, **options) -> tuple[Library, ReadPool]:
    library = Library(root, cache=SessionCache(str(cache), host=Host(Tuning(
        read_pool_from=1, limits=Limits(max_line_bytes=4096)))))
    pool = library.groups.pool = ReadPool(library, processes, **options)
    return library, pool


def test_a_worker_killed_while_it_reads_leaves_the_rest_to_the_ingest_thread(folder, tmp_path, alone):
    library, pool = _pool_of(folder, tmp_path / "cache", shares=False)
    real_take = pool._take
    killed = []

    def take(groups, worker, answer):  # the worker killed once it answered a few groups, its next ones in flight
        real_take(groups, worker, answer)
        if pool.taken == 3 and not killed:
            killed.append(pool.pids()[0])
            os.kill(killed[0], signal.SIGKILL)

    pool._take = take
    library.scan()
    assert killed and pool.taken >= 3 and pool.left >= 1 and pool.pids() == []
    assert _all(library) == alone
    pool.stop()


def test_a_worker_that_hangs_is_ended_and_its_groups_read_in_process(folder, tmp_path, alone):
    library, pool = _pool_of(folder, tmp_path / "cache", hang_after=1.0)
    real_send = pool._send
    stopped = []

    def send(session):  # the worker stopped (SIGSTOP) as it gets its first group: it never answers
        went = real_send(session)
        if went and not stopped:
            stopped.append(pool.pids()[0])
            os.kill(stopped[0], signal.SIGSTOP)
        return went

    pool._send = send
    library.scan()
    assert stopped and pool.taken == 0 and pool.left >= 1 and pool.pids() == []
    with pytest.raises(ProcessLookupError):
        os.kill(stopped[0], 0)  # killed and reaped, not left stopped
    assert _all(library) == alone


def test_a_group_whose_file_turned_hostile_is_left_to_the_server(folder, tmp_path):
    """A worker reads only the files it is given, with the server's checked opens: a FIFO or a symlink out found
    there makes it leave the group (the server then reads it, and lists the file with its problem)."""
    library = Library(folder)
    library.scan()
    group = next(s for s in library.listing() if len(s.members) > 1)
    paths = sorted(group.members)
    host = Host(Tuning())
    assert type(read_group(library.root, False, host, paths)) is tuple
    fifo = folder / "-home-dev-src-extra" / "f" / "subagents" / "agent-a.jsonl"
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    assert read_group(library.root, False, host, [*paths, str(fifo)]) == "not one group read whole"
    link = fifo.with_name("agent-b.jsonl")
    os.symlink("/etc/hostname", link)
    assert read_group(library.root, False, host, [*paths, str(link)]) == "not one group read whole"


def test_a_group_read_by_a_worker_is_freed_as_it_goes_not_left_to_the_collector(folder):
    """A worker reads a thousand groups and more: what it read of one is freed once handed over, not left in cycles
    for a collection to find (each young collection walked the whole group), and the collector runs as it did."""
    library = Library(folder)
    library.scan()
    group = next(s for s in library.listing() if len(s.members) > 1)
    host, paths = Host(Tuning()), sorted(group.members)
    assert type(read_group(library.root, False, host, paths)) is tuple  # once: what a first read makes to keep
    gc.collect()
    gc.disable()
    try:
        answer = read_group(library.root, False, host, paths)
        assert type(answer) is tuple and answer[1]
        assert gc.collect() == 0  # nothing found unreachable (before: its library, sessions and index: hundreds)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_folder_still_being_written_is_read_in_process(tmp_path):
    made = generate(tmp_path, sessions=6, projects=2)
    for path in Path(made["projects_folder"]).rglob("*.jsonl"):
        os.utime(path)  # written just now: its groups do not settle once read, so nothing would be kept
    with _read(made["projects_folder"], tmp_path / "cache", 2) as runtime:
        pool = runtime.library.groups.pool  # started as the walk found groups, then handed none
        assert pool.taken == pool.left == runtime.library.cache.read_elsewhere == 0
        assert len(runtime.library.sessions) == 6


def test_one_worker_reads_when_a_core_is_beside_the_ingest_thread_none_on_one_core_more_when_asked():
    assert read_pool.process_count(Tuning(cores=1)) == 0
    assert read_pool.process_count(Tuning(cores=2)) == 1
    assert read_pool.process_count(Tuning(cores=16)) == 1  # each costs some 55 MB: more only when asked
    assert read_pool.process_count(Tuning(cores=16, read_workers=3)) == 3
    assert read_pool.process_count(Tuning(cores=16, read_workers=0)) == 0
    assert read_pool.process_count(Tuning(cores=1, read_workers=2)) == 2


def test_the_workers_run_below_the_server_and_end_with_it(folder, tmp_path):
    """A page asked for while they read gets the core first; no worker outlives its runtime."""
    runtime = _read(folder, tmp_path / "cache", 2)
    pids = runtime.library.groups.pool.pids()
    assert len(pids) == 2
    below = min(19, os.getpriority(os.PRIO_PROCESS, 0) + search_worker.NICENESS)
    assert [os.getpriority(os.PRIO_PROCESS, pid) for pid in pids] == [below, below]  # each answered: lowered
    runtime.close()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # ended and reaped
