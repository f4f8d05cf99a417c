"""The SDK's own MCP client on agentview's two MCP servers: `agentview mcp DIR` launched over stdio as an agent CLI
launches it, and /mcp of a real `agentview serve`; with a Claude Code folder to read, and helpers to call tools."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time

import httpx2
import pytest
from claude_lines import Transcript
from conftest import REPO, serve
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

SESSION = "7a11-mcp"
SID = f"-home-dev-app:{SESSION}"  # the session id of claude_folder's session
SECRET = "sk-proj-Zq8xW3vN7mK2pL9rT4yU6aB1cD5eF0gH"  # an API key as logs leak them


def stdio_server(folder, *extra: str, command: str | None = None) -> StdioServerParameters:
    """`python -m viewer mcp FOLDER` (or `command mcp FOLDER`), this checkout's code first on its path."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    args = ([] if command else ["-m", "viewer"]) + ["mcp", str(folder), *extra]
    return StdioServerParameters(command=command or sys.executable, args=args, env=env, cwd=str(REPO))


@contextlib.asynccontextmanager
async def over_http(url: str, token: str | None = None, headers: dict | None = None):
    """A Client on `url`/mcp, sending the token as a bearer header when given."""
    sent = {**({"Authorization": f"Bearer {token}"} if token else {}), **(headers or {})}
    async with (httpx2.AsyncClient(headers=sent, timeout=60) as http,
                Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client):
        yield client


class Servers:
    """Opens a client on a folder over one transport ("stdio" or "http"); the HTTP servers stop at `close`."""

    def __init__(self, transport: str):
        self.transport = transport
        self.stack = contextlib.ExitStack()

    def opener(self, folder, *extra: str):
        """A function making a new connected client (an async context manager) to the folder's server."""
        if self.transport == "stdio":
            return lambda: Client(stdio_server(folder, *extra))
        server = self.stack.enter_context(serve(folder, *extra))
        return lambda: over_http(server.url)

    def close(self) -> None:
        self.stack.close()


@pytest.fixture(name="servers", params=["stdio", "http"])
def servers_fixture(request):
    """Servers over each transport in turn (a test using it runs twice)."""
    opened = Servers(request.param)
    yield opened
    opened.close()


async def text(client, tool: str, **args) -> str:
    """A tool's answer, which must not be an error."""
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content[0].text
    return result.content[0].text


async def error(client, tool: str, **args) -> str:
    """A tool's answer, which must be an error."""
    result = await client.call_tool(tool, args)
    assert result.is_error, result.content[0].text
    return result.content[0].text


async def eventually(client, tool: str, holds, timeout: float = 30.0, **args) -> str:
    """A tool's answer once `holds(answer)` (the server reads its folder in the background, as the viewer does)."""
    deadline = time.monotonic() + timeout
    while True:
        result = await client.call_tool(tool, args)
        answer = result.content[0].text
        if not result.is_error and holds(answer):
            return answer
        if time.monotonic() > deadline:
            raise AssertionError(f"{tool}({args}) never held; last answer:\n{answer}")
        await asyncio.sleep(0.1)


def tokens(i, o):
    return {"input_tokens": i, "output_tokens": o, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def claude_folder(folder):
    """A Claude Code project: `main` runs a failing command, spawns a sub-agent (agent-ab12) whose Task call fails,
    and leaks an API key in its prompt; the sub-agent reads a file. Returns the main transcript's path."""
    project = folder / "-home-dev-app"
    main = Transcript(SESSION, "mn")
    main.user(f"Audit the parser. Use OPENAI_API_KEY={SECRET} if you must.")
    main.response("msg_1", [{"type": "tool_use", "id": "toolu_B", "name": "Bash", "input": {"command": "make test"}}],
                  model="claude-sonnet-4-5-20250929", usage=tokens(1000, 500))
    main.user([{"tool_use_id": "toolu_B", "type": "tool_result", "content": "make: *** [test] Error 2",
                "is_error": True}])
    main.response("msg_2", [{"type": "tool_use", "id": "toolu_T", "name": "Task",
                             "input": {"description": "Scan", "prompt": "List the entry points",
                                       "subagent_type": "Explore"}}],
                  model="claude-sonnet-4-5-20250929", usage=tokens(2000, 100))
    main.n = 30  # the sub-agent's lines (10:00:11 on) come before the result
    main.user([{"tool_use_id": "toolu_T", "type": "tool_result", "content": "Agent crashed: context overflow",
                "is_error": True}], toolUseResult={"agentId": "ab12", "status": "failed"})
    main.response("msg_3", [{"type": "text", "text": "The scan failed; the tokenizer drops the last token."}],
                  model="claude-sonnet-4-5-20250929", usage=tokens(3000, 50))
    path = main.write(project / f"{SESSION}.jsonl")
    subagents = project / SESSION / "subagents"
    helper = Transcript(SESSION, "hp")
    helper.n = 10
    helper.user("List the entry points", isSidechain=True, agentId="ab12")
    helper.response("msg_h1", [{"type": "tool_use", "id": "toolu_R", "name": "Read",
                                "input": {"file_path": "src/parser.py"}}], model="claude-haiku-4-5",
                    usage=tokens(100_000, 1000))
    helper.user([{"tool_use_id": "toolu_R", "type": "tool_result", "content": "def parse(text): ..."}],
                isSidechain=True, agentId="ab12")
    helper.write(subagents / "agent-ab12.jsonl")
    (subagents / "agent-ab12.meta.json").write_text(json.dumps({"agentType": "Explore", "description": "Scan",
                                                                 "toolUseId": "toolu_T"}))
    return path
