"""The pool of open session files (core/open_files.py): a full pool closes its least recently read file, and the
cost of entering a file does not grow with the pool (a cold read of thousands of files enters each one)."""

from __future__ import annotations

from collections import OrderedDict

from viewer.core.open_files import OpenFiles
from viewer.files.file_source import FileSource


class CountedKeys(OrderedDict):
    """The pool's map, counting the keys any walk over it looks at."""

    looked = 0

    def __iter__(self):
        for key in super().__iter__():
            CountedKeys.looked += 1
            yield key


def test_entering_files_into_a_full_pool_closes_the_oldest_without_walking_the_pool(tmp_path):
    cap, files = 100, 400
    pool = OpenFiles(cap)
    pool.open = CountedKeys()
    sources = []
    for i in range(files):
        path = tmp_path / f"s{i}.jsonl"
        path.write_bytes(b'{"n": %d}\n' % i)
        sources.append(FileSource(str(path), pool=pool))
        sources[-1].read(0, 4)  # read as a cold read reads each file once: recent until a walk clears it
    assert pool.held() == cap
    assert [s.fd >= 0 for s in sources] == [False] * (files - cap) + [True] * cap  # the least recently read closed
    assert CountedKeys.looked < 5 * files  # a step a file and a walk every `cap` files; not the pool per file (30,000)
    oldest = next(s for s in sources if s.fd >= 0)
    oldest.read(0, 4)  # read again since the last walk: a second chance over the files after it
    assert sources[0].read(0, 4) == b'{"n"'  # a closed file opens again when read
    assert oldest.fd >= 0 and pool.held() == cap
    assert sources[files - cap + 1].fd < 0  # the next oldest went instead

