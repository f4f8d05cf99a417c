"""The tools on the writer API (task, discuss, whisper), delivery hooks and gates, read back by the viewer."""

from __future__ import annotations

import json

from aio import run
from viewer import SessionViewer
from viewer.reads import dialogs, queries
from viewer.writer.agent import ScriptedModel
from viewer.writer.session import load_session
from viewer.writer.tools import STANDARD_TOOLS, Gate, Toolbox, redactor

call = ScriptedModel.call


def run_root(path, root_script, models=None, hooks=(), gates=(), tools=None, prompt="Go."):
    """A root agent with a scripted model and a toolbox, run through one turn; returns (root, events)."""

    async def go():
        toolbox = Toolbox(tools=tools, models={k: ScriptedModel(v) for k, v in (models or {}).items()},
                          hooks=hooks, gates=gates)
        root, session = load_session(path, model=ScriptedModel(root_script), tools=toolbox, name="Boss")
        root.harken(prompt)
        await root.turn()
        session.close()
        return root

    root = run(go())
    with open(path, encoding="utf-8") as f:
        events = [json.loads(line) for line in f]
    for event in events:
        assert not ("substance" in event and "cause" in event), event
    return root, events


def by_id(events):
    return {e["message_id"]: e for e in events}


def test_task_creates_a_sub_agent_caused_by_the_call(tmp_path):
    root, events = run_root(tmp_path / "s.jsonl", [
        call("task", "c1", name="Scout", system_prompt="Find things."),
        call("task", "c2", name="Mute"),
        "Two helpers ready.",
    ], models={"Scout": []})
    scout, mute = root.subagents
    assert (scout.name, scout.parent, scout.model is not root.model, mute.model is root.model) == \
        ("Scout", root, True, True)  # a model from the toolbox, else the parent's
    created = [e for e in events if e["event_type"] == "agent_created"]
    assert [(e["agent_id"], e.get("cause"), e.get("name")) for e in created] == [
        ("agent_001", None, "Boss"), ("agent_002", "msg_003", "Scout"), ("agent_003", "msg_007", "Mute")]
    ids = by_id(events)
    assert ids["msg_005"] == {"message_id": "msg_005", "event_type": "transcript_entry", "agent_id": "agent_002",
                              "role": "system", "content": "Find things."}
    assert ids["msg_006"]["content"] == "Created subagent: Scout" and ids["msg_006"]["tool_call_id"] == "c1"
    viewer = SessionViewer(tmp_path / "s.jsonl")
    tree = queries.tree(viewer.index)
    assert [c["name"] for c in tree[0]["children"]] == ["Scout", "Mute"]
    assert tree[0]["children"][0]["created_by"]["call_id"] == "c1"


def test_discuss_broadcasts_a_piece_of_text_then_delivers_each_utterance_to_the_others(tmp_path):
    root, events = run_root(tmp_path / "s.jsonl", [
        call("task", "c1", name="Ann"), call("task", "c2", name="Bob"), call("task", "c3", name="Cy"),
        call("discuss", "c4", prompt="Pick a name for the cat.", speakers=["Ann", "Bob", "Cy"], rounds=2),
        "Done.",
    ], models={"Ann": ["Tom.", "Still Tom."], "Bob": ["Felix.", "Fine, Tom."], "Cy": ["Whiskers.", "Tom it is."]})
    path = tmp_path / "s.jsonl"
    viewer = SessionViewer(path)
    ids = by_id(events)
    (piece,) = [e for e in events if e["event_type"] == "piece_of_text"]
    assert piece["agent_id"] == "agent_001" and ids[piece["cause"]]["tool_calls"][0]["id"] == "c4"
    assert [e["agent_id"] for e in viewer.trace_content_references(piece["message_id"])] == \
        ["agent_002", "agent_003", "agent_004"]
    ann_first = next(e for e in events if e.get("content") == "Tom." and e["agent_id"] == "agent_002")
    heard = viewer.trace_content_references(ann_first["message_id"])
    assert [(e["agent_id"], e["content"]) for e in heard] == [("agent_003", "[Ann]: Tom."), ("agent_004", "[Ann]: Tom.")]
    results = [e["content"] for e in events if e.get("tool_call_id") == "c4"]
    assert results == ["Tom.", "Felix.", "Whiskers.", "Still Tom.", "Fine, Tom.", "Tom it is."]
    dialog = viewer.extract_dialog(["agent_002", "agent_003", "agent_004"])
    assert [e["content"] for e in dialog] == ["Pick a name for the cat.", "Tom.", "Felix.", "Whiskers.",
                                              "Still Tom.", "Fine, Tom.", "Tom it is."]
    assert viewer.trace_message_flow(heard[0]["message_id"])[0]["message_id"] == ann_first["message_id"]


