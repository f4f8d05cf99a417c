"""Failures in every format read: each kind planted in a known spot (or found where a sample holds it) is counted and
listed once, with its kind and first line; results that merely say "error" and succeeded are not failures.

One rule decides (core/failures.py): the Failures view, `is:error`, the sessions list's count and the tree's badges
all read what the index filed by it, so each check here compares them too."""

import json
import os
import time

from claude_lines import Transcript
from conftest import write_events
from events import calls, copy_samples, created, result, say, scanned, tool_call, user
from opencode_db import write_sample

from viewer.index import failed
from viewer.library.library import Library
from viewer.reads import failures, queries
from viewer.search import query as search

SUCCESS_WITH_ERROR = "grep found 3 errors in app.log; the error rate is normal"  # a success that says "error"


def listed(s) -> list[tuple[str, str]]:
    """(kind, first line) of each failure of the session, in file order, checked against every other reader."""
    found = failures.listing(s)
    pairs = [(f["kind"], f["error"]) for f in found["failures"]]
    assert found["total"] == len(pairs) == failed.total(s) == s.failure_count
    assert len(set((f["message_id"], f["call_id"]) for f in found["failures"])) == len(pairs)  # each listed once
    entries = [f["message_id"] for f in found["failures"] if f["kind"] != "unanswered"]
    hits = search.search([s], "is:error", s.id, limit=1000)["hits"]
    assert [h["message_id"] for h in hits] == entries
    shown = [queries.entry(s, s.by_id[f["message_id"]])["failure"]["kind"] for f in found["failures"]
             if f["kind"] != "unanswered"]  # as a perspective (and the MCP tools) label each entry
    assert shown == [kind for kind, _ in pairs if kind != "unanswered"]
    return pairs


def old(path) -> None:
    """Make a file look left alone for two hours: its session has ended (Tuning.settle_after)."""
    stamp = time.time() - 7200
    os.utime(path, (stamp, stamp))


def lines(path, records) -> None:
    with open(path, "a", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record) + "\n")


def test_native_errors_blocked_calls_and_calls_left_unanswered(tmp_path):
    events = [created("m0", "root", name="root"), user("m1", "root", "go"),
              calls("m2", "root", tool_call("c1", "search", q="a"), tool_call("c2", "search", q="b")),
              result("m3", "root", "c1", "Error: Action blocked by hook 'Budget': over the limit", name="search"),
              result("m4", "root", "c2", SUCCESS_WITH_ERROR, name="search"),
              calls("m5", "root", tool_call("c3", "task", name="kid")), created("m6", "kid", cause="m5", name="kid"),
              calls("m7", "kid", tool_call("c4", "read", path="x")),
              result("m8", "kid", "c4", "Error: no such file: x", name="read"),
              say("m9", "kid", "An error message is what I expected."),
              calls("m10", "root", tool_call("c5", "search", q="c"))]
    path = write_events(tmp_path / "s" / "a.jsonl", events)
    (s,) = scanned(tmp_path / "s").listing()
    running = [("refused", "Error: Action blocked by hook 'Budget': over the limit"),
               ("tool error", "Error: no such file: x")]
    assert listed(s) == running  # c5 may still be answered: the session goes on
    assert failed.rolled_up(s) == {"root": 2, "kid": 1} and failed.own_counts(s) == {"root": 1, "kid": 1}
    old(path)
    (s,) = scanned(tmp_path / "s").listing()
    assert listed(s) == running + [("unanswered", "no result for the search call c5: the session ended without one")]
    assert failed.rolled_up(s) == {"root": 3, "kid": 1}  # the task call c3 is answered by the agent it made


def test_legacy_a_call_blocked_by_a_hook(tmp_path):
    folder = copy_samples("legacy", tmp_path / "legacy")
    lines(folder / "example1_jack_and_jill.jsonl", [
        {"message_id": "x1", "agent_id": "agent_root", "role": "assistant",
         "tool_calls": [{"id": "e1", "function": {"name": "grep", "arguments": "{}"}}]},
        {"message_id": "x2", "agent_id": "agent_root", "role": "tool", "tool_call_id": "e1", "content": SUCCESS_WITH_ERROR}])
    library = scanned(folder)
    assert listed(library.get("example3_hook_intervention")) == [
        ("refused", "Error: Action blocked by hook 'ResourceMonitor': Maximum subagents (3) already reached.")]
    assert listed(library.get("example1_jack_and_jill")) == []


