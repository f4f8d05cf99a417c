"""`agentview serve` as a user runs it: a real process, real HTTP."""

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

from conftest import REPO, wait_for


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
