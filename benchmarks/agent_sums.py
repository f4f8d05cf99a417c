"""CPU of a folder's usage totals: the session's alone, against the session's with every agent's in the same pass
(what a session is kept with, so that its first page after a wake prices nothing).

    .venv/bin/python benchmarks/agent_sums.py FOLDER [--rounds 3]

Reads FOLDER whole in one process, then sums every session's totals both ways, alternated, each round timed by
process_time (genai-prices and the rates it gives already loaded by the read).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from viewer.index import usage  # noqa: E402
from viewer.library.library import Library  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    library = Library(args.folder)
    library.scan()
    sessions = library.listing()
    for s in sessions:
        s.wake()

    def alone() -> None:
        for s in sessions:
            with s.lock:
                usage.Totals(hourly=True).add(s, s.usage_positions)

    def with_agents() -> None:
        for s in sessions:
            with s.lock:
                s.usage_totals.clear()
                usage.session_totals(s)

    responses = sum(len(s.usage_positions) for s in sessions)
    for round_ in range(args.rounds + 1):  # the first round warms both
        spent = []
        for way in (alone, with_agents):
            started = time.process_time()
            way()
            spent.append(time.process_time() - started)
        if round_:
            print(f"round {round_}: {responses:,} responses of {len(sessions):,} sessions; the session's alone "
                  f"{spent[0]:.3f} s, with every agent's {spent[1]:.3f} s", flush=True)


if __name__ == "__main__":
    main()
