"""What a folder event costs the watcher in a big library: Watcher._scan of a folder holding one new file.

    .venv/bin/python benchmarks/folder_event.py [--files 20000] [--events 50]

FILES one-line native sessions in folders of 100 are scanned once; then EVENTS times a new folder with one session
file is written and scanned as the watcher scans a folder it was told of. Prints the median and least CPU time (of
the scanning thread) of one such scan: it follows the files the scan lists anew, not the files listed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from viewer.library.library import Library  # noqa: E402
from viewer.library.watcher import Watcher  # noqa: E402

LINE = b'{"message_id":"m1","event_type":"transcript_entry","agent_id":"a","role":"user","content":"hi"}\n'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--events", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="folder-event-") as name:
        root = Path(name)
        for i in range(args.files):
            folder = root / f"f{i // 100:04d}"
            folder.mkdir(exist_ok=True)
            (folder / f"s{i}.jsonl").write_bytes(LINE)
        library = Library(root)
        library.scan()
        watcher = Watcher(library, polling=True)  # not started: its scan is called here, on this thread
        cpu = []
        for k in range(args.events):
            folder = root / f"new{k}"
            folder.mkdir()
            (folder / "s.jsonl").write_bytes(LINE)
            started = time.thread_time()
            watcher._scan(str(folder))
            cpu.append(time.thread_time() - started)
            assert library.session_at(str(folder / "s.jsonl")) is not None
        cpu.sort()
        print(f"{args.files} files: one folder event's scan: median {cpu[len(cpu) // 2] * 1000:.2f} ms CPU, "
              f"least {cpu[0] * 1000:.2f} ms ({args.events} events)")


if __name__ == "__main__":
    main()
