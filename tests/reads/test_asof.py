""""As of event N": every page and JSON twin shows the session right after its N-th event."""

import json

import pytest

from conftest import sample, write_events
from dom import parse
from events import calls, created, tool_call
from viewer.reads import asof, dialogs, queries
from viewer.reads.session_viewer import load_index


@pytest.mark.parametrize("n", list(range(0, 342, 11)) + [341])
def test_a_snapshot_is_the_session_read_up_to_event_n(tmp_path, n):
    lines = sample("research_team").read_text(encoding="utf-8").splitlines(keepends=True)
    truncated = tmp_path / "research_team.jsonl"
    truncated.write_text("".join(lines[:n]), encoding="utf-8")
    fresh, frozen = load_index(truncated), asof.snapshot(load_index(sample("research_team")), n)
    assert frozen.count == fresh.count == n
    assert queries.tree(frozen) == queries.tree(fresh)
    for agent_id in fresh.agent_order:
        assert queries.perspective(frozen, agent_id) == queries.perspective(fresh, agent_id)
    chosen = fresh.agent_order[:4]
    assert dialogs.dialog(frozen, chosen) == dialogs.dialog(fresh, chosen)


def test_an_agent_created_before_its_cause_is_a_root_until_the_cause_arrives(tmp_path):
    path = write_events(tmp_path / "s.jsonl", [
        created("m1", "root"), created("m2", "kid", cause="m3"), calls("m3", "root", tool_call("c1", name="kid"))])
    s = load_index(path)
    assert [n["agent_id"] for n in queries.tree(asof.snapshot(s, 2))] == ["root", "kid"]
    assert [n["agent_id"] for n in queries.tree(asof.snapshot(s, 3))] == ["root"]
    assert asof.snapshot(s, 99).count == 3


def test_pages_take_at_and_keep_it_in_their_links(client):
    page = client.get("/s/example1_jack_and_jill/agents/agent_jill?at=14")
    doc = parse(page.data)
    assert [a.attrs["id"] for a in doc.by_id("av-entries").children if a.tag == "article"] == ["msg_009", "msg_014"]
    assert doc.by_id("av-poller") is None and b"live-dot" not in page.data
    banner = doc.by_id("av-as-of")
    assert banner.attrs["data-at"] == "14" and "msg_014" in banner.text
    steps = {a.attrs["data-step"]: a.attrs["href"] for a in banner.find_all("a")}
    assert steps == {"prev": "/s/example1_jack_and_jill/agents/agent_jill?at=13",
                     "next": "/s/example1_jack_and_jill/agents/agent_jill?at=15",
                     "live": "/s/example1_jack_and_jill/agents/agent_jill"}
    crumbs = [a.attrs["href"] for a in doc.find_all("nav")[0].find_all("a")]
    assert "/s/example1_jack_and_jill?at=14" in crumbs
    assert client.get("/s/example1_jack_and_jill/messages/msg_016?at=14").status_code == 404
    assert client.get("/s/example1_jack_and_jill/messages/msg_014?at=14").status_code == 200
    assert client.get("/s/example1_jack_and_jill?at=x").status_code == 400


def test_the_session_page_and_json_twins_as_of_n(client):
    doc = parse(client.get("/s/example1_jack_and_jill?at=5").data)
    assert [li.attrs["data-agent"] for li in doc.by_id("av-tree").find_all("li")] == ["agent_root", "agent_jack"]
    assert doc.by_id("av-at").attrs["value"] == "5" and doc.by_id("av-at").attrs["max"] == "20"
    live = parse(client.get("/s/example1_jack_and_jill").data)
    assert live.by_id("av-as-of") is None and live.by_id("av-at").attrs["value"] == "20"
    data = client.get("/api/sessions/example1_jack_and_jill?at=5").get_json()
    assert data["events"] == 5 and [a["agent_id"] for a in data["agents"]] == ["agent_root", "agent_jack"]
    dialog = client.get("/api/sessions/example1_jack_and_jill/dialog?agents=agent_jack,agent_jill&at=16").get_json()
    assert [m["message_id"] for m in dialog["messages"]] == ["msg_012", "msg_015"]
    assert dialog["messages"][1]["recipients"] == []  # Jill hears Jack only at event 17
    chart = client.get("/api/sessions/example1_jack_and_jill/chart?at=16").get_json()
    assert chart["total"] == 16 and len(chart["arrows"]) == 2
    trace = client.get("/s/example1_jack_and_jill/export/trace?at=3").get_data(as_text=True)
    assert "msg_003" in trace and "msg_004" not in trace


