"""Claude Code sessions (groups of files) kept between runs (group_cache): a restart takes each settled group from
the cache without reading its lines, and shows exactly what reading them shows; any change to a group's files (a
line appended, a file rewritten, a sub-agent file added or removed, a sidecar rewritten) or to the entry reads the
group again; a group still being written is not kept."""

from __future__ import annotations

import json
import os
import sys
import urllib.request

import pytest

from conftest import REPO, serve, wait_for
from events import scanned
from test_cache_store import kept_entries
from test_claude_settled import age, pages
from viewer.core.host import Host
from viewer.core.tuning import Tuning
from viewer.library import background, groups
from viewer.store import folder_cache, index_state
from viewer.search import query as search
from viewer.library.library import Library
from viewer.store.session_cache import SessionCache

sys.path.insert(0, str(REPO / "benchmarks"))

from generate_claude import generate  # noqa: E402

PROJECT = "-home-dev-warehouse"


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "logs"
    generate(root / PROJECT, 2 << 20, subagents=6, sessions=3)
    age(root)
    return root


def run(root, cache, settle=True, tuning: Tuning | None = None) -> Library:
    """A library of `root` with the cache at `cache`, read, with its background work done (indexes, settling,
    saving), as a server leaves it when idle."""
    library = Library(root, cache=SessionCache(str(cache), host=Host(tuning)))
    library.scan()
    while settle and background.step(library):
        pass
    return library


def without_the_folders_entry(root, cache) -> None:
    """Drop the folder's entry (folder_cache): a restart then takes each group from its own entry."""
    SessionCache(str(cache)).store.drop(folder_cache.key_of(os.path.realpath(root), False))


def searched(library: Library, words=("warehouse", "def", "error")) -> dict:
    found = {}
    for s in library.listing():
        s.search.catch_up(s.count)
        found[s.id] = [search.matches(s, search.parse(word), budget=100_000)[0] for word in words]
    return found


@pytest.fixture
def group_reads(monkeypatch):
    """Every read of a group's file, counted."""
    reads = []
    real = groups.read_some

    def counted(reader, *batch):
        reads.append(reader.path)
        return real(reader, *batch)

    monkeypatch.setattr(groups, "read_some", counted)
    return reads


def test_a_restart_takes_every_settled_group_from_the_cache_without_reading_a_line(project, tmp_path, group_reads):
    first = run(project, tmp_path / "cache")
    assert all(s.normalizer.settled for s in first.listing())
    group_reads.clear()
    again = run(project, tmp_path / "cache", settle=False)
    assert again.cache.restored == 3 and group_reads == []
    assert pages(again) == pages(first)
    assert searched(again) == searched(first) and any(any(hits) for hits in searched(again).values())
    assert all(s.normalizer.settled for s in again.listing())


def _main_file(root, n=0):
    return sorted((root / PROJECT).glob("*.jsonl"))[n]


def _sub_file(root):
    return sorted((root / PROJECT).glob("*/subagents/agent-*.jsonl"))[0]


def append_a_line(root):
    path = _main_file(root)
    last = json.loads(path.read_text().splitlines()[-1])
    line = {**last, "uuid": "ffffffff-0000-4000-8000-00000000000a", "parentUuid": last.get("uuid"), "type": "user",
            "message": {"role": "user", "content": "and one more thing"}}
    with path.open("a") as f:
        f.write(json.dumps(line) + "\n")


