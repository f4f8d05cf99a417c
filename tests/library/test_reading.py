"""Reading session files: the reader for each kind of file, and the files of a group read in pieces."""

import gzip
import os

from viewer.library import reading
from viewer.formats.ai_agent import SnapshotReader
from viewer.files.tailer import FileTailer
from viewer.files.whole_file import GzipReader


def test_each_kind_of_session_file_has_its_reader(tmp_path):
    assert type(reading.reader_for(str(tmp_path / "s.jsonl"))) is FileTailer
    assert type(reading.reader_for(str(tmp_path / "s.jsonl.gz"))) is GzipReader
    assert type(reading.reader_for(str(tmp_path / "s.json"))) is SnapshotReader
    path = tmp_path / "z.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"n": 1}\n{"n": 2}\n'))
    assert [line.data for line in reading.reader_for(str(path)).read().lines] == [b'{"n": 1}', b'{"n": 2}']


def test_a_file_replaced_while_its_group_is_read_stops_there_and_is_noted(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(b'{"n": %d, "pad": "%s"}\n' % (i, b"x" * 1000) for i in range(600)))
    tailer = FileTailer(path)
    first = reading.read_some(tailer)
    assert first.more and 0 < len(first.lines) < 600
    assert [line.offset for line in first.lines[:2]] == [0, len(first.lines[0].data) + 1]
    replacement = tmp_path / "new.jsonl"
    replacement.write_bytes(b'{"n": 0}\n')
    os.replace(replacement, path)  # a new file under the same name
    replaced = []
    lines = list(reading.lines_from(tailer, first, replaced))
    assert lines == first.lines and replaced == [str(path)]