def test_claude_code_errors_refusals_api_errors_and_interrupted_turns(tmp_path):
    folder = tmp_path / "projects" / "-home-dev-app"
    t = Transcript("7e1f-fail")
    t.user("Run the tests")
    t.response("msg_1", [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "make test"}},
                         {"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {"command": "rm -rf /"}},
                         {"type": "tool_use", "id": "toolu_3", "name": "Grep", "input": {"pattern": "error"}}])
    t.user([{"tool_use_id": "toolu_1", "type": "tool_result", "content": "make: *** [test] Error 2", "is_error": True}])
    t.user([{"tool_use_id": "toolu_2", "type": "tool_result", "is_error": True,
             "content": "The user doesn't want to proceed with this tool use. The tool use was rejected."}])
    t.user([{"tool_use_id": "toolu_3", "type": "tool_result", "content": SUCCESS_WITH_ERROR, "is_error": False}])
    t.raw({"type": "system", "subtype": "api_error", "uuid": "sys-1", "parentUuid": t.last, "sessionId": "7e1f-fail",
           "timestamp": "2026-03-01T10:05:00.000Z", "content": "API Error: 529 Overloaded (retry 1 of 10)",
           "isSidechain": False})
    line = t.response("msg_2", [{"type": "text", "text": "API Error: 500 Internal server error"}])[-1]
    line["isApiErrorMessage"] = True
    t.user("[Request interrupted by user]")
    t.user("Why did the error count go up?")  # a prompt that says "error"
    t.write(folder / "7e1f-fail.jsonl")
    (s,) = scanned(tmp_path / "projects").listing()
    assert listed(s) == [("tool error", "make: *** [test] Error 2"),
                         ("refused", "The user doesn't want to proceed with this tool use. The tool use was rejected."),
                         ("api error", "API Error: 529 Overloaded (retry 1 of 10)"),
                         ("api error", "API Error: 500 Internal server error"),
                         ("interrupted", "[Request interrupted by user]")]


def test_codex_exit_codes_api_errors_and_aborted_turns(tmp_path):
    folder = copy_samples("codex", tmp_path / "sessions")
    (rollout,) = [p for p in folder.rglob("rollout-*.jsonl") if "3c4d" in p.name]

    def item(kind, **payload):
        return {"timestamp": "2026-03-01T09:30:00.000Z", "type": kind, "payload": payload}

    def shell(code, text):
        return json.dumps({"output": text, "metadata": {"exit_code": code, "duration_seconds": 0.1}})

    lines(rollout, [
        item("response_item", type="function_call", name="shell", arguments='{"command": ["pytest"]}', call_id="f1"),
        item("response_item", type="function_call_output", call_id="f1", output=shell(1, "1 failed, 3 passed")),
        item("response_item", type="function_call", name="shell", arguments='{"command": ["grep"]}', call_id="f2"),
        item("response_item", type="function_call_output", call_id="f2", output=shell(0, SUCCESS_WITH_ERROR)),
        item("response_item", type="function_call", name="shell", arguments='{"command": ["make"]}', call_id="f3"),
        item("response_item", type="function_call_output", call_id="f3",
             output="Exit code: 2\nWall time: 0.4 seconds\nOutput:\nmake: *** No rule to make target"),
        item("event_msg", type="stream_error", message="stream disconnected before completion; retrying 1/5"),
        item("event_msg", type="error", message="unexpected status 401 Unauthorized"),
        item("event_msg", type="turn_aborted", reason="interrupted")])
    (s,) = scanned(folder).listing()
    assert listed(s) == [("tool error", '{"output": "1 failed, 3 passed", "metadata": {"exit_code": 1, '
                                        '"duration_seconds": 0.1}}'),
                         ("tool error", "Exit code: 2"),
                         ("api error", "[stream_error] stream disconnected before completion; retrying 1/5"),
                         ("api error", "[error] unexpected status 401 Unauthorized"),
                         ("interrupted", "[turn_aborted] interrupted")]


