"""What one file may cost, and rewrites found by content, at the reader level.

The caps are parameters (`tailer.Limits`): these tests lower them to keep the files small; the full-size
figures (a 2 GB line, a 2 GB blank-line bomb, a `[{},{},...]` snapshot) are measured by
benchmarks/hostile_files.py.
"""

from __future__ import annotations

import gzip
import json
import os
import tracemalloc

import pytest

from events import created, say
from conftest import write_events
from viewer.core.host import Host
from viewer.core.tuning import Tuning
from viewer.files import file_source, tailer, whole_file
from viewer.formats.ai_agent import SnapshotReader
from viewer.library.library import Library
from viewer.files.tailer import FileTailer, Limits
from viewer.files.whole_file import GzipReader

KB, MB = 1024, 1024 * 1024


def numbered(result):
    return [(line.number, line.data) for line in result.lines]


def peak_allocated(action):
    """What `action()` returns, and the most memory Python held for it at once."""
    tracemalloc.start()
    try:
        value = action()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return value, peak


# --- item 4: over-long lines are skipped while they stream by, never held whole ---------------------

def test_an_over_long_line_is_skipped_reported_once_and_the_lines_around_it_kept(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a": 1}\n' + b"x" * 5000 + b'\n{"b": 2}\n')
    result = FileTailer(path, limits=Limits(max_line_bytes=1000)).read()
    assert numbered(result) == [(1, b'{"a": 1}'), (3, b'{"b": 2}')]
    assert [(kind, line) for kind, line, _ in result.problems] == [("line_too_long", 2)]
    assert result.problems[0][2] == "a line of 5,000 bytes skipped (limit 1,000 bytes, --max-line-bytes)"


def test_a_long_line_arriving_in_pieces_is_never_held_beyond_the_cap(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a": 1}\n')
    reader = FileTailer(path, limits=Limits(max_line_bytes=64 * KB))
    assert numbered(reader.read()) == [(1, b'{"a": 1}')]
    problems = []
    for _ in range(40):  # a 2.5 MB line written 64 kB at a time, no newline yet: read after each write
        with open(path, "ab") as f:
            f.write(b"y" * (64 * KB))
        result = reader.read()
        assert result.lines == []
        assert len(reader._partial) <= 64 * KB  # only a counter while skipping
        problems += result.problems
    with open(path, "ab") as f:
        f.write(b'\n{"c": 3}\n')
    result = reader.read()
    assert numbered(result) == [(3, b'{"c": 3}')] and result.lines[0].offset == path.stat().st_size - 9
    assert [(kind, line) for kind, line, _ in problems + result.problems] == [("line_too_long", 2)]


def test_a_huge_line_without_newline_costs_one_chunk_not_its_size(tmp_path):
    path = tmp_path / "s.jsonl"
    with open(path, "wb") as f:
        for _ in range(12):
            f.write(b"z" * (8 * MB))  # 96 MB, one line, no newline
    reader = FileTailer(path, limits=Limits(max_line_bytes=1 * MB))
    result, peak = peak_allocated(reader.read)
    assert result.lines == [] and [p[0] for p in result.problems] == ["line_too_long"]
    assert peak < 3 * tailer.READ_CHUNK + 1 * MB  # a chunk read and its slice, the line's first MB; never the line



def test_a_small_file_is_read_in_one_read_of_its_size_and_one_growing_meanwhile_is_read_on(tmp_path, monkeypatch):
    """A cold read of thousands of small files: each costs one read of its size (not a READ_CHUNK buffer, and no
    second read to find its end); bytes a writer appends while it is read are read on."""
    path = tmp_path / "s.jsonl"
    lines = [json.dumps({"n": i, "text": "x" * 300}).encode() for i in range(30)]
    path.write_bytes(b"\n".join(lines) + b"\n")
    size = path.stat().st_size
    reads, real = [], os.pread
    monkeypatch.setattr(file_source, "_PREAD", lambda fd, length, offset: reads.append((offset, length)) or real(fd, length, offset))
    result = FileTailer(path).read()
    assert [line.data for line in result.lines] == lines
    assert reads == [(0, size + 1)]

    grown = tmp_path / "grown.jsonl"
    grown.write_bytes(b"\n".join(lines) + b"\n")
    more = [json.dumps({"n": i}).encode() for i in range(30, 40)]

    def appended_while_read(fd, length, offset):  # a writer appends right after the reader looked at the file
        if not reads:
            with open(grown, "ab") as f:
                f.write(b"\n".join(more) + b"\n")
        reads.append((offset, length))
        return real(fd, length, offset)

    reads.clear()
    monkeypatch.setattr(file_source, "_PREAD", appended_while_read)
    result = FileTailer(grown).read()
    assert [line.data for line in result.lines] == lines + more
    assert reads[0] == (0, size + 1) and reads[1][1] == tailer.READ_CHUNK

def test_blank_lines_are_counted_not_kept(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'\n\n{"a": 1}\n\n\n{"b": 2}\n\n')
    result = FileTailer(path).read()
    assert numbered(result) == [(3, b'{"a": 1}'), (6, b'{"b": 2}')]
    assert [line.offset for line in result.lines] == [2, 13]


def test_a_gzip_line_too_long_is_skipped_and_the_lines_around_it_kept(tmp_path):
    path = tmp_path / "s.jsonl.gz"
    with gzip.open(path, "wb") as f:
        f.write(b'{"a": 1}\n' + b"x" * (30 * MB) + b'\n{"b": 2}\n')
    reader = GzipReader(path, limits=Limits(max_line_bytes=1 * MB))
    result, peak = peak_allocated(reader.read)
    assert numbered(result) == [(1, b'{"a": 1}'), (3, b'{"b": 2}')]
    assert [(kind, line) for kind, line, _ in result.problems] == [("line_too_long", 2)]
    assert peak < 3 * whole_file.READ_CHUNK + 2 * MB


def test_a_gzip_bomb_of_blank_lines_stops_at_the_file_cap(tmp_path):
    path = tmp_path / "bomb.jsonl.gz"
    with gzip.open(path, "wb", compresslevel=9) as f:
        f.write(b'{"a": 1}\n')
        for _ in range(25):
            f.write(b"\n" * (8 * MB))  # 200 MB of blank lines from a few hundred kB
    assert path.stat().st_size < 1 * MB
    reader = GzipReader(path, limits=Limits(max_file_bytes=32 * MB))
    result, peak = peak_allocated(reader.read)
    assert numbered(result) == [(1, b'{"a": 1}')]
    assert [kind for kind, _, _ in result.problems] == ["too_large"]
    assert peak < 3 * whole_file.READ_CHUNK + 2 * MB


def test_the_lines_a_gzip_keeps_never_exceed_the_file_cap(tmp_path):
    path = tmp_path / "big.jsonl.gz"
    line = json.dumps(say("m", "a", "w" * 1000)).encode() + b"\n"
    with gzip.open(path, "wb") as f:
        f.write(line * 10_000)  # about 10 MB
    result = GzipReader(path, limits=Limits(max_file_bytes=2 * MB)).read()
    assert sum(len(line.data) + 1 for line in result.lines) <= 2 * MB
    assert 0 < len(result.lines) < 10_000 and [kind for kind, _, _ in result.problems] == ["too_large"]


def test_a_snapshot_of_many_empty_objects_is_too_large_before_it_is_parsed(tmp_path):
    path = tmp_path / "bomb.json.gz"
    with gzip.open(path, "wb", compresslevel=9) as f:
        f.write(b"[" + b"{}," * (10 * MB) + b"{}]")  # 30 MB: 10M dicts, over 700 MB once parsed
    assert path.stat().st_size < 1 * MB
    result, peak = peak_allocated(SnapshotReader(path).read)  # the default cap
    assert result.lines == [] and [kind for kind, _, _ in result.problems] == ["too_large"]
    assert peak < 3 * whole_file.READ_CHUNK + 2 * MB


def test_a_snapshot_within_the_cap_is_read(tmp_path):
    path = tmp_path / "ok.json"
    path.write_bytes(b'{"opTree": {"id": "x"}}')
    result = SnapshotReader(path).read()
    assert numbered(result) == [(1, b'{"opTree": {"id": "x"}}')] and result.problems == []


def test_the_library_lists_what_its_readers_found(tmp_path):
    write_events(tmp_path / "s.jsonl", [created("m1", "a"), say("m2", "a", "x" * 3000), say("m3", "a", "after")])
    with gzip.open(tmp_path / "g.jsonl.gz", "wt") as f:
        f.write("".join(json.dumps(say(f"m{i}", "a", "y" * 100)) + "\n" for i in range(100)))
    library = Library(tmp_path, host=Host(Tuning(limits=Limits(max_line_bytes=2000, max_file_bytes=4000))))
    library.scan()
    s = library.get("s")
    assert [s.events[p]["message_id"] for p in range(s.count)] == ["m1", "m3"]
    assert [(p.kind, p.line) for p in s.problems] == [("line_too_long", 2)]
    (g,) = [session for session in library.sessions.values() if session.path.endswith(".gz")]
    assert 0 < g.count < 100 and [p.kind for p in g.problems] == ["too_large"]


# --- item 6: a rewrite is found by content, not only by size ----------------------------------------

def test_a_file_truncated_and_rewritten_with_more_bytes_between_reads_is_read_again(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"n": "one"}\n{"n": "two"}\n')
    reader = FileTailer(path)
    reader.read()
    inode = path.stat().st_ino
    with open(path, "wb") as f:  # same inode, truncated, then longer than before
        f.write(b'{"n": "ONE"}\n{"n": "TWO"}\n{"n": "three"}\n')
    assert path.stat().st_ino == inode
    result = reader.read()
    assert result.restarted
    assert numbered(result) == [(1, b'{"n": "ONE"}'), (2, b'{"n": "TWO"}'), (3, b'{"n": "three"}')]
    with open(path, "ab") as f:
        f.write(b'{"n": "four"}\n')
    result = reader.read()  # an append after it is an append
    assert not result.restarted and numbered(result) == [(4, b'{"n": "four"}')]


def test_a_rewrite_of_the_same_size_is_read_again(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"n": "one"}\n')
    reader = FileTailer(path)
    reader.read()
    with open(path, "r+b") as f:
        f.write(b'{"n": "two"}\n')
    result = reader.read()
    assert result.restarted and numbered(result) == [(1, b'{"n": "two"}')]


def test_the_check_costs_one_small_read_and_an_idle_poll_none(tmp_path, monkeypatch):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"a" * 100 + b"\n")
    reader = FileTailer(path)
    reader.read()
    reads = []
    real = os.pread
    monkeypatch.setattr(file_source, "_PREAD", lambda fd, length, offset: reads.append((offset, length)) or real(fd, length, offset))
    past = path.stat().st_mtime_ns - 10 * tailer.RACY_NS
    os.utime(path, ns=(past, past))  # written long ago: its status alone says nothing changed
    reader.read()  # the mtime moved: checked once
    reads.clear()
    calls = []
    for name in ("stat", "open", "fstat"):
        real_call = getattr(os, name)
        monkeypatch.setattr(os, name, lambda *a, _name=name, _real=real_call, **k: calls.append(_name) or _real(*a, **k))
    idle = reader.read()
    monkeypatch.undo()
    monkeypatch.setattr(file_source, "_PREAD", lambda fd, length, offset: reads.append((offset, length)) or real(fd, length, offset))
    assert idle.lines == [] and reads == [] and calls == ["stat"]  # idle: one stat, no open, no read
    with open(path, "ab") as f:
        f.write(b"b" * 10_000 + b"\n")
    assert len(reader.read().lines) == 1
    checks = [r for r in reads if r[0] < 101]
    assert checks == [(0, 101)]  # one read of the bytes before the offset, then only new bytes
    assert all(length <= tailer.FINGERPRINT_BYTES for _, length in checks)


def test_an_evicted_file_reopened_is_checked_to_be_the_one_indexed(tmp_path):
    path = write_events(tmp_path / "s.jsonl", [created("m1", "a"), say("m2", "a", "first version")])
    write_events(tmp_path / "t.jsonl", [created("n1", "b")])
    library = Library(tmp_path, host=Host(Tuning(open_files=1)))
    library.scan()  # t was read after s: s's descriptor is closed
    s = library.get("s")
    assert s.events.load(1)["content"] == "first version"  # reopened: still the same file
    library.get("t").events.load(0)  # closes s again
    replacement = write_events(tmp_path / "new.tmp", [created("m1", "a"), say("m2", "a", "second version!")])
    os.replace(replacement, path)  # another inode at the same name
    event = s.events.load(1)
    assert event["event_type"] == "changed_on_disk"  # never the other file's bytes
    library.refresh(str(path))
    assert s.events.load(1)["content"] == "second version!"


def test_an_evicted_file_rewritten_in_place_is_not_read_at_its_old_offsets(tmp_path):
    path = write_events(tmp_path / "s.jsonl", [created("m1", "a"), say("m2", "a", "first version")])
    write_events(tmp_path / "t.jsonl", [created("n1", "b")])
    library = Library(tmp_path, host=Host(Tuning(open_files=1)))
    library.scan()
    s = library.get("s")
    data = path.read_bytes()
    with open(path, "r+b") as f:  # same inode, same size, other bytes (still valid JSON, other content)
        f.write(data.replace(b"first version", b"FIRST VERSION"))
    assert s.events.load(1)["event_type"] == "changed_on_disk"


@pytest.mark.parametrize("cap", [1, 3])
def test_descriptors_never_exceed_the_pool_cap(tmp_path, cap):
    for i in range(30):
        write_events(tmp_path / f"s{i}.jsonl", [created(f"m{i}", "a"), say(f"n{i}", "a", f"said {i}")])
    host = Host(Tuning(open_files=cap))
    library = Library(tmp_path, host=host)
    library.scan()
    assert 0 < host.files.held() <= cap
    for i in range(30):
        assert library.get(f"s{i}").events.load(1)["content"] == f"said {i}"
        assert 0 < host.files.held() <= cap


def test_serve_takes_its_caps_from_flags(tmp_path):
    from conftest import serve, wait_for
    import urllib.request

    write_events(tmp_path / "s.jsonl", [created("m1", "a"), say("m2", "a", "x" * 3000), say("m3", "a", "after")])
    with gzip.open(tmp_path / "g.jsonl.gz", "wt") as f:
        f.write("".join(json.dumps(say(f"n{i}", "a", "y" * 100)) + "\n" for i in range(100)))

    def problems(session_id):
        with urllib.request.urlopen(f"{server.url}/api/sessions/{session_id}/problems", timeout=10) as response:
            return [(p["kind"], p["line"]) for p in json.load(response)["problems"]] or None

    with serve(tmp_path, "--max-line-bytes", "2000", "--max-file-bytes", "4000") as server:
        assert wait_for(lambda: problems("s"), timeout=10) == [("line_too_long", 2)]
        with urllib.request.urlopen(f"{server.url}/api/sessions", timeout=10) as response:
            (g,) = [s["id"] for s in json.load(response)["sessions"] if s["path"] == "g.jsonl.gz"]
        assert wait_for(lambda: problems(g), timeout=10) == [("too_large", None)]


@pytest.mark.parametrize("reader", [FileTailer, GzipReader, SnapshotReader])
def test_a_file_swapped_for_a_fifo_is_refused_by_the_reader_never_waited_on(tmp_path, reader):
    from events import run_with_timeout
    from viewer.files.safe_open import NotRegularFile

    path = tmp_path / {FileTailer: "s.jsonl", GzipReader: "s.jsonl.gz", SnapshotReader: "s.json"}[reader]
    os.mkfifo(path)  # no writer: a blocking open would wait forever

    def read():
        try:
            reader(path).read()
        except NotRegularFile as refused:
            return refused.kind
        return None

    assert run_with_timeout(read, 5) == "not_a_regular_file"
