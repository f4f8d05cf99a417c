"""Folders renamed at random moments under a polling watcher: how many sessions follow their folder.

    .venv/bin/python benchmarks/moved_folders.py [--renames 30] [--filler 3000] [--os-events]

A folder of FILLER other files (so that each snapshot's walk takes a while: a rename may fall inside it), then
RENAMES times: a folder with one session file is written, waited for until listed, renamed after a random wait
under a second, and waited for (6 s at most) under its new id. A rename is kept when the session found there is
the same index (not read again from its start). Prints {"renames", "kept", "seconds"} as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from viewer.library.library import Library  # noqa: E402
from viewer.library.watcher import Watcher  # noqa: E402


def wait(predicate, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--renames", type=int, default=30)
    parser.add_argument("--filler", type=int, default=3000)
    parser.add_argument("--os-events", dest="polling", action="store_false", help="inotify instead of polling")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    random.seed(args.seed)
    root = Path(tempfile.mkdtemp(prefix="moved-folders-"))
    for i in range(args.filler):
        (root / f"filler{i:05}.txt").touch()
    library = Library(root)
    watcher = Watcher(library, polling=args.polling).start()
    watcher.ready.wait(60)
    entry = {"message_id": "r1", "event_type": "transcript_entry", "agent_id": "a", "role": "user", "content": "hi"}
    kept, started = 0, time.perf_counter()
    try:
        for k in range(args.renames):
            (root / f"team{k}").mkdir()
            (root / f"team{k}" / "run.jsonl").write_text(json.dumps(entry) + "\n")
            if not wait(lambda: library.get(f"team{k}:run") is not None, 30):
                raise SystemExit(f"team{k}:run never listed")
            session = library.get(f"team{k}:run")
            time.sleep(random.random())
            os.rename(root / f"team{k}", root / f"archive{k}")
            kept += wait(lambda: library.get(f"archive{k}:run") is session, 6)
    finally:
        watcher.stop()
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps({"renames": args.renames, "kept": kept, "seconds": round(time.perf_counter() - started, 1)}))


if __name__ == "__main__":
    main()
