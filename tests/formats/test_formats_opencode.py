"""OpenCode's SQLite database: each root session is a session, its child sessions sub-agents under the task calls
that made them (two levels), parts as entries, tool failures, usage and cost per step."""

import json

import pytest
from opencode_db import ROOT, T0, OpenCodeDb, OpenCodeStorageTree, write_sample

from viewer import formats
from viewer.formats import detect
from viewer.index import usage
from viewer.library.library import Library
from viewer.reads import queries

DB = ".local/share/opencode/opencode.db"
SESSION = f".local:share:opencode:opencode.db:{ROOT}"
CHILD_AGENT, GRAND_AGENT = "session-ChildBBBBBBB", "session-GrandCCCCCCC"


@pytest.fixture
def home(tmp_path):
    (tmp_path / DB).parent.mkdir(parents=True)
    write_sample(tmp_path / DB).close()
    return tmp_path


@pytest.fixture
def session(home):
    library = Library(home)
    library.scan()
    (s,) = library.listing()
    return s


def test_the_database_is_found_in_a_dot_folder_and_told_by_its_content(home, session):
    assert session.id == SESSION and session.format is formats.OPENCODE and session.problems == []
    assert session.title == "Fix the parser's last token"
    fmt, _ = detect.store_of(str(home / DB), None)
    assert fmt is formats.OPENCODE
    other = home / "other.db"  # a SQLite database of another program, and a file named .db that is no database
    OpenCodeDb(other, create=False).db.execute("CREATE TABLE t (x)")
    (home / "notes.db").write_text("not a database")
    assert detect.store_of(str(other), None) is None and detect.store_of(str(home / "notes.db"), None) is None
    library = Library(home)
    library.scan()
    assert [s.id for s in library.listing()] == [SESSION] and library.problems == []


def test_child_sessions_are_sub_agents_under_the_task_calls_that_made_them(session):
    (root,) = queries.tree(session)
    (child,) = root["children"]
    (grandchild,) = child["children"]
    assert (child["agent_id"], child["name"]) == (CHILD_AGENT, "Find covering tests (@general subagent)")
    assert (grandchild["agent_id"], grandchild["name"]) == (GRAND_AGENT, "List test files (@explore subagent)")
    assert child["created_by"]["call_id"] == "call_task1" and grandchild["created_by"]["call_id"] == "call_task2"
    assert "parent_inferred" not in child["flags"]  # the call names the session: nothing is guessed
    assert session.event("prt_101")["substance"] == "prt_007"  # its prompt stands for the spawning call
    assert session.event("prt_007:result")["substance"] == "prt_104"  # the task's result is the child's answer
    order = [e["message_id"] for e in session.events]
    assert order.index("prt_104") < order.index("prt_007:result") < order.index("prt_008")


def test_parts_become_entries_reasoning_folded_tool_calls_paired_and_failures_marked(session):
    view = queries.perspective(session, "main")
    did = [i for i in view["items"] if i["kind"] == "did"]
    names = [c["name"] if "name" in c else c["call"]["function"]["name"] for i in did for c in i["calls"]]
    assert names == ["bash", "read", "task"]
    assert all(len(c["results"]) == 1 for i in did for c in i["calls"])
    assert session.event("prt_004")["thinking"] == ["Look at the tokenizer first."]
    assert json.loads(session.event("prt_004")["tool_calls"][0]["function"]["arguments"]) == {"command": "rg -n parse src"}
    failed = session.event("prt_005:result")
    assert failed["is_error"] is True and failed["content"] == "Error: File not found: /nope.py"
    assert session.event("prt_001")["role"] == "user" and session.event("prt_008")["role"] == "assistant"


def test_usage_cost_and_model_per_step(session):
    assert session.agents["main"].language_model == "anthropic/claude-sonnet-4-5"
    main = usage.for_agent(session, "main")
    assert main["responses"] == 2 and main["output_tokens"] == 300 + 120
    assert main["cache_read_input_tokens"] == 12000 + 15000 and main["input_tokens"] == 5000 + 6000
    assert usage.for_agent(session, GRAND_AGENT)["output_tokens"] == 20
    assert session.event("prt_006")["cost_usd"] == 0.0123


def test_a_damaged_row_is_a_problem_of_its_line_the_rest_is_read_and_a_failed_response_shown(home):
    w = OpenCodeDb(home / DB, create=False)
    w.message("msg_900", ROOT, T0 + 100, "assistant")
    w.db.execute("INSERT INTO part VALUES ('prt_900', 'msg_900', ?, ?, ?, '{\"type\": \"text\", \"te')",
                 (ROOT, T0 + 101, T0 + 101))
    w.part("prt_901", "msg_900", ROOT, T0 + 102, type="text", text="still read", time={"start": 1, "end": 2})
    w.message("msg_901", ROOT, T0 + 103, "assistant", error={"name": "APIError", "data": {
        "message": "Overloaded", "isRetryable": True}})  # message-v2.ts: the response's error, in its info
    w.close()
    library = Library(home)
    library.scan()
    (s,) = library.listing()
    assert s.event("prt_901")["content"] == "still read"
    failed = s.event("msg_901:error")
    assert failed["content"] == "[APIError] Overloaded" and failed["markers"] == ["error"]
    assert [p.kind for p in s.problems] == ["invalid_json"]


def test_the_older_json_storage_tree_reads_as_the_database_does(tmp_path, session):
    storage = tmp_path / "tree" / ".local" / "share" / "opencode" / "storage"
    write_sample(storage, OpenCodeStorageTree)
    (storage / "project").mkdir()
    (storage / "project" / "prj_1.json").write_text('{"id": "prj_1", "worktree": "/home/ada/parser"}')
    (storage / "migration").write_text("2")
    library = Library(tmp_path / "tree")
    library.scan()
    (s,) = library.listing()  # its hundreds of documents are one session, none listed on its own
    assert s.id == f".local:share:opencode:storage:{ROOT}" and s.format is formats.OPENCODE and s.problems == []
    assert s.title == session.title and s.project == "/home/ada/parser"
    assert [(e["message_id"], e.get("agent_id")) for e in s.events] == [
        (e["message_id"], e.get("agent_id")) for e in session.events]
    assert queries.tree(s)[0]["children"][0]["children"][0]["agent_id"] == GRAND_AGENT
    w = OpenCodeStorageTree(storage)
    w.message("msg_900", ROOT, T0 + 900, "user")
    w.part("prt_900", "msg_900", ROOT, T0 + 900, type="text", text="one more")
    library.refresh(str(storage / "message" / ROOT / "msg_900.json"))
    library.refresh(str(storage / "part" / "msg_900" / "prt_900.json"))
    assert s.event("prt_900")["content"] == "one more"


def test_rows_inserted_with_times_in_the_past_are_read(home):
    """As OpenCode's migration of its JSON tree inserts them: their times are the documents', not now."""
    library = Library(home)
    library.scan()
    (s,) = library.listing()
    w = OpenCodeDb(home / DB, create=False)
    w.message("msg_000", ROOT, T0 - 1000, "user")
    w.part("prt_000", "msg_000", ROOT, T0 - 1000, type="text", text="migrated late")
    library.refresh(str(home / DB) + "-wal")
    w.close()
    assert s.event("prt_000")["content"] == "migrated late"