def test_forms_on_a_frozen_page_stay_frozen(client):
    doc = parse(client.get("/s/example1_jack_and_jill/dialog?agents=agent_jack&at=9").data)
    hidden = [i for i in doc.find_all("input") if i.attrs.get("name") == "at"]
    assert [i.attrs["value"] for i in hidden] == ["9"]


def test_a_snapshot_keeps_the_problems_of_the_lines_it_covers(tmp_path):
    lines = [
        '{"message_id": "m1", "event_type": "agent_created", "agent_id": "a", "name": 5}',  # wrong_type
        "not json",
        '{"message_id": "m2", "event_type": "transcript_entry", "agent_id": "a", "role": "assistant", "content": "x",'
        ' "tool_calls": [{"id": "c", "function": {"name": "t", "arguments": "{bad"}}]}',  # arguments_not_json
        '{"message_id": "m3", "event_type": "mystery", "agent_id": "a"}',  # unknown_event_type
        '{"message_id": "m4", "event_type": "transcript_entry", "agent_id": "a", "role": "user", "substance": "m9",'
        ' "content": "y"}',  # dangling_substance: found again by the replay
        "[1]",
        '{"message_id": "m5", "event_type": "transcript_entry", "agent_id": "a", "role": "user", "content": "z"}',
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    live = load_index(path)

    def problems(s):
        return sorted((p.kind, p.line, p.detail, p.message_id) for p in s.problems)

    assert {p[0] for p in problems(live)} == {"wrong_type", "invalid_json", "arguments_not_json", "unknown_event_type",
                                              "dangling_substance", "not_an_object"}
    for n in range(live.count + 1):
        last_line = live.line_numbers[n - 1] if n else 0
        truncated = tmp_path / f"at{n}.jsonl"
        truncated.write_text("".join(line + "\n" for line in lines[:last_line]))
        assert problems(asof.snapshot(live, n)) == problems(load_index(truncated)), n


def _state(s):
    """Everything the views read of an index, as plain values."""
    return {"tree": queries.tree(s), "count": s.count, "problems": [p.as_dict() for p in s.problems],
            "perspectives": {a: queries.perspective(s, a) for a in s.agent_order},
            "dialog": dialogs.dialog(s, s.agent_order[:4]), "by_id": dict(s.by_id),
            "references": {k: list(v) for k, v in s.references.items()}}


def test_a_snapshot_built_from_an_earlier_one_equals_one_built_from_scratch(tmp_path):
    source = load_index(sample("research_team"))
    kept = asof.snapshots()
    asof.snapshot(source, 100, kept)
    for n in (101, 150, 151, 300, 341):  # each from the nearest earlier snapshot kept
        stepped = asof.snapshot(source, n, kept)
        lines = sample("research_team").read_text(encoding="utf-8").splitlines(keepends=True)
        truncated = tmp_path / f"cut{n}.jsonl"
        truncated.write_text("".join(lines[:n]), encoding="utf-8")
        fresh = load_index(truncated)
        assert _state(stepped) == _state(fresh)


def test_a_copy_is_independent_of_its_original(tmp_path):
    lines = sample("research_team").read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path / "s.jsonl"
    path.write_text("".join(lines[:200]), encoding="utf-8")
    original = load_index(path)
    before = _state(original)
    copy = original.copy()
    shared = {name for name, value in vars(original).items()
              if isinstance(value, (dict, list, set)) and vars(copy)[name] is value}
    assert shared <= set(original._SHARED_IN_COPIES)
    for position, line in enumerate(lines[200:], start=200):  # extend the copy as a snapshot would
        copy.add(json.loads(line), position + 1)
    assert _state(original) == before and copy.count == len(lines)


def test_snapshots_kept_are_bounded_by_their_events(tmp_path):
    kept_here = asof.snapshots(most_events=250)
    s = load_index(sample("research_team"))
    for n in (100, 120, 140):
        asof.snapshot(s, n, kept_here)
    kept = sorted(k[2] for k in kept_here.keys() if k[0] == s.serial)
    assert kept == [140]  # 120 + 140 > 250: the least recently used go first
