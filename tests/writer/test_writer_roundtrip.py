"""Round trip: the writer logs the seed's Examples 1-4; the viewer reads back what it reads from the
hand-written samples (tree, dialog, references, flows, perspectives).

The writer allocates its own ids (agent_001, msg_001, ...) where the seed wrote agent_jack or
jumped from msg_016 to msg_030, so each comparison maps the writer's ids onto the sample's,
event by event, and checks the mapping is one-to-one.
"""

from __future__ import annotations

import itertools
import json

import pytest

from aio import run
from conftest import sample
from viewer import SessionViewer
from viewer.reads import dialogs, queries
from viewer.writer.agent import Agent, ScriptedModel
from viewer.writer.session import load_session
from viewer.writer.tools import Discussion, Gate, Toolbox, ToolCall

SONNET = "anthropic/claude-sonnet-4-5-20250929"
call = ScriptedModel.call


def scripted(*replies):
    return ScriptedModel(replies, language_model=SONNET)


def read(path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# --- the seed's examples, written with the writer API ----------------------------------------------

def cafe(path, toolbox):
    """The root both examples start from: it will create Jack and Jill (c1, c2) and start their discussion (c3)."""
    root, session = load_session(path, model=scripted(
        call("task", "c1", name="Jack", system_prompt="You work in HR..."),
        call("task", "c2", name="Jill", system_prompt="You are an aspiring author..."),
        call("discuss", "c3", prompt="You meet in a cafe. Introduce yourselves.", speakers=["Jack", "Jill"]),
    ), tools=toolbox)
    root.harken("Create Jack and Jill for a cafe discussion")
    return root, session


async def example1(path):
    """Example 1 is exactly what the task and discuss tools do."""
    toolbox = Toolbox(models={"Jack": scripted("Hi, I'm Jack. *extends hand*"),
                              "Jill": scripted("*smiles* Hello Jack, I'm Jill.")})
    root, session = cafe(path, toolbox)
    for _ in range(3):  # the excerpt ends when the discussion does, before the root's next reply
        await root.response()
        await root.run_tools()
    session.close()


async def example2(path):
    """Example 2 interleaves Jill's inner monologue with the discussion the root runs.

    The discussion is driven step by step with the discuss tool's own parts (Discussion), because
    in the excerpt Jill creates Inner between Jack's utterance and its delivery to her; and the
    excerpt leaves out the result of her task call, so Inner is created here by hand.
    """
    toolbox = Toolbox(models={
        "Jack": scripted("Hi, I'm Jack. *extends hand*"),
        "Jill": scripted(
            call("task", "c4", name="Inner", system_prompt="You are Jill's inner voice..."),
            call("discuss", "c5", speakers=["Inner"], prompt="Jack just introduced himself. What should I say?"),
            "*smiles* Hello Jack, I'm Jill."),
        "Inner": scripted("Be friendly but not over-eager. A simple greeting with a smile."),
    })
    root, session = cafe(path, toolbox)
    for _ in range(2):
        await root.response()
        await root.run_tools()
    await root.response()  # the discuss call c3
    jack, jill = root.subagents
    ctx = ToolCall(root, "c3", "discuss", {}, root.last_response_id, toolbox)
    discussion = Discussion(ctx, "You meet in a cafe. Introduce yourselves.", [jack, jill])
    said = await jack.turn()
    discussion.report(jack, said)
    task_call = await jill.response()  # c4: task Inner
    inner = Agent(session, system_prompt="You are Jill's inner voice...", name="Inner",
                  model=toolbox.model_for("Inner", jill), tools=toolbox)
    jill.adopt(inner).log_created(cause=task_call.message_id)
    discussion.deliver(jack, said)
    said = await jill.turn()  # c5: discuss with Inner, then her greeting
    discussion.report(jill, said)
    discussion.deliver(jill, said)
    session.close()


async def example3(path):
    """Example 3: a hook agent (a Gate) blocks the root's fourth task call.

    The excerpt starts mid-session: the root's creation is not in it (an implicit root), and the
    ResourceMonitor's task call has neither a system prompt entry nor a result, so the monitor is
    created by hand; the gate's question is the excerpt's own words.
    """
    from viewer.writer.session import Session

    session = Session(path)
    root = Agent(session, model=scripted(
        call("task", "c9", name="ResourceMonitor", system_prompt="Monitor resource usage..."),
        call("task", "c10", name="Searcher4"),
    ))
    await root.response()
    monitor = Agent(session, name="ResourceMonitor", model=scripted("DENY. Maximum subagents (3) already reached."),
                    language_model=SONNET)
    root.adopt(monitor).log_created(cause=root.last_response_id)
    root.tools = Toolbox(gates=[Gate(monitor, describe=lambda ctx: (
        "Agent 'agent_root' is attempting to create subagent 'Searcher4'. Current subagent count: 3. Approve?"))])
    await root.response()
    await root.run_tools()
    session.close()


async def example4(path):
    """Example 4: an external event is a user message; the watcher (an implicit root) answers it."""
    from viewer.writer.session import Session

    session = Session(path)
    watcher = Agent(session, model=scripted("I'll reload the data and notify the main agent."))
    watcher.harken("File changed: data.json")
    await watcher.response()
    session.close()


EXAMPLES = {
    "example1_jack_and_jill": example1,
    "example2_inner_monologue": example2,
    "example3_hook_intervention": example3,
    "example4_external_trigger": example4,
}


# --- comparing ---------------------------------------------------------------------------------------

def id_map(written: list[dict], expected: list[dict]) -> dict[str, str]:
    """The writer's ids -> the sample's, event by event; one-to-one or the test fails."""
    assert len(written) == len(expected)
    mapping: dict[str, str] = {}
    for mine, theirs in zip(written, expected):
        for key in ("message_id", "agent_id"):
            assert mapping.setdefault(mine[key], theirs[key]) == theirs[key], (mine, theirs)
    assert len(set(mapping.values())) == len(mapping)
    return mapping


def renamed(value, mapping: dict[str, str]):
    """Every id in a JSON-able value (events, query results) replaced by its sample twin."""
    if isinstance(value, dict):
        return {mapping.get(k, k): renamed(v, mapping) for k, v in value.items()}
    if isinstance(value, list):
        return [renamed(v, mapping) for v in value]
    if isinstance(value, str):
        return mapping.get(value, value)
    return value


@pytest.fixture(params=sorted(EXAMPLES))
def round_trip(request, tmp_path):
    """(sample name, the writer's SessionViewer, the sample's SessionViewer, writer id -> sample id)."""
    name = request.param
    path = tmp_path / f"{name}.jsonl"
    run(EXAMPLES[name](path))
    written, expected = read(path), read(sample(name))
    return name, SessionViewer(path), SessionViewer(sample(name)), id_map(written, expected)


def test_the_writer_logs_the_example_event_for_event(round_trip, tmp_path):
    name, _, _, mapping = round_trip
    written, expected = read(tmp_path / f"{name}.jsonl"), read(sample(name))
    assert renamed(written, mapping) == expected
    assert all(not ("substance" in e and "cause" in e) for e in written)


def test_the_viewer_reads_back_the_same_tree(round_trip):
    _, mine, theirs, mapping = round_trip
    assert renamed(queries.tree(mine.index), mapping) == queries.tree(theirs.index)
    assert renamed(mine.list_agents(), mapping) == theirs.list_agents()
    assert mine.index.problems == theirs.index.problems == []


def test_the_viewer_reads_back_the_same_dialogs(round_trip):
    _, mine, theirs, mapping = round_trip
    back = {v: k for k, v in mapping.items()}
    agents = list(theirs.list_agents())
    for size in (1, 2, 3):
        for chosen in itertools.combinations(agents, size):
            assert renamed(dialogs.dialog(mine.index, [back[a] for a in chosen]), mapping) == \
                dialogs.dialog(theirs.index, list(chosen)), chosen


def test_the_viewer_reads_back_the_same_references_flows_and_causality(round_trip):
    _, mine, theirs, mapping = round_trip
    for mine_id, their_id in mapping.items():
        if not mine_id.startswith("msg_"):
            continue
        assert renamed(mine.trace_content_references(mine_id), mapping) == theirs.trace_content_references(their_id)
        assert renamed(mine.trace_message_flow(mine_id), mapping) == theirs.trace_message_flow(their_id)
    assert renamed(mine.build_causality_index(), mapping) == theirs.build_causality_index()


def test_the_viewer_reads_back_the_same_perspectives(round_trip):
    _, mine, theirs, mapping = round_trip
    for mine_id, their_id in mapping.items():
        if mine_id.startswith("agent_") and mine_id in mine.list_agents():
            assert renamed(queries.perspective(mine.index, mine_id), mapping) == \
                queries.perspective(theirs.index, their_id)
