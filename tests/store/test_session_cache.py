"""The persistent session cache: a restart takes what an earlier run read, and shows exactly what the file holds.

Each test reads a folder with a cache, keeps its sessions, changes something (the file, the cache, the version),
reads the folder again with the same cache, and compares every JSON twin with a read of the same files without
a cache.
"""

from __future__ import annotations

import collections
import gc
import json
import marshal
import os
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import SAMPLES, write_events
from viewer.core.host import Host
from viewer.core.tuning import Tuning
from viewer.library import background
from viewer.store import cache_store, code_version, index_state, session_cache
from viewer.files import tailer
from viewer.files.file_source import FileSource
from viewer.library.library import Library
from viewer.store.cache_store import Raw
from viewer.store.session_cache import SessionCache
from viewer.web.app import create_app


def keep_all(library: Library) -> int:
    """Index and save every session now (the server does it once nothing changed for a moment)."""
    while background.index_step(library):
        pass
    saved = 0
    for path, session, tailer in library.settled_files():
        saved += library.cache.save(path, session, tailer, library.inside)
    return saved


def twins(root: Path, cache_dir: Path | None, tuning: Tuning | None = None) -> tuple[dict, Library]:
    """What the JSON twins of every session say, read with (or without) a cache."""
    app = create_app(root, watch=False, cache_dir=str(cache_dir) if cache_dir else None, tuning=tuning)
    return views(app), app.extensions["agentview"].library


def views(app) -> dict:
    """What the JSON twins of every session of `app` say."""
    library = app.extensions["agentview"].library
    client = app.test_client()
    seen = {"sessions": _without_times(client.get("/api/sessions").get_json())}
    for row in seen["sessions"]["sessions"]:
        sid = row["id"]
        data = client.get(f"/api/sessions/{sid}").get_json()
        data.pop("cursor", None)
        seen[sid] = data
        for agent_id in library.get(sid).agents:
            seen[f"{sid}/{agent_id}"] = client.get(f"/api/sessions/{sid}/agents/{agent_id}").get_json()
        agents = ",".join(library.get(sid).agents)
        seen[f"{sid}/dialog"] = client.get(f"/api/sessions/{sid}/dialog?agents={agents}").get_json()
        for word in ("the", "agent", "role:user", "tool:search"):
            found = client.get(f"/api/search?q={word}&session={sid}").get_json()
            seen[f"{sid}?{word}"] = [(r["message_id"], r["snippet"]) for r in found["results"]]
        seen[f"{sid}/problems"] = client.get(f"/api/sessions/{sid}/problems").get_json()
    return seen


def _without_times(listing: dict) -> dict:
    for row in listing["sessions"]:
        row.pop("updated_at", None)
    return listing


@pytest.fixture
def folder(tmp_path) -> Path:
    root = tmp_path / "sessions"
    root.mkdir()
    for name in ("research_team", "example3_hook_intervention"):
        shutil.copy(SAMPLES / f"{name}.jsonl", root)
    return root


@pytest.fixture
def cache_dir(tmp_path) -> Path:
    return tmp_path / "cache"


def first_run(folder: Path, cache_dir: Path, tuning: Tuning | None = None) -> dict:
    seen, library = twins(folder, cache_dir, tuning)
    assert keep_all(library) == 2
    return seen


def restarted(folder: Path, cache_dir: Path, tuning: Tuning | None = None) -> tuple[dict, Library]:
    return twins(folder, cache_dir, tuning)


def test_a_restart_takes_every_session_from_the_cache_and_shows_the_same(folder, cache_dir):
    before = first_run(folder, cache_dir)
    after, library = restarted(folder, cache_dir)
    assert library.cache.restored == 2
    assert after == before == twins(folder, None)[0]