def test_gemini_failed_and_cancelled_calls_and_error_messages(tmp_path):
    folder = copy_samples("gemini", tmp_path / "tmp")
    chat = next(p for p in folder.rglob("session-2026-04-20*.jsonl"))
    lines(chat, [
        {"id": "g-err", "timestamp": "2026-04-20T10:30:00.000Z", "type": "error",
         "content": "[API Error: You exceeded your current quota]"},
        {"id": "g-call", "timestamp": "2026-04-20T10:31:00.000Z", "type": "gemini", "content": "",
         "toolCalls": [{"id": "t-x", "name": "run_shell_command", "args": {"command": "rm -rf build"},
                        "status": "cancelled", "timestamp": "2026-04-20T10:31:01.000Z",
                        "result": [{"functionResponse": {"id": "t-x", "name": "run_shell_command",
                                                         "response": {"error": "Tool call cancelled by user."}}}]},
                       {"id": "t-y", "name": "grep", "args": {"pattern": "error"}, "status": "success",
                        "timestamp": "2026-04-20T10:31:02.000Z",
                        "result": [{"functionResponse": {"id": "t-y", "name": "grep",
                                                         "response": {"output": SUCCESS_WITH_ERROR}}}]}]},
        {"id": "g-info", "timestamp": "2026-04-20T10:32:00.000Z", "type": "info", "content": "Request cancelled."}])
    library = scanned(folder)
    s = library.get("shop:chats:session-2026-04-20T10-00-5f1c2a3b")
    assert listed(s) == [("tool error", "Command exited with code 1: 1 failed"),
                         ("api error", "[API Error: You exceeded your current quota]"),
                         ("refused", "Tool call cancelled by user."),
                         ("interrupted", "Request cancelled.")]


def test_copilot_failed_tools_a_failed_sub_agent_session_errors_and_aborts(tmp_path):
    folder = copy_samples("copilot", tmp_path / "session-state")
    (events,) = folder.rglob("events.jsonl")

    def record(n, kind, **data):
        return {"id": f"ev-x{n}", "timestamp": f"2026-05-01T12:00:0{n}.000Z", "parentId": None, "type": kind,
                "data": data}

    lines(events, [record(1, "tool.execution_complete", toolCallId="toolu_01", success=True,
                          result={"content": SUCCESS_WITH_ERROR}),
                   record(2, "session.error", errorType="rate_limit", message="Rate limit exceeded, retrying"),
                   record(3, "abort", reason="user initiated")])
    (s,) = scanned(folder).listing()
    assert listed(s) == [("sub-agent failed", "Sub-agent failed: model call failed (500)"),
                         ("tool error", "1 failed: test_cent_rounding"),
                         ("api error", "[session.error] Rate limit exceeded, retrying"),
                         ("interrupted", "[abort] user initiated")]


def test_opencode_a_failing_call(tmp_path):
    db = tmp_path / "opencode" / "opencode.db"
    db.parent.mkdir(parents=True)
    write_sample(db).close()
    library = Library(tmp_path)
    library.scan()
    (s,) = library.listing()
    assert listed(s) == [("tool error", "Error: File not found: /nope.py")]


