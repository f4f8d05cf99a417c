"""Every tool and resource of the MCP server, driven by the SDK's own client over stdio (`agentview mcp DIR`) and
over HTTP (/mcp of `agentview serve`): on the sample sessions and on a Claude Code folder."""

from __future__ import annotations

import shutil

from aio import run
from conftest import SAMPLES
from mcp_clients import (
    SECRET,
    SID,
    claude_folder,
    eventually,
    servers_fixture,  # noqa: F401 (the fixture `servers`: each transport in turn)
    text,
)

JJ = "example1_jack_and_jill"


def test_every_tool_on_the_samples(servers, tmp_path):
    folder = tmp_path / "samples"
    shutil.copytree(SAMPLES, folder)
    connect = servers.opener(folder)

    async def check():
        async with connect() as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert tools == {"list_sessions", "search", "agent_tree", "perspective", "dialog", "message",
                             "session_failures", "usage"}
            listed = await eventually(client, "list_sessions", lambda a: "research_team" in a and JJ in a
                                      and "codex:" in a and "claude_code:" in a)
            assert f"- {JJ} · agentview events · 20 events, 3 agents, 0 problems" in listed
            assert f"page /s/{JJ}" in listed
            codex = await text(client, "list_sessions", format="Codex CLI")
            assert "1 sessions match" in codex and "codex:2026:03:01:rollout" in codex and JJ not in codex
            claude = await text(client, "list_sessions", project="src-parser", format="claude_code")
            assert claude.startswith("3 sessions match") and "Parser audit" in claude
            assert (await text(client, "list_sessions", changed_since="2099-01-01")).startswith("0 sessions match")
            assert JJ in await text(client, "list_sessions", changed_since="10000d")
            failing = await text(client, "list_sessions", failures=True)
            assert "research_team" in failing and JJ not in failing  # research_team has a problem; Jack and Jill none

            found = await text(client, "search", query="jill smiles")
            assert f"- {JJ} · agent_jill \"Jill\" · said · [msg_018]: ***smiles*** Hello Jack, I'm **Jill**." in found
            assert f"/s/{JJ}/agents/agent_jill#msg_018" in found

            tree = await text(client, "agent_tree", session_id=JJ)
            assert "- agent_root · " in tree and "\n  - agent_jack · \"Jack\" · " in tree
            assert "created by task 'task(name=Jill" in tree and f"/s/{JJ}/agents/agent_jill" in tree

            jill = await text(client, "perspective", session_id=JJ, agent_id="agent_jill")
            assert "[msg_017] HEARD from agent_jack (original msg_015):\n    [Jack]: Hi, I'm Jack." in jill
            assert "[msg_018] SAID:\n    *smiles* Hello Jack, I'm Jill." in jill and "(end: 4 entries in all)" in jill
            root = await text(client, "perspective", session_id=JJ, agent_id="agent_root", sub_agents=True)
            assert "[msg_018] agent_jill SAID:" in root  # a sub-agent's entry, named
            assert "  -> task({\"name\": \"Jill\"" in root and "     created agent agent_jill \"Jill\"" in root

            talk = await text(client, "dialog", session_id=JJ, agent_ids=["agent_jack", "agent_jill"])
            assert "[msg_012] agent_root -> agent_jack, agent_jill:" in talk  # said once, heard by both
            assert "[msg_018] agent_jill -> agent_jack:\n    *smiles* Hello Jack" in talk

            heard = await text(client, "message", session_id=JJ, message_id="msg_020")
            assert "Delivered from agent_jill's msg_018" in heard
            assert "Upstream, the causality chain that led to it (1, oldest first):\n- [msg_018] agent_jill" in heard
            said = await text(client, "message", session_id=JJ, message_id="msg_018")
            assert "Downstream, what it led to (1: " in said and "- [msg_020] agent_jack \"Jack\" HEARD" in said

            failures = await text(client, "session_failures", session_id="research_team")
            assert "1 problems reading it (1 arguments_not_json)" in failures
            assert "- arguments_not_json line 70: tool_calls[0] arguments are not valid JSON" in failures

            audit = "claude_code:-home-dev-src-parser:5b1e8c2a-audit"
            spent = await text(client, "usage", session_id=audit)
            assert "cost: $0.1119" in spent and "models: claude-" in spent
            session = await client.read_resource(f"agentview://sessions/{JJ}")
            assert "- agent_root · " in session.contents[0].text
            agent = await client.read_resource(f"agentview://sessions/{JJ}/agents/agent_jill")
            assert "[msg_018] SAID:" in agent.contents[0].text
            listed = {r.uri: r for r in (await client.list_resources()).resources}  # sessions to attach
            assert listed[f"agentview://sessions/{JJ}"].description.startswith("agentview events session")
            audit_uri = "agentview://sessions/claude_code%3A-home-dev-src-parser%3A5b1e8c2a-audit"
            assert listed[audit_uri].title == "Parser audit"
            assert "cost: $0.1119" in (await client.read_resource(audit_uri)).contents[0].text
            templates = (await client.list_resource_templates()).resource_templates
            assert {t.uri_template for t in templates} == {"agentview://sessions/{session_id}",
                                                           "agentview://sessions/{session_id}/agents/{agent_id}"}

    run(check())


