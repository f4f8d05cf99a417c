import os

import pytest

from viewer.files.tailer import FileTailer, LineCutter


def lines(result):
    return [(line.number, line.data) for line in result.lines]


def test_reads_only_complete_lines_and_keeps_a_partial_one_back(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": 2')
    tailer = FileTailer(path)
    assert lines(tailer.read()) == [(1, b'{"a": 1}')]
    assert tailer.read().lines == []  # the partial line waits
    with open(path, "ab") as f:
        f.write(b'}\n{"c": 3}\n')
    assert lines(tailer.read()) == [(2, b'{"b": 2}'), (3, b'{"c": 3}')]


def test_multibyte_character_split_across_writes_arrives_whole(tmp_path):
    path = tmp_path / "s.jsonl"
    encoded = '{"content": "caf\u00e9 \u2615"}\n'.encode()
    split = encoded.index("\u2615".encode()) + 1  # in the middle of the 3-byte character
    path.write_bytes(encoded[:split])
    tailer = FileTailer(path)
    assert tailer.read().lines == []
    with open(path, "ab") as f:
        f.write(encoded[split:])
    (line,) = tailer.read().lines
    assert line.data.decode() == '{"content": "caf\u00e9 \u2615"}'


def test_each_read_costs_only_what_was_appended(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"x\n" * 1000)
    tailer = FileTailer(path)
    assert len(tailer.read().lines) == 1000
    assert tailer.offset == 2000
    with open(path, "ab") as f:
        f.write(b"y\n")
    result = tailer.read()
    assert lines(result) == [(1001, b"y")]
    assert tailer.offset == 2002


def test_truncated_file_is_read_again_from_the_start(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"one\ntwo\n")
    tailer = FileTailer(path)
    tailer.read()
    path.write_bytes(b"new\n")
    result = tailer.read()
    assert result.restarted
    assert lines(result) == [(1, b"new")]


def test_replaced_file_is_read_again_from_the_start(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"one\n")
    tailer = FileTailer(path)
    tailer.read()
    replacement = tmp_path / "s.jsonl.tmp"
    replacement.write_bytes(b"one\ntwo\n")
    os.replace(replacement, path)  # an editor's save: same name, new inode
    result = tailer.read()
    assert result.restarted
    assert lines(result) == [(1, b"one"), (2, b"two")]


def test_a_missing_file_reads_as_nothing(tmp_path):
    assert FileTailer(tmp_path / "gone.jsonl").read().lines == []


def _expected_lines(data: bytes) -> list[tuple[int, bytes, int]]:
    """(number, bytes, offset) of each line that is not blank and ends with a newline, by the plain definition."""
    lines, offset = [], 0
    for number, raw in enumerate(data.split(b"\n")[:-1], 1):
        if raw:
            lines.append((number, raw, offset))
        offset += len(raw) + 1
    return lines


@pytest.mark.parametrize("chunk", [1, 7, 64, 1000, 4096, 1 << 20])
def test_lines_cut_from_chunks_of_any_size_are_the_lines_of_the_file(chunk):
    """Long lines, a blank line among them, a run of short lines and a run of newlines, fed in chunks of any size:
    every line comes out once, with its number and offset, and no blank line comes out."""
    long = [b'{"message_id": "m%d", "content": "%s"}' % (i, b"word " * (i * 7 % 90)) for i in range(60)]
    data = (b"\n".join(long[:20]) + b"\n\n" + b"\n".join(long[20:40]) + b"\n" + b"{}\n" * 50 + b"\n" * 300
            + b"\n".join(long[40:]) + b"\n\n" + b'{"open": ')
    cutter, lines = LineCutter(max_line=1 << 20, offsets=True), []
    for at in range(0, len(data), chunk):
        cutter.feed(data[at:at + chunk], lines, [])
    assert [(line.number, line.data, line.offset) for line in lines] == _expected_lines(data)
