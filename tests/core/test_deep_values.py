"""Values nested deeper than orjson writes, agent trees of any depth, integers beyond 64 bits:
every page and JSON twin answers, a too-deep value is shown cut at a stated depth and reported once,
and "as logged" means the line as written."""

from __future__ import annotations

import gzip
import html
import json
import sys
import urllib.request
from html.parser import HTMLParser

import pytest

from conftest import serve, wait_for, write_events
from events import calls, created, say, tool_call, user
from viewer.core import jsonio
from viewer.web.app import create_app

DEPTH = 1000  # orjson reads values up to 1,024 levels deep, writes only 254
BIG, HUGE = 18446744073709551616, 123456789012345678901234567890  # 2**64: one past what orjson keeps as an integer


def nested(depth: int, leaf="bottom"):
    """A list nested `depth` levels deep, a dict on every other level (no recursion to build it)."""
    value = [leaf]
    for level in range(depth - 1):
        value = {"k": value} if level % 2 else [value]
    return value


def depth_of(value) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        current, level = stack.pop()
        if isinstance(current, (dict, list)):
            deepest = max(deepest, level)
            stack.extend((c, level + 1) for c in (current.values() if isinstance(current, dict) else current))
    return deepest


def line(event: dict, **raw_fields) -> str:
    """A JSONL line for `event` with `raw_fields` written as given (JSON text: too deep or too big for json.dumps)."""
    text = json.dumps(event)[:-1]
    return text + "".join(f', "{key}": {value}' for key, value in raw_fields.items()) + "}\n"


def deep_text(depth: int) -> str:
    return "[" * depth + '"bottom"' + "]" * depth


