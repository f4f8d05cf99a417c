"""Generate a native session (seed 000 format) shaped like a big multi-agent run.

    .venv/bin/python benchmarks/generate.py OUT.jsonl --events 1000000 [--agents 200] [--fail-every N]

A root spawns `agents - 1` agents over 4 levels (4 children each, by `task` tool calls answered
by tool results). Then, until `events` events are written, agents:
- speak, and 3 others hear it (deliveries whose `substance` names the utterance);
- call a tool (read_file, search, run) and get its result;
- broadcast through a tool: a piece_of_text caused by the call, delivered to 3 agents;
- one delivery in 20 is rewritten on its way (a hook), so the hook audit has something to list;
- with `--fail-every N`, every Nth tool call fails (its result starts "Error:", seed-000's words for it).
One agent (a1, "Coordinator") is in about a fifth of the events, so at 1M events its
transcript has about 200k entries (the "late page of a long transcript" case).
Content is 50 to 2,000 characters, most of it short (as in real logs): 1M events make about 300 MB.
Deterministic: the same arguments give the same bytes.
"""

from __future__ import annotations

import argparse
import json
import random
from datetime import datetime, timezone
from pathlib import Path

MODEL = "anthropic/claude-sonnet-4-5-20250929"
BUSY = "a1"  # the agent with the long transcript
BUSY_SHARE = 0.2
WORDS = ("cache tool agent plan result search draft review claim latency memo hit miss budget index "
         "page query answer check token parse retry queue worker merge patch test build deploy").split()
TOOLS = ("read_file", "search", "run")


def content_length(rng: random.Random) -> int:
    """50 to 2,000 characters, skewed short: median about 65, mean about 200."""
    return int(50 * 40 ** (rng.random() ** 4))


def long_content_length(rng: random.Random) -> int:
    """8 to 300 words (of about 6.3 characters with their space), evenly: the real-size shape,
    where 1M events make about 1 GB."""
    return int(rng.randint(8, 300) * 6.3)


# Shapes: (content length, deliveries per utterance).
SHAPES = {"default": (content_length, 3), "long": (long_content_length, 2)}