def rewrite_in_place(root):
    path = _main_file(root)
    data = bytearray(path.read_bytes())
    at = data.index(b'"text":"', len(data) // 2) + 8
    data[at:at + 4] = b"XXXX" if data[at:at + 4] != b"XXXX" else b"YYYY"
    path.write_bytes(bytes(data))


def add_a_sub_agent(root):
    source = _sub_file(root)
    (source.parent / "agent-zz99.jsonl").write_bytes(source.read_bytes().replace(b'"agentId": "', b'"agentId": "z'))


def remove_a_sub_agent(root):
    _sub_file(root).unlink()


def rewrite_a_sidecar(root):
    sub = _sub_file(root)
    meta = sub.with_name(sub.name.removesuffix(".jsonl") + ".meta.json")
    meta.write_text(json.dumps({"agentType": "general", "description": "A description from another run"}))


@pytest.mark.parametrize("change", [append_a_line, rewrite_in_place, add_a_sub_agent, remove_a_sub_agent,
                                    rewrite_a_sidecar])
def test_a_group_whose_files_changed_is_read_again(project, tmp_path, change):
    run(project, tmp_path / "cache")
    change(project)
    again = run(project, tmp_path / "cache", settle=False)
    assert again.cache.restored == 2  # the other two are taken as kept
    assert pages(again) == pages(scanned(project))


def read_what_is_due(library: Library) -> None:
    """What the watcher does with the files a refresh left to read (a session that could not be woken, say)."""
    for path in library.take_unfinished():
        library.refresh(path)


@pytest.mark.parametrize("at", ["start", "middle"])
def test_a_corrupt_entry_is_ignored_and_its_group_read(project, tmp_path, at):
    """Near its start, the entry is not used at a restart; further on (past what a session restored asleep reads),
    it is found when the session wakes, or, in a part read when first needed (its events, search index, message
    ids), then: it is then read from its files, under a new epoch."""
    run(project, tmp_path / "cache")
    entries = kept_entries(tmp_path / "cache")
    assert len(entries) == 5  # one a group, the folder's and its words' (folder_cache)
    for path, start, end in entries:
        data = bytearray(path.read_bytes())
        data[start + 100 if at == "start" else (start + end) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
    again = run(project, tmp_path / "cache", settle=False)
    if at == "start":
        assert again.cache.restored == 0
    else:
        assert again.cache.restored == 3 and all(s.asleep is not None for s in again.listing())
        epochs = {s.id: s.epoch for s in again.listing()}
        for s in again.listing():
            s.wake()
            if s.count:  # woken: the corrupt byte is in a part read later, found when read
                assert s.events[0]["event_type"] == "changed_on_disk" or not (s.search.indexed and s.by_id)
            again.cache.check_step()
            read_what_is_due(again)
            assert s.epoch > epochs[s.id]  # an open page reloads
    assert pages(again) == pages(scanned(project))


def test_a_first_read_keeps_its_groups_in_one_pack_and_a_restart_takes_them_from_it(project, tmp_path):
    first = run(project, tmp_path / "cache")
    written = sorted(p.suffix for p in (tmp_path / "cache").iterdir() if p.name != "key")
    assert written == [".avc", ".avc", ".avp"]  # the folder's entry and its words, and the three groups together
    again = run(project, tmp_path / "cache", settle=False)
    assert again.cache.restored == 3
    assert pages(again) == pages(first)


def test_a_group_tampered_in_its_pack_is_read_again_and_the_others_wake_from_it(project, tmp_path):
    run(project, tmp_path / "cache")
    path, start, end = sorted(span for span in kept_entries(tmp_path / "cache") if span[0].suffix == ".avp")[1]
    data = bytearray(path.read_bytes())
    data[(start + end) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    again = run(project, tmp_path / "cache", settle=False)
    assert again.cache.restored == 3
    epochs = {s.id: s.epoch for s in again.listing()}
    for s in again.listing():
        s.wake()
        s.events[:1], s.search, s.by_id, s.calls  # what is read from its entry when first needed (if it woke)
    again.cache.check_step()
    read_what_is_due(again)
    assert sorted(s.epoch == epochs[s.id] for s in again.listing()) == [False, True, True]  # one lost, read again
    assert pages(again) == pages(scanned(project))


def test_lines_written_after_a_restart_read_the_group_again_from_its_start(project, tmp_path):
    run(project, tmp_path / "cache")
    again = run(project, tmp_path / "cache", settle=False)
    assert again.cache.restored == 3
    append_a_line(project)
    again.refresh(str(_main_file(project)))
    assert pages(again) == pages(scanned(project))


def test_a_group_still_being_written_is_not_kept(tmp_path):
    root = tmp_path / "logs"
    generate(root / PROJECT, 1 << 20, subagents=2, sessions=2)  # just written: not settled
    library = run(root, tmp_path / "cache")
    assert not any(s.normalizer.settled for s in library.listing())
    assert not kept_entries(tmp_path / "cache")


def test_a_server_keeps_the_groups_and_a_restart_serves_them(project, tmp_path):
    """Through `agentview serve`: the first run keeps the three settled groups once it is idle; the second shows the
    same events (their content read from the files, their index from the cache)."""
    def everything(server):
        with urllib.request.urlopen(f"{server.url}/api/sessions") as response:
            ids = sorted(row["id"] for row in json.load(response)["sessions"])
        shown = {}
        for sid in ids:
            with urllib.request.urlopen(f"{server.url}/api/sessions/{sid}/events?limit=100000") as response:
                shown[sid] = json.load(response)["events"]
        return shown

    cache = tmp_path / "cache"
    with serve(project, "--cache-dir", str(cache)) as server:
        # the groups' entries and the folder's two
        wait_for(lambda: len(kept_entries(cache)) == 5, timeout=60)
        first = everything(server)
    entries = {path for path, _, _ in kept_entries(cache)}
    for entry in entries:  # dated back: an entry the next start takes is touched (used last, evicted last)
        os.utime(entry, (1, 1))
    with serve(project, "--cache-dir", str(cache)) as server:
        assert everything(server) == first
    assert len(first) == 3 and all(first.values())
    assert all(entry.stat().st_mtime > 1 for entry in entries)  # each session was taken from its entry


def test_a_sub_agent_file_written_after_a_restart_joins_the_session_taken_from_the_cache(project, tmp_path):
    run(project, tmp_path / "cache")
    again = run(project, tmp_path / "cache", settle=False)
    assert again.cache.restored == 3
    add_a_sub_agent(project)
    again.refresh(str(_sub_file(project).parent / "agent-zz99.jsonl"))
    assert pages(again) == pages(scanned(project))
    assert len(again.listing()) == 3


def test_an_entry_holding_no_sections_is_a_miss_not_a_failure(project, tmp_path):
    from viewer.store import group_cache
    from viewer.files.file_source import FileSource

    first = run(project, tmp_path / "cache")
    store = SessionCache(str(tmp_path / "cache")).store
    for s in first.listing():  # each entry replaced by a well-formed one that holds nothing
        store.put(group_cache._key({p: group_cache._facts(FileSource(p)) for p in s.members}), iter(()))
    without_the_folders_entry(project, tmp_path / "cache")
    again = run(project, tmp_path / "cache", settle=False)
    assert again.cache.restored == 0
    assert pages(again) == pages(scanned(project))


def test_a_first_start_on_an_empty_cache_opens_no_group_file_only_to_find_it_is_not_kept(project, tmp_path,
                                                                                          monkeypatch):
    """With nothing kept yet, looking a group up would open each of its files for nothing: it is read at once. A
    restart, or a group this run kept already, is looked up as before."""
    from viewer.store import group_cache

    looked_up = []
    real = group_cache.restore
    monkeypatch.setattr(group_cache, "restore", lambda store, session, *rest: looked_up.append(session.path)
                        or real(store, session, *rest))
    first = run(project, tmp_path / "cache")
    assert not looked_up and all(s.asleep and s.asleep["complete"] for s in first.listing())
    without_the_folders_entry(project, tmp_path / "cache")
    again = run(project, tmp_path / "cache", settle=False)
    assert len(looked_up) == 3 and again.cache.restored == 3
    assert searched(again) == searched(first)


def test_a_woken_group_reads_its_events_from_its_entry_when_first_read(project, tmp_path):
    """A woken session's events, search index and message ids are read from its entry when first needed, not at
    its wake (its first page reads none of them): an entry gone meanwhile (evicted) shows its events as changed on
    disk, and background work has it read again from its files, under a new epoch."""
    run(project, tmp_path / "cache")
    again = run(project, tmp_path / "cache", settle=False)
    assert again.cache.restored == 3
    for s in again.listing():
        s.wake()
    counts, epochs = {s.id: s.count for s in again.listing()}, {s.id: s.epoch for s in again.listing()}
    for path in {path for path, _, _ in kept_entries(tmp_path / "cache")}:
        path.unlink()
    for s in again.listing():
        assert s.count == counts[s.id] and s.epoch == epochs[s.id]  # woken: its page reads its tree and counts
        assert {e["event_type"] for e in s.events[0:s.count]} == {"changed_on_disk"}
        assert not index_state.cacheable(s)  # what stands for its events is never kept
    while background.step(again):
        pass
    read_what_is_due(again)
    assert all(s.epoch > epochs[s.id] for s in again.listing())  # an open page reloads
    assert pages(again) == pages(scanned(project))
