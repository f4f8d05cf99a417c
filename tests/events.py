"""Builders of native (seed 000) events for tests, and small helpers shared by the test modules."""

from __future__ import annotations

import json
import os
import threading

from viewer.index.session_index import SessionIndex
from viewer.files.tailer import Line


def created(mid, agent, cause=None, name=None, language_model=None):
    event = {"message_id": mid, "event_type": "agent_created", "agent_id": agent}
    for key, value in (("cause", cause), ("name", name), ("language_model", language_model)):
        if value is not None:
            event[key] = value
    return event


def entry(mid, agent, role, content=None, **extra):
    event = {"message_id": mid, "event_type": "transcript_entry", "agent_id": agent, "role": role}
    if content is not None:
        event["content"] = content
    event.update(extra)
    return event


def user(mid, agent, content, substance=None):
    return entry(mid, agent, "user", content, **({"substance": substance} if substance is not None else {}))


def system(mid, agent, content):
    return entry(mid, agent, "system", content)


def say(mid, agent, content):
    return entry(mid, agent, "assistant", content)


def tool_call(call_id, tool="task", **arguments):
    return {"id": call_id, "type": "function", "function": {"name": tool, "arguments": json.dumps(arguments)}}


def calls(mid, agent, *tool_calls, content=None):
    return entry(mid, agent, "assistant", content, tool_calls=list(tool_calls))


def result(mid, agent, call_id, content, name="task"):
    return entry(mid, agent, "tool", content, tool_call_id=call_id, name=name)


def piece(mid, agent, content, cause):
    return {"message_id": mid, "event_type": "piece_of_text", "agent_id": agent, "content": content, "cause": cause}


def claude_user(uuid, content, timestamp="2026-02-01T10:00:00.000Z"):
    """A Claude Code user record of session "s" (content: a string or a list of blocks)."""
    return {"type": "user", "uuid": uuid, "parentUuid": None, "isSidechain": False, "sessionId": "s",
            "timestamp": timestamp, "message": {"role": "user", "content": content}}


def claude_response_line(uuid, block):
    """One line of Claude Code response msg_1 (request req_1): its lines make one message that grows."""
    return {"type": "assistant", "uuid": uuid, "parentUuid": None, "isSidechain": False, "sessionId": "s",
            "timestamp": "2026-02-01T10:00:01.000Z", "requestId": "req_1",
            "message": {"id": "msg_1", "role": "assistant", "model": "claude-opus-4-1", "content": [block],
                        "usage": {"input_tokens": 10, "output_tokens": 5}}}


def ids(events):
    return [e["message_id"] for e in events]


def run_with_timeout(fn, seconds=5.0):
    """Run fn in a thread; fail (instead of hanging the suite) when it does not return."""
    box = {}

    def target():
        box["value"] = fn()

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"{fn} did not terminate within {seconds}s"
    return box["value"]


def copy_samples(name, dest):
    """A copy of sample_sessions/<name> at `dest` (its generator scripts left out); returns `dest`."""
    import shutil

    from conftest import SAMPLES

    shutil.copytree(SAMPLES / name, dest, ignore=shutil.ignore_patterns("*.py"))
    return dest


def scanned(folder, tuning=None):
    """A Library of `folder` (tuned by `tuning`, a core.tuning.Tuning), scanned."""
    from viewer.core.host import Host
    from viewer.library.library import Library

    library = Library(folder, host=Host(tuning))
    library.scan()
    return library


def make_chain(root, depth, name="d"):
    """`depth` nested folders `name` below root, each made relative to its open parent (the path may pass PATH_MAX)."""
    fd = os.open(root, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)


def cut_chain(root, name="d", piece=100):
    """Cut a chain of nested folders `name` below root into pieces of `piece` folders moved up to root,
    so shutil.rmtree (recursive, path-bound) can remove it."""
    top, fd, depth = os.open(root, os.O_RDONLY), os.open(root, os.O_RDONLY), 0
    try:
        while True:
            try:
                inner = os.open(name, os.O_RDONLY, dir_fd=fd)
            except FileNotFoundError:
                return
            depth += 1
            if depth % piece == 0:
                os.rename(name, f"{name}-piece-{depth}", src_dir_fd=fd, dst_dir_fd=top)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)
        os.close(top)


# --- a session index fed raw lines, and what it found wrong (parser and integrity tests) ---

def ingest(raw_lines):
    """A fresh native SessionIndex fed these raw lines (bytes), numbered from 1."""
    session = SessionIndex("s", "s.jsonl", "s.jsonl")
    session.ingest([Line(i + 1, raw) for i, raw in enumerate(raw_lines)])
    return session


def problems(session):
    return [(p.kind, p.line, p.message_id) for p in session.problems]


def dumps(event):
    return json.dumps(event).encode()
