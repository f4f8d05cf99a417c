"""Big files are read and indexed in bounded batches, with nothing lost or reordered."""

import json

from viewer.core.tuning import Tuning
from viewer.library.library import Library
from viewer.files.tailer import FileTailer


def test_a_limited_read_returns_whole_lines_in_batches_and_says_more_waits(tmp_path):
    path = tmp_path / "s.jsonl"
    rows = [b'{"n": %d, "pad": "%s"}' % (i, b"x" * (i % 50)) for i in range(2000)]
    path.write_bytes(b"\n".join(rows) + b"\n" + b'{"partial"')
    tailer = FileTailer(path)
    got, calls = [], 0
    while True:
        result = tailer.read(limit=4096)
        calls += 1
        got.extend((line.number, line.data) for line in result.lines)
        assert all(len(line.data) < 100 for line in result.lines)
        if not result.more:
            break
    assert calls > 10  # about 4 KB at a time
    assert got == list(enumerate(rows, start=1))
    assert tailer.read(limit=4096).lines == []  # the partial last line still waits for its newline
    with open(path, "ab") as f:
        f.write(b"}\n")
    assert [(line.number, line.data) for line in tailer.read(limit=4096).lines] == [(2001, b'{"partial"}')]


def test_a_line_longer_than_the_limit_arrives_whole(tmp_path):
    path = tmp_path / "s.jsonl"
    long = b'{"content": "' + b"y" * 20000 + b'"}'
    path.write_bytes(b"{}\n" + long + b"\n{}\n")
    tailer = FileTailer(path)
    seen = []
    while True:
        result = tailer.read(limit=1000)
        seen.extend(line.data for line in result.lines)
        if not result.more:
            break
    assert seen == [b"{}", long, b"{}"]


def test_a_file_bigger_than_one_batch_is_indexed_whole_in_order(tmp_path):
    content = "z" * 3000
    events = [{"message_id": "m0", "event_type": "agent_created", "agent_id": "a"}]
    events += [{"message_id": f"m{i}", "event_type": "transcript_entry", "agent_id": "a", "role": "user",
                "content": f"{i} {content}"} for i in range(1, 4001)]  # about 12 MB: more than one 8 MB batch
    path = tmp_path / "big.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    assert path.stat().st_size > Tuning.batch_bytes
    library = Library(tmp_path)
    library.scan()
    (session,) = library.listing()
    assert session.count == 4001
    assert session.problems == []
    assert [e["message_id"] for e in session.events] == [e["message_id"] for e in events]
    assert list(session.line_numbers) == list(range(1, 4002))
    assert list(session.agents["a"].entries) == list(range(1, 4001))
