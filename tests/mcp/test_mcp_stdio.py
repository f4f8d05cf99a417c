"""End to end, as an agent CLI runs it: `agentview mcp DIR` launched as a subprocess speaking MCP on its stdin and
stdout; its stdout holds nothing but the protocol's messages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from aio import run
from conftest import REPO, sample
from mcp import Client
from mcp_clients import eventually, stdio_server

AGENTVIEW = Path(sys.executable).parent / "agentview"  # the script the package installs
TOOLS = ["list_sessions", "search", "agent_tree", "perspective", "dialog", "message", "session_failures", "usage"]


def folder_of_samples(tmp_path) -> Path:
    (tmp_path / "example1_jack_and_jill.jsonl").write_bytes(sample("example1_jack_and_jill").read_bytes())
    return tmp_path


def test_the_installed_agentview_script_serves_mcp_over_stdio(tmp_path):
    folder = folder_of_samples(tmp_path)

    async def check():
        async with Client(stdio_server(folder, "--url", "http://127.0.0.1:8000/", command=str(AGENTVIEW))) as client:
            listed = (await client.list_tools()).tools
            assert all(tool.annotations.read_only_hint for tool in listed)
            tree = await eventually(client, "agent_tree", lambda a: "agent_jill" in a,
                                    session_id="example1_jack_and_jill")
            return [tool.name for tool in listed], client.server_info.name, client.instructions, tree

    tools, name, instructions, tree = run(check())
    assert tools == TOOLS and name == "agentview" and "Secrets in the logs are masked" in instructions
    assert " · http://127.0.0.1:8000/s/example1_jack_and_jill/agents/agent_jill\n" in tree  # --url: whole links


def test_stdout_carries_only_the_protocol_and_answers_in_order(tmp_path):
    """The exchange an agent CLI starts, written by hand: initialize, initialized, tools/list, a tool call."""
    folder = folder_of_samples(tmp_path)
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "a-cli", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    process = subprocess.Popen([sys.executable, "-m", "viewer", "mcp", str(folder), "--no-cache"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})

    def send(message: dict) -> dict | None:
        process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()
        return json.loads(process.stdout.readline()) if "id" in message else None  # each line one JSON-RPC message

    try:
        answers = [answer for answer in map(send, messages) if answer]
        deadline = time.monotonic() + 30
        while True:  # the folder is read in the background: ask until the session is there
            tree = send({"jsonrpc": "2.0", "id": len(answers) + 1, "method": "tools/call",
                         "params": {"name": "agent_tree", "arguments": {"session_id": "example1_jack_and_jill"}}})
            answers.append(tree)
            if not tree["result"]["isError"] or time.monotonic() > deadline:
                break
    finally:
        process.stdin.close()
        process.wait(timeout=30)
    assert [a["id"] for a in answers] == list(range(1, len(answers) + 1))
    assert answers[0]["result"]["serverInfo"]["name"] == "agentview"
    assert [tool["name"] for tool in answers[1]["result"]["tools"]] == TOOLS
    assert "- agent_root · " in answers[-1]["result"]["content"][0]["text"]
    assert process.stdout.read() == ""  # nothing else was written to stdout, ever
    assert process.returncode == 0


def test_a_folder_that_is_not_one_is_a_clear_error(tmp_path):
    done = subprocess.run([sys.executable, "-m", "viewer", "mcp", str(tmp_path / "missing")], capture_output=True,
                          text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60,
                          check=False)
    assert done.returncode == 2 and done.stdout == "" and "is not a folder" in done.stderr
    done = subprocess.run([sys.executable, "-m", "viewer", "mcp", str(tmp_path), "--url", "localhost:8000"],
                          capture_output=True, text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                          timeout=60, check=False)
    assert done.returncode == 2 and "--url must be an http:// or https:// URL" in done.stderr

