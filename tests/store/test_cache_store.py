"""The cache's entries on disk: a put writes an entry in few system calls (thousands of sessions are kept in a
first read) and it reads back whole, however its sections were grouped into writes; small entries go in packs,
each entry of a pack authenticated on its own."""

from __future__ import annotations

import marshal
import os
from pathlib import Path

import pytest

from viewer.store import cache_store, code_version


def kept_entries(folder: Path, version: str | None = None) -> list[tuple[Path, int, int]]:
    """(file, first byte, end) of every entry kept in a cache folder: a file of its own whole, and each entry of a
    pack (up to the next one, or the pack's end)."""
    found = [(p, 0, p.stat().st_size) for p in sorted(folder.iterdir()) if p.suffix == cache_store.SUFFIX]
    store = cache_store.CacheStore(str(folder), version or code_version.version())
    starts: dict[str, list[int]] = {}
    for path, offset, _ in store._packed().values():
        starts.setdefault(path, []).append(offset)
    for path, offsets in sorted(starts.items()):
        ends = sorted(offsets)[1:] + [os.path.getsize(path)]
        found += [(Path(path), start, end) for start, end in zip(sorted(offsets), ends)]
    return found


def writes() -> int:
    """Write system calls this process has made so far (the kernel counts them: /proc/self/io)."""
    with open("/proc/self/io") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("syscw:"))


def test_a_small_entry_goes_to_disk_in_one_write(tmp_path):
    store = cache_store.CacheStore(str(tmp_path / "c"), "v")
    sections = [("head", {"count": 3}), ("search", {"word": b"\0" * 40}), ("end", 3)]
    before = writes()
    store.put("k", iter(sections))
    assert writes() - before == 1
    assert list(store.sections("k")) == sections
    assert sorted(os.listdir(tmp_path / "c")) == sorted(["key", os.path.basename(store._path("k"))])


def test_an_entry_of_many_sections_is_written_in_parts_and_reads_back_whole(tmp_path):
    store = cache_store.CacheStore(str(tmp_path / "c"), "v")
    sections = [("events", [os.urandom(1000) for _ in range(100)]) for _ in range(40)]  # 4 MB in 40 sections
    before = writes()
    size = store.put("k", iter(sections))
    parts = size // 2**20 + 1  # a megabyte at a time
    assert writes() - before <= parts + 1  # each part, and the header's count written once all are
    assert list(store.sections("k")) == sections
    assert size == os.path.getsize(store._path("k"))



def test_raw_sections_read_back_as_their_bytes_and_a_flipped_flag_is_a_corrupt_entry(tmp_path):
    """A Raw section is its bytes on disk, read back as bytes (not marshal's decoding of them), alone, in a pack and
    from another process's encoded sections; the flag saying so is signed with it: flipped, the entry is corrupt."""
    store = cache_store.CacheStore(str(tmp_path / "c"), "v")
    slots = marshal.dumps(["a slot"] * 1000)  # bytes marshal would decode, were the flag not signed
    sections = [("events", 1000), cache_store.Raw(slots), ("end", 1)]
    store.put("alone", iter(sections))
    store.put("packed", iter(sections), pack=True)
    store.put("encoded", iter([marshal.dumps(("events", 1000)), cache_store.Raw(slots), marshal.dumps(("end", 1))]),
              encoded=True)
    assert entries_of(store, "packed") == {"packed": [("events", 1000), slots, ("end", 1)]}
    store.flush()
    for key in ("alone", "packed", "encoded"):
        got = list(store.sections(key))
        assert got == [("events", 1000), slots, ("end", 1)] and type(got[1]) is bytes
    path = store._path("alone")
    data = bytearray(Path(path).read_bytes())
    at = data.index(slots) - cache_store._SECTION.size
    length, mac = cache_store._SECTION.unpack_from(data, at)
    assert length == len(slots) | cache_store._RAW
    cache_store._SECTION.pack_into(data, at, len(slots), mac)  # the flag off: marshal's, not what was signed
    Path(path).write_bytes(bytes(data))
    assert entries_of(store, "alone") == {"alone": "corrupt"}


def entries_of(store: cache_store.CacheStore, *keys: str) -> dict[str, list | None]:
    """What each key reads as: its sections, None when missing, "corrupt" when they fail their check."""
    found = {}
    for key in keys:
        kept = store.sections(key)
        try:
            found[key] = None if kept is None else list(kept)
        except cache_store.CorruptEntry:
            found[key] = "corrupt"
    return found


def packed(folder: Path, *keys: str) -> cache_store.CacheStore:
    """A store at `folder` with an entry of three sections for each key, put in one pack."""
    store = cache_store.CacheStore(str(folder), "v")
    for key in keys:
        store.put(key, iter(sections_of(key)), pack=True)
    store.flush()
    return store