def generate(path: str | Path, events: int, agents: int = 200, seed: int = 1, shape: str = "default",
             times: bool = False, fail_every: int = 0) -> dict:
    """Write the session; returns what the benchmark needs to know about it. `times`: each event carries a
    `timestamp`, 0.1 to 3 s after the one before (as logs of coding agents do); `fail_every`: see the module."""
    rng = random.Random(seed)
    length_of, deliveries = SHAPES[shape]
    pool = " ".join(rng.choice(WORDS) for _ in range(400_000))  # texts are slices of it: fast to make
    n = 0
    counts: dict[str, int] = {}

    def text() -> str:
        start = pool.index(" ", rng.randrange(len(pool) - 4_000)) + 1
        end = start + length_of(rng)
        return pool[start:end + (pool[end - 1] == " ")]  # never ends in a space

    clock = 1_767_225_600.0  # 2026-01-01T00:00:00Z
    with open(path, "w", encoding="utf-8") as f:
        def emit(event_type: str, agent_id: str, **fields) -> str:
            nonlocal n, clock
            n += 1
            message_id = f"msg_{n}"
            if times:
                clock += 0.1 + 2.9 * rng.random() ** 3
                fields["timestamp"] = datetime.fromtimestamp(clock, timezone.utc).isoformat(timespec="milliseconds")
            f.write(json.dumps({"message_id": message_id, "event_type": event_type, "agent_id": agent_id, **fields})
                    + "\n")
            if event_type == "transcript_entry":
                counts[agent_id] = counts.get(agent_id, 0) + 1
            return message_id

        def call(agent_id: str, call_id: str, name: str, arguments: dict, content: str | None = None) -> str:
            fields = {"content": content} if content else {}
            return emit("transcript_entry", agent_id, role="assistant", **fields,
                        tool_calls=[{"id": call_id, "type": "function",
                                     "function": {"name": name, "arguments": json.dumps(arguments)}}])

        emit("agent_created", "a0", name="Root", language_model=MODEL)
        emit("transcript_entry", "a0", role="user", content="Split the work between your agents and report back.")
        ids = ["a0"]
        names = {"a0": "Root"}
        for i in range(1, agents):
            parent, agent_id = ids[(i - 1) // 4], f"a{i}"
            name = "Coordinator" if agent_id == BUSY else f"A{i}"
            cause = call(parent, f"spawn{i}", "task", {"name": name, "system_prompt": f"You are {name}."})
            emit("agent_created", agent_id, cause=cause, name=name, language_model=MODEL)
            emit("transcript_entry", agent_id, role="system", content=f"You are {name}.")
            emit("transcript_entry", parent, role="tool", tool_call_id=f"spawn{i}", content=f"Created subagent: {name}")
            ids.append(agent_id)
            names[agent_id] = name

        def actor() -> str:
            return BUSY if counts.get(BUSY, 0) < BUSY_SHARE * n else rng.choice(ids)

        def listeners(speaker: str) -> list[str]:
            chosen = rng.sample([a for a in rng.sample(ids, 4) if a != speaker], deliveries) if len(ids) > 4 else \
                [a for a in ids if a != speaker]
            if BUSY != speaker and BUSY not in chosen and counts.get(BUSY, 0) < BUSY_SHARE * n and chosen:
                chosen[0] = BUSY
            return chosen

        calls = 0
        middle = None  # an utterance halfway through: the message page's subject
        while n < events:
            step = rng.random()
            speaker = actor()
            if step < 0.5:  # an utterance, heard by three agents
                content = text()
                said = emit("transcript_entry", speaker, role="assistant", content=content)
                if middle is None and n >= events // 2:
                    middle = said
                for listener in listeners(speaker):
                    heard = content
                    if n % 20 == 0:  # one delivery in 20 passes a hook that rewrites it (the hook audit's subject)
                        heard = "[REDACTED] " + content.partition(" ")[2]
                    emit("transcript_entry", listener, role="user", content=f"[{names[speaker]}]: {heard}",
                         substance=said)
            elif step < 0.8:  # a tool call and its result
                calls += 1
                tool = rng.choice(TOOLS)
                call(speaker, f"c{calls}", tool, {"query": text()[:60]})
                failed = "Error: " if fail_every and calls % fail_every == 0 else ""
                emit("transcript_entry", speaker, role="tool", tool_call_id=f"c{calls}", content=failed + text())
            else:  # a broadcast through a tool: one piece of text, delivered to three agents
                calls += 1
                content = text()
                cause = call(speaker, f"c{calls}", "broadcast", {"message": content[:60]})
                piece = emit("piece_of_text", speaker, content=content, cause=cause)
                heard = listeners(speaker)
                for listener in heard:
                    emit("transcript_entry", listener, role="user", content=content, substance=piece)
                emit("transcript_entry", speaker, role="tool", tool_call_id=f"c{calls}",
                     content=f"Delivered to {len(heard)} agents.")
    return {"events": n, "agents": len(ids), "bytes": Path(path).stat().st_size, "busiest": BUSY,
            "busiest_entries": counts.get(BUSY, 0), "message": middle or "msg_1"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--shape", choices=sorted(SHAPES), default="default",
                        help="long: content of 8-300 words, two deliveries per utterance (about 1 KB an event)")
    parser.add_argument("--times", action="store_true", help="give each event a timestamp")
    parser.add_argument("--fail-every", type=int, default=0, help="every Nth tool call fails (0: none)")
    args = parser.parse_args()
    print(json.dumps(generate(args.out, args.events, args.agents, shape=args.shape, times=args.times,
                              fail_every=args.fail_every)))


if __name__ == "__main__":
    main()
