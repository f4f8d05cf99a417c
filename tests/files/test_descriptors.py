"""Any number of session files costs a bounded number of descriptors.

A real `agentview serve` under a soft limit of 256 open files (macOS's default) serves thousands of
files, native and Claude Code, and reads every event back; its open descriptors stay far below the
limit. The 10,000-file run is benchmarks/many_files.py.
"""

from __future__ import annotations

import json
import os
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import serve, wait_for, write_events
from events import copy_samples, created, say

resource = pytest.importorskip("resource")

NATIVE_FILES = 2000
CLAUDE_PROJECTS = 20  # copies of the Claude Code sample: main files with sub-agent files beside and below
SOFT_LIMIT = 256


def get(url: str):
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.status, response.read()


def test_thousands_of_files_are_served_under_a_soft_limit_of_256_descriptors(tmp_path):
    folder = tmp_path / "many"
    for i in range(NATIVE_FILES):
        write_events(folder / f"d{i // 100}" / f"s{i}.jsonl",
                     [created(f"c{i}", "a"), say(f"m{i}", "a", f"said in file {i}")])
    for k in range(CLAUDE_PROJECTS):
        copy_samples("claude_code", folder / f"claude{k}")
    with serve(folder, soft_limit=SOFT_LIMIT) as server:
        url, process, output = server.url, server.process, server.output
        def listed():
            if process.poll() is not None:
                raise AssertionError("the server died:\n" + "".join(output[-30:]))
            _, body = get(f"{url}/api/sessions")
            sessions = json.loads(body)["sessions"]
            return sessions if len(sessions) >= NATIVE_FILES + CLAUDE_PROJECTS * 3 else None

        sessions = wait_for(listed, timeout=60, interval=0.5)
        native = {s["path"]: s["id"] for s in sessions if s["path"].startswith("d")}
        assert len(native) == NATIVE_FILES

        def events_of(item):
            path, session_id = item
            status, body = get(f"{url}/api/sessions/{session_id}/events")
            return path, status, json.loads(body)["events"]

        with ThreadPoolExecutor(8) as pool:  # every event of every native file, read back from its file
            for path, status, events in pool.map(events_of, native.items()):
                i = int(path.rsplit("/s", 1)[1].removesuffix(".jsonl"))  # d<k>/s<i>.jsonl
                assert status == 200
                assert [(e["message_id"], e.get("content")) for e in events] == [
                    (f"c{i}", None), (f"m{i}", f"said in file {i}")]
        claude = [s for s in sessions if s["path"].startswith("claude")]
        for s in claude:
            assert get(f"{url}/s/{s['id']}")[0] == 200
            status, body = get(f"{url}/api/sessions/{s['id']}/events")
            assert status == 200 and json.loads(body)["events"]
        assert get(f"{url}/")[0] == 200
        descriptors = len(os.listdir(f"/proc/{process.pid}/fd")) if os.path.isdir("/proc") else 0
        assert descriptors < SOFT_LIMIT // 2, descriptors  # session files: at most a quarter of the limit
        assert process.poll() is None
        assert not any("Traceback" in line for line in output), "".join(output)
