"""The rules of viewer/model.py, one by one, on hand-built events."""

from __future__ import annotations

import json

from viewer.core import model
from viewer.core.model import LoggedCall


# --- builders ----------------------------------------------------------------------------------

def entry(message_id="msg_001", agent_id="agent_a", role="assistant", content="Hello", **extra) -> dict:
    event = {"message_id": message_id, "event_type": "transcript_entry", "agent_id": agent_id, "role": role}
    if content is not None:
        event["content"] = content
    event.update(extra)
    return event


def call(call_id="c1", name="task", arguments="{}") -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def piece(message_id="msg_010", agent_id="agent_a", content="Broadcast", cause="msg_009") -> dict:
    return {"message_id": message_id, "event_type": "piece_of_text", "agent_id": agent_id,
            "content": content, "cause": cause}


def created(message_id="msg_020", agent_id="agent_b", cause=None, name=None) -> dict:
    event = {"message_id": message_id, "event_type": "agent_created", "agent_id": agent_id}
    if cause is not None:
        event["cause"] = cause
    if name is not None:
        event["name"] = name
    return event


# --- text_of / content_of ----------------------------------------------------------------------

def test_text_of_plain_string_and_none():
    assert model.text_of("Hello") == "Hello"
    assert model.text_of(None) == ""
    assert model.content_of(entry(content=None)) == ""


def test_text_of_list_of_parts_joins_text_parts_with_newlines():
    parts = [{"type": "text", "text": "first"}, "second", {"type": "text", "text": "third"}]
    assert model.text_of(parts) == "first\nsecond\nthird"


def test_text_of_part_without_text_is_rendered_as_json():
    parts = [{"type": "image", "url": "x.png"}]
    assert json.loads(model.text_of(parts)) == {"type": "image", "url": "x.png"}


def test_text_of_numbers_and_objects():
    assert model.text_of(42) == "42"
    assert json.loads(model.text_of({"k": 1})) == {"k": 1}


# --- causes_of -----------------------------------------------------------------------------------

def test_causes_of_string_list_and_absent():
    assert model.causes_of(piece(cause="msg_003")) == ["msg_003"]
    assert model.causes_of(piece(cause=["msg_102", "msg_115"])) == ["msg_102", "msg_115"]
    assert model.causes_of(created(cause=None)) == []


def test_causes_of_drops_non_string_list_members():
    assert model.causes_of(piece(cause=["msg_1", 7, None, "msg_2"])) == ["msg_1", "msg_2"]


# --- substance_key -------------------------------------------------------------------------------

def test_substance_key_is_substance_when_present():
    assert model.substance_key(entry("msg_017", role="user", substance="msg_015")) == "msg_015"


def test_substance_key_is_own_id_without_substance():
    assert model.substance_key(entry("msg_015")) == "msg_015"


def test_substance_key_ignores_empty_or_non_string_substance():
    assert model.substance_key(entry("msg_030", substance="")) == "msg_030"
    assert model.substance_key(entry("msg_031", substance=None)) == "msg_031"
    assert model.substance_key(entry("msg_032", substance=12)) == "msg_032"


# --- utterances and dialog entries ---------------------------------------------------------------

def test_assistant_with_content_and_no_tool_calls_is_utterance():
    assert model.is_utterance(entry(role="assistant", content="Hi, I'm Jack.")) is True


def test_assistant_with_empty_content_is_not_utterance():
    assert model.is_utterance(entry(role="assistant", content="")) is False
    assert model.is_utterance(entry(role="assistant", content=None)) is False
    assert model.is_utterance(entry(role="assistant", content=[])) is False


def test_assistant_with_tool_calls_is_not_utterance_even_with_content():
    event = entry(role="assistant", content="Let me check.", tool_calls=[call()])
    assert model.is_utterance(event) is False


def test_assistant_with_empty_tool_calls_list_is_utterance():
    assert model.is_utterance(entry(role="assistant", content="Done.", tool_calls=[])) is True


def test_user_system_and_tool_roles_are_not_utterances():
    assert model.is_utterance(entry(role="user", content="Hello")) is False
    assert model.is_utterance(entry(role="system", content="You are...")) is False
    assert model.is_utterance(entry(role="tool", content="result", tool_call_id="c1")) is False


