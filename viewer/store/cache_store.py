"""A folder of derived data kept between runs: authenticated entries, written atomically, bounded by LRU eviction.

Entries are plain data encoded with `marshal`, never pickle, in sections each carrying a keyed BLAKE2b MAC; a
truncated, corrupt, foreign-version or tampered entry reads as missing (the caller rebuilds), never raises.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import itertools
import logging
import marshal
import os
import secrets
import struct
from collections.abc import Iterator

log = logging.getLogger(__name__)

MAGIC = b"agentview-cache\n"
_HEADER = struct.Struct("<HI")  # length of the version text, number of sections
_SECTION = struct.Struct("<Q32s")  # length of the section, its MAC
SUFFIX = ".avc"
KEY_FILE = "key"
DEFAULT_MAX_BYTES = 4 * 1024**3


RECOUNT_EVERY = 500  # puts between two counts of the folder's bytes (each put adds its own meanwhile)
WRITE_BYTES = 1024 * 1024  # sections encoded before they are written: a small entry in one write, a big one in parts
_IOV_MAX = 512  # buffers given to one os.writev at most (the system's limit is 1,024 or more)


class CacheStore:
    """Entries by key (any string: the file is named by its hash) in `folder`, at most about `max_bytes` in all."""

    def __init__(self, folder: str, version: str, max_bytes: int = DEFAULT_MAX_BYTES):
        self.folder = folder
        self.version = version.encode()
        self.max_bytes = max_bytes
        os.makedirs(folder, mode=0o700, exist_ok=True)
        self._key = self._secret()
        self._total: int | None = None  # bytes of the entries, counted at the first put and kept up to date
        self._puts = 0
        self._empty: bool | None = None  # held no entry when first asked (see `was_empty`)
        self._signer = hashlib.blake2b(key=self._key, digest_size=32)  # keyed once; copied for each MAC
        self._writing = itertools.count()  # numbers the temporary files of this process's writes

    def _secret(self) -> bytes:
        path = os.path.join(self.folder, KEY_FILE)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            with open(path, "rb") as f:
                key = f.read()
            if len(key) == 32:
                return key
            os.unlink(path)  # not a key we wrote: start again (every entry it signed reads as missing)
            return self._secret()
        key = secrets.token_bytes(32)
        with os.fdopen(fd, "wb") as f:
            f.write(key)
        return key

    def _path(self, key: str) -> str:
        return os.path.join(self.folder, hashlib.blake2b(key.encode(), digest_size=16).hexdigest() + SUFFIX)

    def _entry_signer(self, key: str):
        """The MAC of `key`'s entry as far as its sections' own bytes (a copy of it signs each: `_mac`)."""
        signer = self._signer.copy()
        signer.update(self.version + b"\0" + key.encode() + b"\0")
        return signer

    # --- reading -----------------------------------------------------------------------------------------

    def sections(self, key: str) -> Iterator[object] | None:
        """The entry's sections, decoded one at a time as iterated; None when there is no valid entry.

        A section that fails its check ends the iteration with `CorruptEntry`: the caller drops what it took.
        """
        path = self._path(key)
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
            log.info("cache entry %s ignored: %s", path, error)
            with contextlib.suppress(OSError):
                os.unlink(path)  # rewritten once its file is read
            return None
        try:
            os.utime(path)  # recently used: evicted last
        except OSError:
            pass
        return self._decode(f, key, count)

    def _decode(self, f, key: str, count: int) -> Iterator[object]:
        entry_signer = self._entry_signer(key)
        with f:
            for number in range(count):
                head = f.read(_SECTION.size)
                if len(head) != _SECTION.size:
                    raise CorruptEntry("truncated")
                length, mac = _SECTION.unpack(head)
                data = f.read(length)
                if len(data) != length or not hmac.compare_digest(mac, _mac(entry_signer, number, data)):
                    raise CorruptEntry("a section does not match its MAC (truncated, corrupt or tampered)")
                try:
                    value = marshal.loads(data)
                except (EOFError, ValueError, TypeError) as error:
                    raise CorruptEntry(f"undecodable: {error}") from None
                del data
                yield value
            if f.read(1):
                raise CorruptEntry("bytes after the last section")

    def was_empty(self) -> bool:
        """Whether it held no entry when first asked (looked at once, stopping at the first entry found): then every
        entry is one this process put since, unless another server shares the folder (its entries may go unseen)."""
        if self._empty is None:
            with os.scandir(self.folder) as found:
                self._empty = not any(e.name.endswith(SUFFIX) and not e.name.startswith(".") for e in found)
        return self._empty

    # --- writing -----------------------------------------------------------------------------------------

    def put(self, key: str, sections: Iterator[object]) -> int:
        """Write the entry (replacing any) from its sections, atomically: a reader sees the old entry or the
        new one, never a part. Returns its size in bytes. Plain data only (marshal refuses other types)."""
        self._puts += 1
        if self._total is None or self._puts % RECOUNT_EVERY == 0:  # another server may share the folder
            self._total = self.total_bytes()
        path = self._path(key)
        try:
            replaced = os.stat(path).st_size
        except OSError:
            replaced = 0
        fd, temporary = self._create()
        try:
            try:
                size = self._write(fd, key, sections)
            finally:
                os.close(fd)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
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

    def _write(self, fd: int, key: str, sections: Iterator[object]) -> int:
        """Encode and write the entry's sections into `fd`, WRITE_BYTES at a time (a small entry in one write, its
        header counting its sections); its size."""
        entry_signer, prefix = self._entry_signer(key), MAGIC + _HEADER.pack(len(self.version), 0)
        buffers, buffered, count, size = [prefix, self.version], 0, 0, 0
        for section in sections:
            data = marshal.dumps(section)
            buffers += (_SECTION.pack(len(data), _mac(entry_signer, count, data)), data)
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

    def touch(self, key: str) -> None:
        """Mark an entry used now (evicted last) without reading it."""
        with contextlib.suppress(OSError):
            os.utime(self._path(key))

    def drop(self, key: str) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self._path(key))

    def _evict(self) -> None:
        """Remove the least recently used entries until the folder holds at most `max_bytes`."""
        entries = []
        with os.scandir(self.folder) as found:
            for entry in found:
                if entry.name.endswith(SUFFIX) and not entry.name.startswith("."):
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
        self._total = total

    def total_bytes(self) -> int:
        with os.scandir(self.folder) as found:
            return sum(e.stat().st_size for e in found if e.name.endswith(SUFFIX))


def _mac(entry_signer, number: int, data: bytes) -> bytes:
    """The MAC of an entry's section `number` (`entry_signer`: CacheStore._entry_signer)."""
    signer = entry_signer.copy()
    signer.update(number.to_bytes(8, "little"))
    signer.update(data)
    return signer.digest()


def _write_all(fd: int, buffers: list[bytes]) -> int:
    """Write every byte of `buffers` (a short write goes on where it stopped); how many."""
    total = sum(len(b) for b in buffers)
    written = os.writev(fd, buffers) if buffers else 0
    if written < total:
        rest = memoryview(b"".join(buffers))[written:]
        while rest:
            rest = rest[os.write(fd, rest):]
    return total


class CorruptEntry(Exception):
    """An entry that fails its checks: read as missing."""
