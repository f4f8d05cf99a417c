"""/mcp on the viewer's port is guarded as every page is (the token off loopback, the Host allowlist) and refuses
pages of other sites (Origin); and a search over MCP follows a session as it grows, over either transport."""

from __future__ import annotations

import http.client
import json
import urllib.parse

import pytest
from aio import run
from conftest import serve, write_events
from events import created, say, user
from mcp_clients import (
    eventually,
    over_http,
    servers_fixture,  # noqa: F401 (the fixture `servers`: each transport in turn)
    text,
)

LIST_TOOLS = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2025-06-18"}


def post(url: str, body: str = LIST_TOOLS, headers: dict | None = None) -> tuple[int, bytes]:
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    connection.request("POST", "/mcp", body=body, headers={**MCP_HEADERS, **(headers or {})})
    response = connection.getresponse()
    return response.status, response.read()


def session(folder):
    write_events(folder / "grows.jsonl", [created("c1", "a1", name="Scribe"), user("m1", "a1", "Start the log")])


def test_a_token_is_required_off_loopback(tmp_path):
    session(tmp_path)
    with serve(tmp_path, "--host", "0.0.0.0") as server:
        token = server.printed_url.split("?token=")[1]
        url = server.url.replace("0.0.0.0", "127.0.0.1")
        status, body = post(url)
        assert status == 401 and b"needs its access token" in body
        assert post(url, headers={"Authorization": "Bearer wrong"})[0] == 401
        status, body = post(url, headers={"Authorization": f"Bearer {token}"})
        assert status == 200 and "perspective" in {tool["name"] for tool in json.loads(body)["result"]["tools"]}

        async def check():
            async with over_http(url, token) as client:
                return await eventually(client, "agent_tree", lambda a: "Scribe" in a, session_id="grows")

        assert "- a1 · \"Scribe\" · 1 entries" in run(check())

        async def refused():
            async with over_http(url) as client:  # the SDK's client, without the token
                await client.list_tools()

        with pytest.raises(BaseException, match="401|Unauthorized|unhandled errors"):
            run(refused())


def test_foreign_hosts_and_pages_of_other_sites_are_refused(tmp_path):
    session(tmp_path)
    with serve(tmp_path) as server:
        assert post(server.url)[0] == 200  # loopback: no token
        assert post(server.url, headers={"Host": "evil.example"})[0] == 400  # DNS rebinding: refused by name
        status, body = post(server.url, headers={"Origin": "http://evil.example"})
        assert status == 403 and b"does not answer pages of" in body
        assert post(server.url, headers={"Origin": "null"})[0] == 403
        port = urllib.parse.urlsplit(server.url).port
        assert post(server.url, headers={"Origin": f"http://localhost:{port}"})[0] == 200  # its own pages
        status, body = post(server.url, body="x" * (4 * 1024 * 1024 + 1))
        assert status == 413
        assert post(server.url, body="{not json")[0] == 400  # the SDK's parse error; the server goes on
        assert post(server.url)[0] == 200


def test_a_search_follows_a_session_as_it_grows(servers, tmp_path):
    session(tmp_path)
    connect = servers.opener(tmp_path)

    async def check():
        async with connect() as client:
            await eventually(client, "agent_tree", lambda a: "Scribe" in a, session_id="grows")
            assert "0 hits for 'zebra'" in await text(client, "search", query="zebra")
            write_events(tmp_path / "grows.jsonl", [say(f"m{i}", "a1", f"entry {i}: a zebra crossed")
                                                    for i in range(2, 6)], mode="a")
            found = await eventually(client, "search", lambda a: "4 hits" in a, query="zebra")
            assert "[m5]: entry 5: a **zebra** crossed" in found and "/s/grows/agents/a1#m5" in found
            write_events(tmp_path / "grows.jsonl", [say("m6", "a1", "one more zebra")], mode="a")
            found = await eventually(client, "search", lambda a: "[m6]" in a, query="zebra", limit=2,
                                     cursor="grows=5")
            assert "[m2]" not in found  # the page after the cursor

    run(check())


def test_the_mcp_thread_ends_when_its_app_is_closed(tmp_path):
    import threading

    from viewer.web.app import close_app, create_app

    session(tmp_path)
    app = create_app(tmp_path, watch=False)
    before = set(threading.enumerate())  # other tests' apps, still open, may have bridges of their own
    answer = app.test_client().post("/mcp", data=LIST_TOOLS, headers=MCP_HEADERS)
    assert answer.status_code == 200 and "perspective" in answer.get_data(as_text=True)
    bridges = [t for t in threading.enumerate() if t.name == "agentview-mcp" and t not in before]
    assert len(bridges) == 1 and bridges[0].is_alive()
    close_app(app)
    assert not bridges[0].is_alive()
    assert app.test_client().post("/mcp", data=LIST_TOOLS, headers=MCP_HEADERS).status_code == 503
