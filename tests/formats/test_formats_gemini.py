"""Gemini CLI chats: a main chat and the sub-agents it ran (two levels) as one session, updates and rewinds applied.

The files are sample_sessions/gemini, written by its generate_samples.py in the shapes gemini-cli's
chatRecordingService.ts writes (see there for the source of each shape)."""

import json

import pytest
from events import copy_samples, scanned
from test_formats_claude_replay import read_whole_and_live, seen

from viewer import formats
from viewer.export import text
from viewer.formats import gemini
from viewer.index import usage
from viewer.reads import queries
from viewer.reads.dialogs import dialog
from viewer.reads.session_viewer import SessionViewer
from viewer.search import query as search

MAIN_ID = "5f1c2a3b-8d4e-4f60-9a7b-1c2d3e4f5a6b"
SESSION = "shop:chats:session-2026-04-20T10-00-5f1c2a3b"
INVESTIGATOR = "agent-7a1b2c3d-1111-4222-8333-944455566677"
READER = "agent-9c2d3e4f-2222-4333-8444-a55566677788"
CHAT = f"shop/chats/session-2026-04-20T10-00-{MAIN_ID[:8]}.jsonl"


@pytest.fixture
def library(tmp_path):
    return scanned(copy_samples("gemini", tmp_path / "tmp"))


def test_chats_are_detected_by_content_and_listed_with_their_project_and_title(library):
    main, legacy = sorted(library.listing(), key=lambda s: s.id, reverse=True)
    assert main.id == SESSION and main.format is formats.GEMINI and main.format.label == "Gemini CLI"
    assert main.project == "shop" and len(main.members) == 3 and main.problems == []
    assert main.title == "Login test fails on an expired fixture token"  # the $set summary wins
    assert legacy.format is formats.GEMINI and legacy.title == "List the open TODOs"  # the older .json document
    assert [e["content"] for e in legacy.events if e.get("role") == "assistant"] == [
        "There are two TODOs, both in checkout.py."]


def test_sub_agents_two_levels_deep_sit_under_the_calls_that_carry_their_agent_id(library):
    s = library.get(SESSION)
    (root,) = queries.tree(s)
    (investigator,) = root["children"]
    assert (investigator["agent_id"], investigator["name"]) == (INVESTIGATOR, "Codebase Investigator Agent")
    assert [(c["agent_id"], c["name"]) for c in investigator["children"]] == [(READER, "File Reader Agent")]
    assert queries.created_by(s, s.agents[INVESTIGATOR])["call_id"] == "c-2"
    # the nested sub-agent's call names its agentId only once it is done, after its file began: linked then
    assert queries.created_by(s, s.agents[READER])["call_id"] == "s1-c2"
    # the sub-agent's prompt stands for the spawning call, the call's result for its final answer
    assert s.event(f"{INVESTIGATOR}:s1-u")["substance"] == "g-2"
    assert s.event("g-2#c-2")["substance"] == f"{INVESTIGATOR}:s1-g3"


def test_a_message_appended_again_grows_in_place_with_its_tokens_calls_and_results(library):
    s = library.get(SESSION)
    g1 = s.event("g-1")
    assert g1["content"] == "Let me read the test first." and g1["model"] == "gemini-2.5-pro"
    assert g1["thinking"] == ["**Reading the test**\n\nStart from the failing test."]
    assert [c["function"]["name"] for c in g1["tool_calls"]] == ["read_file"]
    assert g1["usage"]["input_tokens"] == 1200 and g1["usage"]["cache_read_input_tokens"] == 3000
    assert g1["usage"]["output_tokens"] == 100  # thought tokens are output
    view = queries.perspective(s, "main")
    did = [i for i in view["items"] if i["kind"] == "did"]
    assert [(c.get("name") or c["call"]["function"]["name"], len(c["results"])) for i in did
            for c in i["calls"]] == [
        ("read_file", 1), ("codebase_investigator", 1), ("run_shell_command", 1)]
    assert sum(1 for e in s.events if e.get("message_id") == "g-1") == 1  # one entry, not one per copy
    assert s.agents[READER].language_model == "gemini-2.5-flash-lite"
    main = usage.for_agent(s, "main")
    assert main["responses"] == 5 and main["cache_read_input_tokens"] == 3000 + 4000 + 5000


def test_a_sub_agent_written_in_its_parent_sub_agents_folder_is_found_too(tmp_path):
    """Should a nested sub-agent's parentSessionId be the sub-agent that ran it, its file is in that one's folder."""
    folder = copy_samples("gemini", tmp_path / "tmp")
    chats = folder / "shop" / "chats"
    nested = chats / MAIN_ID / f"{READER.removeprefix('agent-')}.jsonl"
    (chats / INVESTIGATOR.removeprefix("agent-")).mkdir()
    nested.rename(chats / INVESTIGATOR.removeprefix("agent-") / nested.name)
    s = scanned(folder).get(SESSION)
    assert queries.created_by(s, s.agents[READER])["call_id"] == "s1-c2" and len(s.members) == 3
    viewer = SessionViewer(chats / f"session-2026-04-20T10-00-{MAIN_ID[:8]}.jsonl")  # one chat opened alone
    assert set(viewer.list_agents()) == {"main", INVESTIGATOR, READER}