def test_every_tool_on_a_claude_code_folder(servers, tmp_path):
    claude_folder(tmp_path)
    connect = servers.opener(tmp_path)

    async def check():
        async with connect() as client:
            listed = await eventually(client, "list_sessions", lambda a: "2 agents" in a, format="claude-code")
            assert f"- {SID} \"Audit the parser. Use OPENAI_API_KEY=[masked] if you must.\" · Claude Code" in listed
            assert SECRET not in listed
            assert SID in await text(client, "list_sessions", failures=True)  # its failed tool calls count

            tree = await text(client, "agent_tree", session_id=SID)
            assert "- main · \"main agent\" · claude-sonnet-4-5-20250929 · 6 entries · $0.0278, $0.1328 with " \
                   "sub-agents" in tree
            assert "\n  - agent-ab12 · \"Scan\" · claude-haiku-4-5 · 3 entries · $0.1050 · created by Task" in tree

            main = await text(client, "perspective", session_id=SID, agent_id="main", sub_agents=True)
            assert "  -> Bash({\"command\":\"make test\"})\n     <- [mn-0003] [tool error] make: *** [test] Error 2" in main
            assert "     created agent agent-ab12 \"Scan\"\n     <- [mn-0031] [sub-agent failed] Agent crashed" in main
            assert "[hp-0012] agent-ab12 DID:\n  -> Read({\"file_path\":\"src/parser.py\"})" in main

            talk = await text(client, "dialog", session_id=SID, agent_ids=["main", "agent-ab12"])
            assert "[mn-0004] main -> agent-ab12:\n  -> Task(" in talk

            read = await text(client, "message", session_id=SID, message_id="hp-0012")
            assert "Downstream, what it led to (1: " in read and "- [hp-0013] agent-ab12 \"Scan\" RECEIVED: def parse" \
                in read

            found = await text(client, "search", query="tool:read", session_id=SID)
            assert "[hp-0012]" in found and f"/s/{SID}/agents/agent-ab12#hp-0012" in found

            failures = await text(client, "session_failures", session_id=SID)
            assert "2 failures (error results, refused calls" in failures and "0 problems reading it" in failures
            assert "- mn-0031 · main \"main agent\" · sub-agent failed · Task Agent crashed: context overflow" \
                in failures
            assert "- mn-0003 · main \"main agent\" · tool error · Bash make: *** [test] Error 2" in failures

            spent = await text(client, "usage", session_id=SID)
            assert "4 responses, 106,000 input, 1,650 output; peak context 100,000 tokens of 200,000 (50%)" in spent
            assert "cost: $0.1328" in spent and "- agent-ab12: $0.1050; $0.1050" in spent
            helper = await text(client, "usage", session_id=SID, agent_id="agent-ab12")
            assert "1 responses, 100,000 input, 1,000 output" in helper and "cost: $0.1050" in helper

    run(check())