@pytest.fixture
def deep_folder(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    lines = [json.dumps(created("c0", "root")) + "\n", json.dumps(created("c1", "kid")) + "\n",
             json.dumps(user("m1", "root", "find the deep thing")) + "\n",
             line(say("m2", "root", "a deep reply"), payload=deep_text(DEPTH)),
             # arguments are a JSON text: 300 levels deep in a string (the event itself is not deep)
             json.dumps(calls("m3", "kid", {"id": "t2", "function": {"name": "probe", "arguments": deep_text(300)}}))
             + "\n",
             json.dumps(say("m4", "root", "after the deep ones")) + "\n"]
    (folder / "deep.jsonl").write_text("".join(lines))
    return folder


def get(client, url, status=200):
    response = client.get(url)
    assert response.status_code == status, (url, response.status_code)
    return response


def test_a_value_nested_deeper_than_orjson_writes_is_served_cut_and_reported_once(deep_folder):
    client = create_app(deep_folder, watch=False).test_client()
    for url in ["/s/deep", "/api/sessions/deep", "/s/deep/agents/root", "/s/deep/agents/kid", "/api/sessions/deep/agents/kid",
                "/s/deep/dialog?agents=root,kid", "/api/sessions/deep/dialog?agents=root,kid", "/s/deep/messages/m3",
                "/api/sessions/deep/messages/m3", "/s/deep/trace/m2", "/s/deep/chart", "/s/deep/export/markdown?agent=root",
                "/s/deep/export/trace", "/search?q=deep", "/api/search?q=deep", "/s/deep/problems"]:
        get(client, url)
    agent = get(client, "/api/sessions/deep/agents/root").get_json()
    deep = next(e for e in agent["transcript"] if e["message_id"] == "m2")
    assert depth_of(deep) == jsonio.MAX_DEPTH  # the event's levels, the cut marker in place of the 101st
    assert json.dumps(deep, ensure_ascii=False).count(jsonio.CUT) == 1 and "bottom" not in json.dumps(deep)
    assert jsonio.CUT == "… cut: nested deeper than 100 levels"
    message = get(client, "/api/sessions/deep/messages/m2").get_json()
    assert message["event"] == deep
    page = get(client, "/s/deep/messages/m2").get_data(as_text=True)
    assert deep_text(DEPTH) in html.unescape(page)  # "as logged": the line as written, whole
    export = json.loads(get(client, "/s/deep/export/json").data)
    assert [e["event"]["message_id"] for e in export["events"]] == ["c0", "c1", "m1", "m2", "m3", "m4"]
    assert export["events"][3]["event"] == deep
    dialog = get(client, "/api/sessions/deep/dialog?agents=root,kid").get_json()
    assert [m["message_id"] for m in dialog["messages"]] == ["m1", "m2", "m4"]
    # the deep tool call's arguments are a value of their own, shown cut at the same depth on the transcript page
    assert jsonio.CUT in html.unescape(get(client, "/s/deep/agents/kid").get_data(as_text=True))
    problems = get(client, "/api/sessions/deep/problems").get_json()["problems"]
    assert problems == [{"kind": "too_deep", "line": 4, "detail": f"a value nested deeper than {jsonio.MAX_DEPTH} levels: "
                         "shown cut there", "message_id": "m2"}]


def test_a_poller_of_the_events_feed_passes_a_too_deep_event(deep_folder):
    with serve(deep_folder) as server:
        server.wait_for_session("deep", events=6)
        seen, cursor = [], ""
        for _ in range(10):
            with urllib.request.urlopen(f"{server.url}/api/sessions/deep/events?limit=1&after={cursor}", timeout=10) as r:
                assert r.status == 200
                answer = json.load(r)
            if not answer["events"]:
                break
            seen += [e["message_id"] for e in answer["events"]]
            cursor = answer["cursor"]
        assert seen == ["c0", "c1", "m1", "m2", "m3", "m4"]


def snapshot(tree: dict) -> dict:
    return {"version": 1, "reason": "finish", "opTree": tree}


def op(op_id: str, response_payload, kind: str = "tool", child: dict | None = None) -> dict:
    operation = {"opId": op_id, "kind": kind, "startedAt": 1767261601000, "endedAt": 1767261601300, "status": "ok",
                 "attributes": {"name": f"tool_{op_id}"}, "request": {"kind": kind, "payload": {"q": op_id}},
                 "response": {"payload": response_payload, "truncated": False}}
    if child is not None:
        operation.update(kind="session", childSession=child)
    return operation


def ai_session(session_id: str, ops: list) -> dict:
    return {"id": session_id, "agentId": session_id, "startedAt": 1767261600000, "endedAt": 1767261609000,
            "turns": [{"id": "t1", "index": 1, "startedAt": 1767261600010, "endedAt": 1767261609000,
                       "attributes": {"prompts": {"user": f"task of {session_id}"}}, "ops": ops}]}


def test_a_too_deep_value_in_an_ai_agent_snapshot_hides_nothing_else(tmp_path):
    folder = tmp_path / "ai"
    folder.mkdir()
    tree = ai_session("root", [op("op-1", nested(900)), op("op-2", {"tokens": BIG}), op("op-3", "fine")])
    with gzip.open(folder / "deep.json.gz", "wt") as f:
        f.write(jsonio.answer(snapshot(tree)).decode())
    client = create_app(folder, watch=False).test_client()
    listed = get(client, "/api/sessions").get_json()["sessions"]
    assert [(s["id"], s["format"]) for s in listed] == [("deep.json.gz", "ai-agent")]
    agent = get(client, "/api/sessions/deep.json.gz/agents/root").get_json()
    ids = [e["message_id"] for e in agent["transcript"]]
    assert ids == ["root:turn1:user", "op-1:call", "op-1:result", "op-2:call", "op-2:result", "op-3:call", "op-3:result"]
    by_id = {e["message_id"]: e for e in agent["transcript"]}
    assert by_id["op-3:result"]["content"] == "fine"
    assert depth_of(by_id["op-1:call"]) == jsonio.MAX_DEPTH and depth_of(by_id["op-1:result"]) <= jsonio.MAX_DEPTH
    assert jsonio.CUT in by_id["op-1:result"]["content"]
    assert by_id["op-2:result"]["raw"]["payload"]["tokens"] == BIG  # exact, not 1.8446744073709552e+19
    for url in ["/s/deep.json.gz", "/s/deep.json.gz/agents/root", "/s/deep.json.gz/messages/op-1:result",
                "/api/sessions/deep.json.gz/messages/op-1:result", "/api/sessions/deep.json.gz/events",
                "/s/deep.json.gz/export/json", "/s/deep.json.gz/problems"]:
        get(client, url)
    problems = get(client, "/api/sessions/deep.json.gz/problems").get_json()["problems"]
    assert [(p["kind"], p["message_id"]) for p in problems] == [("too_deep", "op-1:call")]


def test_a_deep_tree_of_ai_agent_sessions_is_not_too_deep(tmp_path):
    """Child sessions nest five levels of JSON each: 150 of them are legitimate structure, not a value cut."""
    folder = tmp_path / "ai"
    folder.mkdir()
    node = ai_session("s150", [op("op-150", "done")])
    for i in range(149, 0, -1):
        node = ai_session(f"s{i}", [op(f"op-{i}", "child done", child=node)])
    (folder / "chain.json").write_text(jsonio.answer(snapshot(node)).decode())
    client = create_app(folder, watch=False).test_client()
    session = get(client, "/api/sessions/chain.json").get_json()
    assert len(session["agents"]) == 150 and session["problems"] == []
    assert get(client, "/api/sessions/chain.json/agents/s150").get_json()["parent_id"] == "s149"
    for url in ["/s/chain.json/spawn", "/api/sessions/chain.json/spawn", "/s/chain.json/export/json"]:
        get(client, url)
    page = get(client, "/s/chain.json").get_data(as_text=True)
    assert page.count('<li class="op-session">') == 150 and node_depths(page)["s150"] == 149


class _NodeDepths(HTMLParser):
    """The depth of each tree node (li.node) in nodes around it, read without recursion."""

    def __init__(self):
        super().__init__()
        self.open: list[bool] = []  # per open li: whether it is a tree node
        self.depths: dict[str, int] = {}

    def handle_starttag(self, tag, attrs):
        if tag == "li":
            attrs = dict(attrs)
            is_node = "node" in (attrs.get("class") or "").split()
            if is_node:
                self.depths[attrs["data-agent"]] = sum(self.open)
            self.open.append(is_node)

    def handle_endtag(self, tag):
        if tag == "li" and self.open:
            self.open.pop()


def node_depths(page: str) -> dict[str, int]:
    parser = _NodeDepths()
    parser.feed(page)
    return parser.depths


def chain_events(count: int, first: int = 1) -> list[dict]:
    """Agents A<first> .. A<count-1>, each created by a task call of the one before."""
    events = []
    for i in range(first, count):
        events += [calls(f"k{i}", f"A{i - 1}", tool_call(f"t{i}")), created(f"a{i}", f"A{i}", cause=f"k{i}")]
    return events


def test_an_agent_tree_a_thousand_deep_renders_on_every_page(tmp_path):
    folder = tmp_path / "logs"
    write_events(folder / "tree.jsonl", [created("a0", "A0"), user("u0", "A0", "go")] + chain_events(1000))
    client = create_app(folder, watch=False).test_client()
    page = get(client, "/s/tree").get_data(as_text=True)
    depths = node_depths(page)
    assert len(depths) == 1000 and all(depths[f"A{i}"] == i for i in range(1000))  # each nested in its parent
    assert page.count("<details open>") == 1000  # collapsible, every level
    agents = get(client, "/api/sessions/tree").get_json()["agents"]
    assert [a["parent_id"] for a in agents[1:4]] == ["A0", "A1", "A2"] and len(agents) == 1000
    poll = get(client, "/s/tree/poll/tree?after=0-0").get_data(as_text=True)
    assert poll.count('class="node"') == 1000
    for url in ["/s/tree/spawn", "/api/sessions/tree/spawn", "/s/tree/chart", "/api/sessions/tree/chart",
                "/s/tree/agents/A999", "/api/sessions/tree/agents/A999", "/api/sessions/tree/lineage/A999",
                "/s/tree/dialog?agents=A0,A999", "/s/tree/trace/k999", "/s/tree/export/json", "/s/tree/export/trace",
                "/s/tree/export/dot", "/s/tree/export/markdown?agent=A0&sub=1", "/s/tree/hooks"]:
        get(client, url)
    written = get(client, "/s/tree/export/json").data
    assert len(written) < 16_000_000  # indentation stops growing past 100 levels (else 43 MB: the square of the depth)
    export = deep_json(written)  # its "tree" nests 2,000 levels: valid JSON
    node, levels = export["tree"][0], 1
    while node["children"]:
        node, levels = node["children"][0], levels + 1
    assert (node["agent_id"], levels) == ("A999", 1000)


def deep_json(data: bytes):
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)  # the standard library parses any depth given the stack
    try:
        return json.loads(data)
    finally:
        sys.setrecursionlimit(limit)