def sections_of(key: str) -> list:
    return [("head", key), ("data", key.encode() * 300), ("end", 1)]


def test_small_entries_go_in_one_pack_read_from_memory_until_it_is_written(tmp_path):
    folder = tmp_path / "c"
    store = cache_store.CacheStore(str(folder), "v")
    for key in ("a", "b", "c"):
        store.put(key, iter(sections_of(key)), pack=True)
    assert os.listdir(folder) == ["key"]  # held, not written yet...
    assert entries_of(store, "a", "b", "c") == {k: sections_of(k) for k in "abc"}  # ... and read meanwhile
    store.flush()
    assert [p.suffix for p in folder.iterdir() if p.name != "key"] == [cache_store.PACK_SUFFIX]
    for reader in (store, cache_store.CacheStore(str(folder), "v")):  # this run's, and a restart's
        assert entries_of(reader, "a", "b", "c", "d") == {**{k: sections_of(k) for k in "abc"}, "d": None}


def test_an_entry_put_again_reads_as_put_last_in_a_pack_or_on_its_own(tmp_path):
    folder = tmp_path / "c"
    store = packed(folder, "a", "b")
    store.put("a", iter([("alone", 1)]))
    assert entries_of(store, "a")["a"] == entries_of(cache_store.CacheStore(str(folder), "v"), "a")["a"] == [
        ("alone", 1)]
    store.put("a", iter([("packed again", 2)]), pack=True)
    store.flush()
    assert len(list(folder.glob("*" + cache_store.SUFFIX))) == 0  # the one of its own went
    again = cache_store.CacheStore(str(folder), "v")
    assert entries_of(again, "a", "b") == entries_of(store, "a", "b") == {"a": [("packed again", 2)],
                                                                        "b": sections_of("b")}


def test_touch_marks_used_the_copy_an_entry_is_read_from(tmp_path):
    """A packed entry's pack, and an entry put on its own after it was packed: its own file, not the pack."""
    folder = tmp_path / "c"
    store = packed(folder, "a", "b")
    pack, = folder.glob("*" + cache_store.PACK_SUFFIX)
    store.put("a", iter([("alone", 1)]))
    alone, = folder.glob("*" + cache_store.SUFFIX)
    for reader in (store, cache_store.CacheStore(str(folder), "v")):  # this run's, and a restart's
        for path in (pack, alone):
            os.utime(path, ns=(10**9, 10**9))  # used long ago
        reader.touch("a")
        assert alone.stat().st_mtime_ns > 10**9 and pack.stat().st_mtime_ns == 10**9
        reader.touch("b")
        assert pack.stat().st_mtime_ns > 10**9


def test_an_entry_put_on_its_own_then_gone_reads_as_missing_not_as_the_copy_it_replaced(tmp_path):
    """Its file gone (evicted, or removed by another server sharing the folder), the run that put it finds none: the
    copy in a pack it replaced is not read again."""
    folder = tmp_path / "c"
    store = packed(folder, "a", "b")
    store.put("a", iter([("alone", 1)]))
    alone, = folder.glob("*" + cache_store.SUFFIX)
    alone.unlink()
    assert entries_of(store, "a", "b") == {"a": None, "b": sections_of("b")}


