"""A Claude Code session's content stays in its files: memory holds where each entry's lines are, not their text."""

import json
import sys
import zlib

import pytest

from conftest import REPO, write_events
from events import scanned
from viewer.formats.claude_code_content import SPAN
from viewer.reads import queries
from viewer.core.tuning import Tuning
from viewer.search import query as search
from viewer.index import usage
from viewer.web.app import create_app

sys.path.insert(0, str(REPO / "benchmarks"))

from generate_claude import generate  # noqa: E402


def strings(value):
    """Every string a stored item holds (an entry read from its file: the part it keeps in memory)."""
    if not isinstance(value, (dict, list, tuple, str)) and hasattr(value, "load"):
        value = value.skeleton
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings(key)
            yield from strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from strings(item)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("claude")
    made = generate(root / "-home-dev-src-warehouse", 4 << 20, subagents=8, sessions=2)
    return root, made


def test_after_ingest_the_content_is_in_the_files_not_in_memory(project):
    root, made = project
    library = scanned(root)
    sessions = list(library.sessions.values())
    assert len(sessions) == 2 and sum(len(s.agents) for s in sessions) == 2 + 8
    held = [text for s in sessions for text in strings(s.events.stored(s.count))]
    # what stays in memory is ids, times, usage and the sub-agents' prompts: no file content, no tool output
    assert max(map(len, held)) < 4000
    assert sum(map(len, held)) < made["bytes"] / 10
    s = max(sessions, key=lambda s: s.count)
    big = [p for p in range(s.count) if len(s.events[p].get("content") or "") > 20_000]
    assert big, "the generated session has big tool results"
    for p in big:  # read back from the file: the same text as the line holds
        event = s.events[p]
        block = event["raw"]["message"]["content"][0]
        assert event["role"] == "tool" and event["content"] == block["content"]
        assert event["tool_call_id"] == block["tool_use_id"]


def test_a_page_search_and_usage_read_the_content_from_the_file(project):
    root, _ = project
    app = create_app(root, watch=False)
    library = app.extensions["agentview"].library
    s = max(library.sessions.values(), key=lambda s: s.count)
    p = max(range(s.count), key=lambda p: len(s.events[p].get("content") or ""))
    event = s.events[p]
    piece = " ".join(event["content"].split("\n")[1].split()[1:6])  # words of a file line, after its number
    page = app.test_client().get(f"/s/{s.id}/messages/{event['message_id']}")
    assert page.status_code == 200 and piece in page.get_data(as_text=True)
    s.search.catch_up(s.count)
    found, _ = search.matches(s, search.parse(f'"{piece}"'), budget=10_000)
    assert p in found
    totals = usage.for_session(s)
    assert totals["output_tokens"] == sum(
        e["usage"]["output_tokens"] for e in (s.events[q] for q in range(s.count)) if "usage" in e)


def claude_line(uuid, parent, kind, content, *, agent=None, **extra):
    record = {"type": kind, "uuid": uuid, "parentUuid": parent, "isSidechain": agent is not None, "sessionId": "s",
              "timestamp": f"2026-02-01T10:00:{len(uuid):02d}.000Z", "cwd": "/src", "version": "2.1.60",
              "message": {"role": kind, "content": content}, **extra}
    if agent:
        record["agentId"] = agent
    return record


def write_session(folder):
    spawn = {"type": "tool_use", "id": "toolu_A", "name": "Task",
             "input": {"description": "Scan", "subagent_type": "Explore", "prompt": "List the entry points"}}
    main = write_events(folder / "s.jsonl", [
        claude_line("u1", None, "user", "Audit the parser"),
        {**claude_line("a1", "u1", "assistant", [spawn]), "requestId": "req_1",
         "message": {"id": "msg_1", "role": "assistant", "model": "claude-opus-4-1", "content": [spawn],
                     "usage": {"input_tokens": 5, "output_tokens": 7}}}])
    sub = write_events(folder / "s" / "subagents" / "agent-ab12.jsonl", [
        claude_line("x1", None, "user", "List the entry points", agent="ab12"),
        claude_line("x2", "x1", "user", [{"type": "tool_result", "tool_use_id": "toolu_R",
                                          "content": "def parse(text): ... " * 200}], agent="ab12")])
    (folder / "s" / "subagents" / "agent-ab12.meta.json").write_text(
        json.dumps({"agentType": "Explore", "description": "Scan", "toolUseId": "toolu_A"}))
    return main, sub


