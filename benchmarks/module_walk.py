#!/usr/bin/env python3
"""Which of the viewer's modules one request or one appended line passes through, in order.

    python3 benchmarks/module_walk.py [REPO]

Serves a copy of sample_sessions/example1_jack_and_jill.jsonl from REPO's code (default: this checkout),
then traces every Python call while (1) an agent page is answered (warm: the second request) and (2) one
line appended to the session is read. Prints, for each, the viewer modules visited, how often a call
crossed from one module into another, how many of those calls went up the layers (a lower layer calling
back into a higher one), and how often control climbed to a higher layer (returns included: the reader's
trips back up).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path


def layer_rank(module: str) -> int:
    """The layer of a viewer module, lowest 0: read from the package (or, for the flat layout of older
    checkouts, from tests/test_layers.py's table)."""
    layers = LAYERS
    name = module.removeprefix("viewer.")
    for rank, (_, entries) in enumerate(layers):
        for entry in entries:
            if name == entry or name.startswith(entry + "."):
                return rank
    return len(layers)


def walk(action) -> tuple[list[str], int, int, int]:
    visited: list[str] = []
    crossings = upward = climbs = 0
    stack: list[str] = []
    active = [None]  # the viewer module running now

    def profile(frame, event, arg):
        nonlocal crossings, upward, climbs
        module = frame.f_globals.get("__name__", "")
        if module.startswith("viewer") and module != active[0]:
            if active[0] is not None and layer_rank(module) > layer_rank(active[0]):
                climbs += 1
            active[0] = module
        if event == "call":
            module = frame.f_globals.get("__name__", "")
            caller = stack[-1] if stack else None
            stack.append(module)
            if not module.startswith("viewer"):
                return
            if module not in visited:
                visited.append(module)
            if caller and caller.startswith("viewer") and caller != module:
                crossings += 1
                if layer_rank(module) > layer_rank(caller):
                    upward += 1
        elif event == "return" and stack:
            stack.pop()

    sys.setprofile(profile)
    try:
        action()
    finally:
        sys.setprofile(None)
    return visited, crossings, upward, climbs


def main() -> None:
    global LAYERS
    if sys.argv[1:2] in (["-h"], ["--help"]):
        print(__doc__.strip())
        return
    repo = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent).resolve()
    sys.path.insert(0, str(repo))
    sys.path.insert(0, str(repo / "tests"))
    environment = dict(os.environ)
    import test_layers  # its conftest turns the test-only checks on: the walk is of the code as it serves
    os.environ.clear()
    os.environ.update(environment)
    LAYERS = test_layers.LAYERS
    from viewer.web.app import create_app

    folder = Path(tempfile.mkdtemp())
    session = folder / "jack_and_jill.jsonl"
    shutil.copy(repo / "sample_sessions" / "example1_jack_and_jill.jsonl", session)
    app = create_app(folder, watch=False)
    client = app.test_client()
    url = "/s/jack_and_jill/agents/agent_jill"
    assert client.get(url).status_code == 200
    library = next(iter(app.extensions.values())).library if hasattr(next(iter(app.extensions.values())), "library") else None
    for title, action in (
        ("agent page", lambda: client.get(url)),
        ("one appended line", lambda: (session.open("a").write(
            '{"message_id": "msg_900", "event_type": "transcript_entry", "agent_id": "agent_jill", '
            '"role": "assistant", "content": "one more"}\n'), library.refresh(str(session)))),
    ):
        visited, crossings, upward, climbs = walk(action)
        print(f"{title}: {len(visited)} modules, {crossings} calls between modules, {upward} of them up the layers, "
              f"{climbs} climbs (control passing to a higher layer, returns included)")
        print("  " + " > ".join(m.removeprefix("viewer.") for m in visited))
    shutil.rmtree(folder)


LAYERS: list = []

if __name__ == "__main__":
    main()