def test_otlp_spans_with_an_error_status(tmp_path):
    def span(span_id, name, parent=None, status=None, **attributes):
        values = [{"key": k.replace("__", "."), "value": {"stringValue": v}} for k, v in attributes.items()]
        raw = {"traceId": "t1", "spanId": span_id, "name": name, "startTimeUnixNano": str(10**18 + int(span_id[1:])),
               "attributes": values}
        if parent:
            raw["parentSpanId"] = parent
        if status:
            raw["status"] = status
        return raw

    spans = [span("s1", "invoke_agent planner", gen_ai__operation__name="invoke_agent", gen_ai__agent__name="planner"),
             span("s2", "execute_tool fetch", "s1", {"code": 2, "message": "HTTP 503 from the docs server"},
                  gen_ai__operation__name="execute_tool", gen_ai__tool__name="fetch", gen_ai__tool__call__id="k1"),
             span("s3", "execute_tool grep", "s1", None, gen_ai__operation__name="execute_tool",
                  gen_ai__tool__name="grep", gen_ai__tool__call__id="k2", gen_ai__tool__call__result=SUCCESS_WITH_ERROR),
             span("s4", "chat gpt", "s1", {"code": "STATUS_CODE_ERROR", "message": "429 Too Many Requests"},
                  gen_ai__operation__name="chat"),
             span("s5", "execute_tool lint", "s1", {"code": 1}, gen_ai__operation__name="execute_tool",  # OK
                  gen_ai__tool__name="lint", gen_ai__tool__call__id="k3",
                  gen_ai__tool__call__result="Error: none found (the words seed-000 fails with, from a span that did not)")]
    path = tmp_path / "traces" / "run.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"resourceSpans": [{"resource": {"attributes": []},
                                                   "scopeSpans": [{"spans": spans}]}]}) + "\n")
    (s,) = scanned(tmp_path / "traces").listing()
    assert listed(s) == [("tool error", "HTTP 503 from the docs server"), ("api error", "429 Too Many Requests")]


def test_ai_agent_snapshots_a_failed_operation(tmp_path):
    library = scanned(copy_samples("ai_agent", tmp_path / "sessions"))
    assert listed(library.get("4b9e-web-research.json.gz")) == [("tool error", "HTTP 503 Service Unavailable")]
    assert listed(library.get("7d21-stock-check.json")) == []  # its open call spawned an agent: answered by it


def test_weakincentives_error_entries_and_failed_results(tmp_path):
    folder = copy_samples("weakincentives", tmp_path / "wi")

    def entry(n, kind, detail):
        return {"timestamp": f"2026-01-06T09:10:0{n}.000Z", "level": "DEBUG", "logger": "weakincentives.adapters",
                "message": "transcript entry", "event": "transcript.entry",
                "context": {"prompt_name": "fix-tests", "entry_type": kind, "sequence_number": 100 + n,
                            "source": "main", "timestamp": f"2026-01-06T09:10:0{n}.000Z", "detail": detail}}

    def sdk_result(uuid, text, is_error):
        return {"sdk_entry": {"type": "user", "uuid": uuid, "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": uuid, "content": text, "is_error": is_error}]}}}

    lines(folder / "fix-tests.log.jsonl", [
        entry(1, "tool_result", sdk_result("w-e1", "Exit code 1: ModuleNotFoundError: no module named parse", True)),
        entry(2, "tool_result", sdk_result("w-e2", SUCCESS_WITH_ERROR, False)),
        entry(3, "error", {"content": "adapter error: the SDK process exited"})])
    s = scanned(folder).get("fix-tests.log")
    assert listed(s) == [("tool error", "Exit code 1: ModuleNotFoundError: no module named parse"),
                         ("error", "adapter error: the SDK process exited")]


def test_a_session_kept_asleep_says_its_count_without_waking(tmp_path):
    events = [created("m0", "root"), calls("m1", "root", tool_call("c1", "read")),
              result("m2", "root", "c1", "Error: denied", name="read")]
    write_events(tmp_path / "s" / "a.jsonl", events)
    (s,) = scanned(tmp_path / "s").listing()
    s.facets.catch_up(s.count)  # as background work does before it keeps a session whole
    summary = s.summary()
    assert summary["failures"] == 1
    s.sleep(lambda _: None, lambda _: None, summary)
    assert s.failure_count == 1 and s.asleep is not None


def test_a_call_beside_one_that_made_an_agent_is_still_owed_its_result(tmp_path):
    """A message making a sub-agent with one call and another call left unanswered: only the spawning call is
    answered by its agent; the other is a failure once the session ended."""
    path = write_events(tmp_path / "s" / "a.jsonl", [
        created("m0", "root", name="root"), user("m1", "root", "go"),
        calls("m2", "root", tool_call("c1", "task", name="kid"), tool_call("c2", "fetch", url="x")),
        created("m3", "kid", cause="m2", name="kid"), say("m4", "kid", "done")])
    old(path)
    (s,) = scanned(tmp_path / "s").listing()
    assert listed(s) == [("unanswered", "no result for the fetch call c2: the session ended without one")]
    assert failed.rolled_up(s) == {"root": 1}
