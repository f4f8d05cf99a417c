"""The CPU of `/api/status`'s count asked ten times a second while a folder is read cold: a Library with an empty
cache reads it in one thread (no read workers), another asks its count (reads.folder_status.Counts) every 0.1 s for SECONDS,
as `versus_agentsview.py` does while it waits for every session to be searchable.

    .venv/bin/python benchmarks/status_asks.py FOLDER [--repo CHECKOUT]   # CHECKOUT: another version

Prints the asks made, the asking thread's CPU in all and an ask, and the last count (how far the read got).
"""

from __future__ import annotations

import tempfile
import threading
import time

import timing

SECONDS = 30.0  # of the read asked about (the first seconds of a big folder's)


def main() -> None:
    args = timing.folder_in_checkout(__doc__)
    from viewer.core.host import Host
    from viewer.core.tuning import Tuning
    from viewer.library.library import Library
    from viewer.reads.folder_status import Counts
    from viewer.store import session_cache

    with tempfile.TemporaryDirectory(prefix="status-asks-") as cache_dir:
        host = Host(Tuning(read_workers=0))
        library = Library(args.folder, cache=session_cache.for_folder(cache_dir, args.folder, host), host=host)
        reader = threading.Thread(target=library.scan, daemon=True)
        reader.start()
        counts, asks, cpu, last = Counts(), 0, 0.0, None
        end = time.monotonic() + SECONDS
        while True:  # asked once at least, however soon the read ends
            started = time.thread_time()
            last = counts.of(library, (True, 0))  # asked as during a first scan
            cpu += time.thread_time() - started
            asks += 1
            if time.monotonic() >= end or not reader.is_alive():
                break
            time.sleep(0.1)
        each = cpu / max(asks, 1) * 1e3
        print(f"{args.repo}: {asks} asks, {cpu * 1e3:.0f} ms of CPU counting ({each:.2f} ms an ask); "
              f"last {last[0] if last else None}", flush=True)
        host.stopping.set()
        reader.join()  # the group under way ends (Groups.read_after stops at `stopping`)


if __name__ == "__main__":
    main()
