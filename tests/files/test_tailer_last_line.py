"""The last line of a file without its trailing newline: read once the file has not grown for a moment if it is a
whole JSON object (nothing doubled when its newline comes later), else kept waiting and reported once idle."""

import os
import time

import pytest

from viewer.files import file_source
from viewer.files.tailer import FileTailer


def lines(result):
    return [(line.number, line.data) for line in result.lines]


def age(path, seconds):
    """The file as if last written `seconds` ago."""
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_a_finished_file_s_last_line_without_newline_is_read(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": 2}')
    age(path, 10)
    tailer = FileTailer(path)
    result = tailer.read()
    assert lines(result) == [(1, b'{"a": 1}'), (2, b'{"b": 2}')]
    assert result.lines[1].offset == 9 and result.problems == []
    assert tailer.read().lines == []  # idle: nothing again


def test_a_line_just_written_waits_for_the_file_to_settle(tmp_path, monkeypatch):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": 2}')
    tailer = FileTailer(path)
    assert lines(tailer.read()) == [(1, b'{"a": 1}')]  # it may still be growing
    age(path, 10)
    assert lines(tailer.read()) == [(2, b'{"b": 2}')]


def test_its_newline_arriving_later_duplicates_nothing(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a": 1}')
    age(path, 10)
    tailer = FileTailer(path)
    assert lines(tailer.read()) == [(1, b'{"a": 1}')]
    with open(path, "ab") as f:
        f.write(b'\n{"c": 3}\n')
    result = tailer.read()
    assert lines(result) == [(2, b'{"c": 3}')] and result.lines[0].offset == 9 and result.problems == []
    with open(path, "ab") as f:
        f.write(b'{"d": 4}\n')
    assert lines(tailer.read()) == [(3, b'{"d": 4}')]
    assert tailer.offset == os.path.getsize(path)


def test_the_next_line_may_start_without_the_newline(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a": 1}')
    age(path, 10)
    tailer = FileTailer(path)
    tailer.read()
    with open(path, "ab") as f:
        f.write(b'\n\n{"b": 2}\n')  # its newline, then a blank line, then a line
    assert lines(tailer.read()) == [(3, b'{"b": 2}')]


def test_a_fragment_stays_pending_and_is_reported_once_idle_a_while(tmp_path, monkeypatch):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": [1, 2')
    age(path, 10)
    tailer = FileTailer(path)
    result = tailer.read()
    assert lines(result) == [(1, b'{"a": 1}')] and result.problems == []
    age(path, 120)
    result = tailer.read()
    assert result.lines == [] and [(k, n) for k, n, _ in result.problems] == [("incomplete_last_line", 2)]
    assert tailer.read().problems == []  # reported once
    with open(path, "ab") as f:
        f.write(b']}\n')
    assert lines(tailer.read()) == [(2, b'{"b": [1, 2]}')]


@pytest.mark.parametrize("fragment", [b"[1, 2]", b'"text"', b"   "])
def test_what_is_not_an_object_is_not_taken(tmp_path, fragment):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a": 1}\n' + fragment)
    age(path, 10)
    assert lines(FileTailer(path).read()) == [(1, b'{"a": 1}')]


def test_an_idle_poll_with_a_line_pending_costs_one_stat(tmp_path, monkeypatch):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": ')
    age(path, 10)
    reader = FileTailer(path)
    reader.read()
    calls = []
    real_stat, real_read = os.stat, file_source.FileSource.read
    monkeypatch.setattr(os, "stat", lambda p, *a, **k: calls.append("stat") or real_stat(p, *a, **k))
    monkeypatch.setattr(file_source.FileSource, "read", lambda self, *a: calls.append("read") or real_read(self, *a))
    for _ in range(3):
        assert reader.read().lines == []
    assert calls == ["stat"] * 3


def test_a_whole_read_of_a_claude_code_file_ending_without_newline_keeps_its_last_record(tmp_path):
    from claude_lines import Transcript
    from events import scanned

    t = Transcript("c0ffee00-0000-4000-8000-00000000000a")
    t.user("hello")
    t.response("msg_1", [{"type": "text", "text": "hi there"}])
    t.raw({"type": "summary", "summary": "Greeting", "leafUuid": t.last})
    path = t.write(tmp_path / "proj" / f"{t.session}.jsonl", final_newline=False)
    age(path, 10)
    s = scanned(tmp_path).get(f"proj:{t.session}")
    assert s.title == "Greeting" and s.problems == []
    assert list(s.events)[-1]["markers"] == ["summary"]


def test_a_reported_fragment_is_withdrawn_when_it_grows_and_reported_again_if_it_stops_again(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": [1, 2')
    age(path, 3)
    tailer = FileTailer(path, incomplete_after=5.0)  # the knob, not the default minute
    assert tailer.read().problems == []  # not idle long enough yet
    age(path, 10)
    (reported,) = tailer.read().problems
    assert reported[:2] == ("incomplete_last_line", 2)
    with open(path, "ab") as f:
        f.write(b", 3")
    result = tailer.read()  # it grew: the report no longer holds (it is judged again once idle)
    assert result.withdrawn == [reported] and result.problems == []
    age(path, 10)
    result = tailer.read()
    assert result.withdrawn == [] and [p[:2] for p in result.problems] == [("incomplete_last_line", 2)]
    again = result.problems[0]
    with open(path, "ab") as f:
        f.write(b']}\n')
    result = tailer.read()
    assert lines(result) == [(2, b'{"b": [1, 2, 3]}')] and result.withdrawn == [again]
