"""Pages read windows of lists kept at ingest: the same answers as walking every entry, as events arrive."""

import json

from werkzeug.datastructures import MultiDict

from conftest import write_events
from events import calls, claude_response_line, claude_user, created, result, say, tool_call, user
from viewer.reads import dialogs, queries
from viewer.index import usage
from viewer.reads.filters import EntryFilter
from viewer.library.library import Library

EVENTS = [
    created("c1", "a"), created("c2", "b", cause=None), created("c3", "c"),
    user("m1", "a", "task for a"),
    say("m2", "a", "I will ask b"),
    user("m3", "b", "I will ask b", substance="m2"),
    user("m4", "c", "I will ask b", substance="m2"),
    calls("m5", "b", tool_call("t1", "read_file", path="x")),
    result("m6", "b", "t1", "contents", name="read_file"),
    say("m7", "b", "done"),
    user("m8", "a", "done", substance="m7"),
    user("m9", "c", "early copy", substance="m11"),  # delivered before its original is logged
    say("m10", "c", "thinking"),
    say("m11", "b", "late original"),
    user("m12", "a", "late original", substance="m11"),
    say("m13", "a", "bye"),
]


def fresh(tmp_path, events, name):
    folder = tmp_path / name
    write_events(folder / "s.jsonl", events)
    library = Library(folder)
    library.scan()
    return library.get("s")


def dialog_keys(view):
    return [(i["message_id"] if "message_id" in i else i.get("key"), i["position"]) for i in view["items"]]


def test_the_dialog_kept_between_requests_equals_one_computed_from_scratch_at_every_step(tmp_path):
    live_path = tmp_path / "live" / "s.jsonl"
    write_events(live_path, EVENTS[:4])
    library = Library(tmp_path / "live")
    library.scan()
    s = library.get("s")
    for chosen in (["a", "b"], ["a", "b", "c"], ["c"]):
        dialogs.dialog(s, chosen)  # keep an order for each selection
    for n in range(5, len(EVENTS) + 1):
        write_events(live_path, EVENTS[n - 1:n], mode="a")
        library.refresh(str(live_path))
        scratch = fresh(tmp_path, EVENTS[:n], f"scratch{n}")
        for chosen in (["a", "b"], ["a", "b", "c"], ["c"]):
            kept, built = dialogs.dialog(s, chosen), dialogs.dialog(scratch, chosen)
            assert kept == built, (n, chosen)
            assert dialogs.dialog(s, chosen, start=1, limit=2) == dialogs.dialog(scratch, chosen, start=1, limit=2)
    full = dialogs.dialog(s, ["a", "b", "c"])
    assert [i["position"] for i in full["items"]] == sorted(i["position"] for i in full["items"])
    assert full["total"] == len(full["items"]) > 5


def walked(s, agent_id, filters):
    return [p for p in s.agents[agent_id].entries if filters.passes(s, p)]


def test_a_kind_filter_reads_the_positions_kept_per_kind(tmp_path):
    s = fresh(tmp_path, EVENTS, "all")
    for agent_id in ("a", "b", "c"):
        for kinds in (["said"], ["heard"], ["did"], ["heard", "said"], ["received", "did", "said"]):
            filters = EntryFilter.from_args(MultiDict([("kind", ",".join(kinds))]))
            view = queries.perspective(s, agent_id, filters=filters)
            expected = walked(s, agent_id, filters)
            assert view["total"] == len(expected), (agent_id, kinds)
            assert [i["position"] for i in view["items"]] == [
                p for p in expected if queries.shown_alone(s, queries.entry(s, p), filters)]
    window = queries.perspective(s, "a", start=1, limit=1, filters=EntryFilter(("said", "heard")))
    assert [i["position"] for i in window["items"]] == [walked(s, "a", EntryFilter(("said", "heard")))[1]]


def test_a_message_that_grows_from_said_to_did_moves_to_its_new_kind(tmp_path):
    line = claude_response_line
    path = write_events(tmp_path / "s.jsonl", [claude_user("u", "go"), line("a1", {"type": "text", "text": "Running it."})])
    library = Library(tmp_path)
    library.scan()
    s = library.get("s")
    said, did = EntryFilter(("said",)), EntryFilter(("did",))
    assert dialogs.dialog(s, ["main"])["total"] == 2
    before = usage.for_session(s), usage.for_agent(s, "main")  # kept on the session from now on
    write_events(path, [{"type": "progress", "uuid": "p", "sessionId": "s", "data": {"type": "hook_progress"}},
                        line("a2", {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}})],
                 mode="a")
    library.refresh(str(path))
    a1 = s.by_id["a1"]
    assert walked(s, "main", did) == [a1] and walked(s, "main", said) == []
    assert [i["position"] for i in queries.perspective(s, "main", filters=did)["items"]] == [a1]
    assert queries.perspective(s, "main", filters=said)["total"] == 0
    assert dialogs.dialog(s, ["main"])["total"] == 1  # no longer an utterance: only what it heard
    assert json.dumps(dialogs.dialog(s, ["main"]))  # JSON-able
    assert usage.for_session(s) == usage.total(s, range(s.count))
    assert usage.for_agent(s, "main") == usage.total(s, s.agents["main"].entries)
    assert before[0]["responses"] == usage.for_session(s)["responses"] == 1  # a grown message counts once


def test_usage_totals_kept_between_requests_follow_appends(tmp_path):
    def record(i):
        return {"type": "assistant", "uuid": f"a{i}", "parentUuid": None, "isSidechain": False, "sessionId": "s",
                "timestamp": f"2026-02-01T10:00:{i:02d}.000Z", "requestId": f"req_{i}",
                "message": {"id": f"msg_{i}", "role": "assistant", "model": f"model-{i % 2}",
                            "content": [{"type": "text", "text": f"answer {i}"}],
                            "usage": {"input_tokens": i, "output_tokens": 1}}}
    path = write_events(tmp_path / "s.jsonl", [record(1)])
    library = Library(tmp_path)
    library.scan()
    s = library.get("s")
    seen = []
    for i in range(2, 6):
        seen.append(usage.for_session(s)["input_tokens"])
        write_events(path, [record(i)], mode="a")
        library.refresh(str(path))
    final = usage.for_session(s)
    assert final == usage.total(s, range(s.count))
    assert final["models"] == ["model-0", "model-1"] and seen == sorted(seen)