def test_whisper_reaches_exactly_one_agent(tmp_path):
    root, events = run_root(tmp_path / "s.jsonl", [
        call("task", "c1", name="Ann"), call("task", "c2", name="Bob"),
        call("whisper", "c3", to="Bob", message="Ann's birthday is Friday."),
        "Whispered.",
    ])
    viewer = SessionViewer(tmp_path / "s.jsonl")
    (piece,) = [e for e in events if e["event_type"] == "piece_of_text"]
    assert piece["content"] == "Ann's birthday is Friday." and piece["cause"] == "msg_009"
    (heard,) = viewer.trace_content_references(piece["message_id"])
    assert (heard["agent_id"], heard["content"]) == ("agent_003", "[Boss]: Ann's birthday is Friday.")
    assert all("birthday" not in e.get("content", "") for e in viewer.get_transcript("agent_002"))
    assert by_id(events)["msg_012"]["content"] == "Whispered to Bob."


def test_a_hook_rewrites_a_delivery_and_keeps_its_substance(tmp_path):
    secret = "sk-live-abc123XYZ"
    root, events = run_root(tmp_path / "s.jsonl", [
        call("task", "c1", name="Ann"), call("task", "c2", name="Bob"),
        call("discuss", "c3", prompt="Share the login.", speakers=["Ann", "Bob"]),
        call("whisper", "c4", to="Bob", message=f"Psst, the key is {secret}"),
        "ok",
    ], models={"Ann": [f"The key is {secret}, don't tell."], "Bob": ["I heard nothing secret."]},
        hooks=[redactor(r"sk-live-\w+")])
    ann_said = next(e for e in events if e["agent_id"] == "agent_002" and e.get("role") == "assistant")
    assert secret in ann_said["content"]  # the original is logged as said
    viewer = SessionViewer(tmp_path / "s.jsonl")
    (bob_heard,) = viewer.trace_content_references(ann_said["message_id"])
    assert bob_heard["content"] == "[Ann]: The key is [REDACTED], don't tell."
    assert bob_heard["substance"] == ann_said["message_id"]
    (item,) = [i for i in dialogs.dialog(viewer.index, ["agent_002", "agent_003"])["items"]
               if i["message_id"] == ann_said["message_id"]]
    assert item["modified"] is True and item["deliveries"][0]["agent_id"] == "agent_003"
    # Whatever leaves the speaker went through the hook: deliveries, results, whispers.
    leaks = [e["message_id"] for e in events if secret in e.get("content", "") and e is not ann_said]
    whisper_call = next(e for e in events if e.get("tool_calls") and e["tool_calls"][0]["id"] == "c4")
    piece = next(e for e in events if e["event_type"] == "piece_of_text" and e["cause"] == whisper_call["message_id"])
    assert leaks == [piece["message_id"]]  # the caller's own text, before delivery
    assert viewer.trace_content_references(piece["message_id"])[0]["content"] == "[Boss]: Psst, the key is [REDACTED]"


def test_a_gate_agent_blocks_or_lets_a_tool_call_through(tmp_path):
    async def go():
        root, session = load_session(tmp_path / "s.jsonl", model=ScriptedModel([
            call("task", "c1", name="Monitor", system_prompt="Approve or DENY."),
            call("task", "c2", name="One"), call("task", "c3", name="Two"), "Settled.",
        ]))
        root.tools = Toolbox(models={"Monitor": ScriptedModel(["APPROVE", "DENY: one helper is enough."]),
                                     "One": ScriptedModel([]), "Two": ScriptedModel([])})
        await root.response()
        await root.run_tools()
        root.tools.gates.append(Gate(root.find("Monitor")))
        await root.turn()
        session.close()
        return root

    root = run(go())
    assert [a.name for a in root.subagents] == ["Monitor", "One"]
    viewer = SessionViewer(tmp_path / "s.jsonl")
    monitor = viewer.get_transcript("agent_002")
    assert [e["content"] for e in monitor if e["role"] == "user"] == [
        "Agent 'agent_001' is attempting to create subagent 'One'. Current subagent count: 1. Approve?",
        "Agent 'agent_001' is attempting to create subagent 'Two'. Current subagent count: 2. Approve?"]
    results = [e["content"] for e in viewer.get_transcript("agent_001") if e["role"] == "tool"]
    assert results == ["Created subagent: Monitor", "Created subagent: One",
                       "Error: Action blocked by hook 'Monitor': one helper is enough."]


def test_bad_calls_become_error_results_not_crashes(tmp_path):
    async def shout(ctx):
        return ctx.arguments["text"].upper()

    bad_arguments = {"tool_calls": [{"id": "c5", "function": {"name": "shout", "arguments": "{not json"}}]}
    root, events = run_root(tmp_path / "s.jsonl", [
        call("fly", "c1"), call("discuss", "c2", prompt="hi", speakers=["Nobody"]), call("shout", "c3"),
        call("shout", "c4", text="hey"), bad_arguments, "Recovered.",
    ], tools={**STANDARD_TOOLS, "shout": shout})
    results = {e["tool_call_id"]: e["content"] for e in events if e.get("role") == "tool"}
    assert results == {"c1": "Error: no tool named 'fly'", "c2": "Error: no agent named 'Nobody'",
                       "c3": "Error: KeyError: 'text'", "c4": "HEY", "c5": "Error: the arguments are not a JSON object"}
    assert events[-1]["content"] == "Recovered."
    assert [e for e in events if e["event_type"] == "piece_of_text"] == []  # nothing broadcast to no one
