"""A folder of derived data kept between runs: authenticated entries, written atomically, bounded by LRU eviction.

Entries are plain data encoded with `marshal`, never pickle, in sections each carrying an HMAC-SHA-256; a
truncated, corrupt, foreign-version or tampered entry reads as missing (the caller rebuilds), never raises.
An entry is a file of its own, or one of many small ones written together in a pack (`put(pack=True)`): a first
read of thousands of small sessions makes a file per megabyte of them, not one each.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import io
import itertools
import logging
import marshal
import os
import secrets
import struct
import threading
import time
from collections.abc import Iterator

log = logging.getLogger(__name__)

MAGIC = b"agentview-cache\n"
_HEADER = struct.Struct("<HI")  # length of the version text, number of sections
_SECTION = struct.Struct("<Q32s")  # length of the section (with _RAW), its MAC
_RAW = 1 << 63  # a section's bytes are themselves its value (Raw), not marshal's of it: signed with this in its number
SUFFIX = ".avc"
PACK_SUFFIX = ".avp"  # a pack: its index (entry key -> where its sections are), then their sections
KEY_FILE = "key"
DEFAULT_MAX_BYTES = 4 * 1024**3


RECOUNT_EVERY = 500  # puts between two counts of the folder's bytes (each put adds its own meanwhile)
WRITE_BYTES = 1024 * 1024  # sections encoded before they are written: a small entry in one write, a big one in parts
_IOV_MAX = 512  # buffers given to one os.writev at most (the system's limit is 1,024 or more)
PACK_BYTES = 1024 * 1024  # entries held for a pack before it is written (`flush` writes it sooner)...
PACK_ENTRY_BYTES = 256 * 1024  # ... each weighing less than this (a bigger one is a file of its own)


class CacheStore:
    """Entries by key (any string: the file is named by its hash) in `folder`, at most about `max_bytes` in all."""

    def __init__(self, folder: str, version: str, max_bytes: int = DEFAULT_MAX_BYTES):
        self.folder = folder
        self.version = version.encode()
        self.max_bytes = max_bytes
        os.makedirs(folder, mode=0o700, exist_ok=True)
        self._writing = itertools.count()  # numbers the temporary files of this process's writes (its key's first)
        self._key = self._secret()
        self._total: int | None = None  # bytes of the entries, counted at the first put and kept up to date
        self._puts = 0
        self._empty: bool | None = None  # held no entry when first asked (see `was_empty`)
        # Keyed once, copied for each MAC. SHA-256, not BLAKE2b: where the CPU has SHA instructions (most x86 since
        # 2017-2019, every ARMv8 with its crypto extension) it signs twice as fast, and a woken session checks megabytes
        self._signer = hmac.new(self._key, digestmod="sha256")
        # Packs: the entries held for the next one, key -> (its sections' bytes, how many), and where each entry of
        # the packs in the folder is, key -> (pack path, offset, sections), found when first needed (`_packed`)
        self._pending: dict[str, tuple[bytes, int]] = {}
        self._pending_bytes = 0
        self._in_packs: dict[str, tuple[str, int, int]] | None = None
        self._packs_lock = threading.Lock()  # the first look at the packs (any thread that reads or writes)

    def _secret(self) -> bytes:
        """The folder's key, made by the first process to use it, written whole, then linked into place: no process
        reads it half written and takes it for foreign (what another signed would read as corrupt ever after)."""
        path = os.path.join(self.folder, KEY_FILE)
        while True:
            with contextlib.suppress(FileNotFoundError):
                with open(path, "rb") as kept:
                    key = kept.read()
                if len(key) == 32:
                    return key
                os.unlink(path)  # not a key we wrote: start again (every entry it signed reads as missing)
            key = secrets.token_bytes(32)
            fd, made = self._create()
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(key)
                os.link(made, path)  # fails if another process's key is there already: that one is read
                return key
            except FileExistsError:
                continue
            finally:
                os.unlink(made)

    def _path(self, key: str) -> str:
        return os.path.join(self.folder, _file_name(key))

    def _entry_signer(self, key: str):
        """The MAC of `key`'s entry as far as its sections' own bytes (a copy of it signs each: `_mac`)."""
        signer = self._signer.copy()
        signer.update(self.version + b"\0" + key.encode() + b"\0")
        return signer

    # --- reading -----------------------------------------------------------------------------------------

    def sections(self, key: str, later: bool = False) -> Iterator[object] | None:
        """The entry's sections, decoded one at a time as iterated; None when there is no valid entry.

        A section that fails its check ends the iteration with `CorruptEntry`: the caller drops what it took.
        An entry of its own is newer than a copy in a pack (putting one in a pack removes it). `later`: its Raw
        sections in a file are neither read nor checked now, each a `Later` that reads them when first needed.
        """
        held = self._pending.get(key)
        if held is not None:  # in the pack not written yet
            return self._decode(io.BytesIO(held[0]), held[1], key)
        path = self._path(key)
        opened = self._opened(path)
        if opened is not None:
            return self._decode(*opened, key, later=path if later else None)
        where = self._packed().get(key)
        if where is None:
            return None
        path, offset, count = where
        opened = self._opened(path)
        if opened is None:
            self._forget_pack(path)
            return None
        opened[0].seek(offset)
        return self._decode(opened[0], count, key, whole=False, later=path if later else None)

    def _opened(self, path: str, used: bool = True) -> tuple[object, int] | None:
        """The file at `path` open after its header, and the count of sections its header gives, marked `used` now;
        None when there is none, or it is not one of ours of this version (then it is removed: rewritten later)."""
        try:
            f = open(path, "rb")
        except OSError:
            return None
        try:
            if f.read(len(MAGIC)) != MAGIC:
                raise CorruptEntry("not a cache file")
            length, count = _HEADER.unpack(f.read(_HEADER.size))
            if f.read(length) != self.version:
                raise CorruptEntry("written by another version")
        except (CorruptEntry, struct.error) as error:
            f.close()
            log.info("cache file %s ignored: %s", path, error)
            with contextlib.suppress(OSError):
                os.unlink(path)  # rewritten once its file is read
            return None
        if used:
            with contextlib.suppress(OSError):
                os.utime(path)  # recently used: evicted last
        return f, count

    def _decode(self, f, count: int, key: str, whole: bool = True, later: str | None = None) -> Iterator[object]:
        """The `count` sections at `f`'s position (`whole`: the last bytes of the file); `later`: the file's path,
        its Raw sections given as `Later`s (see `sections`)."""
        entry_signer = self._entry_signer(key)
        with f:
            st, start, first = os.fstat(f.fileno()) if later is not None else None, f.tell(), b""
            for number in range(count):
                head = f.read(_SECTION.size)
                if len(head) != _SECTION.size:
                    raise CorruptEntry("truncated")
                length, mac = _SECTION.unpack(head)
                raw, length = length & _RAW, length & ~_RAW
                first = head if number == 0 else first  # what tells a Later its entry is the one it was read from
                if raw and later is not None:
                    at = f.tell()
                    if at + length > st.st_size:
                        raise CorruptEntry("truncated")
                    f.seek(length, io.SEEK_CUR)
                    yield Later(later, (st.st_dev, st.st_ino), start, first, at, length, mac, number | raw,
                                entry_signer)
                    continue
                data = f.read(length)
                if len(data) != length or not hmac.compare_digest(mac, _mac(entry_signer, number | raw, data)):
                    raise CorruptEntry("a section does not match its MAC (truncated, corrupt or tampered)")
                if raw:  # its bytes, not a copy of them
                    yield data
                    continue
                try:
                    value = marshal.loads(data)
                except (EOFError, ValueError, TypeError) as error:
                    raise CorruptEntry(f"undecodable: {error}") from None
                del data
                yield value
            if whole and f.read(1):
                raise CorruptEntry("bytes after the last section")

    def was_empty(self) -> bool:
        """Whether it held no entry when first asked (looked at once, stopping at the first entry found): then every
        entry is one this process put since, unless another server shares the folder (its entries may go unseen)."""
        if self._empty is None:
            with os.scandir(self.folder) as found:
                self._empty = not any(kept_file(e.name) for e in found)
        return self._empty

    # --- writing -----------------------------------------------------------------------------------------

    def put(self, key: str, sections: Iterator[object], pack: bool = False, encoded: bool = False) -> int:
        """Write the entry (replacing any) from its sections, atomically: a reader sees the old entry or the
        new one, never a part. Returns its size in bytes. Plain data only (marshal refuses other types) or Raw;
        `encoded`: the sections are marshal's bytes of them already (made by another process: library.read_worker).

        `pack`: an entry weighing less than PACK_ENTRY_BYTES is held for a pack instead (read from memory meanwhile),
        written with the others held once they weigh PACK_BYTES, or by `flush`."""
        self._puts += 1
        if self._total is None or self._puts % RECOUNT_EVERY == 0:  # another server may share the folder
            self._total = self.total_bytes()
        path = self._path(key)
        try:
            replaced = os.stat(path).st_size
        except OSError:
            replaced = 0
        signed, first, weight = _encoded(self._entry_signer(key), sections, encoded), [], 0
        if pack:
            for head, data in signed:
                first += (head, data)
                weight += len(data)
                if weight >= PACK_ENTRY_BYTES:
                    break  # a big entry: a file of its own, the rest of it encoded as it is written
            else:
                return self._hold(key, path, replaced, b"".join(first), len(first) // 2)
        fd, temporary = self._create()
        try:
            try:
                size = self._write(fd, first, signed)
            finally:
                os.close(fd)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        self._pending.pop(key, None)  # an entry of its own is read before any copy in a pack (see `sections`)...
        self._packed().pop(key, None)  # ... and is the one `touch` marks used
        self._total += size - replaced
        if self._total > self.max_bytes:  # a walk over every entry only then: thousands of puts stay cheap
            self._evict()
        return size

    def _create(self) -> tuple[int, str]:
        """A new temporary file in the folder, readable by its user only: (its descriptor, its path). Named by this
        process and a count (O_EXCL: one left by a process that had the same id is never written into)."""
        while True:
            path = os.path.join(self.folder, f".writing-{os.getpid()}-{next(self._writing)}.tmp")
            try:
                return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600), path
            except FileExistsError:
                continue

    def _write(self, fd: int, first: list[bytes], rest: Iterator[tuple[bytes, bytes]]) -> int:
        """Write an entry into `fd`: the sections encoded `first`, then the `rest` as they are encoded, WRITE_BYTES
        at a time (a small entry in one write, its header counting its sections); its size."""
        buffers = [MAGIC + _HEADER.pack(len(self.version), 0), self.version, *first]
        buffered, count, size = sum(len(b) for b in first), len(first) // 2, 0
        for head, data in rest:
            buffers += (head, data)
            buffered += len(data)
            count += 1
            if buffered >= WRITE_BYTES or len(buffers) >= _IOV_MAX:
                size += _write_all(fd, buffers)
                buffers, buffered = [], 0
        if size == 0:  # nothing written yet: the header goes out with the count
            buffers[0] = MAGIC + _HEADER.pack(len(self.version), count)
            return _write_all(fd, buffers)
        size += _write_all(fd, buffers)
        os.pwrite(fd, _HEADER.pack(len(self.version), count), len(MAGIC))
        return size

    # --- packs -------------------------------------------------------------------------------------------

    def _hold(self, key: str, path: str, replaced: int, data: bytes, count: int) -> int:
        """Hold an entry's encoded sections for the next pack; the entry of its own it replaces is removed (a copy
        in an earlier pack is replaced by this one: later packs are read after)."""
        if replaced:
            with contextlib.suppress(OSError):
                os.unlink(path)
                self._total -= replaced
        self._pending[key] = (data, count)
        self._pending_bytes += len(data)
        if self._pending_bytes >= PACK_BYTES:
            self.flush()
        return len(data)

    def flush(self) -> None:
        """Write the entries held (see `put`) in one pack: its index of where each entry's sections are, signed as
        a section of its own, then their sections, each signed for its entry as in a file of its own. Without
        room, they are let go (read as missing) with a warning."""
        held = list(self._pending.items())
        if not held:
            return
        index, offset = {}, 0
        for key, (data, count) in held:
            index[key] = (offset, count)
            offset += len(data)
        name = f"{time.time_ns():020d}-{os.getpid()}-{next(self._writing)}{PACK_SUFFIX}"
        listed = marshal.dumps(index)
        head = (MAGIC + _HEADER.pack(len(self.version), 1) + self.version
                + _SECTION.pack(len(listed), _mac(self._entry_signer(_pack_key(name)), 0, listed)) + listed)
        path, packed = os.path.join(self.folder, name), self._packed()
        fd, temporary = self._create()
        try:
            try:
                size = _write_all(fd, [head, *(data for _, (data, _) in held)])
            finally:
                os.close(fd)
            os.replace(temporary, path)
        except OSError as error:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            log.warning("could not write %d entries to the cache: %s", len(held), error)
            size, path = 0, None
        for key, (data, count) in held:
            if self._pending.get(key, (None,))[0] is data:  # not put again meanwhile
                if path is not None:
                    packed[key] = (path, len(head) + index[key][0], count)  # before it leaves `_pending`: always found
                del self._pending[key]
        self._pending_bytes = sum(len(data) for data, _ in list(self._pending.values()))
        if self._total is not None:
            self._total += size
            if self._total > self.max_bytes:
                self._evict()

    def _packed(self) -> dict[str, tuple[str, int, int]]:
        """Where each entry in a pack is: key -> (pack, offset, sections); read from the folder's packs when first
        needed, oldest first (an entry in a later pack replaces its copy in an earlier one), then kept up to date.
        An entry with a file of its own is not in it."""
        if self._in_packs is None:
            with self._packs_lock:
                if self._in_packs is None:
                    with os.scandir(self.folder) as found:
                        names = [e.name for e in found]
                    packed = {}
                    for name in sorted(n for n in names if n.endswith(PACK_SUFFIX) and n[0] != "."):
                        packed.update(self._pack_index(os.path.join(self.folder, name)))
                    # an entry with a file of its own is read from that file (`sections`), the one `touch` marks used
                    own = {n for n in names if n.endswith(SUFFIX)}
                    self._in_packs = {k: where for k, where in packed.items() if _file_name(k) not in own}
        return self._in_packs

    def _pack_index(self, path: str) -> dict[str, tuple[str, int, int]]:
        """The entries of the pack at `path` (none when it fails its checks: then it is removed)."""
        opened = self._opened(path, used=False)
        if opened is None:
            return {}
        f, count = opened
        with f:
            try:
                length, mac = _SECTION.unpack(f.read(_SECTION.size))
                listed = f.read(length)
                if count != 1 or len(listed) != length or not hmac.compare_digest(
                        mac, _mac(self._entry_signer(_pack_key(os.path.basename(path))), 0, listed)):
                    raise CorruptEntry("its index does not match its MAC (truncated, corrupt or tampered)")
                base = f.tell()
                return {key: (path, base + offset, entries) for key, (offset, entries) in marshal.loads(listed).items()}
            except (CorruptEntry, struct.error, EOFError, ValueError, TypeError, AttributeError) as error:
                log.info("cache pack %s ignored: %s", path, error)
        with contextlib.suppress(OSError):
            os.unlink(path)
        return {}

    def _forget_pack(self, path: str) -> None:
        """A pack gone (evicted, or foreign): none of its entries is looked for in it again."""
        packed = self._in_packs
        if packed is not None:
            for key, where in list(packed.items()):
                if where[0] == path:
                    packed.pop(key, None)

    def touch(self, *keys: str) -> None:
        """Mark entries used now (evicted last) without reading them: each one's pack (a pack holding several of them
        once), else its file. A packed entry is not looked for as a file first: a restart touches thousands, each a
        failed system call, and this process puts none as a file without taking it out of the packs' index (`put`)."""
        packs, packed = set(), self._packed()
        for key in keys:
            where = packed.get(key)
            if where is not None:
                packs.add(where[0])
                continue
            with contextlib.suppress(OSError):
                os.utime(self._path(key))
        for pack in packs:
            with contextlib.suppress(OSError):
                os.utime(pack)

    def drop(self, key: str) -> None:
        """Remove an entry: its file, or its place in a pack (the pack's other entries stay)."""
        self._pending.pop(key, None)
        self._packed().pop(key, None)
        with contextlib.suppress(OSError):
            os.unlink(self._path(key))

    def _evict(self) -> None:
        """Remove the least recently used entries until the folder holds at most `max_bytes`."""
        entries = []
        with os.scandir(self.folder) as found:
            for entry in found:
                if kept_file(entry.name):
                    with contextlib.suppress(OSError):
                        st = entry.stat()
                        entries.append((st.st_mtime_ns, st.st_size, entry.path))
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            with contextlib.suppress(OSError):
                os.unlink(path)
                total -= size
                if path.endswith(PACK_SUFFIX):
                    self._forget_pack(path)
        self._total = total

    def total_bytes(self) -> int:
        with os.scandir(self.folder) as found:
            return sum(e.stat().st_size for e in found if kept_file(e.name))


