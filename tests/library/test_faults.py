"""Fault injection: sessions written through every line fault, in random chunks, while the watcher reads.

Every valid event must be indexed exactly once, in file order, and every faulty line reported
exactly once, with its line number and kind, however the bytes were split across writes.
"""

import json
import os
import random

import pytest

from conftest import wait_for
from events import calls, created, result, say, tool_call, user
from viewer.library.library import Library
from viewer.reads.session_viewer import load_index
from viewer.library.watcher import Watcher


class FaultyLog:
    """Builds a file line by line, remembering what the viewer must make of each line."""

    def __init__(self):
        self.lines: list[bytes] = []
        self.kept: list[str] = []  # message ids, in file order
        self.problems: list[tuple[int, str]] = []  # (line, kind)

    def add(self, raw: bytes, keep: str | None = None, *problems: str) -> None:
        self.lines.append(raw)
        if keep is not None:
            self.kept.append(keep)
        self.problems += [(len(self.lines), kind) for kind in problems]

    def event(self, event: dict, *problems: str) -> None:
        self.add(json.dumps(event, ensure_ascii=False).encode(), event["message_id"], *problems)

    def content(self) -> bytes:
        return b"".join(line + b"\n" for line in self.lines)


def faulty_log(seed: int, valid: int = 400) -> FaultyLog:
    rng = random.Random(seed)
    log = FaultyLog()
    log.event(created("root-created", "root", name="Root"))
    faults = [
        lambda n: log.add(b'{"message_id": "x%d", "event_type": ' % n, None, "invalid_json"),
        lambda n: log.add(b"[1, 2, 3]", None, "not_an_object"),
        lambda n: log.add(b'"just a string"', None, "not_an_object"),
        lambda n: log.add(b"", None),  # blank: nothing to report
        lambda n: log.add(b"   ", None),
        lambda n: log.add(b"\xff\xfe\x00garbage", None, "invalid_utf8"),
        lambda n: log.add(json.dumps(say(f"u{n}", "root", "caf\u00e9"), ensure_ascii=False).encode().replace("\u00e9".encode(), b"\xe9"),
                          f"u{n}", "invalid_utf8"),
        lambda n: log.add(json.dumps({"event_type": "transcript_entry", "agent_id": "root"}).encode(), None,
                          "missing_message_id"),
        lambda n: log.add(json.dumps({"message_id": f"na{n}", "event_type": "transcript_entry"}).encode(), None,
                          "missing_agent_id"),
        lambda n: log.add(json.dumps({"message_id": f"ne{n}", "agent_id": "root"}).encode(), None,
                          "missing_event_type"),
        lambda n: log.event({"message_id": f"unk{n}", "event_type": "telemetry", "agent_id": "root"},
                            "unknown_event_type"),
        lambda n: log.event(user(f"wl{n}", "root", ["a", "list"]), "wrong_type"),
        lambda n: log.event(user(f"wn{n}", "root", 12.5), "wrong_type"),
        lambda n: log.event({**say(f"tc{n}", "root", None), "tool_calls": "not a list"}, "wrong_type"),
        lambda n: log.event(calls(f"bad{n}", "root", {"id": f"cb{n}", "type": "function",
                                                      "function": {"name": "f", "arguments": "{nope"}}),
                            "arguments_not_json"),
        lambda n: log.event(say("root-said-0", "root", "a second line with an id already used"), "duplicate_message_id"),
        lambda n: log.event(created(f"dup{n}", "root"), "duplicate_agent_created"),
        lambda n: log.event(user(f"ds{n}", "root", "heard", substance=f"never-{n}"), "dangling_substance"),
        lambda n: log.event({"message_id": f"dc{n}", "event_type": "piece_of_text", "agent_id": "root",
                             "content": "x", "cause": f"never-{n}"}, "dangling_cause"),
        lambda n: log.event(result(f"dt{n}", "root", f"no-call-{n}", "orphan"), "dangling_tool_call_id"),
        lambda n: log.event(say(f"big{n}", "root", "\u00e9\u2615\U0001F600" * 200_000)),  # ~1.8 MB, multi-byte
    ]
    log.event(say("root-said-0", "root", "the first use of this id"))
    for n in range(1, valid):
        if rng.random() < 0.15:
            rng.choice(faults)(n)
        kind = n % 4
        if kind == 0:
            log.event(calls(f"c{n}", "root", tool_call(f"call{n}", "task", name=f"A{n}")))
            log.event(created(f"a{n}-created", f"agent{n}", cause=f"c{n}", name=f"A{n}"))
            log.event(result(f"r{n}", "root", f"call{n}", "done"))
        elif kind == 1:
            log.event(say(f"s{n}", "root", f"line {n} \u2014 \u65e5\u672c\u8a9e \U0001F916"))
        elif kind == 2:
            log.event(user(f"h{n}", "root", f"[Me]: line {n - 1}", substance=f"s{n - 1}"))
        else:
            log.event({"message_id": f"p{n}", "event_type": "piece_of_text", "agent_id": "root",
                       "content": "a thought", "cause": [f"s{n - 2}", f"h{n - 1}"]})
    # a substance cycle closed late: the first line dangles until the second names it back
    log.event(user("cyc-a", "root", "a", substance="cyc-b"))
    log.event(user("cyc-b", "root", "b", substance="cyc-a"), "substance_cycle")
    return log


