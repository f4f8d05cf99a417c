"""The writer API of seed 000: LoggedString, Session (ids, logging, load), load_session, Agent."""

from __future__ import annotations

import asyncio
import json

import pytest

from aio import in_thread, run
from conftest import REPO, sample, write_events
from events import created, say, user
from viewer import SessionViewer
from viewer.reads import dialogs, queries
from viewer.writer.agent import Agent, ScriptedModel
from viewer.writer.log import LoggedString
from viewer.writer.session import Session, load_session
from viewer.writer.tools import Toolbox

call = ScriptedModel.call


def lines(path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def assert_well_formed(events: list[dict]) -> None:
    """Every id unique; no event carries both substance and cause."""
    ids = [e["message_id"] for e in events]
    assert len(ids) == len(set(ids)), ids
    for event in events:
        assert not ("substance" in event and "cause" in event), event


# --- LoggedString ------------------------------------------------------------------------------------

def test_logged_string_is_a_str_that_carries_its_message_id():
    text = LoggedString("Hello", "msg_007")
    assert text == "Hello" and isinstance(text, str) and text.message_id == "msg_007"
    assert text.upper() == "HELLO" and not hasattr(text.upper(), "message_id")  # derived text is new text
    assert LoggedString("plain").message_id is None
    assert json.dumps({"content": text}) == '{"content": "Hello"}'


# --- Session -----------------------------------------------------------------------------------------

def test_session_allocates_ids_and_appends_one_flushed_line_per_event(tmp_path):
    path = tmp_path / "s.jsonl"
    session = Session(path)
    root, jack = session.allocate_agent_id(), session.allocate_agent_id()
    assert (root, jack) == ("agent_001", "agent_002")
    assert session.log_agent_created(root, language_model="m") == "msg_001"
    call_id = session.log_transcript_entry(root, {"role": "assistant", "tool_calls": [
        {"id": "c1", "function": {"name": "task", "arguments": "{}"}}]})
    assert session.log_agent_created(jack, cause=call_id, name="Jack") == "msg_003"
    piece = session.log_piece_of_text(root, "Introduce yourselves.", cause=call_id)
    assert session.log_transcript_entry(jack, {"role": "user", "content": "Introduce yourselves."},
                                        substance=piece) == "msg_005"
    assert session.log_piece_of_text(root, "compiled", cause=[call_id, piece]) == "msg_006"
    # Read while the session is still open: every line is already on disk.
    assert lines(path) == [
        created("msg_001", "agent_001", language_model="m"),
        {"message_id": "msg_002", "event_type": "transcript_entry", "agent_id": "agent_001", "role": "assistant",
         "tool_calls": [{"id": "c1", "function": {"name": "task", "arguments": "{}"}}]},
        created("msg_003", "agent_002", cause="msg_002", name="Jack"),
        {"message_id": "msg_004", "event_type": "piece_of_text", "agent_id": "agent_001",
         "content": "Introduce yourselves.", "cause": "msg_002"},
        user("msg_005", "agent_002", "Introduce yourselves.", substance="msg_004"),
        {"message_id": "msg_006", "event_type": "piece_of_text", "agent_id": "agent_001", "content": "compiled",
         "cause": ["msg_002", "msg_004"]},
    ]
    assert session.registry["agent_002"].parent_id == "agent_001"
    assert session.list_agents() == {"agent_001": None, "agent_002": "Jack"}
    session.close()


def test_an_event_never_carries_both_substance_and_cause(tmp_path):
    session = Session(tmp_path / "s.jsonl")
    agent = session.allocate_agent_id()
    with pytest.raises(ValueError):
        session.log_transcript_entry(agent, {"role": "user", "content": "x", "cause": "msg_001"}, substance="msg_002")
    with pytest.raises(ValueError):
        session.log_transcript_entry(agent, {"role": "user", "content": "x", "message_id": "msg_999"})
    with pytest.raises(ValueError):
        session.log_piece_of_text(agent, "text without a cause", cause=None)
    assert not (tmp_path / "s.jsonl").exists()  # nothing half-written


def test_load_restores_both_counters_and_the_registry_in_one_pass(tmp_path):
    path = write_events(tmp_path / "s.jsonl", [
        created("msg_001", "agent_001"),
        {"message_id": "msg_002", "event_type": "transcript_entry", "agent_id": "agent_001", "role": "assistant",
         "tool_calls": [{"id": "c1", "function": {"name": "task", "arguments": "{\"name\": \"Jack\"}"}}]},
        created("msg_003", "agent_007", cause="msg_002", name="Jack", language_model="m"),
        say("msg_041", "agent_007", "Bye."),
        user("msg_010", "agent_ext", "an agent without agent_created, ids out of order"),
    ])
    with open(path, "a", encoding="utf-8") as f:
        f.write("not json\n\n")
    session = Session.load(path)
    assert (session.message_counter, session.agent_counter) == (41, 7)
    assert session.list_agents() == {"agent_001": None, "agent_007": "Jack", "agent_ext": None}
    jack = session.registry["agent_007"]
    assert (jack.parent_id, jack.cause, jack.language_model, jack.created) == ("agent_001", "msg_002", "m", True)
    assert session.registry["agent_ext"].created is False
    assert session.allocate_agent_id() == "agent_008"
    assert session.log_transcript_entry("agent_001", {"role": "user", "content": "more"}) == "msg_042"
    session.close()


def test_load_of_a_seed_example_keeps_hand_written_ids_and_numbers_on_after_them(tmp_path):
    session = Session.load(sample("example2_inner_monologue"))
    assert session.message_counter == 41 and session.agent_counter == 0
    assert session.list_agents() == {"agent_root": None, "agent_jack": "Jack", "agent_jill": "Jill",
                                     "agent_jill_inner": "Inner"}
    assert session.registry["agent_jill_inner"].parent_id == "agent_jill"
    assert session.registry["agent_root"].parent_id is None


# --- the scenario of "Why Session is necessary" -------------------------------------------------------

def create_and_discuss(call_ids, name, system_prompt, prompt, closing):
    """A root's script: create one agent, discuss with it, then say `closing`."""
    return ScriptedModel([call("task", call_ids[0], name=name, system_prompt=system_prompt),
                          call("discuss", call_ids[1], prompt=prompt, speakers=[name]), closing])


def test_why_session_is_necessary_jack_terminates_the_session_resumes_and_jill_gets_a_new_id(tmp_path):
    path = tmp_path / "session.jsonl"
    toolbox = Toolbox(models={"Jack": ScriptedModel(["Hi, I'm Jack. Done here."]),
                              "Jill": ScriptedModel(["Hi, I'm Jill."])})

    async def first_run():
        root, session = load_session(path, model=create_and_discuss(
            ("c1", "c2"), "Jack", "You work in HR.", "Say hi and finish.", "Jack is done."), tools=toolbox)
        root.harken("Create Jack, let him say hi, then let him go.")
        await root.turn()
        (jack,) = root.subagents
        assert jack.agent_id == "agent_002"
        jack.terminate()  # removed from the agent tree and from memory
        assert root.subagents == [] and "agent_002" not in session.live
        session.close()  # the process exits
        return session.message_counter

    last_message = run(first_run())
    before = lines(path)

    async def second_run():
        root, session = load_session(path, model=create_and_discuss(
            ("c3", "c4"), "Jill", "You are an aspiring author.", "Introduce yourself.", "Jill is here."), tools=toolbox)
        assert session.message_counter == last_message and session.agent_counter == 2
        assert "agent_002" in session.registry  # the terminated Jack is still known
        root.harken("Now create Jill.")
        await root.turn()
        jill = root.find("Jill")
        session.close()
        return jill

    jill = run(second_run())
    assert jill.agent_id == "agent_003"  # not Jack's agent_002
    events = lines(path)
    assert events[:len(before)] == before  # resuming only appends
    new = events[len(before):]
    assert new[0]["message_id"] == f"msg_{last_message + 1:03d}"  # message ids continue
    assert_well_formed(events)
    created_ids = [e["agent_id"] for e in events if e["event_type"] == "agent_created"]
    assert created_ids == ["agent_001", "agent_002", "agent_003"]
    # The viewer sees two distinct sub-agents, each with only its own words.
    viewer = SessionViewer(path)
    assert viewer.list_agents() == {"agent_001": "agent_001", "agent_002": "Jack", "agent_003": "Jill"}
    assert [e["content"] for e in viewer.get_transcript("agent_003")] == [
        "You are an aspiring author.", "Introduce yourself.", "Hi, I'm Jill."]
    assert viewer.index.agents["agent_003"].parent_id == "agent_001"
    assert viewer.index.problems == []


# --- load_session and Agent ------------------------------------------------------------------------------

def test_load_session_on_a_new_file_gives_a_fresh_root(tmp_path):
    root, session = load_session(tmp_path / "new" / "s.jsonl", model=ScriptedModel([], language_model="m"),
                                 name="Main")
    assert root.agent_id == "agent_001" and root.subagents == [] and root.transcript == []
    assert lines(tmp_path / "new" / "s.jsonl") == [created("msg_001", "agent_001", name="Main", language_model="m")]
    session.close()


def test_load_session_rebuilds_the_whole_tree_with_every_transcript():
    root, session = load_session(sample("example2_inner_monologue"))
    assert root.agent_id == "agent_root"
    assert [a.agent_id for a in root.subagents] == ["agent_jack", "agent_jill"]
    jill = root.subagents[1]
    assert [a.name for a in jill.subagents] == ["Inner"] and jill.subagents[0].parent is jill
    assert jill.transcript[0] == {"role": "system", "content": "You are an aspiring author..."}
    assert jill.transcript[-1] == {"role": "assistant", "content": "*smiles* Hello Jack, I'm Jill."}
    assert len(jill.transcript) == 7 and len(root.transcript) == 8
    # Substance is log metadata, not part of the message an LLM is given.
    assert all("substance" not in m and "message_id" not in m for m in jill.transcript)
    assert session.revive("agent_jill") is jill


def test_revive_rebuilds_an_evicted_agent_from_the_log(tmp_path):
    path = write_events(tmp_path / "s.jsonl", [created("msg_001", "agent_001", name="Solo"),
                                                user("msg_002", "agent_001", "hello"), say("msg_003", "agent_001", "hi")])
    session = Session.load(path)
    solo = session.revive("agent_001")
    assert (solo.name, solo.transcript) == ("Solo", [{"role": "user", "content": "hello"},
                                                     {"role": "assistant", "content": "hi"}])
    session.evict("agent_001")
    assert session.revive("agent_001") is not solo
    with pytest.raises(KeyError):
        session.revive("agent_404")


def test_harken_response_and_inform_log_substance_as_the_seed_says(tmp_path):
    path = tmp_path / "s.jsonl"
    session = Session(path)
    jack = Agent(session, system_prompt="You are Jack.", name="Jack", model=ScriptedModel(["Hello"]))
    jill = Agent(session, name="Jill")
    jack.log_created()
    jill.log_created()
    assert jack.harken("Greet Jill.") == "msg_004"  # the system prompt was logged right after agent_created
    said = run(jack.response())
    assert said == "Hello" and isinstance(said, LoggedString) and said.message_id == "msg_005"
    assert jack.inform(jill, said) == "msg_006"
    jill.harken(LoggedString("[Narrator]: It rains.", "msg_005"))
    assert lines(path)[1:] == [
        {"message_id": "msg_002", "event_type": "transcript_entry", "agent_id": "agent_001", "role": "system",
         "content": "You are Jack."},
        created("msg_003", "agent_002", name="Jill"),
        user("msg_004", "agent_001", "Greet Jill."),
        say("msg_005", "agent_001", "Hello"),
        user("msg_006", "agent_002", "[Jack]: Hello", substance="msg_005"),
        user("msg_007", "agent_002", "[Narrator]: It rains.", substance="msg_005"),
    ]
    assert jill.transcript == [{"role": "user", "content": "[Jack]: Hello"},
                               {"role": "user", "content": "[Narrator]: It rains."}]
    session.close()


def test_a_system_prompt_is_not_lost_when_the_creator_logs_agent_created_itself(tmp_path):
    session = Session(tmp_path / "s.jsonl")
    agent = Agent(session, system_prompt="Be brief.", model=ScriptedModel(["ok"]))
    session.log_agent_created(agent.agent_id, name="Manual")
    agent.harken("go")
    assert [e.get("role") for e in lines(tmp_path / "s.jsonl")] == [None, "system", "user"]
    session.close()


def test_the_model_is_pluggable_any_sync_or_async_callable_of_the_messages(tmp_path):
    seen = []

    def echo(messages):
        seen.append(list(messages))
        return {"role": "assistant", "content": f"{len(messages)} messages", "tool_calls": None}

    async def slow_echo(messages):
        await asyncio.sleep(0)
        return {"content": "async too"}

    session = Session(tmp_path / "s.jsonl")
    agent = Agent(session, model=echo)
    agent.harken("one")
    assert run(agent.response()) == "1 messages"
    agent.model = slow_echo
    assert run(agent.turn()) == "async too"
    agent.model = lambda messages: "a plain string is an utterance"
    assert run(agent.response()) == "a plain string is an utterance"
    assert seen == [[{"role": "user", "content": "one"}]]
    assert lines(tmp_path / "s.jsonl")[1] == say("msg_002", "agent_001", "1 messages")  # None fields dropped
    with pytest.raises(RuntimeError):
        run(Agent(session).response())
    session.close()


def test_a_scripted_model_that_runs_out_says_so(tmp_path):
    session = Session(tmp_path / "s.jsonl")
    agent = Agent(session, model=ScriptedModel(["only one"]))
    run(agent.response())
    with pytest.raises(RuntimeError, match="ran out"):
        run(agent.response())
    session.close()


def test_a_new_session_refuses_an_existing_log_whose_counters_it_would_not_know(tmp_path):
    path = write_events(tmp_path / "s.jsonl", [created("msg_001", "agent_001")])
    with pytest.raises(FileExistsError, match="Session.load"):
        Session(path)
    assert Session.load(path).allocate_agent_id() == "agent_002"
    (tmp_path / "empty.jsonl").write_text("")
    assert Session(tmp_path / "empty.jsonl").allocate_agent_id() == "agent_001"


def test_the_documented_example_writes_what_the_doc_says(tmp_path, monkeypatch):
    doc = (REPO / "docs" / "writing.md").read_text(encoding="utf-8")
    code = doc.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    in_thread(exec, compile(code, "docs/writing.md", "exec"), {})
    viewer = SessionViewer(tmp_path / "cafe.jsonl")
    assert viewer.list_agents() == {"agent_001": "agent_001", "agent_002": "Jack", "agent_003": "Jill"}
    dialog = dialogs.dialog(viewer.index, ["agent_002", "agent_003"])["items"]
    assert [(i["speaker_name"], i["modified"]) for i in dialog] == [("agent_001", False), ("Jack", True),
                                                                   ("Jill", False)]
    assert [d["content"] for d in dialog[1]["deliveries"]] == ["[Jack]: Hi, I'm Jack. The code is [REDACTED]"]
