"""`agentview demo DIR` and `agentview serve --demo`, run as a user runs them (real processes)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import urllib.request

import pytest

from conftest import REPO, wait_for
from viewer import SessionViewer
from viewer.reads import dialogs, queries
from viewer.writer.demo import SECRET


def agentview(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "viewer", *args], capture_output=True, text=True, cwd=REPO,
                          timeout=timeout)


def test_demo_writes_a_session_with_every_kind_of_interaction(tmp_path):
    folder = tmp_path / "out"
    result = agentview("demo", str(folder), "--speed", "50")
    assert result.returncode == 0, result.stderr
    path = folder / "demo.jsonl"
    assert f"wrote {path}" in result.stdout
    with open(path, encoding="utf-8") as f:
        events = [json.loads(line) for line in f]
    assert all(not ("substance" in e and "cause" in e) for e in events)
    viewer = SessionViewer(path)
    assert viewer.index.problems == []
    assert viewer.list_agents() == {"agent_001": "Coordinator", "agent_002": "Writer", "agent_003": "Analyst",
                                    "agent_004": "Reviewer", "agent_005": "Inner"}
    tree = queries.tree(viewer.index)
    assert [a["name"] for a in tree[0]["children"]] == ["Writer", "Analyst", "Reviewer"]
    assert [a["name"] for a in tree[0]["children"][0]["children"]] == ["Inner"]  # the Writer's inner voice
    tools_used = {c["function"]["name"] for e in events for c in e.get("tool_calls", [])}
    assert tools_used == {"task", "discuss", "whisper", "dashboard"}
    # The secret is said once, by the Analyst; everyone else hears it redacted (a modified delivery).
    (said,) = [e for e in events if SECRET in e.get("content", "")]
    assert said["agent_id"] == "agent_003" and said["role"] == "assistant"
    heard = viewer.trace_content_references(said["message_id"])
    assert {e["agent_id"] for e in heard} == {"agent_002", "agent_004"}
    assert all("[REDACTED]" in e["content"] for e in heard)
    (item,) = [i for i in dialogs.dialog(viewer.index, ["agent_002", "agent_003", "agent_004"])["items"]
               if i["message_id"] == said["message_id"]]
    assert item["modified"] is True
    # The whisper reaches the Analyst only.
    (whisper,) = [e for e in events if e["event_type"] == "piece_of_text" and "rotate" in e["content"]]
    assert [e["agent_id"] for e in viewer.trace_content_references(whisper["message_id"])] == ["agent_003"]
    # The inner voice hears only the Writer's question; its advice goes back to the Writer alone.
    inner = viewer.get_transcript("agent_005")
    assert [e["role"] for e in inner] == ["system", "user", "assistant"]
    assert events[-1]["agent_id"] == "agent_001" and events[-1]["content"].startswith("Here is the launch post")


def test_a_second_demo_run_never_overwrites_the_first(tmp_path):
    assert agentview("demo", str(tmp_path), "--speed", "100").returncode == 0
    first = (tmp_path / "demo.jsonl").read_bytes()
    assert agentview("demo", str(tmp_path), "--speed", "100").returncode == 0
    assert (tmp_path / "demo.jsonl").read_bytes() == first
    assert (tmp_path / "demo-2.jsonl").read_bytes() == first  # deterministic: same story, same ids


def test_demo_refuses_a_speed_that_is_not_positive(tmp_path):
    result = agentview("demo", str(tmp_path), "--speed", "0")
    assert result.returncode == 2 and "--speed" in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "terminate"])
def test_serve_demo_serves_a_temporary_folder_the_demo_writes_into_then_removes_it(stop):
    samples_before = sorted(os.listdir(REPO / "sample_sessions"))
    process = subprocess.Popen([sys.executable, "-m", "viewer", "serve", "sample_sessions", "--demo", "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=REPO)
    try:
        first = process.stdout.readline()
        assert "serving" in first, first
        folder = first.split("serving ", 1)[1].rsplit(" at ", 1)[0]
        url = first.rsplit(" at ", 1)[1].strip().rstrip("/")
        assert os.path.basename(folder).startswith("agentview-demo-") and os.path.isdir(folder)
        assert "/s/demo" in process.stdout.readline()

        def demo_agents():
            with urllib.request.urlopen(url + "/api/sessions", timeout=5) as response:
                sessions = json.loads(response.read())["sessions"]
            return [s for s in sessions if s["id"] == "demo" and s["agents"] >= 2]

        (demo,) = wait_for(demo_agents, timeout=20)
        assert demo["path"] == "demo.jsonl"
    finally:
        process.send_signal(stop)
        try:
            code = process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
    assert code == 0
    assert not os.path.exists(folder)  # our own temporary folder, gone
    assert sorted(os.listdir(REPO / "sample_sessions")) == samples_before  # DIR untouched


def test_serve_without_a_folder_asks_for_one():
    result = agentview("serve", "--port", "0")
    assert result.returncode == 2 and "needs a folder (or --demo)" in result.stderr


def test_serve_demo_leaves_no_temporary_folder_when_the_port_is_taken():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        before = {p for p in os.listdir(tempfile.gettempdir()) if p.startswith("agentview-demo-")}
        result = agentview("serve", "--demo", "--port", str(taken.getsockname()[1]))
    assert result.returncode != 0 and "Address already in use" in result.stderr
    after = {p for p in os.listdir(tempfile.gettempdir()) if p.startswith("agentview-demo-")}
    assert after <= before
