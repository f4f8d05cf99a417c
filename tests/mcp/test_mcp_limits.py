"""The MCP server's limits, over stdio as an agent CLI runs it: pages of at most 200 that read on where the last
stopped, answers of bounded size, secrets masked as on the pages (shown only with --no-redact), and bad arguments
answered as clear tool errors while the server carries on."""

from __future__ import annotations

import re

import pytest
from aio import run
from conftest import write_events
from events import created, say, user
from mcp import Client, MCPError
from mcp_clients import SECRET, SID, claude_folder, error, eventually, stdio_server, text

BIG = 450  # entries of the one agent of the big session: three pages of 200


def big_session(folder):
    """`big`: agent a1 hears BIG messages, each 3,000 characters long, the last holding an API key."""
    events = [created("c1", "a1", name="Reader")]
    events += [user(f"m{i:03d}", "a1", f"note {i:03d} " + "x" * 3000) for i in range(BIG - 1)]
    events.append(say(f"m{BIG - 1:03d}", "a1", f"the key is {SECRET} (do not share)"))
    write_events(folder / "big.jsonl", events)


def ids(answer: str) -> list[str]:
    return re.findall(r"^\[(m\d{3})\]", answer, re.MULTILINE)


def test_pages_of_200_read_on_where_the_last_stopped_and_no_answer_is_huge(tmp_path):
    big_session(tmp_path)

    async def check():
        async with Client(stdio_server(tmp_path)) as client:
            await eventually(client, "agent_tree", lambda a: f"{BIG:,} entries" in a, session_id="big")
            first = await text(client, "perspective", session_id="big", agent_id="a1", limit=200)
            # 200 entries of 3,000 characters would be 600 KB: each is cut, and the answer stops at 100,000 characters
            assert len(first) < 101_000 and "… [1,509 more characters]" in first
            shown = ids(first)
            assert shown[0] == "m000" and 10 < len(shown) < 200
            said = re.search(r"call again with start=(\d+)\)", first)
            assert said and int(said.group(1)) == len(shown)
            seen = shown
            while said:
                page = await text(client, "perspective", session_id="big", agent_id="a1", limit=200,
                                  start=int(said.group(1)))
                seen += ids(page)
                said = re.search(r"call again with start=(\d+)\)", page)
            assert seen == [f"m{i:03d}" for i in range(BIG)]  # every entry once, in order
            assert "(end: 450 entries in all)" in page
            assert SECRET not in page and "sk-p…[masked]" in page

            listed = await text(client, "list_sessions", limit=1)
            assert "showing 1-1" in listed and "(end: 1 sessions in all)" in listed
            tail = await text(client, "perspective", session_id="big", agent_id="a1", start=BIG - 1, limit=5)
            assert ids(tail) == [f"m{BIG - 1}"]

    run(check())


def test_secrets_are_masked_in_every_tool_as_on_the_pages_and_shown_only_with_no_redact(tmp_path):
    claude_folder(tmp_path)
    calls = [("list_sessions", {}), ("search", {"query": "OPENAI_API_KEY"}), ("agent_tree", {"session_id": SID}),
             ("perspective", {"session_id": SID, "agent_id": "main", "sub_agents": True}),
             ("dialog", {"session_id": SID, "agent_ids": ["main", "agent-ab12"]}),
             ("message", {"session_id": SID, "message_id": "mn-0001"})]

    async def answers(*extra):
        async with Client(stdio_server(tmp_path, *extra)) as client:
            await eventually(client, "agent_tree", lambda a: "agent-ab12" in a, session_id=SID)
            said = [await text(client, tool, **args) for tool, args in calls]
            resource = await client.read_resource(f"agentview://sessions/{SID}/agents/main")
            titles = " ".join(r.title for r in (await client.list_resources()).resources)
            return said + [resource.contents[0].text, titles]

    masked = run(answers())
    for answer in masked:
        assert SECRET not in answer and SECRET[:12] not in answer
    assert [answer.count("[masked]") for answer in masked] == [1, 1, 0, 1, 1, 1, 1, 1], masked
    shown = run(answers("--no-redact"))
    # the same answers hold it: masking hid it, nothing else did
    assert [answer.count(SECRET) for answer in shown] == [1, 1, 0, 1, 1, 1, 1, 1]


def test_bad_arguments_are_clear_tool_errors_and_the_server_carries_on(tmp_path):
    claude_folder(tmp_path)

    async def check():
        async with Client(stdio_server(tmp_path)) as client:
            await eventually(client, "agent_tree", lambda a: "agent-ab12" in a, session_id=SID)
            said = {
                "no session": await error(client, "agent_tree", session_id="nope"),
                "no agent": await error(client, "perspective", session_id=SID, agent_id="nobody"),
                "no message": await error(client, "message", session_id=SID, message_id="m-404"),
                "negative start": await error(client, "perspective", session_id=SID, agent_id="main", start=-1),
                "limit 0": await error(client, "list_sessions", limit=0),
                "limit 201": await error(client, "search", query="parser", limit=201),
                "bad time": await error(client, "list_sessions", changed_since="last tuesday"),
                "bad cursor": await error(client, "search", query="parser", cursor="nonsense"),
                "empty query": await error(client, "search", query="   "),
                "no agents": await error(client, "dialog", session_id=SID, agent_ids=[]),
                "a text for a number": await error(client, "usage", session_id=SID, start="ten"),
                "a missing argument": await error(client, "perspective", session_id=SID),
            }
            with pytest.raises(MCPError, match="There is no session 'nope'"):
                await client.read_resource("agentview://sessions/nope")
            said["still answering"] = await text(client, "usage", session_id=SID)
            return said

    said = run(check())
    assert "cost: $0.1328" in said["still answering"]
    assert "There is no session 'nope': list_sessions gives the ids." in said["no session"]
    assert f"Session '{SID}' has no agent 'nobody'" in said["no agent"]
    assert "has no message 'm-404'" in said["no message"]
    assert "start must be 0 or more, not -1." in said["negative start"]
    assert "limit must be between 1 and 200, not 0." in said["limit 0"]
    assert "limit must be between 1 and 200, not 201." in said["limit 201"]
    assert "changed_since takes a time ago (30m, 2h, 3d, 1w)" in said["bad time"]
    assert "cursor takes what the previous search answered" in said["bad cursor"]
    assert "The query finds nothing to look for" in said["empty query"]
    assert "agent_ids needs one agent id or more" in said["no agents"]
    assert "start" in said["a text for a number"] and "valid integer" in said["a text for a number"]
    assert "agent_id" in said["a missing argument"] and "Field required" in said["a missing argument"]
