"""One folder holding everything hostile at once, served by a real `agentview serve`.

Thousands of session files (native, and Claude Code with sub-agent files); a FIFO as a session and as a
sidecar; a sidecar leading to /dev/zero and one leading out of the folder; a session symlinked out;
gzip bombs (blank lines, one huge line, a snapshot of `[{},{},...]`); an over-long plain line; a value
and an agent tree nested deep; a folder 1,000 levels deep; names that collide or are not UTF-8; an
integer beyond 64 bits. The server runs under a soft limit of 256 open files, with its caps lowered so
the bombs stay quick to build. The hostile part is moved in once the rest is read, and then the server
must stay up, keep its memory bounded, serve every valid event of every session exactly once, list
every bad thing as a problem, and show nothing from outside the folder.
"""

from __future__ import annotations

import gzip
import http.client
import json
import os
import shutil
import time
import urllib.parse

import pytest

from conftest import SAMPLES, serve, wait_for, write_events
from events import cut_chain, make_chain
from viewer.library.library import Library
from viewer.index.session_ids import shown

NATIVE_FILES = 3000
CLAUDE_COPIES = 10
MAX_LINE = 4 * 1024 * 1024
MAX_FILE = 64 * 1024 * 1024
SOFT_LIMIT = 256
RSS_RISE = 512 * 1024 * 1024
MARKER = "outsidemarkerq7x"  # a word only files outside the folder hold


def entry(mid, agent="agent_a", content="hello", **extra):
    return {"message_id": mid, "event_type": "transcript_entry", "agent_id": agent, "role": "user",
            "content": content, **extra}


def line(event) -> bytes:
    return json.dumps(event).encode() + b"\n"


def deep_value_line(mid: str, levels: int) -> bytes:
    """An entry whose `extra` field nests `levels` levels deep (json.dumps would recurse once per level)."""
    head = json.dumps(entry(mid))[:-1].encode()
    return head + b', "extra": ' + b'{"v": [' * levels + b'"bottom"' + b"]}" * levels + b"}\n"


def build_valid(clean):
    """Ordinary sessions: thousands of small native files in 30 folders, and copies of the Claude Code sample."""
    for i in range(NATIVE_FILES):
        write_events(clean / f"team{i % 30:02d}" / f"s{i:04d}.jsonl",
                     [entry(f"m{i}-{n}", content=f"message {n} of session {i}") for n in range(3)])
    for copy in range(CLAUDE_COPIES):
        shutil.copytree(SAMPLES / "claude_code", clean / f"cc{copy:02d}")