def test_piece_of_text_is_not_utterance_nor_transcript_entry():
    assert model.is_utterance(piece()) is False
    assert model.is_transcript_entry(piece()) is False
    assert model.is_transcript_entry(entry()) is True


def test_assistant_content_as_list_of_parts_is_utterance():
    event = entry(role="assistant", content=[{"type": "text", "text": "Hi"}])
    assert model.is_utterance(event) is True


def test_dialog_entries_are_utterances_and_user_messages_only():
    assert model.is_dialog_entry(entry(role="assistant", content="Hi")) is True
    assert model.is_dialog_entry(entry(role="user", content="Hello")) is True
    assert model.is_dialog_entry(entry(role="user", content="[Jack]: Hi", substance="msg_001")) is True
    assert model.is_dialog_entry(entry(role="system", content="You are...")) is False
    assert model.is_dialog_entry(entry(role="tool", content="ok", tool_call_id="c1")) is False
    assert model.is_dialog_entry(entry(role="assistant", content=None, tool_calls=[call()])) is False
    assert model.is_dialog_entry(piece()) is False


# --- tool results ---------------------------------------------------------------------------------

def test_tool_result_by_role_or_by_tool_call_id():
    assert model.is_tool_result(entry(role="tool", content="ok", tool_call_id="c1")) is True
    assert model.is_tool_result(entry(role="tool", content="ok")) is True
    assert model.is_tool_result(entry(role="user", content="ok", tool_call_id="c1")) is True
    assert model.is_tool_result(entry(role="user", content="ok")) is False


# --- deliveries and modification ------------------------------------------------------------------

def test_delivery_is_transcript_entry_with_substance():
    assert model.is_delivery(entry(role="user", substance="msg_001")) is True
    assert model.is_delivery(entry(role="user")) is False
    assert model.is_delivery(entry(role="user", substance="")) is False
    # a piece_of_text is never a delivery, even if it carried a substance by mistake
    assert model.is_delivery({**piece(), "substance": "msg_001"}) is False


def test_formatted_delivery_is_not_modified():
    original = entry("msg_001", content="Hello")
    delivery = entry("msg_002", agent_id="agent_jill", role="user", content="[Jack]: Hello", substance="msg_001")
    assert model.is_modified(delivery, original) is False


def test_identical_delivery_is_not_modified():
    original = piece(content="You meet in a cafe.")
    delivery = entry("msg_013", role="user", content="You meet in a cafe.", substance="msg_010")
    assert model.is_modified(delivery, original) is False


def test_redacted_delivery_is_modified():
    original = entry("msg_001", content="password: 1234")
    delivery = entry("msg_002", role="user", content="password: [REDACTED]", substance="msg_001")
    assert model.is_modified(delivery, original) is True


def test_delivery_with_missing_original_is_neither_modified_nor_formatted():
    delivery = entry("msg_002", role="user", content="[Jack]: Hello", substance="msg_404")
    assert model.is_modified(delivery, None) is None


def test_modified_compares_content_given_as_list_of_parts():
    original = entry("msg_001", content=[{"type": "text", "text": "Hello"}])
    formatted = entry("msg_002", role="user", content="[Jack]: Hello", substance="msg_001")
    assert model.is_modified(formatted, original) is False
    redacted_parts = entry("msg_003", role="user", content=[{"type": "text", "text": "He[REDACTED]"}],
                           substance="msg_001")
    assert model.is_modified(redacted_parts, original) is True


def test_modified_is_case_and_whitespace_exact():
    original = entry("msg_001", content="Hello there")
    assert model.is_modified(entry("msg_002", role="user", content="[Jack]: hello there"), original) is True
    assert model.is_modified(entry("msg_003", role="user", content="[Jack]: Hello  there"), original) is True


# --- perspective kinds ----------------------------------------------------------------------------

def test_perspective_kind_of_each_role():
    assert model.perspective_kind(entry(role="system", content="You are...")) == model.SYSTEM
    assert model.perspective_kind(entry(role="user", content="Hi")) == model.HEARD
    assert model.perspective_kind(entry(role="user", content="[J]: Hi", substance="m")) == model.HEARD
    assert model.perspective_kind(entry(role="assistant", content=None, tool_calls=[call()])) == model.DID
    assert model.perspective_kind(entry(role="assistant", content="thinking", tool_calls=[call()])) == model.DID
    assert model.perspective_kind(entry(role="tool", content="ok", tool_call_id="c1")) == model.RECEIVED
    assert model.perspective_kind(entry(role="assistant", content="Hi")) == model.SAID


