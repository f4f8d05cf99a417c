"""A session's first view after a restart, in-process and timed by parts: what a person opening it waits for.

    .venv/bin/python benchmarks/first_view.py FOLDER [--repo CHECKOUT] [--runs 3] [--session ID]

A cold read of FOLDER into an empty cache (a Runtime with no watcher, background steps until none is left), then
`--runs` restarts, each a fresh process on that cache with what an idle server does done (its routes matched, its
templates compiled): the first page of the session with the most events (or ID), then, in another fresh process,
its first JSON. Prints wall and CPU ms of each, and the page's parts (inclusive wall ms): waking it, its session
data, the tree's sums (its agents' costs first), the tree's rows, the template. Alternate checkouts (`--repo`) to
compare them.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

# (module, attribute): the parts of a first page, each timed inclusive where it is called
PARTS = {"wake": ("viewer.index.sleeping", "wake"), "session data": ("viewer.web.resource_views", "session_data"),
         "tree sums": ("viewer.web.tree_outline", "sums"), "agents' costs": ("viewer.reads.costs", "tree_costs"),
         "tree rows": ("viewer.reads.queries", "tree_rows"), "template": ("viewer.web.render", "render_template")}


def prepare(folder: str, cache: str) -> None:
    from viewer.library import background
    from viewer.library.runtime import Runtime

    runtime = Runtime(folder, watch=False, cache_dir=cache)
    library = runtime.library
    while True:
        library.looked_at = library.look_after = float("-inf")  # background work at once (looked_at: older code)
        if not background.step(library):
            break
    runtime.close()


def timed_parts() -> dict:
    import importlib

    spent: dict[str, float] = {}
    for name, (module_name, attribute) in PARTS.items():
        module = importlib.import_module(module_name)
        original = getattr(module, attribute)

        def wrapper(*args, _original=original, _name=name, **kwargs):
            started = time.perf_counter()
            try:
                return _original(*args, **kwargs)
            finally:
                spent[_name] = spent.get(_name, 0.0) + (time.perf_counter() - started) * 1000

        setattr(module, attribute, wrapper)
    return spent


def view(folder: str, cache: str, session_id: str | None, kind: str) -> dict:
    from flask.testing import EnvironBuilder

    from viewer.web import app as app_module
    from viewer.web.app import close_app, create_app

    app = create_app(folder, watch=False, cache_dir=cache)
    idle_work = getattr(app_module, "idle_work", None)  # what an idle server did (older checkouts: templates)
    env = app.jinja_env
    for action in idle_work(app) if idle_work is not None else [
            lambda name=name: env.get_template(name) for name in env.list_templates() if name.endswith(".html")]:
        action()
    library = app.extensions["agentview"].library
    if session_id is None:
        session_id = max(library.listing(), key=lambda s: s.summary()["count"]).id
    spent = timed_parts()
    url = f"/s/{quote(session_id)}" if kind == "page" else f"/api/sessions/{quote(session_id)}"
    client = app.test_client()
    # The test client's request made before the clock starts: its first parse of a URL imports the IDNA codec
    # (2-4 ms), which no server answering a browser does
    request = EnvironBuilder(app, path=url).get_request()
    wall, cpu = time.perf_counter(), time.process_time()
    response = client.open(request)
    out = {"wall_ms": (time.perf_counter() - wall) * 1000, "cpu_ms": (time.process_time() - cpu) * 1000,
           "status": response.status_code, "kb": len(response.data) / 1024, "parts": spent, "session": session_id}
    close_app(app)
    return out


def child(repo: str, *args: str) -> str:
    code = f"import sys; sys.path.insert(0, {repo!r}); sys.path.insert(0, {str(Path(__file__).parent)!r}); " \
           f"import first_view; first_view.child_main(sys.argv[1:])"
    return subprocess.run([sys.executable, "-c", code, *args], check=True, capture_output=True, text=True).stdout


def child_main(argv: list[str]) -> None:
    if argv[0] == "prepare":
        prepare(argv[1], argv[2])
    else:
        print(json.dumps(view(argv[1], argv[2], argv[3] or None, argv[0])))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parent.parent), help="the checkout to time")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--session", default="")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="first-view-") as cache:
        child(args.repo, "prepare", args.folder, cache)
        for run in range(args.runs):
            for kind in ("page", "json"):
                got = json.loads(child(args.repo, kind, args.folder, cache, args.session))
                parts = ", ".join(f"{name} {ms:.2f}" for name, ms in got["parts"].items())
                print(f"{kind} {run + 1}: {got['wall_ms']:.2f} ms wall, {got['cpu_ms']:.2f} ms CPU, "
                      f"{got['kb']:.0f} kB, status {got['status']}; {parts}", flush=True)


if __name__ == "__main__":
    main()