def _file_name(key: str) -> str:
    """The name of the file of an entry of its own."""
    return hashlib.blake2b(key.encode(), digest_size=16).hexdigest() + SUFFIX


def kept_file(name: str) -> bool:
    """Whether a name in the folder is an entry's or a pack's (not its key, not a file being written)."""
    return name.endswith((SUFFIX, PACK_SUFFIX)) and not name.startswith(".")


def _pack_key(name: str) -> str:
    """What a pack's index is signed for: the pack's name (an index copied into another pack does not match)."""
    return "pack " + name


def _encoded(entry_signer, sections: Iterator[object], encoded: bool = False) -> Iterator[tuple[bytes, bytes]]:
    """(head, bytes) of each section of an entry, in order: its length and MAC, then its marshal encoding (the
    section itself when `encoded`, or when it is Raw)."""
    for number, section in enumerate(sections):
        raw = _RAW if type(section) is Raw else 0
        data = section if encoded or raw else marshal.dumps(section)
        yield _SECTION.pack(len(data) | raw, _mac(entry_signer, number | raw, data)), data


def _mac(entry_signer, number: int, data: bytes) -> bytes:
    """The MAC of an entry's section `number` (with _RAW for a Raw one; `entry_signer`: CacheStore._entry_signer)."""
    signer = entry_signer.copy()
    signer.update(number.to_bytes(8, "little"))
    signer.update(data)
    return signer.digest()


