"""Where the CPU of a folder's cold read goes, by part: cold_read.py's read, each part's code timed by
process_time as it runs (a part called inside another is counted in its own, not twice). py-spy samples wall time:
on a busy machine a read waiting on the disk or a process waiting for a core is sampled too; these are CPU seconds.

    .venv/bin/python benchmarks/cold_read_parts.py FOLDER [--repo CHECKOUT] [--read-workers N]

Alternate checkouts (`--repo`) in one loop to compare them.
"""

from __future__ import annotations

import importlib
import time

import cold_read
import timing

# (module, function or Class.method, part): where each part's code starts
PARTS = [
    ("viewer.index.records", "ingest", "parsing and normalizing lines"),
    ("viewer.index.session_index", "SessionIndex.add", "index bookkeeping"),
    ("viewer.index.sleeping", "sleep", "index bookkeeping"),
    ("viewer.search.index", "SearchIndex._extend", "search words and postings"),
    ("viewer.search.folder_words", "FolderWords.take", "search words and postings"),
    ("viewer.search.index", "SearchIndex.pack", "packing postings"),
    ("viewer.index.facets", "Facets._extend", "facets"),
    ("viewer.index.usage", "session_totals", "usage totals"),
    ("viewer.library.groups", "Groups.keep", "saving sessions to the cache"),
    ("viewer.formats.detect", "classify", "detecting files' formats"),
    ("viewer.files.tailer", "FileTailer.read", "reading files"),
]


class Clock:
    """CPU seconds by part, each part's own: time spent in a part called inside it goes to that part."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}
        self.stack: list[list] = []  # [part, start, CPU of the parts called inside it]

    def timed(self, part: str, function):
        def run(*args, **kwargs):
            frame = [part, time.process_time(), 0.0]
            self.stack.append(frame)
            try:
                return function(*args, **kwargs)
            finally:
                self.stack.pop()
                took = time.process_time() - frame[1]
                self.spent[part] = self.spent.get(part, 0.0) + took - frame[2]
                if self.stack:
                    self.stack[-1][2] += took
        return run

    def wrap(self) -> None:
        for module_name, name, part in PARTS:
            owner = importlib.import_module(module_name)
            if "." in name:
                class_name, name = name.split(".")
                owner = getattr(owner, class_name)
            setattr(owner, name, self.timed(part, getattr(owner, name)))


def main() -> None:
    # the parts wrapped are the checkout's, which cold_read then reads with
    timing.folder_in_checkout(__doc__, read_workers=True)
    clock = Clock()
    clock.wrap()
    cpu = time.process_time()
    cold_read.main()
    total = time.process_time() - cpu
    for part in dict.fromkeys(part for _, _, part in PARTS):
        spent = clock.spent.get(part, 0.0)
        print(f"  {spent:7.3f} s  {spent / total:6.1%}  {part}")
    rest = total - sum(clock.spent.values())
    print(f"  {rest:7.3f} s  {rest / total:6.1%}  the rest (the scan, imports, steps)")


if __name__ == "__main__":
    main()
