"""What a store says in a 200 reply: a partial success (spans it took the request of but rejected) is counted
over the whole push and told once at its end, with exit status 3, never a traceback. Against the real
OTLP/HTTP receiver of tests/otlp_receiver.py answering protobuf or JSON; the reader against opentelemetry-proto's
own bytes."""

from __future__ import annotations

import subprocess
import sys

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from conftest import REPO, SAMPLES, write_events
from events import created, say, user
from otlp_receiver import receiver, stop  # noqa: F401 (receiver: a fixture)
from viewer import cli
from viewer.export import otlp_reply


def agentview(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "viewer", *map(str, args)], capture_output=True, text=True,
                          cwd=REPO, timeout=60)


@pytest.mark.parametrize("as_json", [False, True], ids=["protobuf reply", "JSON reply"])
def test_spans_the_store_rejects_are_counted_and_told_at_the_end(receiver, as_json):
    receiver.partial, receiver.partial_json = (2, "span too old\nfor retention"), as_json
    done = agentview("push", SAMPLES / "research_team.jsonl", "--endpoint", receiver.url)
    assert done.returncode == cli.REJECTED_STATUS == 3, done.stderr
    assert "Traceback" not in done.stderr
    said = done.stderr.strip().splitlines()
    assert said[0].startswith("agentview: sent ")
    # two a request, every request: counted over the push, told once, the message on one line
    assert said[1:] == [f"agentview: {2 * receiver.requests} spans rejected by the store: span too old for retention"]


def test_a_reply_that_rejects_nothing_but_says_something_is_a_warning(receiver):
    receiver.partial = (0, "attribute values truncated")
    done = agentview("push", SAMPLES / "research_team.jsonl", "--endpoint", receiver.url)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[1:] == ["agentview: the store warned: attribute values truncated"]


def test_a_follow_push_tells_the_rejections_when_it_is_stopped(receiver, tmp_path):
    path = write_events(tmp_path / "live.jsonl", [created("m1", "a", name="A"), user("m2", "a", "go")])
    receiver.partial = (1, "quota exceeded")
    process = subprocess.Popen([sys.executable, "-m", "viewer", "push", str(path), "--endpoint", receiver.url,
                                "--follow"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        receiver.wait_for(2)
        write_events(path, [say("m3", "a", "done")], mode="a")
        receiver.wait_for(3)
    finally:
        stderr = stop(process)
    assert process.returncode == 3, stderr
    assert "Traceback" not in stderr
    told = f"agentview: {receiver.requests} spans rejected by the store: quota exceeded"
    assert stderr.strip().splitlines()[-1] == told


def reply(rejected: int, message: str) -> bytes:
    answer = ExportTraceServiceResponse()
    answer.partial_success.rejected_spans = rejected
    answer.partial_success.error_message = message
    return answer.SerializeToString()


def test_the_reply_reader_reads_what_opentelemetry_proto_writes():
    assert otlp_reply.partial_success(reply(7, "too big")) == (7, "too big")
    assert otlp_reply.partial_success(reply(2**40, "")) == (2**40, "")
    assert otlp_reply.partial_success(reply(-5, "x")) == (0, "x")  # a negative int64 is no rejection
    assert otlp_reply.partial_success(ExportTraceServiceResponse().SerializeToString()) == (0, "")
    assert otlp_reply.partial_success(b"") == (0, "")
    # an unknown field before it is skipped, as protobuf readers must
    assert otlp_reply.partial_success(b"\x10\x05" + reply(3, "ok")) == (3, "ok")
    json_reply = b'{"partialSuccess": {"rejectedSpans": "4", "errorMessage": "late"}}'
    assert otlp_reply.partial_success(json_reply, "application/json") == (4, "late")


@pytest.mark.parametrize("body", [reply(3, "cut")[:-2], b"\xff\xff\xff", b"\x0a\x50\x08", b"{not json",
                                  b'{"partialSuccess": "no"}', b'[1, 2]', b"\x0f" * 20])
def test_a_reply_the_reader_cannot_read_says_nothing(body):
    assert otlp_reply.partial_success(body) == (0, "")


def test_a_push_that_fails_after_rejections_says_both_and_exits_1(receiver, tmp_path):
    receiver.partial = (1, "too old")
    receiver.status, receiver.script = 400, [(200, {})]  # the first request is taken (one span rejected), no other
    lines = [created("m1", "a", name="A")] + [say(f"m{n}", "a", "x" * 3000) for n in range(2, 2000)]
    path = write_events(tmp_path / "big.jsonl", lines)
    done = agentview("push", path, "--endpoint", receiver.url)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    said = done.stderr.strip().splitlines()
    assert said[0].startswith(f"agentview: {receiver.url} answered 400 ")
    assert said[1:] == ["agentview: 1 spans rejected by the store: too old"]
