"""`agentview export --format otlp`: every sample as OTLP/JSON in the GenAI agent shape (viewer/otlp.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime

import pytest

from conftest import REPO, SAMPLES, write_events
from events import calls, created, result, say, tool_call, user
from viewer.export import text as exports, otlp
from viewer.core import model
from viewer.reads import queries
from viewer.library.library import Library
from viewer.core.redact import masking
from viewer.reads.session_viewer import load_index

SECRET = "AKIAIOSFODNN7EXAMPLE"


def sample_sessions():
    library = Library(SAMPLES)
    library.scan()
    return library.listing()


def spans_of(text: str) -> list[dict]:
    return [span for line in text.splitlines() for rs in json.loads(line)["resourceSpans"]
            for ss in rs["scopeSpans"] for span in ss["spans"]]


def attrs(span: dict) -> dict:
    out = {}
    for a in span["attributes"]:
        (kind, value), = a["value"].items()
        out[a["key"]] = int(value) if kind == "intValue" else value
    return out


SESSIONS = sample_sessions()


@pytest.mark.parametrize("s", SESSIONS, ids=[s.relpath for s in SESSIONS])
def test_every_sample_exports_a_well_formed_agent_trace(s):
    with masking(True):
        spans = spans_of(otlp.otlp_json(s))
    by_id = {span["spanId"]: span for span in spans}
    assert len(by_id) == len(spans), "span ids are unique"
    assert {span["traceId"] for span in spans} == {otlp.trace_id_of(s.id).hex()}
    for span in spans:
        assert int(span["endTimeUnixNano"]) >= int(span["startTimeUnixNano"]), span["name"]
        assert attrs(span)["gen_ai.conversation.id"] == s.id
        if "parentSpanId" in span:
            assert span["parentSpanId"] in by_id, f"{span['name']}: its parent is in the trace"
        for link in span.get("links", []):
            kind = attrs(link)["agentview.link"]
            assert kind in ("substance", "cause")
            if attrs(link)["agentview.message_id"] in s.by_id:
                assert link["spanId"] in by_id, "a link to a message of the log reaches its span"
    agent_spans = {attrs(span)["gen_ai.agent.id"]: span for span in spans if span["name"].startswith("invoke_agent ")}
    assert set(agent_spans) == set(s.agents), "one invoke_agent span per agent"
    # the spawn tree is the span tree: an agent's parent is the execute_tool span of the call that created it
    for agent in queries.agents(s):
        span = agent_spans[agent["agent_id"]]
        assert span["name"] == f"invoke_agent {agent['name']}"
        assert attrs(span)["openinference.span.kind"] == "AGENT"
        creator = agent["created_by"]
        if creator and not creator["missing"] and creator["call_id"]:
            parent = by_id[span["parentSpanId"]]
            assert parent["name"] == f"execute_tool {creator['tool']}"
            assert attrs(parent)["gen_ai.tool.call.id"] == creator["call_id"]
            assert attrs(parent)["gen_ai.agent.id"] == s.events[s.by_id[creator["message_id"]]]["agent_id"]
        elif agent["parent_id"] is None:
            assert "parentSpanId" not in span
    kinds = {attrs(span).get("openinference.span.kind") for span in spans}
    assert {"AGENT", "LLM"} <= kinds
    # every event is there once: as its own span, or (a creation) as its agent's span
    positions = sorted(attrs(span)["agentview.position"] for span in spans if "agentview.event" in attrs(span))
    assert positions == list(range(s.count))


def test_export_is_deterministic_and_ids_come_from_the_session_and_messages():
    s = load_index(SAMPLES / "research_team.jsonl")
    first, second = otlp.otlp_json(s), otlp.otlp_json(load_index(SAMPLES / "research_team.jsonl"))
    assert first == second
    spans = spans_of(first)
    chat = next(span for span in spans if attrs(span).get("agentview.message_id") == "msg_004")
    assert chat["spanId"] == otlp.SpanBuilder(s).span_id("message", "msg_004").hex()
    assert chat["name"] == "chat anthropic/claude-sonnet-4-5-20250929"
    tool = next(span for span in spans if span["name"] == "execute_tool task")
    assert json.loads(attrs(tool)["gen_ai.tool.call.arguments"])["name"] == "PolicyHook"
    assert attrs(tool)["gen_ai.tool.call.result"] == "Created subagent: PolicyHook"
    assert attrs(tool)["openinference.span.kind"] == "TOOL"
    output = json.loads(attrs(chat)["gen_ai.output.messages"])
    assert output[0]["role"] == "assistant"
    assert [p["type"] for p in output[0]["parts"]] == ["text", "tool_call"]
    inputs = json.loads(attrs(chat)["gen_ai.input.messages"])
    assert [m["role"] for m in inputs] == ["system", "user"]
    assert attrs(chat)["input.value"].startswith("You are the Coordinator")


def test_native_times_are_synthetic_in_file_order_and_claude_code_keeps_its_own():
    s = load_index(SAMPLES / "research_team.jsonl")
    spans = spans_of(otlp.otlp_json(s))
    assert all(attrs(span)["agentview.time"] == "synthetic" for span in spans)
    base = int(otlp.BASE_TIME.timestamp()) * 10**9
    for span in spans:
        assert int(span["startTimeUnixNano"]) == base + attrs(span)["agentview.position"] * otlp.STEP_NS
    path = SAMPLES / "claude_code" / "-home-dev-src-parser" / "5b1e8c2a-audit.jsonl"
    s = load_index(path)
    spans = spans_of(otlp.otlp_json(s))
    assert not any("agentview.time" in attrs(span) for span in spans)
    first = next(e["timestamp"] for e in map(json.loads, path.read_text().splitlines()) if e.get("timestamp"))
    starts = sorted(int(span["startTimeUnixNano"]) for span in spans)
    assert starts[0] == int(datetime.fromisoformat(first).timestamp() * 10**6) * 1000
    usage = [attrs(span) for span in spans if span["name"].startswith("chat ") and "gen_ai.usage.input_tokens" in attrs(span)]
    assert usage and all(a["gen_ai.usage.output_tokens"] >= 0 for a in usage)


def test_substance_and_cause_become_links_saying_which(tmp_path):
    path = write_events(tmp_path / "links.jsonl", [
        created("m1", "root", name="Root"),
        calls("m2", "root", tool_call("c1", name="Kid")),
        created("m3", "kid", cause="m2", name="Kid"),
        say("m4", "root", "hello kid"),
        user("m5", "kid", "[Root]: hello kid", substance="m4"),
        {"message_id": "m6", "event_type": "piece_of_text", "agent_id": "kid", "content": "x", "cause": ["m4", "m5"]},
        result("m7", "root", "c1", "Created subagent: Kid"),
    ])
    s = load_index(path)
    builder = otlp.SpanBuilder(s)
    spans = {attrs(span).get("agentview.message_id"): span for span in spans_of(otlp.otlp_json(s))
             if not span["name"].startswith("execute_tool")}
    delivery = spans["m5"]
    assert [(attrs(l)["agentview.link"], l["spanId"]) for l in delivery["links"]] == [
        ("substance", builder.span_id("message", "m4").hex())]
    assert [attrs(l)["agentview.link"] for l in spans["m6"]["links"]] == ["cause", "cause"]
    kid = spans["m3"]
    assert kid["name"] == "invoke_agent Kid" and kid["spanId"] == builder.agent_span_id("kid").hex()
    assert kid["parentSpanId"] == builder.call_span_id("m2", model.tool_calls(s.events[1])[0], 0).hex()
    # the tool result sits under the span of the call it answers
    assert spans["m7"]["parentSpanId"] == kid["parentSpanId"]


def test_big_sessions_are_one_request_a_line(tmp_path):
    events = [created("m0", "a", name="A")] + [say(f"m{i}", "a", f"line {i}") for i in range(1, 2500)]
    s = load_index(write_events(tmp_path / "big.jsonl", events))
    lines = otlp.otlp_json(s).splitlines()
    assert len(lines) == 3  # 2,500 spans, at most 1,000 a request
    assert sum(len(spans_of(line)) for line in lines) == 2500


def test_the_command_masks_secrets_unless_told_not_to(tmp_path):
    path = write_events(tmp_path / "secret.jsonl", [
        created("m1", "root", name="Root"),
        calls("m2", "root", tool_call("c1", tool="shell", command=f"export KEY={SECRET}"), content=f"key {SECRET}"),
        result("m3", "root", "c1", f"ok {SECRET}", name="shell"),
    ])
    run = [sys.executable, "-m", "viewer", "export", str(path), "--format", "otlp"]
    masked = subprocess.run(run, capture_output=True, text=True, cwd=REPO, check=True).stdout
    assert SECRET not in masked
    assert len(spans_of(masked)) == 4
    shown = subprocess.run([*run, "--no-redact"], capture_output=True, text=True, cwd=REPO, check=True).stdout
    assert SECRET in shown
    assert exports.MEDIA_TYPES["otlp"] == "application/x-ndjson"


def test_the_export_route_serves_otlp(client):
    answer = client.get("/s/research_team/export/otlp")
    assert answer.status_code == 200
    assert answer.content_type == "application/x-ndjson"
    with masking(True):  # the pages mask unless served with --no-redact
        assert answer.get_data(as_text=True) == otlp.otlp_json(load_index(SAMPLES / "research_team.jsonl"))
    assert "sk-live-51Hx9fQ2aZ7rL0mN3vB8cT4yW6" not in answer.get_data(as_text=True)