def test_no_section_is_big_and_a_session_cut_in_many_restores_the_same(folder, cache_dir):
    """Each section is encoded by one marshal.dumps, holding the GIL (every request waits): none may be big. With the
    bounds set tiny, every map, posting list, agent list and event list is cut across many sections (a token's
    positions too), and a restart still shows exactly what a fresh read does."""
    tiny = Tuning(section_items=3, section_bytes=64, section_events=5)
    library = Library(folder, host=Host(tiny))
    library.scan()
    while background.index_step(library):
        pass
    s = library.get("research_team")
    names, posted, count = [], collections.Counter(), None
    with s.lock:
        for section in index_state.sections(s):
            if type(section) is not Raw:
                name, value = section
                names.append(name)
            elif name == "events":  # an events part's slots, after its count: decoded when first read
                assert count == len(marshal.loads(section)[0]) <= 5
            elif name == "postings":  # kept encoded, after its name: decoded when the session is first searched
                value = marshal.loads(section)
                posted.update(value.keys())
                assert sum(len(kept) for _, kept in value.values()) <= 64 or len(value) == 1, value
            elif name == "by_id":  # likewise: decoded when its message ids are first read
                assert len(marshal.loads(section)) <= 3
            if name == "events" and type(section) is not Raw:  # its count
                count = value
            elif name in ("agents", "references"):
                assert len(value) <= 3
    assert names.count("postings") > 20 and names.count("events") == -(-s.count // 5) and names.count("agents") > 1
    assert max(posted.values()) > 1  # a token's positions cut across sections
    with s.lock:  # agents cut by the bytes of their arrays alone
        assert [section[0] for section in index_state.sections(s, replace(tiny, section_items=10**6))
                if type(section) is not Raw].count("agents") > 1
    before = first_run(folder, cache_dir, tiny)
    after, restarted_library = restarted(folder, cache_dir, tiny)
    assert restarted_library.cache.restored == 2
    assert after == before == twins(folder, None)[0]


def test_keeping_or_restoring_a_session_sets_off_no_garbage_collection(folder, cache_dir):
    """Keeping a session makes its sections (millions of objects at 1M events), restoring it makes its index: a
    cyclic collection meanwhile walks the whole heap while every request waits for the GIL. None runs while they
    are made, even with the collector at its most eager."""
    tiny = Host(Tuning(section_items=3))  # many small sections: many allocations
    library = Library(folder, cache=SessionCache(str(cache_dir), host=tiny))
    library.scan()
    while background.index_step(library):
        pass
    during = []  # collections set off while sections were made, written or read back into an index

    def seen(phase, info):
        frame = sys._getframe(1)
        while phase == "start" and frame is not None:
            where = os.path.basename(frame.f_code.co_filename), frame.f_code.co_name
            if where[0] == "index_state.py" or where in (("cache_store.py", "put"), ("cache_store.py", "_decode")):
                during.append(where)
                return
            frame = frame.f_back

    saves = list(library.settled_files())
    thresholds = gc.get_threshold()
    gc.set_threshold(1, 1, 1)
    gc.callbacks.append(seen)
    try:
        assert all([library.cache.save(path, session, reader, library.inside) for path, session, reader in saves])
        restarted_library = Library(folder, cache=SessionCache(str(cache_dir)))
        restarted_library.scan()
    finally:
        gc.callbacks.remove(seen)
        gc.set_threshold(*thresholds)
    assert restarted_library.cache.restored == 2
    assert during == []


def test_an_appended_file_reads_only_what_came_after(folder, cache_dir, monkeypatch):
    first_run(folder, cache_dir)
    path = folder / "research_team.jsonl"
    read_before = path.stat().st_size
    write_events(path, [{"message_id": "late-1", "event_type": "transcript_entry", "agent_id": "lead",
                         "role": "assistant", "content": "appended after the first run"}], mode="a")
    reads = []  # (offset, length) of every read of the session file through its tailer's source
    real_read = FileSource.read

    def counted(source, offset, length):
        if source.path == str(path):
            reads.append((offset, length))
        return real_read(source, offset, length)

    monkeypatch.setattr(FileSource, "read", counted)
    restart_reads = twins(folder, cache_dir)  # reads during the restart and the pages: only the scan's count
    monkeypatch.setattr(FileSource, "read", real_read)
    after, library = restart_reads
    assert library.cache.restored == 2
    assert after == twins(folder, None)[0]
    tail_reads = [(o, n) for o, n in reads if o + n > read_before]  # what the tailer read of the new bytes
    # the bytes before the cached position are checked (the tailer's last window) and never read again whole
    assert tail_reads and min(o for o, _ in tail_reads) >= read_before - tailer.FINGERPRINT_BYTES
    s = library.get("research_team")
    assert s.events[s.by_id["late-1"]]["content"] == "appended after the first run"


def test_a_truncated_file_is_read_again(folder, cache_dir):
    first_run(folder, cache_dir)
    path = folder / "research_team.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[: len(lines) // 2]))
    after, library = restarted(folder, cache_dir)
    assert after == twins(folder, None)[0]
    assert library.get("research_team").count == len(lines) // 2


def test_a_file_rewritten_in_place_is_read_again(folder, cache_dir):
    first_run(folder, cache_dir)
    path = folder / "research_team.jsonl"
    data = path.read_bytes()
    at = data.index(b'"content": "') + len(b'"content": "')
    path.write_bytes(data[:at] + b"X" + data[at + 1:])  # the same length, one character changed, early on
    st = os.stat(path)
    after, library = restarted(folder, cache_dir)
    assert os.stat(path).st_ino == st.st_ino  # the same file: only its bytes tell
    assert library.cache.restored == 1  # the other file only
    assert after == twins(folder, None)[0]


def test_a_renamed_file_keeps_its_entry_under_its_new_name(folder, cache_dir):
    first_run(folder, cache_dir)
    os.rename(folder / "research_team.jsonl", folder / "renamed_team.jsonl")
    after, library = restarted(folder, cache_dir)
    assert library.cache.restored == 2
    assert library.get("renamed_team") is not None and library.get("research_team") is None
    assert after == twins(folder, None)[0]


@pytest.mark.parametrize("damage", ["flip a byte", "truncate", "empty", "garbage", "swap entries"])
def test_a_damaged_cache_file_is_ignored_and_the_file_read(folder, cache_dir, damage):
    first_run(folder, cache_dir)
    entries = sorted(p for p in cache_dir.glob("*" + cache_store.SUFFIX))
    assert len(entries) == 2
    for entry in entries:
        data = entry.read_bytes()
        if damage == "flip a byte":
            entry.write_bytes(data[:-100] + bytes([data[-100] ^ 0x40]) + data[-99:])
        elif damage == "truncate":
            entry.write_bytes(data[: len(data) // 2])
        elif damage == "empty":
            entry.write_bytes(b"")
        elif damage == "garbage":
            entry.write_bytes(os.urandom(len(data)))
    if damage == "swap entries":  # each is valid, but signed for the other file: its MAC names its key
        a, b = (e.read_bytes() for e in entries)
        entries[0].write_bytes(b)
        entries[1].write_bytes(a)
    after, library = restarted(folder, cache_dir)
    assert library.cache.restored == 0
    assert after == twins(folder, None)[0]
    assert not any(p.exists() for p in entries) or damage == "swap entries"  # a bad entry is dropped


def a_changed_rule(tmp_path, package: str = "formats") -> Path:
    """A copy of the viewer package with one byte of one of `package`'s rules changed (its other files as they are)."""
    copy = tmp_path / "changed" / "viewer"
    shutil.copytree(code_version.VIEWER, copy, ignore=shutil.ignore_patterns("__pycache__"))
    rule = max((copy / package).rglob("*.py"))
    rule.write_bytes(rule.read_bytes() + b"#")
    return copy


def read_with(folder: Path, cache_dir: Path, version: str, monkeypatch) -> tuple[Library, dict]:
    """A library of `folder` read with the cache of that version, and how many bytes of each file it read."""
    read, real_read = collections.Counter(), FileSource.read

    def seen(source, offset, length):
        data = real_read(source, offset, length)
        read[os.path.basename(source.path)] += len(data)
        return data

    monkeypatch.setattr(FileSource, "read", seen)
    library = Library(folder, cache=SessionCache(str(cache_dir), version=version))
    library.scan()
    monkeypatch.setattr(FileSource, "read", real_read)
    return library, read


def test_a_changed_rule_rebuilds_every_entry_and_an_unchanged_restart_keeps_them(folder, cache_dir, tmp_path,
                                                                                   monkeypatch):
    first_run(folder, cache_dir)
    sizes = {p.name: p.stat().st_size for p in folder.iterdir()}
    library, read = read_with(folder, cache_dir, code_version.version(), monkeypatch)
    assert library.cache.restored == 2  # the same code: served from the cache (only the bytes before its end checked)
    assert read["research_team.jsonl"] <= tailer.FINGERPRINT_BYTES < sizes["research_team.jsonl"]

    changed = code_version.version(a_changed_rule(tmp_path))
    assert changed != code_version.version()
    library, read = read_with(folder, cache_dir, changed, monkeypatch)
    assert library.cache.restored == 0  # every entry refused: each file read again, whole
    assert all(read[name] >= size for name, size in sizes.items()), (read, sizes)
    fresh = twins(folder, None)[1]
    assert {s.id: s.count for s in library.listing()} == {s.id: s.count for s in fresh.listing()}
    assert keep_all(library) == 2  # and kept anew, under the new code's version
    assert read_with(folder, cache_dir, changed, monkeypatch)[0].cache.restored == 2
    assert read_with(folder, cache_dir, code_version.version(), monkeypatch)[0].cache.restored == 0


@pytest.mark.parametrize("package", code_version.PACKAGES)
def test_a_byte_changed_in_any_package_that_builds_the_cache_changes_its_version(tmp_path, package):
    assert code_version.digest(a_changed_rule(tmp_path, package)) != code_version.digest(code_version.VIEWER)


def test_code_the_cache_does_not_keep_leaves_its_version_alone(tmp_path):
    copy = a_changed_rule(tmp_path, "web")  # pages: rendered from the index, never kept
    assert code_version.digest(copy) == code_version.digest(code_version.VIEWER)


def test_a_cache_entry_is_plain_data_never_code(folder, cache_dir):
    """What is kept decodes to plain values only: nothing in it can name a class or a function to call."""
    first_run(folder, cache_dir)
    store = SessionCache(str(cache_dir)).store
    plain = (type(None), bool, int, float, str, bytes, tuple, list, dict, set, frozenset)

    def walk(value):
        assert isinstance(value, plain), type(value)
        if isinstance(value, dict):
            for k, v in value.items():
                walk(k)
                walk(v)
        elif isinstance(value, (tuple, list, set, frozenset)):
            for v in value:
                walk(v)

    for path in (folder / "research_team.jsonl",):
        st = os.stat(path)
        for section in store.sections(session_cache._key((st.st_dev, st.st_ino))):
            walk(section)


def test_a_cache_folder_inside_the_served_folder_is_not_used(folder):
    assert session_cache.for_folder(str(folder / ".cache"), folder) is None
    assert not (folder / ".cache").exists()


def test_the_cache_stays_within_its_size_by_dropping_the_least_recently_used(tmp_path):
    store = cache_store.CacheStore(str(tmp_path / "c"), "v", max_bytes=3000)
    for i in range(5):
        store.put(f"k{i}", iter([b"x" * 1000]))
        os.utime(store._path(f"k{i}"), ns=(i * 10**9, i * 10**9))
    assert store.total_bytes() <= 3000
    assert store.sections("k0") is None and list(store.sections("k4")) == [b"x" * 1000]


def test_every_attribute_of_a_session_is_kept_or_made_anew(folder):
    """A new attribute of SessionIndex must be taught to index_state, or its sessions are not cached at all."""
    library = Library(folder)
    library.scan()
    while background.index_step(library):
        pass
    for s in library.sessions.values():
        assert index_state.cacheable(s), s.id


def test_the_server_keeps_sessions_and_a_restart_serves_them(folder, cache_dir, tmp_path):
    """Through `agentview serve`: the first run saves once the files are still; the second serves from it."""
    from conftest import wait_for
    import subprocess
    import sys
    import urllib.request

    def serve():
        process = subprocess.Popen([sys.executable, "-m", "viewer", "serve", str(folder), "--port", "0",
                                    "--cache-dir", str(cache_dir)], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
        url = process.stdout.readline().rsplit(" at ", 1)[1].strip()
        return process, url

    process, url = serve()
    try:
        wait_for(lambda: len(list(cache_dir.glob("*" + cache_store.SUFFIX))) == 2, timeout=30)
        first = json.load(urllib.request.urlopen(f"{url}/api/sessions/research_team"))
    finally:
        process.terminate()
        process.wait(timeout=10)
    process, url = serve()
    try:
        second = json.load(urllib.request.urlopen(f"{url}/api/sessions/research_team"))
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert second == first
