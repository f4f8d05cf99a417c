"""`agentview push` to a real OTLP/HTTP receiver on a free loopback port that decodes the protobuf with
opentelemetry-proto: push, --follow, and a store that fails (tests/test_otlp_wire.py checks the bytes)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest

from conftest import REPO, SAMPLES, wait_for, write_events
from events import calls, created, result, say, tool_call, user
from otlp_receiver import assert_clean_exit, receiver, stop  # noqa: F401 (receiver: a fixture)
from viewer.export import otlp, push
from viewer.core.redact import masking
from viewer.reads.session_viewer import load_index

SECRET = "AKIAIOSFODNN7EXAMPLE"


def json_spans(s) -> list[dict]:
    return [span for line in otlp.otlp_json(s).splitlines() for rs in json.loads(line)["resourceSpans"]
            for ss in rs["scopeSpans"] for span in ss["spans"]]


def json_attributes(items: list[dict]) -> dict:
    out = {}
    for a in items:
        (kind, value), = a["value"].items()
        if kind == "intValue":
            value = int(value)
        elif kind == "arrayValue":
            value = [v["stringValue"] for v in value["values"]]
        out[a["key"]] = value
    return out


def agentview(*args, timeout=60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "viewer", *map(str, args)], capture_output=True, text=True,
                          cwd=REPO, timeout=timeout)


def test_push_sends_a_session_as_protobuf_to_a_real_receiver(receiver, tmp_path):
    path = write_events(tmp_path / "team.jsonl", [
        created("m1", "root", name="Root", language_model="m-1"),
        calls("m2", "root", tool_call("c1", name="Kid"), content=f"spawning, key {SECRET}"),
        created("m3", "kid", cause="m2", name="Kid"),
        result("m4", "root", "c1", "Created subagent: Kid"),
        user("m5", "kid", "hello"),
        say("m6", "kid", "hi"),
    ])
    done = agentview("push", path, "--endpoint", receiver.url, "--header", "X-Team=blue")
    assert done.returncode == 0, done.stderr
    assert "sent 7 spans (6 events)" in done.stderr  # the call is an execute_tool span beside its chat span
    assert receiver.headers[0]["x-team"] == "blue"
    assert receiver.headers[0]["content-type"] == "application/x-protobuf"
    with masking(True):
        expected = json_spans(load_index(path))
    assert [(sp["spanId"], sp["parentSpanId"], sp["name"]) for sp in receiver.spans] == [
        (sp["spanId"], sp.get("parentSpanId"), sp["name"]) for sp in expected]
    by_id = {sp["spanId"]: sp for sp in receiver.spans}
    kid = next(sp for sp in receiver.spans if sp["name"] == "invoke_agent Kid")
    assert by_id[kid["parentSpanId"]]["name"] == "execute_tool task"
    assert by_id[kid["parentSpanId"]]["attributes"]["gen_ai.tool.call.id"] == "c1"
    assert receiver.resources[0]["agentview.session.id"] == "team"
    assert SECRET not in json.dumps(receiver.spans)
    receiver.spans.clear()
    assert agentview("push", path, "--endpoint", receiver.url, "--no-redact").returncode == 0
    assert SECRET in json.dumps(receiver.spans)


def test_push_gzips_for_a_store_elsewhere_or_when_asked(receiver):
    assert push.HttpStore("http://otel.example:4318/v1/traces").compression == "gzip"
    assert push.HttpStore("http://[::1]:4318/v1/traces").compression is None  # loopback: as they are
    done = agentview("push", SAMPLES / "research_team.jsonl", "--endpoint", receiver.url, "--compression", "gzip")
    assert done.returncode == 0, done.stderr
    assert {h["content-encoding"] for h in receiver.headers} == {"gzip"}
    with masking(True):
        assert len(receiver.spans) == len(json_spans(load_index(SAMPLES / "research_team.jsonl")))
    receiver.spans.clear()
    receiver.headers.clear()
    assert agentview("push", SAMPLES / "research_team.jsonl", "--endpoint", receiver.url).returncode == 0
    assert not any("content-encoding" in h for h in receiver.headers)


def test_push_of_a_folder_sends_one_trace_per_session(receiver, tmp_path):
    for name in ("research_team.jsonl", "example1_jack_and_jill.jsonl"):
        (tmp_path / name).write_bytes((SAMPLES / name).read_bytes())
    done = agentview("push", tmp_path, "--endpoint", receiver.url)
    assert done.returncode == 0, done.stderr
    traces = {sp["traceId"] for sp in receiver.spans}
    assert traces == {otlp.trace_id_of("research_team").hex(), otlp.trace_id_of("example1_jack_and_jill").hex()}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("status", [400, 404, 500, 503])
def test_a_store_that_refuses_gives_a_message_and_an_exit_code(receiver, status):
    receiver.status = status
    done = agentview("push", SAMPLES / "research_team.jsonl", "--endpoint", receiver.url, "--timeout", "2")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith(f"agentview: {receiver.url} answered {status} ")
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_store_that_is_not_there_gives_a_message_and_an_exit_code(tmp_path):
    url = f"http://127.0.0.1:{free_port()}/v1/traces"
    started = time.monotonic()
    done = agentview("push", SAMPLES / "research_team.jsonl", "--endpoint", url, "--timeout", "2")
    assert time.monotonic() - started < 30
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith(f"agentview: cannot reach {url}: Connection refused")
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_bad_arguments_are_said_plainly(tmp_path):
    done = agentview("push", tmp_path / "missing.jsonl", "--endpoint", "http://127.0.0.1:9/v1/traces")
    assert done.returncode == 1 and "neither a session file nor a folder" in done.stderr
    done = agentview("push", SAMPLES / "research_team.jsonl", "--endpoint", "localhost:4318")
    assert done.returncode == 2 and "http://" in done.stderr
    done = agentview("push", SAMPLES / "research_team.jsonl", "--endpoint", "http://x/", "--header", "novalue")
    assert done.returncode == 2 and "KEY=VALUE" in done.stderr


def test_follow_sends_each_new_event_once_within_two_seconds(receiver, tmp_path):
    path = write_events(tmp_path / "live.jsonl", [created("m1", "a", name="A"), user("m2", "a", "go")])
    process = subprocess.Popen([sys.executable, "-m", "viewer", "push", str(path), "--endpoint", receiver.url,
                                "--follow"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        receiver.wait_for(2)
        assert [sp["name"] for sp in receiver.spans] == ["invoke_agent A", "message user"]
        for round_ in range(3):
            mid = f"m{3 + round_}"
            write_events(path, [say(mid, "a", f"answer {round_}")], mode="a")
            wait_for(lambda: any(sp["attributes"].get("agentview.message_id") == mid for sp in receiver.spans),
                     timeout=2.0)
        write_events(path, [created("m9", "b", cause="m2", name="B"), say("m10", "b", "I am B")], mode="a")
        wait_for(lambda: len({sp["spanId"] for sp in receiver.spans}) >= 7, timeout=2.0)
        # more polls, and one more event, which arrives: nothing before it was sent twice (but an agent's span,
        # as it grows: same id)
        write_events(path, [say("m11", "b", "last")], mode="a")
        wait_for(lambda: any(sp["attributes"].get("agentview.message_id") == "m11" for sp in receiver.spans),
                 timeout=2.0)
        ids = [sp["spanId"] for sp in receiver.spans if not sp["name"].startswith("invoke_agent")]
        assert len(ids) == len(set(ids)) == 6
        assert len({sp["spanId"] for sp in receiver.spans if sp["name"].startswith("invoke_agent")}) == 2
        assert process.poll() is None
    finally:
        stderr = stop(process)
    assert_clean_exit(process, stderr)
