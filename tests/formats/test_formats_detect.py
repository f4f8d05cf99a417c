"""Telling a file's format by its first record (formats.base.first_record): quick on big folders, whatever the
first lines' lengths."""

from __future__ import annotations

import json
import os

import pytest

from viewer.formats import base


@pytest.mark.parametrize("first_bytes", [10, base.FIRST_READ - 5, base.FIRST_READ + 5, 5 * base.FIRST_READ])
def test_the_first_json_line_is_found_whatever_its_length(tmp_path, first_bytes):
    record = {"type": "user", "message": {"content": "x" * first_bytes}}
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"not json\n\n" + json.dumps(record).encode() + b"\n" + b'{"second": 1}\n' * 1000)
    assert base.first_record(str(path)) == (record, "")


def test_a_file_is_read_only_as_far_as_its_first_record(tmp_path, monkeypatch):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"first": 1}\n' + b'{"next": 2}\n' * 400_000)  # about 5 MB
    reads = []
    real_read = os.read

    def counting_read(fd, n):  # every read the system is asked for, whatever reads it
        reads.append(n)
        return real_read(fd, n)

    monkeypatch.setattr(os, "read", counting_read)
    assert base.first_record(str(path)) == ({"first": 1}, "")
    assert reads == [base.FIRST_READ]  # one system call, of the first read's size


@pytest.mark.parametrize("content, why", [
    (b"", "empty"), (b'{"open": "line without its newline', "empty"), (b"\x1f\x8b\x08\x00", "compressed"),
    (b"nope\n" * 30, "none of the first lines is JSON"), (b"\n" * 100_000 + b"nope\n" * 30, "none of the first lines is JSON"),
])
def test_a_file_without_a_first_record_says_why(tmp_path, content, why):
    path = tmp_path / "s.jsonl"
    path.write_bytes(content)
    assert base.first_record(str(path)) == (None, why)


def test_blank_and_broken_lines_before_the_first_record_are_passed_over(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n" * 70_000 + b"not json\n" * 19 + b'{"first": 1}\n{"second": 2}\n')
    assert base.first_record(str(path)) == ({"first": 1}, "")