def test_perspective_kind_of_other_events_and_roles_is_noted():
    assert model.perspective_kind(piece()) == model.NOTED
    assert model.perspective_kind(created()) == model.NOTED
    assert model.perspective_kind(entry(role="developer", content="x")) == model.NOTED


def test_perspective_kind_constants():
    assert (model.SYSTEM, model.HEARD, model.DID, model.RECEIVED, model.SAID, model.NOTED) == (
        "system", "heard", "did", "received", "said", "noted")


def test_trace_kind_refines_the_perspective_kind():
    assert model.trace_kind(entry(role="system", content="You are...")) == model.TRACE_SYSTEM == "SYSTEM"
    assert model.trace_kind(entry(role="system", content="x", tool_call_id="c1")) == "SYSTEM"
    assert model.trace_kind(entry(role="tool", content="ok", tool_call_id="c1")) == model.TOOL_RESULT
    assert model.trace_kind(entry(role="assistant", content=None, tool_calls=[call()])) == model.TOOL_CALL
    assert model.trace_kind(entry(role="assistant", content="Hi")) == model.UTTERANCE
    assert model.trace_kind(entry(role="assistant", content="Hi", substance="m")) == model.UTTERANCE
    assert model.trace_kind(entry(role="assistant", content="", substance="m")) == model.DELIVERY
    assert model.trace_kind(entry(role="assistant", content="")) == "ASSISTANT"
    assert model.trace_kind(entry(role="user", content="[J]: Hi", substance="m")) == model.DELIVERY
    assert model.trace_kind(entry(role="user", content="Hi")) == model.TRACE_USER
    assert model.trace_kind(entry(role=None, content="Hi")) == "ENTRY"
    assert model.trace_kind(piece()) == model.TRACE_PIECE_OF_TEXT
    assert model.trace_kind(created()) == model.TRACE_AGENT_CREATED
    assert model.trace_kind(entry(role="developer", content="x"), shown=lambda value: f"<{value}>") == "<DEVELOPER>"


def test_entry_kind_is_the_rule_perspective_kind_and_facts_of_ask():
    for role in ("system", "user", "assistant", "tool", "developer", None):
        for result in (False, True):
            for calls in ((), [call()]):
                extra = {"tool_call_id": "c1"} if result else {}
                event = entry(role=role, content="x", tool_calls=calls, **extra) if calls else entry(role=role, content="x", **extra)
                assert model.entry_kind(role, result or role == "tool", calls) == model.perspective_kind(event) == model.facts_of(event)[3]


# --- tool calls -----------------------------------------------------------------------------------

def test_tool_calls_of_ignores_non_dicts_and_non_lists():
    assert model.tool_calls_of(entry(tool_calls="nope")) == []
    assert model.tool_calls_of(entry()) == []
    assert model.tool_calls_of(entry(tool_calls=[call("c1"), "junk", 3])) == [call("c1")]


def test_tool_call_with_valid_json_arguments():
    tc = LoggedCall.from_dict(call("c3", "discuss", '{"prompt": "Hi", "speakers": ["Jack", "Jill"]}'))
    assert tc.id == "c3"
    assert tc.name == "discuss"
    assert tc.arguments_valid is True
    assert tc.arguments == {"prompt": "Hi", "speakers": ["Jack", "Jill"]}
    assert tc.arguments_raw == '{"prompt": "Hi", "speakers": ["Jack", "Jill"]}'
    assert json.loads(tc.pretty_arguments) == tc.arguments
    assert "\n" in tc.pretty_arguments  # indented


def test_tool_call_with_invalid_json_arguments_keeps_raw_text():
    raw = '{"query": "memoize tool calls", "max_results": 8'
    tc = LoggedCall.from_dict(call("c9", "web_search", raw))
    assert tc.arguments_valid is False
    assert tc.arguments is None
    assert tc.arguments_raw == raw
    assert tc.pretty_arguments == raw
    assert tc.summary() == f"web_search({raw})"


