"""The facets (per-agent tool, modified-delivery and event lists) give exactly what a walk by the rules gives."""

import pytest

from conftest import SAMPLES, write_events
from events import calls, claude_response_line, claude_user, created, piece, result, say, tool_call, user
from viewer.core.kept import array_from
from viewer.index import facets
from viewer.reads import pictures, provenance, queries
from viewer.export.text import _selected_positions
from viewer.reads.filters import KINDS, EntryFilter
from viewer.library.library import Library


def _walk(s, agent_ids, filters):
    """The rule, applied event by event: what the facets must agree with."""
    return [p for p in queries._positions(s, agent_ids) if filters.passes(s, p)]


def _sessions():
    library = Library(SAMPLES)
    library.scan()
    return [s for s in library.sessions.values() if s.count]


@pytest.mark.parametrize("s", _sessions(), ids=lambda s: s.id)
def test_filtered_pages_of_every_sample_agree_with_the_rule(s):
    with s.lock:
        tools = sorted({name for lists in facets.caught_up(s).tools.values() for name in lists}) + ["no-such-tool"]
        choices = [EntryFilter(tool=t) for t in tools] + [EntryFilter(modified=True)]
        choices += [EntryFilter(kinds=(k,), tool=t) for k in KINDS for t in tools[:3]]
        choices += [EntryFilter(kinds=("heard", "said"), modified=True), EntryFilter(tool=tools[0].upper(), modified=True)]
        checked = 0
        for agent_id in s.agent_order:
            for filters in choices:
                assert queries.filtered_positions(s, [agent_id], filters) == _walk(s, [agent_id], filters)
                checked += 1
            every = queries.subtree(s, agent_id)
            assert queries.filtered_positions(s, every, choices[0]) == _walk(s, every, choices[0])
    assert checked


def _audit_by_walk(s):
    modified = {}
    for p in sorted(p for refs in s.references.values() for p in refs):
        event = s.events[p]
        if provenance.model.is_modified(event, s.event(event["substance"])):
            modified.setdefault(event["agent_id"], []).append(p)
    return modified


@pytest.mark.parametrize("s", _sessions(), ids=lambda s: s.id)
def test_the_hook_audit_chart_and_exports_agree_with_a_walk(s):
    audit = provenance.hook_audit(s, limit=10_000)
    walked = _audit_by_walk(s)
    assert {g["agent_id"]: [d["position"] for d in g["deliveries"]] for g in audit["groups"]} == walked
    assert audit["deliveries"] == sum(len(v) for v in s.references.values())
    chosen = s.agent_order[:3]
    assert _selected_positions(s, chosen) == [p for p, e in enumerate(s.events) if e["agent_id"] in chosen]
    sequence = pictures._sequence(s, chosen)
    assert set(sequence) >= {p for a in chosen for p in s.agents[a].entries}
    pieces = {p for p, e in enumerate(s.events) if e["event_type"] == "piece_of_text" and e["agent_id"] in chosen}
    assert pieces <= set(sequence)


def test_a_delivery_written_before_its_original_is_judged_when_the_original_arrives(tmp_path):
    path = write_events(tmp_path / "s.jsonl", [created("m1", "jack"), created("m2", "jill"),
                                               user("m3", "jill", "[Jack]: pw [REDACTED]", substance="m4")])
    library = Library(tmp_path)
    library.scan()
    s = library.get("s")
    with s.lock:
        assert queries.filtered_positions(s, ["jill"], EntryFilter(modified=True)) == []
    write_events(path, [say("m4", "jack", "pw hunter2"), user("m5", "jill", "[Jack]: pw hunter2", substance="m4")],
                 mode="a")
    library.refresh(str(path))
    with s.lock:
        assert queries.filtered_positions(s, ["jill"], EntryFilter(modified=True)) == [2]
    assert [g["count"] for g in provenance.hook_audit(s)["groups"]] == [1]


def test_facets_follow_appends(tmp_path):
    path = write_events(tmp_path / "s.jsonl", [created("m1", "a"), calls("m2", "a", tool_call("c1", tool="Bash"))])
    library = Library(tmp_path)
    library.scan()
    s = library.get("s")
    bash = EntryFilter(tool="bash")
    with s.lock:
        assert queries.filtered_positions(s, ["a"], bash) == [1]
    write_events(path, [result("m3", "a", "c1", "ok", name="Bash"), piece("m4", "a", "note", cause="m2"),
                        calls("m5", "a", tool_call("c2", tool="read_file"))], mode="a")
    library.refresh(str(path))
    with s.lock:
        assert queries.filtered_positions(s, ["a"], bash) == [1, 2]
        assert queries.filtered_positions(s, ["a"], EntryFilter(tool="READ_FILE")) == [4]
        assert list(facets.caught_up(s).pieces["a"]) == [3]