def chunks(data: bytes, rng: random.Random):
    """The bytes cut at random points (inside multi-byte characters too), small and large pieces."""
    i = 0
    while i < len(data):
        size = rng.choice([1, 2, 3, 7, 64, 500, 4096, 100_000])
        yield data[i : i + size]
        i += size


def observed(session):
    return [e["message_id"] for e in session.events], sorted((p.line, p.kind) for p in session.problems)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_valid_event_once_and_every_fault_reported_once_while_written_live(tmp_path, seed):
    log = faulty_log(seed)
    expected = (log.kept, sorted(log.problems))
    library = Library(tmp_path)
    watcher = Watcher(library, polling=seed == 3).start()
    try:
        assert watcher.ready.wait(5)
        rng = random.Random(seed)
        with open(tmp_path / "faulty.jsonl", "wb") as f:
            for piece in chunks(log.content(), rng):
                f.write(piece)
                f.flush()
                if rng.random() < 0.02:
                    os.fsync(f.fileno())
        wait_for(lambda: library.get("faulty") and library.get("faulty").count == len(log.kept), timeout=20)
        session = library.get("faulty")
        assert observed(session) == expected
        assert session.epoch == 0  # appends never made it start over
    finally:
        watcher.stop()
    assert observed(load_index(tmp_path / "faulty.jsonl")) == expected  # the same as one read of the whole file


def test_truncation_replacement_and_rotation_show_exactly_the_new_content(tmp_path):
    library = Library(tmp_path)
    watcher = Watcher(library).start()
    path = tmp_path / "s.jsonl"

    def read_back(log):
        wait_for(lambda: library.get("s") is not None and observed(library.get("s")) == (log.kept, sorted(log.problems)),
                 timeout=20)

    try:
        assert watcher.ready.wait(5)
        first = faulty_log(4, valid=120)
        path.write_bytes(first.content())
        read_back(first)
        # truncated and rewritten shorter (an editor, or `> file`)
        second = faulty_log(5, valid=40)
        with open(path, "r+b") as f:
            f.truncate(0)
            f.write(second.content())
        read_back(second)
        # replaced by rename (an editor's atomic save)
        third = faulty_log(6, valid=60)
        (tmp_path / "s.jsonl.tmp").write_bytes(third.content())
        os.replace(tmp_path / "s.jsonl.tmp", path)
        read_back(third)
        # rotated: the old file moves aside (and is followed there), a new one starts at the old name
        os.rename(path, tmp_path / "s.1.jsonl")
        fourth = faulty_log(7, valid=30)
        path.write_bytes(fourth.content())
        read_back(fourth)
        wait_for(lambda: library.get("s.1") is not None and observed(library.get("s.1")) == (third.kept, sorted(third.problems)))
    finally:
        watcher.stop()
