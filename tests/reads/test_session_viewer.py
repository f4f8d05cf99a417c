"""The seed's SessionViewer API on the four seed examples, the research team sample and edge-case files."""

from __future__ import annotations

import itertools
import json

import pytest

from conftest import sample, write_events
from events import created, entry, ids, run_with_timeout, tool_call
from viewer import SessionViewer

EXAMPLE1 = "example1_jack_and_jill"
EXAMPLE2 = "example2_inner_monologue"
EXAMPLE3 = "example3_hook_intervention"
EXAMPLE4 = "example4_external_trigger"
RESEARCH = "research_team"


# --- helpers ------------------------------------------------------------------------------------

def viewer(name) -> SessionViewer:
    return SessionViewer(sample(name))


def logged(name) -> list[dict]:
    """The events of a sample exactly as logged, in file order."""
    with open(sample(name), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def logged_by_id(name) -> dict[str, dict]:
    return {e["message_id"]: e for e in logged(name)}


def line_with(text: str, needle: str) -> str:
    (line,) = [line for line in text.splitlines() if needle in line]
    return line


def label_of(line: str) -> str:
    """What a perspective line says before the quoted content (e.g. "HEARD from Jack (...)")."""
    return line.split(": ", 1)[0]


# --- spec oracles, written from the rules (not from the code) -------------------------------------

def oracle_dialog(events, agent_ids):
    first_position = {}
    for position, event in enumerate(events):
        first_position.setdefault(event["message_id"], position)
    groups = {}
    for position, event in enumerate(events):
        if event["event_type"] != "transcript_entry" or event["agent_id"] not in agent_ids:
            continue
        utterance = event.get("role") == "assistant" and event.get("content") and not event.get("tool_calls")
        if not (utterance or event.get("role") == "user"):
            continue
        groups.setdefault(event.get("substance") or event["message_id"], position)
    shown = sorted(first_position.get(key, first) for key, first in groups.items())
    return [events[p] for p in shown]


def oracle_causality(events):
    index = {}
    for position, event in enumerate(events):
        if event.get("substance"):
            index[event["message_id"]] = event["substance"]
        elif event.get("cause"):
            index[event["message_id"]] = event["cause"]
        elif event.get("role") == "tool":
            for earlier in reversed(events[:position]):
                if earlier["agent_id"] == event["agent_id"] and any(
                        c.get("id") == event.get("tool_call_id") for c in earlier.get("tool_calls") or []):
                    index[event["message_id"]] = earlier["message_id"]
                    break
    return index


def oracle_references(events, message_id):
    reached = {message_id}
    found = []
    changed = True
    while changed:
        changed = False
        for event in events:
            if (event["event_type"] == "transcript_entry" and event.get("substance") in reached
                    and event["message_id"] not in reached):
                reached.add(event["message_id"])
                changed = True
    for event in events:
        if event["event_type"] == "transcript_entry" and event["message_id"] in reached - {message_id}:
            found.append(event)
    return found


# --- Example 1: Jack and Jill -----------------------------------------------------------------------

def test_example1_list_agents():
    assert viewer(EXAMPLE1).list_agents() == {"agent_root": "agent_root", "agent_jack": "Jack", "agent_jill": "Jill"}


def test_example1_transcripts_are_the_logged_entries_in_file_order():
    v, by_id = viewer(EXAMPLE1), logged_by_id(EXAMPLE1)
    assert ids(v.get_transcript("agent_jack")) == ["msg_005", "msg_013", "msg_015", "msg_020"]
    assert ids(v.get_transcript("agent_jill")) == ["msg_009", "msg_014", "msg_017", "msg_018"]
    assert ids(v.get_transcript("agent_root")) == [
        "msg_002", "msg_003", "msg_006", "msg_007", "msg_010", "msg_011", "msg_016", "msg_019"]
    assert v.get_transcript("agent_jill") == [by_id[m] for m in ["msg_009", "msg_014", "msg_017", "msg_018"]]


def test_example1_dialog_of_jack_and_jill():
    v, by_id = viewer(EXAMPLE1), logged_by_id(EXAMPLE1)
    dialog = v.extract_dialog(["agent_jack", "agent_jill"])
    assert ids(dialog) == ["msg_012", "msg_015", "msg_018"]
    assert dialog == [by_id["msg_012"], by_id["msg_015"], by_id["msg_018"]]
    assert ids(v.extract_dialog(["agent_jill", "agent_jack"])) == ["msg_012", "msg_015", "msg_018"]


def test_example1_dialog_of_one_agent():
    v = viewer(EXAMPLE1)
    assert ids(v.extract_dialog(["agent_jill"])) == ["msg_012", "msg_015", "msg_018"]
    assert ids(v.extract_dialog(["agent_root"])) == ["msg_002"]
    assert v.extract_dialog([]) == []


def test_example1_causality_index():
    assert viewer(EXAMPLE1).build_causality_index() == {
        "msg_004": "msg_003", "msg_006": "msg_003", "msg_008": "msg_007", "msg_010": "msg_007",
        "msg_012": "msg_011", "msg_013": "msg_012", "msg_014": "msg_012", "msg_016": "msg_011",
        "msg_017": "msg_015", "msg_019": "msg_011", "msg_020": "msg_018",
    }


@pytest.mark.parametrize("start, chain", [
    ("msg_013", ["msg_011", "msg_012", "msg_013"]),
    ("msg_016", ["msg_011", "msg_016"]),
    ("msg_004", ["msg_003", "msg_004"]),
    ("msg_019", ["msg_011", "msg_019"]),
    ("msg_020", ["msg_018", "msg_020"]),
    ("msg_002", ["msg_002"]),
])
def test_example1_trace_message_flow(start, chain):
    v, by_id = viewer(EXAMPLE1), logged_by_id(EXAMPLE1)
    flow = v.trace_message_flow(start)
    assert ids(flow) == chain
    assert flow == [by_id[m] for m in chain]


def test_example1_trace_content_references():
    v, by_id = viewer(EXAMPLE1), logged_by_id(EXAMPLE1)
    assert v.trace_content_references("msg_012") == [by_id["msg_013"], by_id["msg_014"]]
    assert ids(v.trace_content_references("msg_015")) == ["msg_017"]
    assert ids(v.trace_content_references("msg_018")) == ["msg_020"]
    assert v.trace_content_references("msg_013") == []
    assert v.trace_content_references("msg_nope") == []


def test_example1_perspective_of_jill_names_senders():
    text = viewer(EXAMPLE1).extract_agent_perspective("agent_jill")
    assert "Jill" in text.splitlines()[0]
    heard_jack = line_with(text, "[Jack]: Hi, I'm Jack. *extends hand*")
    assert "Jack" in label_of(heard_jack)
    assert "HEARD" in label_of(heard_jack)
    assert "modified" not in heard_jack
    assert "agent_root" in label_of(line_with(text, "You meet in a cafe. Introduce yourselves."))
    said = line_with(text, "*smiles* Hello Jack, I'm Jill.")
    assert "SAID" in label_of(said)
    assert "You are an aspiring author..." in text
    assert "ORIGINAL" not in text


def test_example1_perspective_of_jack_orders_what_happened():
    text = viewer(EXAMPLE1).extract_agent_perspective("agent_jack")
    heard_jill = line_with(text, "[Jill]: *smiles* Hello Jack, I'm Jill.")
    assert "Jill" in label_of(heard_jill)
    said = line_with(text, "Hi, I'm Jack. *extends hand*")
    assert "SAID" in label_of(said)
    order = [text.index(s) for s in ["You work in HR...", "You meet in a cafe.", said, heard_jill]]
    assert order == sorted(order)


def test_example1_perspective_of_root_shows_calls_arguments_and_results():
    text = viewer(EXAMPLE1).extract_agent_perspective("agent_root")
    assert "Create Jack and Jill for a cafe discussion" in text
    # tool names and their argument values
    assert "task" in text and "discuss" in text
    for value in ["Jack", "You work in HR...", "Jill", "You are an aspiring author...",
                  "You meet in a cafe. Introduce yourselves."]:
        assert value in text
    # results of each call, including both results of the discuss call c3
    for content in ["Created subagent: Jack", "Created subagent: Jill",
                    "Hi, I'm Jack. *extends hand*", "*smiles* Hello Jack, I'm Jill."]:
        assert "RECEIVED" in label_of(line_with(text, content))
    assert text.index("Created subagent: Jack") < text.index("Created subagent: Jill") < text.index(
        "Hi, I'm Jack. *extends hand*") < text.index("*smiles* Hello Jack, I'm Jill.")


def test_unknown_agent_ids_raise_key_error():
    v = viewer(EXAMPLE1)
    with pytest.raises(KeyError):
        v.get_transcript("agent_nobody")
    with pytest.raises(KeyError):
        v.extract_dialog(["agent_jack", "agent_nobody"])
    with pytest.raises(KeyError):
        v.extract_agent_perspective("agent_nobody")
    with pytest.raises(KeyError):
        v.extract_agent_perspective("agent_nobody", include_subagents=True)


# --- Example 2: inner monologue ---------------------------------------------------------------------

def test_example2_list_agents():
    assert viewer(EXAMPLE2).list_agents() == {
        "agent_root": "agent_root", "agent_jack": "Jack", "agent_jill": "Jill", "agent_jill_inner": "Inner"}


def test_example2_dialog_of_jill_and_her_inner_voice():
    v, by_id = viewer(EXAMPLE2), logged_by_id(EXAMPLE2)
    dialog = v.extract_dialog(["agent_jill", "agent_jill_inner"])
    assert ids(dialog) == ["msg_012", "msg_015", "msg_035", "msg_037", "msg_039"]
    assert dialog[1] == by_id["msg_015"]  # Jack's own utterance, though Jack is not selected


def test_example2_dialog_of_jack_and_jill():
    v = viewer(EXAMPLE2)
    assert ids(v.extract_dialog(["agent_jack", "agent_jill"])) == ["msg_012", "msg_015", "msg_039"]


def test_example2_transcript_of_inner():
    assert ids(viewer(EXAMPLE2).get_transcript("agent_jill_inner")) == ["msg_032", "msg_036", "msg_037"]


def test_example2_causality_index():
    assert viewer(EXAMPLE2).build_causality_index() == {
        "msg_004": "msg_003", "msg_006": "msg_003", "msg_008": "msg_007", "msg_010": "msg_007",
        "msg_012": "msg_011", "msg_013": "msg_012", "msg_014": "msg_012", "msg_016": "msg_011",
        "msg_031": "msg_030", "msg_033": "msg_015", "msg_035": "msg_034", "msg_036": "msg_035",
        "msg_038": "msg_034", "msg_040": "msg_011", "msg_041": "msg_039",
    }


def test_example2_flows_and_references():
    v = viewer(EXAMPLE2)
    assert ids(v.trace_message_flow("msg_036")) == ["msg_034", "msg_035", "msg_036"]
    assert ids(v.trace_message_flow("msg_038")) == ["msg_034", "msg_038"]
    assert ids(v.trace_message_flow("msg_031")) == ["msg_030", "msg_031"]
    assert ids(v.trace_message_flow("msg_041")) == ["msg_039", "msg_041"]
    assert ids(v.trace_content_references("msg_035")) == ["msg_036"]
    assert ids(v.trace_content_references("msg_015")) == ["msg_033"]
    assert v.trace_content_references("msg_037") == []


def test_example2_perspective_of_jill():
    text = viewer(EXAMPLE2).extract_agent_perspective("agent_jill")
    assert "Jack" in label_of(line_with(text, "[Jack]: Hi, I'm Jack. *extends hand*"))
    assert "discuss" in text
    assert "Jack just introduced himself. What should I say?" in text  # the call's argument value
    assert "Inner" in text
    assert "RECEIVED" in label_of(line_with(text, "Be friendly but not over-eager."))
    assert "SAID" in label_of(line_with(text, "*smiles* Hello Jack, I'm Jill."))
    assert "[Inner]" not in text  # subagents only on request


def test_example2_perspective_with_subagents_interleaves_inner():
    text = viewer(EXAMPLE2).extract_agent_perspective("agent_jill", include_subagents=True)
    lines = text.splitlines()[1:]
    entry_lines = [line for line in lines if line and not line[0].isspace()]
    assert entry_lines
    assert all(line.startswith(("[Jill] ", "[Inner] ")) for line in entry_lines)
    inner_system = line_with(text, "SYSTEM PROMPT: You are Jill's inner voice...")
    assert inner_system.startswith("[Inner] ")
    inner_said = line_with(text, "[Inner] SAID")
    assert "Be friendly but not over-eager." in inner_said
    (inner_heard,) = [line for line in lines if "Jack just introduced himself" in line and "HEARD" in line]
    assert inner_heard.startswith("[Inner] ")
    assert "Jill" in label_of(inner_heard[len("[Inner] "):])
    jill_said = line_with(text, "*smiles* Hello Jack, I'm Jill.")
    assert jill_said.startswith("[Jill] ")
    # file order: Inner's system prompt (msg_032) between Jill's spawning call (msg_030) and her
    # hearing Jack (msg_033); Jill speaks last (msg_039)
    assert text.index('"Inner"') < text.index(inner_system) < text.index("[Jack]: Hi, I'm Jack.")
    assert text.index(inner_said) < text.index(jill_said)


def test_example2_perspective_with_subagents_of_a_leaf_is_its_own():
    v = viewer(EXAMPLE2)
    text = v.extract_agent_perspective("agent_jill_inner", include_subagents=True)
    assert all(line.startswith("[Inner] ") for line in text.splitlines()[1:] if line and not line[0].isspace())
    assert "Be friendly but not over-eager." in text


# --- Example 3: hook intervention ---------------------------------------------------------------------

def test_example3_list_agents_includes_the_implicit_root():
    assert viewer(EXAMPLE3).list_agents() == {"agent_root": "agent_root", "agent_resource_hook": "ResourceMonitor"}


def test_example3_causality_and_flow():
    v = viewer(EXAMPLE3)
    assert v.build_causality_index() == {"msg_101": "msg_100", "msg_105": "msg_102"}
    assert ids(v.trace_message_flow("msg_105")) == ["msg_102", "msg_105"]
    assert ids(v.trace_message_flow("msg_101")) == ["msg_100", "msg_101"]
    assert ids(v.trace_message_flow("msg_104")) == ["msg_104"]
    assert v.trace_content_references("msg_104") == []


def test_example3_transcripts_and_dialog():
    v = viewer(EXAMPLE3)
    assert ids(v.get_transcript("agent_root")) == ["msg_100", "msg_102", "msg_105"]
    assert ids(v.get_transcript("agent_resource_hook")) == ["msg_103", "msg_104"]
    assert ids(v.extract_dialog(["agent_resource_hook"])) == ["msg_103", "msg_104"]
    assert v.extract_dialog(["agent_root"]) == []  # only tool calls and a tool result
    assert ids(v.extract_dialog(["agent_root", "agent_resource_hook"])) == ["msg_103", "msg_104"]


def test_example3_perspectives():
    v = viewer(EXAMPLE3)
    root = v.extract_agent_perspective("agent_root")
    assert "task" in root and "ResourceMonitor" in root and "Searcher4" in root
    assert "Error: Action blocked by hook 'ResourceMonitor': Maximum subagents (3) already reached." in root
    hook = v.extract_agent_perspective("agent_resource_hook")
    assert "HEARD" in label_of(line_with(hook, "attempting to create subagent 'Searcher4'"))
    assert "SAID" in label_of(line_with(hook, "DENY. Maximum subagents (3) already reached."))
    both = v.extract_agent_perspective("agent_root", include_subagents=True)
    assert line_with(both, "DENY. Maximum subagents").startswith("[ResourceMonitor] ")


# --- Example 4: external trigger ----------------------------------------------------------------------

def test_example4_implicit_agent():
    v, by_id = viewer(EXAMPLE4), logged_by_id(EXAMPLE4)
    assert v.list_agents() == {"agent_watcher": "agent_watcher"}
    assert v.get_transcript("agent_watcher") == [by_id["msg_200"], by_id["msg_201"]]
    assert v.extract_dialog(["agent_watcher"]) == [by_id["msg_200"], by_id["msg_201"]]
    assert v.build_causality_index() == {}
    assert ids(v.trace_message_flow("msg_201")) == ["msg_201"]
    assert v.trace_content_references("msg_200") == []


def test_example4_perspective():
    text = viewer(EXAMPLE4).extract_agent_perspective("agent_watcher")
    assert "HEARD" in label_of(line_with(text, "File changed: data.json"))
    assert "SAID" in label_of(line_with(text, "I'll reload the data and notify the main agent."))
    assert text.index("File changed") < text.index("I'll reload")


# --- research_team.jsonl --------------------------------------------------------------------------------

def test_research_team_list_agents():
    assert viewer(RESEARCH).list_agents() == {
        "agent_root": "Coordinator", "agent_policy_hook": "PolicyHook", "agent_researcher": "Researcher",
        "agent_writer": "Writer", "agent_critic": "Critic", "agent_researcher_scout": "Scout",
        "agent_scout_reader": "PaperReader", "agent_writer_inner": "Inner"}


@pytest.mark.parametrize("agent_id, delivery", [("agent_writer", "msg_113"), ("agent_critic", "msg_114")])
def test_research_team_redacted_delivery_is_marked_modified_with_its_original(agent_id, delivery):
    v = viewer(RESEARCH)
    by_id = logged_by_id(RESEARCH)
    assert by_id[delivery]["substance"] == "msg_109"
    text = v.extract_agent_perspective(agent_id)
    first_line = by_id[delivery]["content"].splitlines()[0]
    heard = line_with(text, first_line)
    assert "modified" in label_of(heard)
    assert "Researcher" in label_of(heard)
    assert "api_key=[REDACTED]" in text
    assert "api_key=sk-live-51Hx9fQ2aZ7rL0mN3vB8cT4yW6" in text  # the original is shown too
    assert text.index("api_key=[REDACTED]") < text.index("api_key=sk-live-51Hx9fQ2aZ7rL0mN3vB8cT4yW6")


def test_research_team_formatted_delivery_is_not_marked_modified():
    v = viewer(RESEARCH)
    by_id = logged_by_id(RESEARCH)
    assert by_id["msg_027"]["substance"] == "msg_025"
    text = v.extract_agent_perspective("agent_writer")
    heard = line_with(text, by_id["msg_027"]["content"].splitlines()[0])
    assert "Researcher" in label_of(heard)
    assert "modified" not in heard
    following = text.splitlines()[text.splitlines().index(heard) + 1]
    assert "ORIGINAL" not in following


def test_research_team_list_cause_stays_a_list():
    v = viewer(RESEARCH)
    index = v.build_causality_index()
    assert index["msg_167"] == ["msg_102", "msg_115"]
    assert ids(v.trace_message_flow("msg_167")) == ["msg_102", "msg_167"]


def test_research_team_redacted_references_and_flow():
    v = viewer(RESEARCH)
    assert ids(v.trace_content_references("msg_109")) == ["msg_113", "msg_114"]
    assert ids(v.trace_message_flow("msg_113")) == ["msg_109", "msg_113"]
    assert ids(v.trace_content_references("msg_025")) == oracle_ids_of_references(RESEARCH, "msg_025")
    assert "msg_027" in ids(v.trace_content_references("msg_025"))


def oracle_ids_of_references(name, message_id):
    return ids(oracle_references(logged(name), message_id))


def test_research_team_invalid_json_tool_call_is_shown_raw():
    v = viewer(RESEARCH)
    raw = logged_by_id(RESEARCH)["msg_070"]["tool_calls"][0]["function"]["arguments"]
    with pytest.raises(json.JSONDecodeError):
        json.loads(raw)
    text = v.extract_agent_perspective("agent_researcher_scout")
    assert raw in text
    assert "web_search" in label_of(line_with(text, raw))
    assert v.build_causality_index()["msg_071"] == "msg_070"


def test_research_team_dialog_of_writer_and_critic_contains_the_redacted_original_once():
    v = viewer(RESEARCH)
    dialog = v.extract_dialog(["agent_writer", "agent_critic"])
    assert ids(dialog).count("msg_109") == 1
    assert "msg_113" not in ids(dialog) and "msg_114" not in ids(dialog)
    assert "msg_167" in ids(dialog)


# --- every sample against the spec oracles ----------------------------------------------------------------

ALL = [EXAMPLE1, EXAMPLE2, EXAMPLE3, EXAMPLE4, RESEARCH]


@pytest.mark.parametrize("name", ALL)
def test_dialog_matches_the_spec_for_every_pair_of_agents(name):
    v, events = viewer(name), logged(name)
    agent_ids = list(v.list_agents())
    selections = [list(c) for k in (1, 2) for c in itertools.combinations(agent_ids, k)] + [agent_ids]
    for selection in selections:
        assert v.extract_dialog(selection) == oracle_dialog(events, set(selection)), selection


@pytest.mark.parametrize("name", ALL)
def test_causality_index_matches_the_spec(name):
    assert viewer(name).build_causality_index() == oracle_causality(logged(name))


@pytest.mark.parametrize("name", ALL)
def test_references_match_the_spec_for_every_message(name):
    v, events = viewer(name), logged(name)
    for event in events:
        assert v.trace_content_references(event["message_id"]) == oracle_references(events, event["message_id"])


@pytest.mark.parametrize("name", ALL)
def test_flow_chains_follow_the_causality_index(name):
    v, events = viewer(name), logged(name)
    index, by_id = v.build_causality_index(), {e["message_id"]: e for e in events}
    for event in events:
        chain = v.trace_message_flow(event["message_id"])
        assert chain[-1] == event
        for older, newer in zip(chain, chain[1:]):
            parent = index[newer["message_id"]]
            assert older["message_id"] == (parent[0] if isinstance(parent, list) else parent)
        oldest_parent = index.get(chain[0]["message_id"])
        oldest_parent = oldest_parent[0] if isinstance(oldest_parent, list) else oldest_parent
        assert oldest_parent is None or oldest_parent not in by_id


@pytest.mark.parametrize("name", ALL)
def test_transcripts_partition_the_transcript_entries(name):
    v, events = viewer(name), logged(name)
    for agent_id in v.list_agents():
        assert v.get_transcript(agent_id) == [
            e for e in events if e["event_type"] == "transcript_entry" and e["agent_id"] == agent_id]


# --- constructed files ----------------------------------------------------------------------------------

def test_ids_out_of_lexical_and_numeric_order_keep_file_order(tmp_path):
    path = write_events(tmp_path / "order.jsonl", [
        created("msg_2000", "agent_b", name="B"),
        created("msg_3", "agent_a", name="A"),
        entry("msg_1000", "agent_a", "assistant", "first words"),
        entry("msg_999", "agent_b", "user", "[A]: first words", substance="msg_1000"),
        entry("msg_10", "agent_b", "assistant", "reply"),
        entry("msg_9", "agent_a", "user", "[B]: reply", substance="msg_10"),
        entry("msg_1", "agent_a", "user", "[A]: first words (echo)", substance="msg_1000"),
    ])
    v = SessionViewer(path)
    assert list(v.list_agents()) == ["agent_b", "agent_a"]
    assert ids(v.get_transcript("agent_a")) == ["msg_1000", "msg_9", "msg_1"]
    assert ids(v.extract_dialog(["agent_a", "agent_b"])) == ["msg_1000", "msg_10"]
    assert ids(v.trace_content_references("msg_1000")) == ["msg_999", "msg_1"]
    text = v.extract_agent_perspective("agent_a")
    assert text.index("first words") < text.index("[B]: reply") < text.index("(echo)")


def test_tool_results_pair_within_their_own_agent(tmp_path):
    path = write_events(tmp_path / "pairs.jsonl", [
        entry("m1", "alice", "assistant", tool_calls=[tool_call("c1", "search", q="cats")]),
        entry("m2", "bob", "assistant", tool_calls=[tool_call("c1", "search", q="dogs")]),
        entry("m3", "alice", "tool", "cats found", tool_call_id="c1"),
        entry("m4", "bob", "tool", "dogs found", tool_call_id="c1"),
    ])
    v = SessionViewer(path)
    assert v.build_causality_index() == {"m3": "m1", "m4": "m2"}
    assert ids(v.trace_message_flow("m4")) == ["m2", "m4"]
    alice = v.extract_agent_perspective("alice")
    assert "cats" in alice and "cats found" in alice
    assert "dogs" not in alice


def test_missing_cause_and_late_creation(tmp_path):
    path = write_events(tmp_path / "late.jsonl", [
        created("m1", "agent_lost", cause="m_missing"),
        entry("m2", "agent_early", "user", "hello before creation"),
        entry("m3", "agent_root", "assistant", tool_calls=[tool_call("c1", "task", name="Early")]),
        created("m4", "agent_early", cause="m3", name="Early"),
    ])
    v = SessionViewer(path)
    assert v.list_agents() == {"agent_lost": "agent_lost", "agent_early": "Early", "agent_root": "agent_root"}
    assert v.build_causality_index() == {"m1": "m_missing", "m4": "m3"}
    assert ids(v.trace_message_flow("m1")) == ["m1"]
    assert v.get_transcript("agent_lost") == []
    lost = v.extract_agent_perspective("agent_lost").splitlines()
    assert len(lost) == 1 and "agent_lost" in lost[0]  # a header and nothing it heard, did or said
    assert "hello before creation" in v.extract_agent_perspective("agent_root", include_subagents=True)


def test_cycles_do_not_hang_the_viewer(tmp_path):
    path = write_events(tmp_path / "cycle.jsonl", [
        entry("m1", "a", "user", "x", substance="m2"),
        entry("m2", "b", "user", "y", substance="m1"),
        {"message_id": "p1", "event_type": "piece_of_text", "agent_id": "a", "content": "t", "cause": "p2"},
        {"message_id": "p2", "event_type": "piece_of_text", "agent_id": "a", "content": "u", "cause": ["p1"]},
    ])
    v = run_with_timeout(lambda: SessionViewer(path))
    assert ids(run_with_timeout(lambda: v.trace_message_flow("m1"))) == ["m2", "m1"]
    assert ids(run_with_timeout(lambda: v.trace_message_flow("p2"))) == ["p1", "p2"]
    assert ids(run_with_timeout(lambda: v.trace_content_references("m1"))) == ["m2"]
    assert run_with_timeout(v.build_causality_index) == {"m1": "m2", "m2": "m1", "p1": "p2", "p2": ["p1"]}
    assert "x" in run_with_timeout(lambda: v.extract_agent_perspective("a"))


def test_content_as_list_of_parts_in_perspective_and_dialog(tmp_path):
    path = write_events(tmp_path / "parts.jsonl", [
        entry("m1", "a", "assistant", [{"type": "text", "text": "password: 1234"}]),
        entry("m2", "b", "user", [{"type": "text", "text": "[A]: password: [REDACTED]"}], substance="m1"),
        entry("m3", "b", "user", "[A]: password: 1234", substance="m1"),
    ])
    v = SessionViewer(path)
    assert ids(v.extract_dialog(["a", "b"])) == ["m1"]
    text = v.extract_agent_perspective("b")
    assert "modified" in label_of(line_with(text, "[A]: password: [REDACTED]"))
    assert "modified" not in line_with(text, "[A]: password: 1234")
    assert "SAID" in label_of(line_with(v.extract_agent_perspective("a"), "password: 1234"))
