"""A real trace store: Arize Phoenix (`phoenix serve`, the `agentview[phoenix]` test extra) on free loopback
ports, its working folder a temp one. `agentview push` sends research_team and a Claude Code session with
sub-agents; Phoenix's own REST API gives them back: span count, parentage, attributes, masking."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from conftest import REPO, SAMPLES, wait_for
from viewer.export import otlp
from viewer.reads import queries
from viewer.core.redact import masking
from viewer.reads.session_viewer import load_index

CLAUDE = SAMPLES / "claude_code" / "-home-dev-src-parser" / "5b1e8c2a-audit.jsonl"
SECRET = "sk-live-51Hx9fQ2aZ7rL0mN3vB8cT4yW6"  # in research_team's bench config, read by a tool


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.loads(answer.read())


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    """Phoenix serving on free loopback ports; stopped (and its folder left to pytest) afterwards."""
    work = tmp_path_factory.mktemp("phoenix")
    port, grpc = free_port(), free_port()
    env = dict(os.environ, PHOENIX_WORKING_DIR=str(work), PHOENIX_PORT=str(port), PHOENIX_GRPC_PORT=str(grpc),
               PHOENIX_HOST="127.0.0.1", PHOENIX_TELEMETRY_ENABLED="false")
    log = open(work / "phoenix.log", "wb")
    process = subprocess.Popen([str(Path(sys.executable).parent / "phoenix"), "serve"], cwd=work, env=env,
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        def healthy():
            assert process.poll() is None, (work / "phoenix.log").read_text(errors="replace")[-3000:]
            try:
                return urllib.request.urlopen(base + "/healthz", timeout=2).status == 200
            except OSError:
                return False
        wait_for(healthy, timeout=180, interval=0.5)
        yield base
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()


def phoenix_spans(base: str, trace_id: str) -> list[dict]:
    spans, cursor = [], None
    while True:
        url = f"{base}/v1/projects/default/spans?limit=1000" + (f"&cursor={cursor}" if cursor else "")
        answer = get(url)
        spans += [s for s in answer["data"] if s["context"]["trace_id"] == trace_id]
        cursor = answer.get("next_cursor")
        if not cursor:
            return spans


@pytest.mark.parametrize("path", [SAMPLES / "research_team.jsonl", CLAUDE], ids=["research_team", "claude_code"])
def test_a_pushed_session_reads_back_from_phoenix(phoenix, path):
    s = load_index(path)
    with masking(True):
        expected = [span for line in otlp.otlp_json(s).splitlines() for rs in json.loads(line)["resourceSpans"]
                    for ss in rs["scopeSpans"] for span in ss["spans"]]
    gzip = ["--compression", "gzip"] if path == CLAUDE else []  # loopback goes uncompressed unless asked
    done = subprocess.run([sys.executable, "-m", "viewer", "push", str(path), "--endpoint", f"{phoenix}/v1/traces",
                           *gzip], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    trace_id = otlp.trace_id_of(s.id).hex()
    spans = wait_for(lambda: len(found := phoenix_spans(phoenix, trace_id)) >= len(expected) and found,
                     timeout=60, interval=0.5)
    assert len(spans) == len(expected)
    by_id = {span["context"]["span_id"]: span for span in spans}
    assert set(by_id) == {span["spanId"] for span in expected}
    # the spawn tree is the span tree: each agent under the execute_tool span of the call that created it
    agents = {span["attributes"]["gen_ai.agent.id"]: span for span in spans if span["name"].startswith("invoke_agent ")}
    assert set(agents) == set(s.agents)
    spawned = 0
    for agent in queries.agents(s):
        span = agents[agent["agent_id"]]
        assert span["span_kind"] == "AGENT"
        creator = agent["created_by"]
        if creator and not creator["missing"] and creator["call_id"]:
            parent = by_id[span["parent_id"]]
            assert parent["span_kind"] == "TOOL"
            assert parent["attributes"]["gen_ai.tool.call.id"] == creator["call_id"]
            spawned += 1
        else:
            assert span["parent_id"] is None
    assert spawned >= 3
    kinds = {span["span_kind"] for span in spans}
    assert {"AGENT", "LLM", "TOOL"} <= kinds
    for span in spans:
        assert span["attributes"]["gen_ai.conversation.id"] == s.id
        if span["span_kind"] == "LLM":
            assert "gen_ai.output.messages" in span["attributes"]
    assert SECRET not in json.dumps(spans)
    if path == CLAUDE:
        assert any("gen_ai.usage.input_tokens" in json.dumps(span["attributes"]) for span in spans)