def test_an_entry_whose_file_changed_under_it_shows_a_placeholder_not_a_crash(tmp_path):
    main, sub = write_session(tmp_path)
    app = create_app(tmp_path, watch=False)
    s = app.extensions["agentview"].library.get("s")
    position = s.by_id["x2"]
    assert s.events[position]["content"].startswith("def parse(text)")
    data = sub.read_bytes()
    sub.write_bytes(data.replace(b"def parse", b"def PARSE"))  # the same size, other bytes: not read yet
    s.events.keep_raw(position, s.events.stored(s.count)[position])  # forget the copy read above
    event = s.events[position]
    assert "changed since it was read" in event["content"] and "file changed" in event["markers"]
    assert event["tool_call_id"] == "toolu_R" and event["raw"] is None
    client = app.test_client()
    pages = ("messages/x2", "agents/agent-ab12", "dialog", "export/markdown?agent=agent-ab12&sub=1", "export/json",
             "export/trace")
    for url in [f"/s/{s.id}/{page}" for page in pages] + [f"/api/sessions/{s.id}/events"]:
        response = client.get(url)
        assert response.status_code == 200, url
        if url.endswith("/x2"):
            assert "changed since it was read" in response.get_data(as_text=True)
    sub.unlink()  # gone altogether: the same placeholder
    s.events.keep_raw(position, s.events.stored(s.count)[position])
    assert "changed since it was read" in s.events[position]["content"]
    main.write_bytes(main.read_bytes()[:10])  # cut short: its entries cannot be read either
    position = s.by_id["a1"]
    s.events.keep_raw(position, s.events.stored(s.count)[position])
    assert "changed since it was read" in s.events[position]["content"] and "tool_calls" not in s.events[position]
    assert client.get(f"/s/{s.id}/agents/main").status_code == 200


def test_each_entry_keeps_its_lines_place_and_standard_crc32(tmp_path):
    """The spans hold each line's offset, length and CRC-32 as zlib computes it (caches kept by any version agree);
    the line is read back by them, and a line whose bytes differ at the same length is told changed."""
    main, sub = write_session(tmp_path)
    s = scanned(tmp_path).get("s")
    stored = s.events.stored(s.count)
    entries = [(p, item) for p, item in enumerate(stored) if hasattr(item, "spans")]
    assert len(entries) >= 3
    for position, item in entries:
        data = open(item.path, "rb").read()
        for offset, length, crc in SPAN.iter_unpack(item.spans):
            assert crc == zlib.crc32(data[offset:offset + length]) and data[offset:offset + length].strip()
        assert s.events[position]["message_id"] == item.message_id
    position = s.by_id["x2"]
    sub.write_bytes(sub.read_bytes().replace(b"def parse", b"def PARSE"))
    s.events.keep_raw(position, stored[position])  # forget the copy read above
    assert "changed since it was read" in s.events[position]["content"]