def test_tool_call_with_object_arguments():
    tc = LoggedCall.from_dict({"id": "c2", "function": {"name": "read_file", "arguments": {"path": "a.txt"}}})
    assert tc.arguments_valid is True
    assert tc.arguments == {"path": "a.txt"}
    assert json.loads(tc.arguments_raw) == {"path": "a.txt"}
    assert tc.summary() == "read_file(path=a.txt)"


def test_tool_call_with_empty_arguments_is_empty_object():
    tc = LoggedCall.from_dict(call("c1", "noop", "   "))
    assert tc.arguments == {}
    assert tc.arguments_valid is True
    assert tc.summary() == "noop()"


def test_tool_call_without_function_uses_top_level_name_and_arguments():
    tc = LoggedCall.from_dict({"id": "c5", "name": "flat", "arguments": '{"x": 1}'})
    assert tc.name == "flat"
    assert tc.arguments == {"x": 1}


def test_tool_call_without_name_or_id():
    tc = LoggedCall.from_dict({"function": {"arguments": "{}"}})
    assert tc.name == "?"
    assert tc.id is None
    assert LoggedCall.from_dict({"id": 5, "function": {"name": "t", "arguments": "{}"}}).id is None


def test_tool_call_summary_shows_keys_and_values():
    tc = LoggedCall.from_dict(call("c1", "task", '{"name": "Jack", "system_prompt": "You work in HR...", "n": 3}'))
    assert tc.summary() == "task(name=Jack, system_prompt=You work in HR..., n=3)"


def test_tool_call_summary_shows_non_string_values_as_json():
    tc = LoggedCall.from_dict(call("c3", "discuss", '{"speakers": ["Jack", "Jill"], "flag": true}'))
    assert tc.summary() == 'discuss(speakers=["Jack","Jill"], flag=true)'


def test_tool_call_summary_collapses_whitespace():
    tc = LoggedCall.from_dict(call("c1", "write", '{"text": "line one\\n\\n   line two"}'))
    assert tc.summary() == "write(text=line one line two)"


def test_tool_call_summary_is_shortened_to_the_limit():
    tc = LoggedCall.from_dict(call("c1", "write", json.dumps({"text": "x" * 200})))
    summary = tc.summary(limit=20)
    inner = summary[len("write("):-1]
    assert len(inner) == 20
    assert inner.endswith("…")
    assert inner == "text=" + "x" * 14 + "…"
    assert tc.summary(limit=500) == "write(text=" + "x" * 200 + ")"


def test_tool_call_summary_of_non_object_arguments_uses_raw_text():
    tc = LoggedCall.from_dict(call("c1", "sum", "[1, 2, 3]"))
    assert tc.arguments == [1, 2, 3]
    assert tc.summary() == "sum([1, 2, 3])"


def test_tool_calls_of_event_parses_each_call_in_order():
    event = entry(content=None, tool_calls=[call("a", "one", "{}"), call("b", "two", "bad")])
    parsed = model.tool_calls(event)
    assert [(c.id, c.name, c.arguments_valid) for c in parsed] == [("a", "one", True), ("b", "two", False)]


# --- AgentNode ------------------------------------------------------------------------------------------

def test_agent_display_name_falls_back_to_id_and_implicit_flag():
    agent = model.AgentNode(agent_id="agent_watcher", ordinal=0, first_position=0)
    assert agent.display_name == "agent_watcher"
    assert agent.implicit is True
    agent.name, agent.created_position = "Watcher", 3
    assert agent.display_name == "Watcher"
    assert agent.implicit is False


# --- facts_of / checked_facts: ingest's one pass agrees with the rules one by one ------------------