def test_a_failed_tool_call_is_an_error_with_its_display_text(library):
    failed = library.get(SESSION).event("g-4#c-3")
    assert failed["is_error"] and failed["markers"] == ["error"] and failed["name"] == "run_shell_command"
    assert failed["content"] == "Command exited with code 1: 1 failed\n\n[shown] FAILED tests/test_login.py::test_login"


def test_a_rewind_folds_the_messages_it_dropped_and_marks_where_the_chat_went_on(library):
    s = library.get(SESSION)
    folded = {e["message_id"] for e in s.events if s.normalizer.rewound(e)}
    assert folded == {"u-2", "g-4", "g-4#c-3"}
    assert {s.normalizer.rewound(s.event(m)) for m in folded} == {"g-3"}  # went back to the answer before u-2
    assert s.normalizer.rewinds == ["u-3"] and s.event("u-3")["rewinds_to"] == "g-3"


def test_search_and_the_markdown_export_read_every_agent(library):
    sessions = library.listing()
    hits = search.search(sessions, "expires")["hits"]
    assert {h["agent_id"] for h in hits} >= {READER, INVESTIGATOR}
    markdown = text.perspective_markdown(library.get(SESSION), "main", include_subagents=True)
    assert "Why does the login test fail?" in markdown and "It expires on 2026-03-01." in markdown


def test_the_dialog_goes_from_the_main_chat_into_both_sub_agents(library):
    s = library.get(SESSION)
    items = dialog(s, ["main", INVESTIGATOR, READER])["items"]
    said = [i["event"]["content"] for i in items if i["event"].get("content")]
    assert "It expires on 2026-03-01." in said and "Why does the login test fail?" in said


def test_looks_like_and_member_of_from_the_documented_shapes(tmp_path):
    meta = {"sessionId": MAIN_ID, "projectHash": "ab", "startTime": "2026-04-20T10:00:00.000Z", "kind": "main"}
    assert gemini.looks_like(meta) and formats.detect_record(meta)[0] is formats.GEMINI
    assert not gemini.looks_like({"sessionId": "x", "type": "user"})  # a Claude Code line is not one
    sub = tmp_path / "p" / "chats" / "nobody-here" / "a1.jsonl"
    sub.parent.mkdir(parents=True)
    sub.write_text(json.dumps({**meta, "sessionId": "a1", "kind": "subagent"}) + "\n")
    (s,) = scanned(tmp_path).listing()  # its parent's chat is not there: a session of its own
    assert list(s.agents) == ["main"] and s.project == "p"


def test_a_broken_line_is_a_problem_and_hides_nothing_else(tmp_path):
    folder = copy_samples("gemini", tmp_path / "tmp")
    chat = folder / CHAT
    lines = chat.read_bytes().splitlines(keepends=True)
    lines.insert(3, b'{"id": "broken", "type": "gemini", "content": \n')
    chat.write_bytes(b"".join(lines))
    s = scanned(folder).get(SESSION)
    assert [p.kind for p in s.problems] == ["invalid_json"] and s.problems[0].line == 4
    assert s.event("g-5")["content"] == "Sure: the token in tests/fixtures.py expired."


def test_a_message_appended_while_the_viewer_reads_shows_and_grows(tmp_path):
    folder = copy_samples("gemini", tmp_path / "tmp")
    library = scanned(folder)
    chat = folder / CHAT
    message = {"id": "g-6", "timestamp": "2026-04-20T10:02:00.000Z", "type": "gemini", "content": "One more thing.",
               "model": "gemini-2.5-pro", "thoughts": [], "tokens": None}
    with open(chat, "a") as f:
        f.write(json.dumps(message) + "\n")
    library.refresh(str(chat))
    s = library.get(SESSION)
    assert s.event("g-6")["content"] == "One more thing." and "usage" not in s.event("g-6")
    with open(chat, "a") as f:
        f.write(json.dumps({**message, "tokens": {"input": 10, "output": 5, "cached": 0, "total": 15}}) + "\n")
    library.refresh(str(chat))
    assert s.event("g-6")["usage"]["output_tokens"] == 5 and s.shown_count == seen(s)["count"]


@pytest.mark.parametrize("seed", [1, 2])
def test_a_whole_read_and_a_live_read_show_the_same(tmp_path, seed):
    source = copy_samples("gemini", tmp_path / "source")
    (source / "shop/chats/session-2026-03-02T08-30-0a1b2c3d.json").unlink()  # a document is not appended to
    whole = read_whole_and_live(source, tmp_path / "live", seed)
    assert whole.get(SESSION).format is formats.GEMINI and len(whole.get(SESSION).agents) > 1