def test_a_message_that_grows_after_it_was_read_shows_its_new_lines(tmp_path):
    def line(uuid, block):
        return {"type": "assistant", "uuid": uuid, "parentUuid": None, "isSidechain": False, "sessionId": "s",
                "timestamp": "2026-02-01T10:00:01.000Z", "requestId": "req_1",
                "message": {"id": "msg_1", "role": "assistant", "model": "claude-opus-4-1", "content": [block],
                            "usage": {"input_tokens": 10, "output_tokens": 5}}}
    path = write_events(tmp_path / "s.jsonl", [claude_line("u", None, "user", "go"),
                                                line("a1", {"type": "text", "text": "Running it."})])
    library = scanned(tmp_path)
    s = library.get("s")
    assert s.event("a1")["content"] == "Running it."  # read (and cached) before it grows
    assert type(s.events.stored(s.count)[s.by_id["a1"]]) is not dict
    write_events(path, [line("a2", {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}),
                        line("a3", {"type": "text", "text": "Listed."})], mode="a")
    library.refresh(str(path))
    message = s.event("a1")
    assert message["content"] == "Running it.\n\nListed." and [c["id"] for c in message["tool_calls"]] == ["toolu_1"]
    assert [r["uuid"] for r in message["raw"]] == ["a1", "a2", "a3"] and usage.for_session(s)["input_tokens"] == 10
    assert queries.perspective(s, "main")["items"][-1]["kind"] == "did"


def test_a_group_read_in_pieces_is_indexed_as_if_read_whole(project):
    root, _ = project

    def everything(tuning=None):
        library = scanned(root, tuning)
        return {sid: ([s.events[p] for p in range(s.count)], [p.as_dict() for p in s.problems],
                      {a: (agent.parent_id, agent.name, list(agent.entries)) for a, agent in s.agents.items()})
                for sid, s in library.sessions.items()}

    in_pieces = everything()  # files of about 300 kB to 1 MB, read 256 kB of each at a time
    assert everything(Tuning(group_batch_bytes=1 << 40)) == in_pieces


def test_a_walk_reads_a_runs_entries_through_one_open_of_their_file(project, monkeypatch):
    """EventList.walk loads a run of stored entries of one file with one open (StoredEntry.load_many), and gives
    what loading each alone gives; a file gone meanwhile gives each entry its placeholder, as alone."""
    from viewer.formats import claude_code_content

    root, _ = project
    s = max(scanned(root).sessions.values(), key=lambda s: s.count)
    alone = [s.events.load(p) for p in range(s.count)]
    opened = []
    real = claude_code_content.open_regular_file
    monkeypatch.setattr(claude_code_content, "open_regular_file", lambda path, inside: opened.append(path) or real(path, inside))
    walked = s.events.walk(0, s.count)
    assert walked == alone
    runs = sum(1 for p in range(1, s.count) if s.events.stored(s.count)[p].__class__ is not dict
               and getattr(s.events.stored(s.count)[p - 1], "path", None) != s.events.stored(s.count)[p].path)
    assert len(opened) <= runs + 1 < s.count / 5


def test_a_walk_over_entries_whose_file_is_gone_gives_their_placeholders(tmp_path):
    main, sub = write_session(tmp_path)
    s = scanned(tmp_path).get("s")
    sub.unlink()
    walked = s.events.walk(0, s.count)
    assert [e["message_id"] for e in walked] == [s.events.load(p)["message_id"] for p in range(s.count)]
    gone = [e for e in walked if e["agent_id"] == "agent-ab12" and e["event_type"] == "transcript_entry"]
    assert gone and all("changed since it was read" in e["content"] for e in gone)


def test_a_sub_agents_meta_file_is_read_holding_about_its_size_not_the_limit(tmp_path):
    """A folder holds a `.meta.json` for every sub-agent: each is read whole, without a buffer of the megabyte
    a sidecar may hold at most."""
    import tracemalloc

    from viewer.formats.claude_code_layout import read_meta

    meta = tmp_path / "agent-a1.meta.json"
    meta.write_text(json.dumps({"agentType": "Explore", "description": "find the tests", "toolUseId": "toolu_1"}))
    tracemalloc.start()
    try:
        read, problem = read_meta(str(meta), str(tmp_path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (read, problem) == ({"agentType": "Explore", "description": "find the tests", "toolUseId": "toolu_1"}, None)
    assert peak < 64 * 1024, peak