def _write_all(fd: int, buffers: list[bytes]) -> int:
    """Write every byte of `buffers`, _IOV_MAX of them a call (a short write goes on where it stopped); how many."""
    total = 0
    for at in range(0, len(buffers), _IOV_MAX):
        some = buffers[at:at + _IOV_MAX]
        size = sum(len(b) for b in some)
        written = os.writev(fd, some)
        if written < size:
            rest = memoryview(b"".join(some))[written:]
            while rest:
                rest = rest[os.write(fd, rest):]
        total += size
    return total


class Raw(bytes):
    """A section that is bytes, kept as they are and read back as bytes: megabytes decoded later (a woken session's
    events) are not copied out of marshal's encoding of them when read."""


class Later:
    """A Raw section of an entry read and checked against its MAC only when first needed (`read`): a woken session's
    events and search index, most of its entry's bytes, which its first page does not read. Its entry's file is
    opened again then: one replaced, removed (evicted) or rewritten since reads as corrupt."""

    __slots__ = ("_path", "_identity", "_start", "_first", "_at", "_length", "_mac", "_number", "_signer")

    def __init__(self, path: str, identity: tuple, start: int, first: bytes, at: int, length: int, mac: bytes,
                 number: int, signer) -> None:
        """`identity`: the file's (device, inode); `first`: its entry's first section's head (length and MAC, at
        `start`), as read then; the section's `length` bytes at `at`, signed `mac` as section `number`."""
        self._path, self._identity, self._start, self._first = path, identity, start, first
        self._at, self._length, self._mac, self._number, self._signer = at, length, mac, number, signer

    def read(self) -> bytes:
        """The section's bytes, checked; a CorruptEntry when they are not there any more, or not the ones signed."""
        try:
            with open(self._path, "rb") as f:
                st = os.fstat(f.fileno())
                f.seek(self._start)
                if (st.st_dev, st.st_ino) != self._identity or f.read(_SECTION.size) != self._first:
                    raise CorruptEntry("its file was replaced")
                f.seek(self._at)
                data = f.read(self._length)
        except OSError as error:
            raise CorruptEntry(f"its file is gone or unreadable: {error}") from None
        if len(data) != self._length or not hmac.compare_digest(self._mac, _mac(self._signer, self._number, data)):
            raise CorruptEntry("a section does not match its MAC (truncated, corrupt or tampered)")
        return data


class CorruptEntry(Exception):
    """An entry that fails its checks: read as missing."""