def test_a_claude_code_message_that_grows_a_tool_call_is_found_by_the_tool_filter(tmp_path):
    path = write_events(tmp_path / "s.jsonl", [claude_user("u", "go"),
                                               claude_response_line("a1", {"type": "text", "text": "Running it."})])
    library = Library(tmp_path)
    library.scan()
    s = library.get("s")
    bash = EntryFilter(tool="bash")
    with s.lock:
        assert queries.filtered_positions(s, ["main"], bash) == []  # the facets hold the message as it was
    write_events(path, [claude_response_line("a2", {"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                                    "input": {"command": "ls"}})], mode="a")
    library.refresh(str(path))
    with s.lock:
        assert queries.filtered_positions(s, ["main"], bash) == [s.by_id["a1"]] == _walk(s, ["main"], bash)


def test_a_view_that_needs_the_facets_waits_for_them_without_holding_the_session(tmp_path, monkeypatch):
    """catch_up_in_slices takes the session's lock for one slice at a time: between slices another thread can
    take it (a page of the session waits for one slice, not for the whole build)."""
    import threading

    from viewer.core.incremental import Incremental

    write_events(tmp_path / "s.jsonl", [created("c0", "a0")] + [say(f"m{i}", "a0", f"w{i}") for i in range(2000)])
    library = Library(tmp_path)
    library.scan()
    s = library.get("s")
    free_between_slices = []
    original = Incremental.catch_up

    def watched(self, count, budget=None):
        probe = threading.Thread(target=lambda: free_between_slices.append(
            s.lock.acquire(blocking=False) and (s.lock.release() or True)))
        probe.start()
        probe.join()
        return original(self, count, budget)

    monkeypatch.setattr(Incremental, "catch_up", watched)
    s.facets.catch_up_in_slices(s.count, size=500)
    assert s.facets.indexed == s.count == 2001
    assert len(free_between_slices) == 5 and all(free_between_slices)


def test_a_catch_up_with_a_count_read_before_the_file_was_read_again_takes_nothing_in(tmp_path):
    """The caller reads the session's count; if the session is emptied (its file read again from the start) before
    the catch-up takes its lock, the facets it held are dropped and walk to no event the session no longer has."""
    write_events(tmp_path / "s.jsonl", [created("c0", "a0")] + [say(f"m{i}", "a0", f"w{i}") for i in range(20)])
    library = Library(tmp_path)
    library.scan()
    s = library.get("s")
    held, count = s.facets, s.count
    s.restart()
    assert held.catch_up(count) is True and held.indexed == 0
    assert s.facets is not held and s.facets.catch_up(s.count) and s.facets.indexed == s.count == 0



def test_facets_taken_back_from_their_state_filter_and_follow_appends_as_before(tmp_path):
    """A woken session's per-agent tool lists stay as kept until an agent's are read: a filter reads them, and an
    entry added later to an agent whose lists are still as kept joins them (none lost, none twice)."""
    path = write_events(tmp_path / "s.jsonl", [created("m1", "a"), calls("m2", "a", tool_call("c1", tool="Bash")),
                                               created("m3", "b"), calls("m4", "b", tool_call("c2", tool="read_file"))])
    library = Library(tmp_path)
    library.scan()
    s = library.get("s")
    bash, read_file = EntryFilter(tool="bash"), EntryFilter(tool="read_file")
    with s.lock:
        kept = list(facets.caught_up(s).state())
        s.facets = again = facets.Facets(s)
        for name, value in kept:
            again.restore(name, value)
        assert again.tools == {}  # nothing made until read
        assert queries.filtered_positions(s, ["b"], read_file) == [3]
        assert queries.filtered_positions(s, ["b"], bash) == []
    write_events(path, [calls("m5", "a", tool_call("c3", tool="Bash"))], mode="a")
    library.refresh(str(path))
    with s.lock:
        assert queries.filtered_positions(s, ["a"], bash) == [1, 4]
        assert queries.filtered_positions(s, ["b"], read_file) == [3]
        tools = dict(facets.caught_up(s).state())["tools"]
    assert {agent: {name: list(array_from(lists)) for name, lists in by_tool.items()}
            for agent, by_tool in tools.items()} == {"a": {"bash": [1, 4]}, "b": {"read_file": [3]}}