def _shapes() -> list[dict]:
    """Events of every shape the rules tell apart: each field through its values, then a seeded sample of mixes."""
    import random

    absent = object()
    fields = {
        "message_id": ["msg_1", "", 7, None, absent],
        "event_type": ["transcript_entry", "piece_of_text", "agent_created", "other", "", ["x"], absent],
        "agent_id": ["a", "", 3, absent],
        "role": ["user", "assistant", "system", "tool", "developer", None, ["user"], absent],
        "content": ["Hi", "", None, [{"type": "text", "text": "x"}], [""], [], {"k": 1}, 3, absent],
        "tool_calls": [absent, [], [call()], [call(arguments="{bad")], [call(arguments="  ")], ["junk"], "nope",
                       [{"id": "c2", "name": "top", "arguments": {"a": 1}}], [{"function": "x"}], None],
        "tool_call_id": [absent, "c1", 7, None],
        "substance": [absent, "msg_0", "", 5, None],
        "cause": [absent, "msg_0", "", ["msg_0", 3], ["msg_0", "msg_9"], [], 9, None],
        "name": [absent, "Read", 4, None],
        "language_model": [absent, "m", ["m"]],
        "usage": [absent, {"input_tokens": 1}],
        "model": [absent, "m"],
        "timestamp": [absent, 12.5],
    }
    base = {key: values[0] for key, values in fields.items()}

    def build(choice: dict) -> dict:
        return {key: value for key, value in choice.items() if value is not absent}

    shapes = [build(base)]
    for key, values in fields.items():  # each field through its values, for each known type and role
        for value in values[1:]:
            for event_type in fields["event_type"][:3]:
                for role in fields["role"]:
                    shapes.append(build({**base, "event_type": event_type, "role": role, key: value}))
    rng = random.Random(0)
    shapes += [build({key: rng.choice(values) for key, values in fields.items()}) for _ in range(3000)]
    # mixes of well-formed values only: the combinations the one-pass reading tells apart
    good = {**fields, "message_id": ["msg_1"], "event_type": fields["event_type"][:3], "agent_id": ["a"],
            "content": ["Hi", "", None, absent], "tool_calls": fields["tool_calls"][:3] + fields["tool_calls"][4:5]
            + fields["tool_calls"][7:8], "tool_call_id": ["c1", None, absent], "substance": ["msg_0", "", None, absent],
            "cause": ["msg_0", "", ["msg_0", "msg_9"], [], None, absent], "name": ["Read", None, absent],
            "language_model": ["m", absent], "usage": [absent], "timestamp": [absent]}
    shapes += [build({key: rng.choice(values) for key, values in good.items()}) for _ in range(4000)]
    return shapes


def _expected_facts(event: dict) -> tuple:
    substance = event["substance"] if model.is_delivery(event) else None
    return (model.causes_of(event), substance, model.tool_calls_of(event), model.perspective_kind(event),
            model.is_dialog_entry(event), model.is_tool_result(event))


def _as_lists(facts: tuple) -> tuple:
    causes, substance, calls, kind, dialog, result = facts
    return list(causes), substance, list(calls), kind, dialog, result


def test_facts_of_agrees_with_each_rule_on_every_shape():
    for event in _shapes():
        assert _as_lists(model.facts_of(event)) == _expected_facts(event), event


def test_checked_facts_are_the_facts_of_every_event_breaking_no_rule_and_none_otherwise():
    checked = plain = 0
    for event in _shapes():
        ids_valid = all(isinstance(event.get(key), str) and event[key] for key in ("message_id", "event_type", "agent_id"))
        fine = ids_valid and event["event_type"] in model.KNOWN_EVENT_TYPES and not model.shape_problems(event)
        facts = model.checked_facts(event)
        if fine:
            assert facts is not None and _as_lists(facts) == _expected_facts(event), event
            checked += 1
            plain += all(type(v) is str for k, v in event.items() if k != "tool_calls")
        else:
            assert facts is None, event
    assert checked > 100 and plain > 20  # both the strings-only pass and the field-by-field one were tried


def test_shape_problems_one_pass_agrees_with_the_rules_field_by_field():
    reported = 0
    for event in _shapes():
        assert model.shape_problems(event) == model._each_shape_problem(event), event
        reported += bool(model.shape_problems(event))
    assert reported > 100


def test_arguments_valid_is_the_tool_calls_own_verdict():
    for one in [call(), call(arguments="{bad"), call(arguments=""), call(arguments=" "), {"arguments": "[1"},
                {"arguments": {"a": 1}}, {"function": {"name": "x"}, "arguments": "{bad"}, {"function": "f"}]:
        assert model.arguments_valid(one) is LoggedCall.from_dict(one).arguments_valid, one
    assert model.arguments_valid(call(arguments="{bad")) is False
    assert model.arguments_valid({"function": {"name": "x"}, "arguments": "{bad"}) is False
