"""How long pricing a big session takes: a Claude Code session of N events (every other one a response with
usage, on a few models, one unknown) is read, then its whole cost is summed again from nothing several times.

    .venv/bin/python benchmarks/price_rate.py --events 100000

Prints the cold read time and the best CPU time (of the summing thread alone, so other processes on a busy machine
count less) of summing the session's cost (usage.for_session with its kept totals dropped first): the work pricing
adds per response.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

MODELS = ("claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805", "claude-haiku-4-5", "mystery-model-1")


def write_session(folder: Path, events: int) -> str:
    session = "5e55c057-rate"
    lines, parent = [], None
    for n in range(events):
        kind = "assistant" if n % 2 else "user"
        stamp = f"2026-03-{1 + n // 86400 % 28:02d}T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
        line = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/home/dev/app",
                "sessionId": session, "version": "1.0.71", "type": kind, "uuid": f"u-{n}", "timestamp": stamp}
        if kind == "user":
            line["message"] = {"role": "user", "content": f"question {n}"}
        else:
            line["message"] = {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": MODELS[n % 7 % 4],
                               "content": [{"type": "text", "text": f"answer {n}"}],
                               "usage": {"input_tokens": n % 500, "output_tokens": 100 + n % 300,
                                         "cache_creation_input_tokens": n % 2000,
                                         "cache_read_input_tokens": (n * 37) % 250_000}}
        lines.append(json.dumps(line))
        parent = f"u-{n}"
    project = folder / "-home-dev-app"
    project.mkdir(parents=True)
    (project / f"{session}.jsonl").write_text("\n".join(lines) + "\n")
    return f"-home-dev-app:{session}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from viewer.index import usage
    from viewer.web.app import create_app

    with tempfile.TemporaryDirectory() as tmp:
        sid = write_session(Path(tmp), args.events)
        started = time.perf_counter()
        app = create_app(tmp, watch=False, cache_dir=None)
        s = app.extensions["agentview"].library.get(sid)
        with s.lock:
            count = s.count
        read = time.perf_counter() - started
        best, total = float("inf"), None
        for _ in range(args.repeat):
            with s.lock:
                s.usage_totals.clear()
                started = time.thread_time()
                total = usage.for_session(s)
                best = min(best, time.thread_time() - started)
        print(f"{count} events read in {read:.2f} s; cost of {total['responses']} responses summed in "
              f"{best * 1000:.0f} ms of CPU (best of {args.repeat}): ${total['cost_usd']:,.2f}, "
              f"no price: {total['unpriced_models']}")


if __name__ == "__main__":
    main()