def test_a_tampered_entry_of_a_pack_reads_as_corrupt_and_loses_nothing_else(tmp_path):
    folder = tmp_path / "c"
    offset = packed(folder, "a", "b", "c")._packed()["b"][1]
    (path, start, end), = [span for span in kept_entries(folder, "v") if span[1] == offset]
    data = bytearray(path.read_bytes())
    data[(start + end) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    store = cache_store.CacheStore(str(folder), "v")
    assert entries_of(store, "a", "b", "c") == {"a": sections_of("a"), "b": "corrupt", "c": sections_of("c")}
    store.drop("b")  # as a reader does with a corrupt entry: the pack's others stay
    assert entries_of(store, "a", "b", "c") == {"a": sections_of("a"), "b": None, "c": sections_of("c")}
    assert entries_of(cache_store.CacheStore(str(folder), "v"), "a", "c") == {k: sections_of(k) for k in "ac"}


def test_a_truncated_pack_keeps_the_entries_before_the_cut(tmp_path):
    folder = tmp_path / "c"
    packed(folder, "a", "b", "c")
    spans = sorted(kept_entries(folder, "v"), key=lambda span: span[1])
    path, start, end = spans[-1]
    path.write_bytes(path.read_bytes()[: (start + end) // 2])
    store = cache_store.CacheStore(str(folder), "v")
    read = entries_of(store, "a", "b", "c")
    assert sorted(map(str, read.values())).count("corrupt") == 1
    assert [k for k, v in read.items() if v == "corrupt"] == [
        k for k, where in store._packed().items() if where[1] == start]
    assert all(v == sections_of(k) for k, v in read.items() if v != "corrupt")


def test_a_pack_whose_index_was_tampered_reads_as_missing_and_nothing_else(tmp_path):
    folder = tmp_path / "c"
    store = packed(folder, "a", "b")
    store.put("alone", iter(sections_of("alone")))
    pack, = folder.glob("*" + cache_store.PACK_SUFFIX)
    data = bytearray(pack.read_bytes())
    data[len(cache_store.MAGIC) + 40] ^= 0x01  # in its index's section (after the header and the version, "v")
    pack.write_bytes(bytes(data))
    again = cache_store.CacheStore(str(folder), "v")
    assert entries_of(again, "a", "b", "alone") == {"a": None, "b": None, "alone": sections_of("alone")}
    assert not pack.exists()  # removed: its sessions are kept again once read


def test_a_pack_is_evicted_whole_when_the_cache_outgrows_its_size(tmp_path):
    folder = tmp_path / "c"
    store = cache_store.CacheStore(str(folder), "v", max_bytes=5000)
    store.put("first", iter(sections_of("first")), pack=True)
    store.put("second", iter(sections_of("second")), pack=True)
    store.flush()
    pack, = folder.glob("*" + cache_store.PACK_SUFFIX)
    os.utime(pack, ns=(10**9, 10**9))  # used long ago
    for key in ("third", "fourth"):
        store.put(key, iter(sections_of(key)), pack=True)
    store.flush()
    assert not pack.exists() and store.total_bytes() <= 5000
    assert entries_of(store, "first", "second", "third", "fourth") == {
        "first": None, "second": None, "third": sections_of("third"), "fourth": sections_of("fourth")}


def test_raw_sections_left_for_later_are_read_and_checked_when_first_needed(tmp_path):
    """`sections(later=True)` neither reads nor checks an entry's Raw sections: each is a Later that does when read,
    from the entry it was found in (alone or in a pack). Tampered, or its entry written again or evicted since, it
    reads as corrupt; the sections decoded at once are checked at once, as always."""
    store = cache_store.CacheStore(str(tmp_path / "c"), "v")
    slots = os.urandom(3000)
    for key, pack in (("alone", False), ("packed", True)):
        store.put(key, iter([("head", {"count": 1}), "events", cache_store.Raw(slots), ("end", 1)]), pack=pack)
    store.flush()
    for key in ("alone", "packed"):
        head, name, later, end = store.sections(key, later=True)
        assert (head, name, end) == (("head", {"count": 1}), "events", ("end", 1))
        assert type(later) is cache_store.Later and later.read() == slots
        assert list(store.sections(key)) == [head, name, slots, end]  # bytes read at once without `later`
    path = Path(store._path("alone"))
    at = path.read_bytes().index(slots[:64])

    def flipped():
        data = bytearray(path.read_bytes())
        data[at + 1000] ^= 0xFF
        path.write_bytes(bytes(data))

    later = list(store.sections("alone", later=True))[2]
    flipped()  # in place: the same file
    with pytest.raises(cache_store.CorruptEntry):
        later.read()
    flipped()  # back as it was
    assert later.read() == slots
    later = list(store.sections("alone", later=True))[2]
    store.put("alone", iter([("head", {"count": 2}), "events", cache_store.Raw(slots), ("end", 2)]))
    with pytest.raises(cache_store.CorruptEntry):  # the entry written again: not the one it was found in
        later.read()
    later = list(store.sections("alone", later=True))[2]
    store.drop("alone")
    with pytest.raises(cache_store.CorruptEntry):  # evicted
        later.read()


START_TOGETHER = """
import sys, time
from viewer.store.cache_store import CacheStore
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))
store = CacheStore(sys.argv[1], "v1")
store.put("mine " + sys.argv[3], iter(["written by " + sys.argv[3]]))
"""


def test_stores_made_at_once_on_a_new_folder_share_one_key_so_each_reads_what_the_others_wrote(tmp_path):
    """Two viewers started together on an empty cache: a key file made and written in two steps let one read it
    empty, take it for foreign and replace it, so what the other signed read as missing ever after."""
    import subprocess
    import sys
    import time

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    for round_ in range(6):
        folder = tmp_path / f"cache{round_}"
        at = time.time() + 1.0  # after every process has started and imported
        runs = [subprocess.Popen([sys.executable, "-c", START_TOGETHER, str(folder), str(at), str(n)], env=env)
                for n in range(6)]
        assert [run.wait(timeout=60) for run in runs] == [0] * 6
        store = cache_store.CacheStore(str(folder), "v1")
        assert [_read(store, f"mine {n}") for n in range(6)] == [f"written by {n}" for n in range(6)], round_


def _read(store, key: str):
    try:
        return next(store.sections(key), None)
    except cache_store.CorruptEntry:
        return "signed by another key"