def build_hostile(stage, outside):
    """Everything hostile, in `stage` (moved into the served folder later); returns the events each of its
    readable sessions must serve, by file name, and the problem kinds each must list."""
    hostile = stage / "hostile"
    hostile.mkdir(parents=True)
    outside.mkdir()
    write_events(outside / "s.jsonl", [entry("outside-1", content=f"{MARKER} from outside")])
    (outside / "meta.json").write_text(json.dumps({"agentType": "x", "description": f"{MARKER} described"}))
    served, problems = {}, {}

    os.mkfifo(hostile / "fifo.jsonl")
    problems["hostile/fifo.jsonl"] = {"not_a_regular_file"}
    (hostile / "out.jsonl").symlink_to(outside / "s.jsonl")
    problems["hostile/out.jsonl"] = {"outside_folder"}
    (hostile / "zero.jsonl").symlink_to("/dev/zero")
    problems["hostile/zero.jsonl"] = {"not_a_regular_file"}

    # Claude Code sidecars: a FIFO, a link to /dev/zero, a link out of the folder.
    for copy, make in (("ccfifo", lambda p: os.mkfifo(p)), ("cczero", lambda p: p.symlink_to("/dev/zero")),
                       ("ccout", lambda p: p.symlink_to(outside / "meta.json"))):
        shutil.copytree(SAMPLES / "claude_code", stage / copy)
        meta = next((stage / copy).rglob("agent-*.meta.json"))  # <copy>/<project>/<session>/subagents/...
        meta.unlink()
        make(meta)
        main = meta.parent.parent.with_suffix(".jsonl").relative_to(stage).as_posix()
        problems[main] = {"outside_folder" if copy == "ccout" else "not_a_regular_file"}

    with gzip.open(hostile / "blank-bomb.jsonl.gz", "wb", compresslevel=9) as f:  # inflates past the file cap
        f.write(line(entry("blank-bomb-1")))
        block = b"\n" * (8 * 1024 * 1024)
        for _ in range(MAX_FILE // len(block) + 4):
            f.write(block)
    served["hostile/blank-bomb.jsonl.gz"] = ["blank-bomb-1"]
    problems["hostile/blank-bomb.jsonl.gz"] = {"too_large"}

    with gzip.open(hostile / "line-bomb.jsonl.gz", "wb", compresslevel=9) as f:  # one line past the line cap
        f.write(line(entry("line-bomb-1")))
        f.write(b'{"message_id": "huge", "content": "' + b"x" * (MAX_LINE * 3) + b'"}\n')
        f.write(line(entry("line-bomb-2")))
    served["hostile/line-bomb.jsonl.gz"] = ["line-bomb-1", "line-bomb-2"]
    problems["hostile/line-bomb.jsonl.gz"] = {"line_too_long"}

    with gzip.open(hostile / "snapshot.json.gz", "wb", compresslevel=9) as f:  # a document past the file cap
        f.write(b"[" + b"{}," * (MAX_FILE // 3 + 1024) + b"{}]")
    problems["hostile/snapshot.json.gz"] = {"too_large"}

    with open(hostile / "long-line.jsonl", "wb") as f:
        f.write(line(entry("long-1")) + b"y" * (MAX_LINE * 2) + b"\n" + line(entry("long-2")) + b"{broken\n")
    served["hostile/long-line.jsonl"] = ["long-1", "long-2"]
    problems["hostile/long-line.jsonl"] = {"line_too_long", "invalid_json"}

    (hostile / "deep-value.jsonl").write_bytes(deep_value_line("deep-1", 400) + line(entry("deep-2")))
    served["hostile/deep-value.jsonl"] = ["deep-1", "deep-2"]
    problems["hostile/deep-value.jsonl"] = {"too_deep"}

    tree = [{"message_id": "c0", "event_type": "agent_created", "agent_id": "a0"}]
    for level in range(1, 300):  # each agent created by a tool call of the one above it
        tree.append({"message_id": f"call{level}", "event_type": "transcript_entry", "agent_id": f"a{level - 1}",
                     "role": "assistant", "content": None,
                     "tool_calls": [{"id": f"t{level}", "type": "function",
                                     "function": {"name": "spawn", "arguments": "{}"}}]})
        tree.append({"message_id": f"c{level}", "event_type": "agent_created", "agent_id": f"a{level}",
                     "cause": f"call{level}"})
    write_events(hostile / "deep-tree.jsonl", tree)
    served["hostile/deep-tree.jsonl"] = [e["message_id"] for e in tree]

    (hostile / "x.json").write_text('{"not": "a snapshot"}')
    write_events(hostile / "x.json.jsonl", [entry("x-1")])
    served["hostile/x.json.jsonl"] = ["x-1"]
    with gzip.open(hostile / "y.jsonl.gz", "wb") as f:
        f.write(line(entry("y-gz-1")))
    served["hostile/y.jsonl.gz"] = ["y-gz-1"]
    write_events(hostile / "y.jsonl.gz.jsonl", [entry("y-plain-1")])
    served["hostile/y.jsonl.gz.jsonl"] = ["y-plain-1"]
    with open(os.path.join(os.fsencode(hostile), b"caf\xe9.jsonl"), "wb") as f:
        f.write(line(entry("cafe-1")))
    served[shown(os.fsdecode(b"hostile/caf\xe9.jsonl"))] = ["cafe-1"]  # listed by its printable path

    (hostile / "bigint.jsonl").write_bytes(
        b'{"message_id": "big-1", "event_type": "transcript_entry", "agent_id": "a", "role": "user", '
        b'"content": "n", "tokens": 18446744073709551617}\n')
    served["hostile/bigint.jsonl"] = ["big-1"]

    (stage / "deep").mkdir()
    make_chain(stage / "deep", 1000)
    write_events(stage / "deep" / "/".join(["d"] * 70) / "s.jsonl", [entry("too-deep-to-read")])  # past the depth read
    return served, problems


class Client:
    """One keep-alive connection to the server."""

    def __init__(self, url: str):
        parts = urllib.parse.urlsplit(url)
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)

    def get(self, path: str) -> tuple[int, bytes]:
        self.connection.request("GET", path)
        response = self.connection.getresponse()
        return response.status, response.read()

    def json(self, path: str):
        status, body = self.get(path)
        assert status == 200, (path, status, body[:300])
        return json.loads(body)

    def events(self, session_id: str) -> list[str]:
        ids, cursor = [], "0-0"
        while True:
            quoted = urllib.parse.quote(session_id, safe="")
            data = self.json(f"/api/sessions/{quoted}/events?after={cursor}&limit=5000")
            ids += [e["message_id"] for e in data["events"]]
            if not data["events"]:
                return ids
            cursor = data["cursor"]


def memory(pid: int) -> dict[str, int]:
    with open(f"/proc/{pid}/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    return {key: int(fields[key].split()[0]) * 1024 for key in ("VmRSS", "VmHWM")}


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads the server's memory from /proc")
def test_a_folder_of_everything_hostile_is_served_whole_and_safely(tmp_path):
    folder, stage, outside = tmp_path / "dir", tmp_path / "stage", tmp_path / "outside"
    began, phases = time.monotonic(), []
    phase = lambda name: phases.append(f"{name} {time.monotonic() - began:.1f} s")  # noqa: E731
    build_valid(folder)
    clean = Library(folder)
    clean.scan()
    expected = {s.relpath: (s.id, [e["message_id"] for e in s.events]) for s in clean.listing()}
    assert len(expected) >= NATIVE_FILES + CLAUDE_COPIES
    served, problems = build_hostile(stage, outside)
    phase("built")

    with serve(folder, "--max-line-bytes", str(MAX_LINE), "--max-file-bytes", str(MAX_FILE),
               soft_limit=SOFT_LIMIT) as server:
        process, output, client = server.process, server.output, Client(server.url)
        try:
            def listed() -> dict[str, dict]:
                return {s["path"]: s for s in client.json("/api/sessions")["sessions"]}

            def all_read(wanted: dict[str, int]) -> bool:
                rows = listed()
                return all(rows.get(path, {}).get("events") == count for path, count in wanted.items())

            wait_for(lambda: all_read({path: len(ids) for path, (_, ids) in expected.items()}),
                     timeout=120, interval=0.5)
            steady = memory(process.pid)["VmRSS"]
            phase("read")

            for name in os.listdir(stage):  # the hostile part arrives while the server runs
                os.rename(stage / name, folder / name)
            wait_for(lambda: all_read({path: len(ids) for path, ids in served.items()}
                                      | {"hostile/fifo.jsonl": 0, "hostile/out.jsonl": 0, "hostile/snapshot.json.gz": 0}),
                     timeout=120, interval=0.5)

            phase("hostile read")
            assert process.poll() is None, "".join(output[-50:])
            rise = memory(process.pid)["VmHWM"] - steady
            print(f"\nhostile folder: steady RSS {steady / 2**20:.0f} MB, peak rise {rise / 2**20:.0f} MB, "
                  f"{len(os.listdir(f'/proc/{process.pid}/fd'))} descriptors open")
            assert rise < RSS_RISE, rise
            assert len(os.listdir(f"/proc/{process.pid}/fd")) < SOFT_LIMIT

            # every valid event of every session, exactly once and in order
            rows = listed()
            for relpath, (session_id, ids) in expected.items():
                assert rows[relpath]["id"] == session_id
                assert client.events(session_id) == ids, relpath
            for relpath, ids in served.items():
                assert client.events(rows[relpath]["id"]) == ids, relpath
            assert len({row["id"] for row in rows.values()}) == len(rows)  # no two files share an id
            assert {"hostile/x.json", "hostile/x.json.jsonl", "hostile/y.jsonl.gz",
                    "hostile/y.jsonl.gz.jsonl"} <= set(rows)
            big = client.get(f"/api/sessions/{rows['hostile/bigint.jsonl']['id']}/events?after=0-0")[1]
            assert b"18446744073709551617" in big

            phase("events checked")
            # every bad thing is on a problems page (a file with nothing valid is listed once it has been looked at:
            # wait for each, as for the valid ones above)
            wait_for(lambda: set(problems) <= set(listed()), timeout=120, interval=0.5)
            rows = listed()
            for relpath, kinds in problems.items():
                quoted = urllib.parse.quote(rows[relpath]["id"], safe="")
                found = {p["kind"] for p in client.json(f"/api/sessions/{quoted}/problems")["problems"]}
                assert kinds <= found, (relpath, found)
                status, page = client.get(f"/s/{quoted}/problems")
                assert status == 200 and all(kind.encode() in page for kind in kinds), relpath
            assert "too_deep_folder" in {p["kind"] for p in client.json("/api/sessions")["problems"]}
            assert not any(p.startswith("deep/") for p in rows)

            phase("problems checked")
            # nothing from outside the folder reaches a page or an answer
            pages = ["/", "/api/sessions"]
            for relpath, row in rows.items():
                if not relpath.startswith(("team", "cc0")):
                    quoted = urllib.parse.quote(row["id"], safe="")
                    pages += [f"/s/{quoted}", f"/api/sessions/{quoted}", f"/s/{quoted}/problems",
                              f"/api/sessions/{quoted}/events?after=0-0"]
                    for agent in client.json(f"/api/sessions/{quoted}")["agents"][:20]:
                        pages.append(agent["url"])
            for path in pages:
                status, body = client.get(path)
                assert status == 200, (path, status)
                assert MARKER.encode() not in body, path
            assert client.json(f"/api/search?q={MARKER}")["results"] == []
            phase("pages checked")
            print("hostile folder:", ", ".join(phases))
            log = "".join(output)  # (watchdog's own thread may die on the deep folder: the watcher replaces it)
            assert process.poll() is None and "error serving" not in log and "ingest failed" not in log, log[-5000:]
            kinds = {p["kind"] for p in client.json("/api/sessions")["problems"]}
            assert "Thread-" not in log or kinds & {"watcher_restarted", "watcher_failed"}, kinds
        finally:
            for root in (folder / "deep", stage / "deep"):
                if root.exists():
                    cut_chain(root)
