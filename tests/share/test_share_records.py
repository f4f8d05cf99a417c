"""The shared file's event records, built in one fast pass, are exactly what the rules say one event at a time.

`ruled` spells each record out with the model's and the index's own helpers (what the file carried before the fast
pass was written); every sample session of every format, a generated multi-agent session and the sessions holding
every secret shape must give the same records, keys in the same order (the file's bytes are the same).
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import pytest

from conftest import REPO, SAMPLES
from test_share import INPUTS, secret_session
from viewer.core import model
from viewer.reads import queries
from viewer.reads.session_viewer import load_index
from viewer.share.events import KINDS, Records
from viewer.web.text import looks_like_markdown

sys.path.insert(0, str(REPO / "benchmarks"))

from generate import generate  # noqa: E402


def ruled(s, position: int, event: dict) -> dict:
    """One event's record, each key by the helper that rules it."""
    kind = model.perspective_kind(event)
    out: dict = {"i": event["message_id"], "a": s.agents[event["agent_id"]].ordinal if event["agent_id"] in s.agents
                 else -1, "k": KINDS[kind]}
    if not model.is_transcript_entry(event):
        out["t"] = str(event.get("event_type"))
    content = model.content_of(event)
    if content:
        out["c"] = content
        if kind != model.RECEIVED and looks_like_markdown(content):
            out["md"] = 1
    if isinstance(event.get("role"), str):
        out["r"] = event["role"]
    if kind == model.DID:
        out["calls"] = []
        for call in model.tool_calls(event):
            row = {"n": call.name, "s": call.summary(120), "x": call.pretty_arguments}
            if call.id:
                row["id"] = call.id
            started = [s.agents[a].ordinal for a in s.spawned.get(event["message_id"], ())
                       if queries.spawning_call(s, s.agents[a], event) == call]
            if started:
                row["sp"] = started
            out["calls"].append(row)
    elif kind == model.RECEIVED:
        if isinstance(event.get("tool_call_id"), str):
            out["tc"] = event["tool_call_id"]
    if model.is_delivery(event):
        out["sb"] = event["substance"]
        original = s.event(event["substance"])
        if original is not None:
            out["sa"] = s.agents[original["agent_id"]].ordinal if original["agent_id"] in s.agents else -1
        if model.is_modified(event, original) is not None:
            out["mo"] = model.is_modified(event, original)
    if model.causes_of(event):
        out["ca"] = model.causes_of(event)
    if event.get("timestamp") and isinstance(event["timestamp"], (str, int, float)):
        out["ts"] = event["timestamp"]
    if event.get("thinking"):
        thinking = event["thinking"]
        out["th"] = "\n\n".join(t for t in thinking if isinstance(t, str)) if isinstance(thinking, list) else str(thinking)
    if event.get("usage") and isinstance(event["usage"], dict):
        out["u"] = {k: v for k, v in event["usage"].items() if isinstance(v, int) and not isinstance(v, bool)}
    if event.get("model"):
        out["m"] = str(event["model"])
    return out


def assert_records_are_ruled(path: Path, run: int = 7) -> None:
    """Made in runs of `run` events (a delivery's original often in another run) as the file's parts are."""
    s = load_index(path)
    made = Records(s)
    made.WINDOW = 5  # most originals out of the contents kept: read again
    fast = [row for first in range(0, s.count, run) for row in made.run(first, s.events.walk(first, min(s.count, first + run)))]
    slow = [ruled(s, p, s.events[p]) for p in range(s.count)]
    assert len(fast) == s.count > 0
    for p, (got, want) in enumerate(zip(fast, slow)):
        assert orjson.dumps(got) == orjson.dumps(want), f"{path.name}, event {p}"
    pairs = [(p, s.call_position_for_result(p)) for p in range(s.count) if model.perspective_kind(s.events[p]) == model.RECEIVED]
    assert made.paired == [n for pair in pairs if pair[1] is not None for n in pair]


SESSIONS = sorted(p for p in SAMPLES.rglob("*") if p.suffix in (".jsonl", ".json", ".gz") and "subagents" not in p.parts)


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_records_of_every_sample_are_the_rules(path):
    assert_records_are_ruled(path)


@pytest.mark.parametrize("kind", ["otlp"])
def test_records_of_other_formats_are_the_rules(tmp_path, kind):
    assert_records_are_ruled(INPUTS[kind](tmp_path))


def test_records_of_a_generated_multi_agent_session_are_the_rules(tmp_path):
    """Deliveries to many listeners, tool calls and results, spawned agents, causes: the benchmark's shapes."""
    path = tmp_path / "generated.jsonl"
    generate(path, 3000, 24)
    assert_records_are_ruled(path)


@pytest.mark.parametrize("rotation", [0, 5])
def test_records_of_sessions_holding_secrets_are_the_rules(tmp_path, rotation):
    path, _ = secret_session(tmp_path / "in", rotation)
    assert_records_are_ruled(path)
