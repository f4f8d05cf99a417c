"""The legacy event stream (seed 001): utterance_ref as substance, source shown, parents inferred."""

import pytest

from conftest import write_events
from dom import parse
from events import copy_samples, scanned
from viewer.reads import dialogs, queries


@pytest.fixture
def library(tmp_path):
    copy_samples("legacy", tmp_path / "legacy")
    return scanned(tmp_path)


def test_both_examples_are_read_as_legacy_without_problems(library):
    sessions = {s.id: s for s in library.listing()}
    assert set(sessions) == {"legacy:example1_jack_and_jill", "legacy:example2_inner_monologue",
                             "legacy:example3_hook_intervention"}
    for s in sessions.values():
        assert s.format.name == "legacy"
        assert s.problems == []


def test_tree_parents_are_inferred_from_the_task_call_and_marked(library):
    s = library.get("legacy:example2_inner_monologue")
    tree = queries.tree(s)
    assert [n["agent_id"] for n in tree] == ["agent_root"]
    children = {c["agent_id"]: c for c in tree[0]["children"]}
    assert list(children) == ["agent_jack", "agent_jill"]
    assert [c["agent_id"] for c in children["agent_jill"]["children"]] == ["agent_jill_inner"]
    assert "parent_inferred" in children["agent_jack"]["flags"]
    assert children["agent_jill"]["created_by"]["summary"].startswith("task(name=Jill")
    created = s.events[s.agents["agent_jill_inner"].created_position]
    assert created["cause"] == "msg_020" and "exactly" in created["inferred"]["cause"]


def test_tree_of_the_first_example_infers_both_children_of_the_root(library):
    s = library.get("legacy:example1_jack_and_jill")
    tree = queries.tree(s)
    assert [n["agent_id"] for n in tree] == ["agent_root"]
    children = {c["agent_id"]: c for c in tree[0]["children"]}
    assert list(children) == ["agent_jack", "agent_jill"]
    assert all("parent_inferred" in c["flags"] and c["children"] == [] for c in children.values())
    assert children["agent_jack"]["created_by"]["summary"].startswith("task(name=Jack")
    created = s.events[s.agents["agent_jack"].created_position]
    assert created["cause"] == "msg_003" and created["inferred"]["tool_call_id"] == "c1"


def test_exact_name_match_wins_over_a_later_call_containing_the_name(tmp_path):
    write_events(tmp_path / "l.jsonl", [
        {"message_id": "m1", "event_type": "agent_created", "agent_id": "root"},
        {"message_id": "m2", "agent_id": "root", "role": "assistant", "tool_calls": [
            {"id": "c1", "function": {"name": "task", "arguments": '{"name": "Ann"}'}}]},
        {"message_id": "m3", "agent_id": "root", "role": "assistant", "tool_calls": [
            {"id": "c2", "function": {"name": "task", "arguments": '{"name": "Annabel", "note": "not Ann"}'}}]},
        {"message_id": "m4", "event_type": "agent_created", "agent_id": "a", "name": "Ann"},
        {"message_id": "m5", "event_type": "agent_created", "agent_id": "b", "name": "Annabel"},
    ])
    library = scanned(tmp_path)
    s = library.get("l")
    assert s.format.name == "legacy"
    assert s.agents["a"].cause == "m2" and s.agents["b"].cause == "m3"


def test_utterance_ref_is_read_as_substance_in_the_dialog(library):
    s = library.get("legacy:example1_jack_and_jill")
    assert s.event("msg_016")["substance"] == "msg_014"
    dialog = dialogs.dialog(s, ["agent_jack", "agent_jill"])
    said = [(i["speaker"], i["content"]) for i in dialog["items"] if i["event"]["role"] == "assistant"]
    assert said == [("agent_jack", "Hi, I'm Jack. *extends hand*"), ("agent_jill", "*smiles* Hello Jack, I'm Jill.")]
    jack = next(i for i in dialog["items"] if i["message_id"] == "msg_014")
    assert jack["recipients"] == ["agent_jill"]


def test_dialog_of_the_second_example_shows_the_inner_monologue(library):
    s = library.get("legacy:example2_inner_monologue")
    assert s.event("msg_027")["substance"] == "msg_026"  # the inner voice's advice, carried back as the result
    dialog = dialogs.dialog(s, ["agent_jill", "agent_jill_inner"])
    spoken = [(i["speaker"], i["event"]["role"], i["message_id"]) for i in dialog["items"]]
    assert spoken == [("agent_jill", "user", "msg_013"), ("agent_jack", "assistant", "msg_014"),
                      ("agent_jill", "assistant", "msg_017"), ("agent_jill_inner", "user", "msg_025"),
                      ("agent_jill_inner", "assistant", "msg_026"), ("agent_jill", "assistant", "msg_028")]


def test_perspective_of_the_inner_voice_hears_jill(library):
    s = library.get("legacy:example2_inner_monologue")
    view = queries.perspective(s, "agent_jill_inner")
    kinds = [(i["kind"], i["event"].get("source"), i["message_id"]) for i in view["items"]]
    assert kinds == [("system", None, "msg_022"), ("heard", "agent_jill", "msg_025"), ("said", None, "msg_026")]


def test_perspective_shows_heard_and_said_with_sources(library):
    s = library.get("legacy:example1_jack_and_jill")
    view = queries.perspective(s, "agent_jill")
    kinds = [(i["kind"], i["event"].get("source")) for i in view["items"]]
    assert kinds == [("system", None), ("heard", "agent_root"), ("heard", "agent_jack"), ("said", None)]


def test_pages_show_the_badge_the_source_and_the_inferred_parent(tmp_path):
    from viewer.web.app import create_app

    copy_samples("legacy", tmp_path / "legacy")
    client = create_app(tmp_path, watch=False).test_client()
    index = parse(client.get("/").data)
    assert "legacy event stream" in index.by_id("av-session-legacy:example1_jack_and_jill").text
    doc = parse(client.get("/s/legacy:example1_jack_and_jill").data)
    assert "legacy event stream" in doc.text
    assert "inferred parent" in doc.by_id("av-tree").text
    page = client.get("/s/legacy:example1_jack_and_jill/agents/agent_jill").data.decode()
    assert "source <code>agent_jack</code>" in page
    api = client.get("/api/sessions").json
    assert {s["format"] for s in api["sessions"]} == {"legacy"}


def test_live_append_infers_the_parent_of_a_new_agent(tmp_path):
    path = write_events(tmp_path / "live.jsonl", [
        {"message_id": "m1", "event_type": "agent_created", "agent_id": "root"},
        {"message_id": "m2", "agent_id": "root", "role": "user", "content": "go", "source": "external"}])
    library = scanned(tmp_path)
    write_events(path, [
        {"message_id": "m3", "agent_id": "root", "role": "assistant", "tool_calls": [
            {"id": "c1", "function": {"name": "task", "arguments": '{"name": "Kid"}'}}]},
        {"message_id": "m4", "event_type": "agent_created", "agent_id": "kid", "name": "Kid"}], mode="a")
    library.refresh(str(path))
    s = library.get("live")
    assert s.agents["kid"].parent_id == "root" and "parent_inferred" in s.agents["kid"].flags


def test_unrecognized_files_are_listed_with_the_reason(tmp_path):
    from viewer.web.app import create_app

    write_events(tmp_path / "other.jsonl", [{"hello": "world"}])
    client = create_app(tmp_path, watch=False).test_client()
    (row,) = client.get("/api/sessions").json["sessions"]
    assert row["format"] == "unrecognized" and "hello" in row["format_reason"]
    assert "unrecognized" in parse(client.get("/").data).by_id("av-session-other").text
