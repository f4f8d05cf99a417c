"""Shared fixtures: session files in temp folders, a real server, a real browser."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_sessions"
SYSTEM_CHROMIUM = os.environ.get("AGENTVIEW_CHROMIUM", "/usr/bin/chromium")
# Locks taken out of their order raise (viewer/core/lockorder.py), here and in the servers the tests start.
os.environ["AGENTVIEW_CHECK_LOCKS"] = "1"
# Servers the tests start keep their session cache (on by default) in a folder of this run, never the user's.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="agentview-test-cache-")
os.environ["AGENTVIEW_CHECK_SHAPES"] = "1"  # every answer a view builds is checked against its declared shape
atexit.register(shutil.rmtree, os.environ["XDG_CACHE_HOME"], True)  # a run leaves no folder behind
# No example has a time limit: a test asserts behaviour, never speed, and a loaded machine runs examples slower.
settings.register_profile("agentview", deadline=None)
settings.load_profile("agentview")

from other_user import runtime_for  # noqa: E402 (after the environment the viewer's modules read)


def write_events(path: Path, events: list[dict], mode: str = "w") -> Path:
    """Write events as JSONL lines (each ending in a newline)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, mode, encoding="utf-8") as f:
        for event in events:
            f.write(json.dumps(event) + "\n")
    return path


def sample(name: str) -> Path:
    return SAMPLES / f"{name}.jsonl"


@pytest.fixture
def session_dir(tmp_path) -> Path:
    """A fresh folder holding copies of every sample session."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    for path in SAMPLES.glob("*.jsonl"):
        shutil.copy(path, folder / path.name)
    return folder


@pytest.fixture
def app(session_dir):
    from viewer.web.app import create_app

    return create_app(session_dir, watch=False)


@pytest.fixture
def client(app):
    return app.test_client()


def wait_for(predicate, timeout: float = 5.0, interval: float = 0.05):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {predicate}")
        time.sleep(interval)


@dataclass
class LiveServer:
    url: str  # without a trailing slash or query
    folder: Path
    process: subprocess.Popen
    printed_url: str = ""  # as the server printed it (with ?token= when it made one)
    output: list[str] = field(default_factory=list)  # what it logged so far

    def wait_for_session(self, session_id: str, events: int = 1, timeout: float = 10.0) -> None:
        """Until the server has read a file just written (the watcher is quick, not instant)."""
        def served():
            try:
                with urllib.request.urlopen(f"{self.url}/api/sessions/{session_id}", timeout=5) as response:
                    return json.load(response)["cursor"].endswith(f"-{events}") or None
            except urllib.error.HTTPError:
                return None
        wait_for(served, timeout=timeout)


@contextlib.contextmanager
def serve(folder: Path, *extra: str, user: int | None = None, soft_limit: int | None = None):
    """`agentview serve FOLDER --port 0 EXTRA...` in a real process (run as `user`, if given; allowed only
    `soft_limit` open files, if given, as on macOS by default); yields it once it listens."""

    def lower_the_limit():
        import resource

        resource.setrlimit(resource.RLIMIT_NOFILE, (soft_limit, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    python, cwd, env = sys.executable, REPO, None
    if user is not None and user != os.geteuid():  # from a copy that user may reach (the checkout may be 0700)
        runtime = runtime_for(user)
        python, cwd, env = runtime.python, runtime.code, runtime.env()
    process = subprocess.Popen(
        [python, "-m", "viewer", "serve", str(folder), "--port", "0", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd, env=env, user=user,
        preexec_fn=lower_the_limit if soft_limit else None,
    )
    output: list[str] = []  # what it logged so far (warnings may come before it listens)
    while "serving" not in (line := process.stdout.readline()):
        output.append(line)
        if not line or len(output) > 200:
            process.kill()
            raise RuntimeError(f"server did not start: {''.join(output)}{process.stdout.read()}")
    url = line.rsplit(" at ", 1)[1].strip()
    # Keep reading its log, so a chatty server never blocks on a full pipe.
    output.append(line)
    reader = threading.Thread(target=lambda: output.extend(process.stdout), daemon=True)
    reader.start()
    try:
        yield LiveServer(url.split("?")[0].rstrip("/"), folder, process, url, output)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        reader.join(timeout=5)
    assert "LockOrderError" not in "".join(output), "".join(output)[-3000:]  # see locks_in_order


@contextlib.contextmanager
def serve_app(app):
    """An app made in this process (create_app: its tuning set by the test) served on a free port; yields its URL."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=5)


@pytest.fixture(autouse=True)
def locks_in_order():
    """No thread of the test took locks out of their order, nor gave way holding one, even a thread that
    caught the error and went on (the ingest thread logs what fails and reads on)."""
    from viewer.core import lockorder

    lockorder.violations.clear()
    yield
    found, lockorder.violations[:] = list(lockorder.violations), []
    assert not found, f"locks taken out of order: {found}"


@pytest.fixture
def live_server(session_dir):
    """`agentview serve` in a real process on a free port, watching a temp folder."""
    with serve(session_dir) as server:
        yield server


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """Use Debian's Chromium where it is installed; else playwright's own browser."""
    args = dict(browser_type_launch_args)
    if os.path.exists(SYSTEM_CHROMIUM):
        args["executable_path"] = SYSTEM_CHROMIUM
    # Without these Chromium keeps trying to reach Google's hosts, which this network refuses.
    args["args"] = [*args.get("args", []), "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--no-first-run"]
    return args


def open_on_a_phone(page, url: str, scheme: str) -> None:
    """`url` in a 360 px wide window, in the colour scheme `scheme` ("light" or "dark")."""
    page.set_viewport_size({"width": 360, "height": 800})
    page.emulate_media(color_scheme=scheme)
    page.goto(url)