def test_a_deep_subtree_that_moves_is_placed_whole_by_the_tree_poll(tmp_path):
    """A chain of 300 agents whose first one's cause arrives later: the poll moves it with its subtree."""
    folder = tmp_path / "logs"
    path = folder / "moved.jsonl"
    early = [created("a0", "A0"), user("u0", "A0", "go"), created("a1", "A1", cause="k1")] + chain_events(300, first=2)
    write_events(path, early)
    with serve(folder) as server:
        server.wait_for_session("moved", events=len(early))
        write_events(path, [calls("k1", "A0", tool_call("t1"))], mode="a")
        server.wait_for_session("moved", events=len(early) + 1)
        with urllib.request.urlopen(f"{server.url}/s/moved/poll/tree?after=0-{len(early)}", timeout=10) as r:
            assert r.status == 200
            fragment = r.read().decode()
    assert 'id="av-node-1" hx-swap-oob="delete"' in fragment
    depths = node_depths(fragment)
    assert len(depths) == 299 and all(depths[f"A{i}"] == i - 1 for i in range(1, 300))


def test_integers_beyond_64_bits_are_shown_exactly_and_the_message_page_shows_the_line_as_written(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    arguments = json.dumps({"seed": HUGE})
    written = ('{"message_id": "m2",  "event_type":"transcript_entry", "agent_id": "root", "role": "assistant", '
               f'"content": "counted", "n": {HUGE}, "usage": {{"input_tokens": {BIG}}}, "key": "sk-proj-abcdefghij0123456789"}}')
    lines = [json.dumps(created("c0", "root")), json.dumps(user("m1", "root", "count")), written,
             json.dumps(calls("m3", "root", {"id": "t1", "function": {"name": "seed", "arguments": arguments}}))]
    (folder / "big.jsonl").write_text("\n".join(lines) + "\n")
    client = create_app(folder, watch=False).test_client()
    page = html.unescape(get(client, "/s/big/messages/m2").get_data(as_text=True))
    assert written.split(', "key"')[0] + ', "key": "sk-p' in page  # the line's own text, exactly as written ...
    assert "[masked]" in page and "abcdefghij0123456789" not in page  # ... and masked like every output
    plain = html.unescape(get(client, "/s/big/messages/m1").get_data(as_text=True))
    assert json.dumps(user("m1", "root", "count")) in plain
    for url in ["/api/sessions/big/agents/root", "/api/sessions/big/messages/m2", "/api/sessions/big/events",
                "/api/sessions/big/dialog?agents=root", "/s/big/export/json"]:
        body = get(client, url).get_data(as_text=True)
        assert str(HUGE) in body and str(BIG) in body and "e+19" not in body and "e+29" not in body, url
    event = get(client, "/api/sessions/big/messages/m2").get_json()["event"]
    assert event["n"] == HUGE and event["usage"] == {"input_tokens": BIG}
    transcript = html.unescape(get(client, "/s/big/agents/root").get_data(as_text=True))
    assert str(HUGE) in transcript and "e+29" not in transcript  # the tool call's arguments, pretty-printed
    assert get(client, "/api/sessions/big/problems").get_json()["problems"] == []


def test_json_written_past_orjson_matches_orjson_and_keeps_integers_exact():
    values = [{"a": [1, {}, [], {"b": None, "c": "é\n"}], "d": 1.5, "e": True}, [], {}, "x", [[[]]]]
    for value in values:
        for indent in (False, True):
            option = 1 if indent else 0  # orjson.OPT_INDENT_2 == 1
            import orjson

            assert orjson.OPT_INDENT_2 == 1
            assert jsonio._write(value, indent) == orjson.dumps(value, option=option)
    deep = nested(600)
    assert json.loads(jsonio.answer({"v": deep, "n": BIG})) == {"v": deep, "n": BIG}
    assert json.loads(jsonio.answer({"v": [BIG, {"w": [HUGE]}]}, indent=True)) == {"v": [BIG, {"w": [HUGE]}]}
    assert jsonio.loads(f'{{"n": {BIG}, "f": 1.5e3}}') == {"n": BIG, "f": 1500.0}
    shown = json.loads(jsonio.text(deep))
    assert depth_of(shown) == jsonio.MAX_DEPTH
    assert jsonio.CUT in jsonio.text(deep) and jsonio.deeper_than(deep) and not jsonio.deeper_than(shown)


def test_a_claude_code_record_too_deep_or_with_a_big_integer_is_read_with_care(tmp_path):
    from events import claude_response_line, claude_user

    folder = tmp_path / "project"
    folder.mkdir()
    result = claude_user("u2", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "probed"}],
                         timestamp="2026-02-01T10:00:02.000Z")
    result["toolUseResult"] = nested(700)
    records = [claude_user("u1", "probe it"),
               claude_response_line("a1", {"type": "tool_use", "id": "toolu_1", "name": "probe", "input": {"seed": BIG}}),
               result, claude_user("u3", "thanks", timestamp="2026-02-01T10:00:03.000Z")]
    late = claude_response_line("a2", {"type": "tool_use", "id": "toolu_2", "name": "probe", "input": nested(400)})
    late.update(timestamp="2026-02-01T10:00:04.000Z", requestId="req_2")
    late["message"]["id"] = "msg_2"  # a response is emitted once complete: after its last line is read
    records += [late, claude_user("u4", "and then", timestamp="2026-02-01T10:00:05.000Z")]
    (folder / "s.jsonl").write_bytes(b"".join(jsonio.answer(r) + b"\n" for r in records))
    client = create_app(folder, watch=False).test_client()
    session = get(client, "/api/sessions/s").get_json()
    assert session["format"] == "claude-code"
    problem, late_problem = session["problems"]
    assert [(p["kind"], p["line"]) for p in session["problems"]] == [("too_deep", 3), ("too_deep", 5)]
    late_event = get(client, f"/api/sessions/s/messages/{late_problem['message_id']}").get_json()["event"]
    assert depth_of(late_event) == jsonio.MAX_DEPTH and late_event["tool_calls"][0]["id"] == "toolu_2"
    deep = get(client, f"/api/sessions/s/messages/{problem['message_id']}").get_json()["event"]
    assert depth_of(deep) == jsonio.MAX_DEPTH and jsonio.CUT in json.dumps(deep, ensure_ascii=False)
    main = session["agents"][0]["agent_id"]
    transcript = get(client, f"/api/sessions/s/agents/{main}").get_json()["transcript"]
    assert [e["content"] for e in transcript if e["role"] in ("user", "tool")] == ["probe it", "probed", "thanks",
                                                                                    "and then"]
    call = next(e for e in transcript if e.get("tool_calls"))
    assert json.loads(call["tool_calls"][0]["function"]["arguments"]) == {"seed": BIG}  # exact in the arguments
    assert str(BIG) in html.unescape(get(client, f"/s/s/agents/{main}").get_data(as_text=True))
    for url in ["/s/s", f"/s/s/messages/{problem['message_id']}", "/api/sessions/s/events", "/s/s/export/json",
                "/search?q=probed", "/api/search?q=probed"]:
        get(client, url)
