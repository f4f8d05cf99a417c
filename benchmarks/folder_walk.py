"""How long the initial scan walks folders: many small folders, and a chain deeper than any limit.

    .venv/bin/python benchmarks/folder_walk.py [--folders 2000] [--files 5] [--depth 1000] [--live 10]

Measures `Library.scan()` (the library alone, no server) on
- a wide tree: FOLDERS folders (two levels) holding FILES one-line native sessions each;
- a deep chain: DEPTH nested folders (built relative to an open folder: the path passes PATH_MAX when
  DEPTH is large), a session at the top; it must end with one `too_deep_folder` problem;
- with --live N, against a real `agentview serve`, N times: a DEPTH-deep chain of 16-character names is
  created while it runs, then a line appended to a session: how long until the API shows it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from conftest import serve, write_events  # noqa: E402
from events import cut_chain, make_chain, user  # noqa: E402
from viewer.library.library import Library  # noqa: E402

LINE = b'{"message_id":"m1","event_type":"transcript_entry","agent_id":"a","role":"user","content":"hi"}\n'


def wide(root: Path, folders: int, files: int) -> None:
    for i in range(folders):
        folder = root / f"g{i % 50:02d}" / f"f{i:05d}"
        folder.mkdir(parents=True)
        for j in range(files):
            (folder / f"s{j}.jsonl").write_bytes(LINE)


def deep(root: Path, depth: int, name: str = "d") -> None:
    (root / "top.jsonl").write_bytes(LINE)
    make_chain(root, depth, name)


def timed_scan(root: Path) -> tuple[float, Library]:
    library = Library(root)
    start = time.perf_counter()
    library.scan()
    return time.perf_counter() - start, library


def live_latency(depth: int) -> float:
    """Seconds from a deep chain created under a running server to an append shown by it."""
    name = "f" * 16
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_events(root / "a.jsonl", [user("m1", "main", "hello")])
        with serve(root) as server:
            server.wait_for_session("a", 1)
            start = time.monotonic()
            (root / "later").mkdir()
            make_chain(root / "later", depth, name)
            write_events(root / "a.jsonl", [user("m2", "main", "after")], mode="a")
            server.wait_for_session("a", 2, timeout=120)
            seconds = time.monotonic() - start
        cut_chain(root / "later", name)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folders", type=int, default=2000)
    parser.add_argument("--files", type=int, default=5)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--live", type=int, default=0, metavar="N")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "wide"
        wide(root, args.folders, args.files)
        seconds, library = timed_scan(root)
        print(f"wide: {args.folders} folders, {len(library.sessions)} sessions scanned in {seconds:.2f} s "
              f"({len(library.sessions) / seconds:.0f} files/s)")
        for name in ("d", "d" * 16):
            root = Path(tmp) / f"deep-{len(name)}"
            root.mkdir()
            deep(root, args.depth, name)
            seconds, library = timed_scan(root)
            problems = [(p.kind, p.path.count("/") + 1) for p in library.problems]
            print(f"deep: {args.depth} folders named {name!r}: {seconds:.3f} s, sessions {len(library.sessions)}, "
                  f"problems (kind, depth) {problems}")
            cut_chain(root, name)  # so the temporary folder can be removed
    if args.live:
        seconds = sorted(live_latency(args.depth) for _ in range(args.live))
        print(f"live: an append after a {args.depth}-deep folder appeared, {args.live} runs: "
              f"median {seconds[len(seconds) // 2]:.2f} s, max {seconds[-1]:.2f} s")


if __name__ == "__main__":
    main()
