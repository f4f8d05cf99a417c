"""Run by test_runtime.py in a process of its own: start two apps (each behind a real waitress server on a free
port, watching a folder with a session file), answer a request each, stop both, and print as JSON what the
interpreter looked like before, while they ran, and after.

    python tests/web/two_apps.py FOLDER
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import pkgutil
import sys
import threading
import time
import types
import urllib.request
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # tests/: claude_lines

import viewer  # noqa: E402

OPEN_FILES = {"one": 7, "two": 5}  # each app's cap on open session files, set through its Tuning
BIG = 20_000  # events: enough for the search words to be built in worker processes, and the index frozen


def import_everything() -> None:
    """Every module of the package, imported before the first look: importing is not a change of state."""
    for found in pkgutil.walk_packages(viewer.__path__, "viewer."):
        if not found.name.startswith(("viewer.writer.demo", "viewer.__main__")):
            importlib.import_module(found.name)


def _plain(value) -> str | None:
    """What a module-level value is, as text to compare; None for what is code (modules, functions, classes)."""
    if isinstance(value, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)):
        return None
    return repr(value)


def module_state() -> dict[str, str]:
    """Every module-level value of the package and every value its classes hold, as text."""
    state = {}
    for name, module in sorted(sys.modules.items()):
        if not name.startswith("viewer") or module is None:
            continue
        for attribute, value in vars(module).items():
            if attribute.startswith("__"):
                continue
            if isinstance(value, type) and value.__module__ == name:
                for field, held in vars(value).items():
                    shown = None if field.startswith("__") else _plain(held)
                    if shown is not None and not isinstance(held, (property, staticmethod, classmethod)):
                        state[f"{name}.{attribute}.{field}"] = shown
                continue
            shown = _plain(value)
            if shown is not None:
                state[f"{name}.{attribute}"] = shown
    return state


def children() -> list[int]:
    """The processes this one started that are still there (Linux: /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                status = Path(f"/proc/{entry}/status").read_text()
            except OSError:
                continue
            if f"\nPPid:\t{os.getpid()}\n" in status:
                found.append(int(entry))
    return sorted(found)


def interpreter() -> dict:
    return {"switch interval": sys.getswitchinterval(), "gc enabled": gc.isenabled(),
            "gc thresholds": list(gc.get_threshold()), "gc frozen": gc.get_freeze_count(),
            "threads": sorted(f"{t.name} {t.ident}" for t in threading.enumerate()), "children": children(),
            "warning filters": repr(warnings.filters), "modules": module_state()}


def open_files(app) -> dict:
    """The session files an app's pool holds open, and its cap (each app has its own: core/open_files.py)."""
    from viewer.web.state import KEY

    pool = app.extensions[KEY].runtime.host.files
    with pool.lock:
        held = [found() for found in pool.open.values()]
    return {"pool": id(pool), "cap": pool.cap, "paths": sorted(s.path for s in held if s is not None)}


def packed_shapes(app) -> dict:
    """The shapes an app's Claude Code entries were packed with (each app has its own table: core/packed.py)."""
    from viewer.web.state import KEY

    shapes = app.extensions[KEY].runtime.host.shapes
    return {"table": id(shapes), "keys": sorted(key for keys in shapes.known().values() for key in keys)}


def write_claude_session(path: Path) -> None:
    from claude_lines import Transcript

    transcript = Transcript("c1a0de00-0000-4000-8000-000000000001")
    transcript.user("Which files changed?")
    transcript.response("msg_1", [{"type": "text", "text": "Two of them."}],
                        usage={"input_tokens": 12, "output_tokens": 3, "cache_read_input_tokens": 7})
    transcript.write(path)


def write_session(path: Path, events: int) -> None:
    lines = [json.dumps({"message_id": "m0", "event_type": "agent_created", "agent_id": "a"})]
    lines += [json.dumps({"message_id": f"m{i}", "event_type": "transcript_entry", "agent_id": "a", "role": "user",
                          "content": f"word{i % 97} and more words {i}"}) for i in range(1, events)]
    path.write_text("\n".join(lines) + "\n")


def until(condition, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        if time.monotonic() > deadline:
            raise TimeoutError(condition)
        time.sleep(0.02)
    return found


def main(folder: Path) -> None:
    from viewer.core.tuning import Tuning
    from viewer.web.app import close_app, create_app
    from viewer.web.channel import counted_server
    from viewer.web.state import KEY

    import_everything()
    gc.collect()
    before = interpreter()
    apps, servers, threads, answers = [], [], [], []
    for name, events in (("one", BIG), ("two", 3)):
        (folder / name).mkdir()
        write_session(folder / name / f"{name}.jsonl", events)
        if name == "two":
            write_claude_session(folder / name / "claude.jsonl")
        app = create_app(folder / name, watch=True, cache_dir=str(folder / f"{name}-cache"),
                         tuning=Tuning(open_files=OPEN_FILES[name]))
        server = counted_server(app, app.extensions[KEY].runtime.foreground, host="127.0.0.1", port=0, threads=2)
        thread = threading.Thread(target=server.run, name=f"serving {name}", daemon=True)  # a failed run ends
        thread.start()
        apps.append(app), servers.append(server), threads.append(thread)
    for (name, events), server in zip((("one", BIG), ("two", 3)), servers):
        url = f"http://127.0.0.1:{server.effective_port}/api/sessions/{name}"

        def served(url=url, events=events):
            try:
                with urllib.request.urlopen(url, timeout=10) as answer:
                    data = json.load(answer)
            except OSError:
                return None
            return data if data.get("events") == events else None

        answers.append(until(served)["events"])
    words = apps[0].extensions[KEY].runtime.watcher.words
    until(lambda: words.pids())  # the big session's words are built in worker processes
    library = apps[0].extensions[KEY].library
    until(lambda: library.get("one").search.complete)
    during = interpreter()
    during["open files"] = [open_files(app) for app in apps]
    two = apps[1].extensions[KEY].library
    until(lambda: any(s.format.name == "claude-code" and s.count for s in two.listing()))
    during["shapes"] = [packed_shapes(app) for app in apps]
    for app, server, thread in zip(apps, servers, threads):
        server.task_dispatcher.shutdown()
        server.close()
        thread.join(timeout=10)
        close_app(app)
    del apps, servers, threads, app, server, thread, library, words
    gc.collect()
    after = interpreter()
    print(json.dumps({"before": before, "during": during, "after": after, "answers": answers}))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
