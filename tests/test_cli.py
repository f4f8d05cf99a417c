"""`agentview serve` as a user runs it: a real process, real HTTP."""

import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from conftest import REPO, serve, wait_for
from test_claude_settled import age

sys.path.insert(0, str(REPO / "benchmarks"))

from claude_projects import generate  # noqa: E402


def fetch(url):
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status, response.read()


def test_serve_listens_on_loopback_and_serves_the_folder(live_server):
    assert live_server.url.startswith("http://127.0.0.1:")
    status, body = fetch(live_server.url + "/api/sessions")
    assert status == 200

    def listed():  # a file is listed once read: the watcher is quick, not instant
        return {s["id"] for s in json.loads(fetch(live_server.url + "/api/sessions")[1])["sessions"]}

    assert wait_for(lambda: listed() >= {"example1_jack_and_jill", "research_team"}, timeout=30)


def test_serve_refuses_a_missing_folder(tmp_path):
    result = subprocess.run([sys.executable, "-m", "viewer", "serve", str(tmp_path / "nope"), "--port", "0"],
                            capture_output=True, text=True, cwd=REPO, timeout=30)
    assert result.returncode == 2
    assert "is not a folder" in result.stderr


def test_the_console_script_and_python_m_viewer_both_run():
    script = Path(sys.executable).parent / "agentview"
    for command in ([str(script), "--help"], [sys.executable, "-m", "viewer", "--help"]):
        result = subprocess.run(command, capture_output=True, text=True, timeout=30)
        assert result.returncode == 0 and "serve" in result.stdout, command


def test_serve_on_a_taken_port_says_so_without_a_traceback(tmp_path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "viewer", "serve", str(tmp_path), "--port", str(port)],
                                capture_output=True, text=True, cwd=REPO, timeout=30)
    assert result.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr and "Traceback" not in result.stderr


def children(pid: int) -> list[int]:
    """The processes `pid` started (any of its threads), as /proc lists them."""
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as f:
            found += [int(child) for child in f.read().split()]
    return found


def running(pid: int) -> bool:
    """Whether `pid` is a process not yet ended (a zombie has ended: its parent has only not taken its status)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_serve_stopped_by_sigterm_leaves_no_worker_process_behind(tmp_path):
    """SIGTERM stops `serve` as Ctrl-C does: its read worker is ended and waited for, not left to end once it finds
    its socket closed after the group it reads. The worker is stopped (SIGSTOP) first: left to itself, it would
    never end."""
    root = Path(generate(tmp_path / "home", sessions=70, projects=2)["projects_folder"])  # above read_pool_from
    age(root)
    with serve(root, "--cache-dir", str(tmp_path / "cache"), "--read-workers", "1") as server:
        pid = server.process.pid

        def worker():
            return [child for child in children(pid) if "read_worker" in Path(f"/proc/{child}/cmdline").read_text()]
        reader = wait_for(worker, timeout=60)[0]
        started = children(pid)
        try:
            os.kill(reader, signal.SIGSTOP)
            server.process.terminate()
            server.process.wait(timeout=30)
            assert [child for child in started if running(child)] == []
            assert server.process.returncode == 0  # stopped as asked, not killed
        finally:
            for child in started:
                if running(child):
                    os.kill(child, signal.SIGKILL)


def test_diff_exits_0_when_runs_agree_1_when_they_differ_2_when_it_cannot_compare(tmp_path):
    from aio import write_demo

    first = write_demo(tmp_path / "a")
    second = write_demo(tmp_path / "b")
    prompt = "Analyst: the beta numbers the post can quote, please."
    changed = tmp_path / "c" / "demo.jsonl"
    changed.parent.mkdir()
    changed.write_text(second.read_text().replace(prompt, "Analyst: only the rating, please."))

    def diff(*args):
        return subprocess.run([sys.executable, "-m", "viewer", "diff", *map(str, args)], capture_output=True,
                              text=True, cwd=REPO, timeout=60)

    agree = diff(first, second)
    assert agree.returncode == 0 and "The runs agree" in agree.stdout, agree.stderr
    differ = diff(first, changed)
    assert differ.returncode == 1
    assert differ.stdout.index("First divergence: Coordinator, entry 14") < differ.stdout.index("Analyst: differs")
    assert "only the rating" in differ.stdout
    as_json = diff(first, changed, "--json")
    data = json.loads(as_json.stdout)
    assert as_json.returncode == 1 and data["first_divergence"]["a_entry"]["tools"] == ["discuss"]
    by_id = diff("a:demo", "c:demo", "--dir", tmp_path, "--agent-a", "agent_003", "--agent-b", "agent_003")
    assert by_id.returncode == 1 and "Analyst: differs" in by_id.stdout and "Coordinator" not in by_id.stdout
    for bad in (diff(first, tmp_path / "nope.jsonl"), diff("a:demo", "x:demo", "--dir", tmp_path),
                diff(first, changed, "--agent-a", "nobody")):
        assert bad.returncode == 2 and bad.stderr.startswith("agentview: ") and not bad.stdout
