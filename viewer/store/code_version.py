"""The version of what the persistent cache keeps: a digest of the code that builds it.

An entry holds what the packages below read, classify, index and encode; any change to one of their files
(a rule of a format, how an event is classified, a section's layout) must make every entry written before it
read as foreign, or a restart would serve an index the new code would not build. So the version is the digest
of those packages' sources, not a number someone has to remember to bump.
"""

from __future__ import annotations

import functools
import hashlib
import marshal
import sys
from pathlib import Path

# The packages whose code makes what the cache keeps (the layers below it, and the store itself).
PACKAGES = ("core", "files", "formats", "search", "index", "store")
VIEWER = Path(__file__).resolve().parents[1]


def digest(viewer: Path, packages: tuple[str, ...] = PACKAGES) -> str:
    """BLAKE2b over every file of `packages` under `viewer` (names and bytes, in a fixed order; compiled
    files left out: they follow the sources)."""
    h = hashlib.blake2b(digest_size=16)
    for package in packages:
        root = viewer / package
        for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            data = path.read_bytes()
            h.update(f"{path.relative_to(viewer).as_posix()}\0{len(data)}\0".encode())
            h.update(data)
    return h.hexdigest()


@functools.cache
def version(viewer: Path = VIEWER) -> str:
    """The cache version of the code under `viewer` (this process's by default): the code's digest, the marshal
    format and the Python it runs on. Computed once: the sources do not change under a running server."""
    return (f"code {digest(viewer)}, marshal {marshal.version}, "
            f"python {sys.version_info[0]}.{sys.version_info[1]}")
