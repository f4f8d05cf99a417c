"""The CPU of a folder's first walk in one process, until every session is listed and until the walk ends: a Library
with an empty cache, as `serve` makes it, whose groups are listed as found and handed at the end to a pool that reads
none of them (`cold_read.py` times the read). CPU by process_time, so another busy process on the machine barely
moves it; no server, so no request competes with the walk (`versus_agentsview.py --stop-after listed` has both).

    .venv/bin/python benchmarks/first_walk.py FOLDER [--repo CHECKOUT]   # CHECKOUT: another version

Alternate checkouts (`--repo`) in one loop to compare them.
"""

from __future__ import annotations

import tempfile
import time

import timing


class ReadsNone:
    """Stands for the read pool: the groups a walk found are not read here."""

    def read(self, groups, keys: list) -> None:
        self.found = len(keys)

    def expect(self, groups: int) -> None:
        pass

    def stop(self) -> None:
        pass


def main() -> None:
    args = timing.folder_in_checkout(__doc__)
    from viewer.core.host import Host
    from viewer.library.library import Library
    from viewer.store import session_cache

    listed: list[tuple[float, float]] = []  # (CPU, wall) when the last session was listed

    class Timed(Library):
        def list_session(self, session) -> None:
            super().list_session(session)
            listed[:] = [(time.process_time(), time.perf_counter())]

    with tempfile.TemporaryDirectory(prefix="first-walk-") as cache:
        host = Host()
        library = Timed(args.folder, cache=session_cache.for_folder(cache, args.folder, host), host=host)
        library.groups.pool = pool = ReadsNone()
        cpu, wall = time.process_time(), time.perf_counter()
        library.scan()
        done, took = time.process_time(), time.perf_counter()
        (listed_cpu, listed_wall), = listed
        print(f"{args.repo}: {len(library.sessions):,} sessions ({pool.found:,} groups); every one listed after "
              f"{listed_cpu - cpu:.2f} s CPU ({listed_wall - wall:.2f} s wall), the walk over after {done - cpu:.2f} s "
              f"CPU ({took - wall:.2f} s wall)")
        host.close()


if __name__ == "__main__":
    main()
