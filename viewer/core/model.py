"""The rules of seed 000: what an event is, what it represents, and how entries relate.

Events are the dicts exactly as logged. Every rule that decides what a piece of an
event means lives here, so the index, the queries, the pages and the JSON API agree.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from . import jsonio

AGENT_CREATED = "agent_created"
TRANSCRIPT_ENTRY = "transcript_entry"
PIECE_OF_TEXT = "piece_of_text"
KNOWN_EVENT_TYPES = (AGENT_CREATED, TRANSCRIPT_ENTRY, PIECE_OF_TEXT)
# Events a format reader adds to tell the index of a change (never written to a log):
RESPONSE_PART = "response_part"  # a later line of a response already shown: the message grew
SPAWN_LINK = "spawn_link"  # a sub-agent's parent found only after it started (by the result naming it)

Event = dict[str, Any]


def text_of(value: Any) -> str:
    """The readable text of a content value (a string, or a list of content parts, lists in it read in order)."""
    if not isinstance(value, list):
        return _scalar_text(value)
    parts: list[str] = []
    pending = [iter(value)]  # the lists being read, innermost last (no recursion: any depth reads)
    while pending:
        for part in pending[-1]:
            if isinstance(part, list) and part:
                pending.append(iter(part))
                break
            parts.append(_part_text(part))
        else:
            pending.pop()
    return "\n".join(parts)


def _part_text(part: Any) -> str:
    """One part of a content list: a text part's text, an empty list nothing, else as a value alone."""
    if isinstance(part, dict) and isinstance(part.get("text"), str):
        return part["text"]
    return "" if part == [] else _scalar_text(part)


def _scalar_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return str(value) if isinstance(value, (int, float)) else jsonio.text(value)


def content_of(event: Event) -> str:
    return text_of(event.get("content"))


def tool_calls_of(event: Event) -> list[dict]:
    calls = event.get("tool_calls")
    if not isinstance(calls, list):
        return []
    return [c for c in calls if isinstance(c, dict)]


def causes_of(event: Event) -> list[str]:
    """The message ids an event's `cause` names (a string or a list of them)."""
    cause = event.get("cause")
    if isinstance(cause, str):
        return [cause]
    if isinstance(cause, list):
        return [c for c in cause if isinstance(c, str)]
    return []


def _type_name(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


_TYPED = frozenset(("name", "language_model", "substance", "tool_call_id", "cause", "content", "tool_calls"))


def _nothing_to_report(event: Event) -> bool:
    """One pass over an event's fields: True when no field the seed types can be wrong (the common case).

    Strings and nulls are allowed in every typed field but `tool_calls`; so is a list of strings as `cause`
    and a list of objects with JSON arguments as `tool_calls`. Anything else is looked at field by field.
    """
    for key, value in event.items():
        if type(value) is str:
            if key == "tool_calls":
                return False
        elif value is not None and key in _TYPED:
            if key == "tool_calls" and type(value) is list:
                for call in value:
                    if type(call) is not dict or not arguments_valid(call):
                        return False
            elif key == "cause" and type(value) is list:
                for cause in value:
                    if type(cause) is not str:
                        return False
            elif key != "content" or event.get("event_type") in (TRANSCRIPT_ENTRY, PIECE_OF_TEXT):
                return False  # (an agent creation's content is not typed)
    return True


def shape_problems(event: Event) -> list[tuple[str, str]]:
    """(kind, detail) for each field of a known event whose type the seed does not allow.

    The event is still kept and shown as leniently as it can be; these only report it.
    """
    return [] if _nothing_to_report(event) else _each_shape_problem(event)


def _each_shape_problem(event: Event) -> list[tuple[str, str]]:
    """shape_problems found rule by rule, field by field."""
    found = []

    def expect(key: str, allowed: tuple[type, ...], wanted: str) -> None:
        if key in event and event[key] is not None and not isinstance(event[key], allowed):
            found.append(("wrong_type", f"{key} is {_type_name(event[key])}, not {wanted}"))

    expect("name", (str,), "a string")
    expect("language_model", (str,), "a string")
    expect("substance", (str,), "a message id")
    expect("tool_call_id", (str,), "a string")
    cause = event.get("cause")
    if cause is not None and not (isinstance(cause, str) or (isinstance(cause, list) and all(isinstance(c, str) for c in cause))):
        found.append(("wrong_type", f"cause is {_type_name(cause)}, not a message id or a list of them"))
    if event.get("event_type") in (TRANSCRIPT_ENTRY, PIECE_OF_TEXT):
        expect("content", (str,), "a string")
    calls = event.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            found.append(("wrong_type", f"tool_calls is {_type_name(calls)}, not a list (ignored)"))
        else:
            for i, call in enumerate(calls):
                if not isinstance(call, dict):
                    found.append(("wrong_type", f"tool_calls[{i}] is {_type_name(call)}, not an object (ignored)"))
                    continue
                if not arguments_valid(call):
                    found.append(("arguments_not_json", f"tool_calls[{i}] arguments are not valid JSON (shown raw)"))
    return found


def substance_key(event: Event) -> str:
    """What a transcript entry represents: its `substance` if present, else itself."""
    substance = event.get("substance")
    if isinstance(substance, str) and substance:
        return substance
    return event["message_id"]


def is_transcript_entry(event: Event) -> bool:
    return event.get("event_type") == TRANSCRIPT_ENTRY


def is_utterance(event: Event) -> bool:
    """An assistant transcript entry with content and no tool calls: the agent speaking."""
    return (
        is_transcript_entry(event)
        and event.get("role") == "assistant"
        and bool(content_of(event))
        and not tool_calls_of(event)
    )


def is_tool_result(event: Event) -> bool:
    return is_transcript_entry(event) and (event.get("role") == "tool" or "tool_call_id" in event)


def is_dialog_entry(event: Event) -> bool:
    """Entries that take part in a dialog: utterances and what was heard (role user)."""
    return is_utterance(event) or (is_transcript_entry(event) and event.get("role") == "user")


def is_delivery(event: Event) -> bool:
    return is_transcript_entry(event) and isinstance(event.get("substance"), str) and bool(event["substance"])


def is_modified(delivery: Event, original: Event | None) -> bool | None:
    """A delivery is modified when it does not contain the original's content verbatim.

    None when there is no original to compare with. `[Jack]: Hello` for `Hello` is only
    formatted; `password: [REDACTED]` for `password: 1234` is modified (a hook intervened).
    """
    if original is None:
        return None
    quoted = quoted_original(delivery)
    if quoted is not None:
        return quoted not in content_of(delivery)
    return content_of(original) not in content_of(delivery)


def quoted_original(delivery: Event) -> str | None:
    """The part of its original a delivery carries, when a format normalizer recorded it (the original
    is part of a bigger message), else None: what is_modified compares and the dialog shows."""
    quoted = delivery.get("original_text")
    if isinstance(quoted, str) and delivery.get("event_type") == TRANSCRIPT_ENTRY and "raw" in delivery:
        return quoted
    return None


# --- the kind of an event: the one classification every view and export names events by ----------

# What an entry is, from its agent's point of view (the perspective page and text, filters, search's role:).
SYSTEM, HEARD, DID, RECEIVED, SAID, NOTED = "system", "heard", "did", "received", "said", "noted"


def entry_kind(role: Any, result: bool, calls: Any) -> str:
    """The perspective kind of a transcript entry with this role, whether it is a tool result, and its calls.

    The rule itself: perspective_kind and facts_of ask it; checked_facts (ingest's hot path) spells the
    same branches out inline, and the tests compare the two on every shape."""
    if role == "system":
        return SYSTEM
    if result:
        return RECEIVED
    if role == "assistant":
        return DID if calls else SAID
    if role == "user":
        return HEARD
    return NOTED


def perspective_kind(event: Event) -> str:
    if not is_transcript_entry(event):
        return NOTED
    return entry_kind(event.get("role"), is_tool_result(event), tool_calls_of(event))


# What an event is in the trace, the chart and the DOT graph: its perspective kind, told more precisely
# where a picture draws it differently (said with words: an utterance; heard or said as a delivery of
# another's message). Other entries are named by their role, other events by their type (as logged).
TRACE_SYSTEM, TOOL_CALL, TOOL_RESULT, UTTERANCE, DELIVERY = "SYSTEM", "TOOL_CALL", "TOOL_RESULT", "UTTERANCE", "DELIVERY"
_TRACE_KINDS = {SYSTEM: TRACE_SYSTEM, DID: TOOL_CALL, RECEIVED: TOOL_RESULT}
# the trace kinds of the other events the pictures draw, and of a user's entry that is not a delivery
TRACE_AGENT_CREATED, TRACE_PIECE_OF_TEXT, TRACE_USER = AGENT_CREATED.upper(), PIECE_OF_TEXT.upper(), "USER"


def trace_kind(event: Event, shown=str) -> str:
    """An event's kind in the trace and the pictures. A name taken from the log (an event type, a role)
    goes through `shown` first: exports mask it, as every piece of log text they print."""
    if not is_transcript_entry(event):
        return shown(event.get("event_type")).upper()
    kind = perspective_kind(event)
    if kind in _TRACE_KINDS:
        return _TRACE_KINDS[kind]
    if kind == SAID and content_of(event):
        return UTTERANCE
    if is_delivery(event):
        return DELIVERY
    return shown(event.get("role") or "entry").upper()


_NO_LINKS: tuple = ()


def facts_of(event: Event) -> tuple:
    """What the index files an event under, each fact found once:
    (causes, substance, calls, perspective kind, is a dialog entry, is a tool result).

    The same answers as causes_of, is_delivery (substance is its `substance`, else None),
    tool_calls_of, perspective_kind, is_dialog_entry and is_tool_result, in one pass for ingest.
    Causes and calls may be tuples: only read them.
    """
    get = event.get
    cause = get("cause")
    if cause is None:
        causes = _NO_LINKS
    elif type(cause) is str:
        causes = (cause,)
    else:
        causes = causes_of(event)
    calls = _NO_LINKS if get("tool_calls") is None else tool_calls_of(event)
    if get("event_type") != TRANSCRIPT_ENTRY:
        return causes, None, calls, NOTED, False, False
    substance = get("substance")
    if not (isinstance(substance, str) and substance):
        substance = None
    role = get("role")
    result = role == "tool" or "tool_call_id" in event
    kind = entry_kind(role, result, calls)
    if role == "user":
        dialog = True
    elif role == "assistant" and not calls:
        content = get("content")
        dialog = bool(content) if type(content) is str else bool(text_of(content))
    else:
        dialog = False
    return causes, substance, calls, kind, dialog, result


_KNOWN = frozenset(KNOWN_EVENT_TYPES)
_STRINGS = frozenset((str, type(None)))
_STRINGS_AND_LIST = frozenset((str, type(None), list))


def only_text(event: Event) -> bool:
    """Whether every field is a string or null: no number and no container (most events; ingest checks
    no further what such an event holds)."""
    return _STRINGS.issuperset(map(type, event.values()))


def checked_facts(event: Event, text_only: bool | None = None) -> tuple | None:
    """facts_of a known event that breaks no rule of the seed, for ingest; None for any other event
    (an id missing, an unknown type, a field of a type shape_problems reports), read rule by rule.

    Most events hold nothing but strings (and a list of tool calls): every typed field is then as allowed,
    and their facts are found here directly (the same as facts_of's, the kind entry_kind's branches spelled
    out for speed: tests compare them on every shape).
    `text_only`: only_text(event), when the caller knows it already.
    """
    get = event.get
    if (only_text(event) if text_only is None else text_only) and "tool_calls" not in event:
        calls = _NO_LINKS
    else:
        calls = get("tool_calls")
        types = list(map(type, event.values()))
        if not (type(calls) is list and types.count(list) == 1 and _STRINGS_AND_LIST.issuperset(types)
                and _calls_valid(calls)):  # more than strings and one good list of calls: field by field
            return facts_of(event) if _ids_valid(event) and _nothing_to_report(event) else None
    if not (get("message_id") and get("agent_id")):
        return None
    event_type = get("event_type")
    if event_type not in _KNOWN:
        return None
    cause = get("cause")
    causes = _NO_LINKS if cause is None else (cause,)
    if event_type != TRANSCRIPT_ENTRY:
        return causes, None, calls, NOTED, False, False
    substance = get("substance") or None
    role = get("role")
    if "tool_call_id" in event:  # a tool result
        return (causes, substance, calls, SYSTEM if role == "system" else RECEIVED,
                role == "user" or (role == "assistant" and not calls and bool(get("content"))), True)
    if role == "user":
        return causes, substance, calls, HEARD, True, False
    if role == "assistant":
        if calls:
            return causes, substance, calls, DID, False, False
        return causes, substance, calls, SAID, bool(get("content")), False
    if role == "tool":
        return causes, substance, calls, RECEIVED, False, True
    return causes, substance, calls, SYSTEM if role == "system" else NOTED, False, False


def _calls_valid(calls: list) -> bool:
    for call in calls:
        if type(call) is not dict or not arguments_valid(call):
            return False
    return True


def _ids_valid(event: Event) -> bool:
    """Its message_id, event_type and agent_id are non-empty strings, and the type one the seed knows."""
    message_id, event_type, agent_id = event.get("message_id"), event.get("event_type"), event.get("agent_id")
    return (isinstance(message_id, str) and bool(message_id) and isinstance(agent_id, str) and bool(agent_id)
            and isinstance(event_type, str) and event_type in _KNOWN)


def call_name(call: dict) -> str:
    """A logged tool call's name: `function.name` (OpenAI shape), else `name`, else "?"."""
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    return str(function.get("name") or call.get("name") or "?")


def tool_key(name: str) -> str:
    """The name a tool is filtered, faceted and searched by: its logged name lower-cased (`Read` and `read` are one tool)."""
    return name.lower()


def call_tool_key(call: dict) -> str:
    return tool_key(call_name(call))


def raw_arguments(call: dict) -> Any:
    """A logged tool call's arguments as written: `function.arguments` (OpenAI shape), else `arguments`, else ""."""
    function = call.get("function")
    if isinstance(function, dict) and "arguments" in function:
        return function["arguments"]
    return call.get("arguments", "")


def arguments_valid(call: dict) -> bool:
    """Whether a call's arguments are JSON: a JSON string, an empty one, or an object logged as is."""
    raw = raw_arguments(call)
    if not isinstance(raw, str) or not raw.strip():
        return True
    try:
        orjson.loads(raw)
    except orjson.JSONDecodeError:
        return False
    return True


@dataclass
class LoggedCall:
    id: str | None
    name: str
    arguments_raw: str
    arguments: Any  # parsed JSON, or None when the arguments are not valid JSON
    arguments_valid: bool

    @classmethod
    def from_dict(cls, call: dict) -> "LoggedCall":
        raw = raw_arguments(call)
        if isinstance(raw, str):
            try:
                parsed, valid = jsonio.loads(raw) if raw.strip() else {}, True
            except orjson.JSONDecodeError:
                parsed, valid = None, False
        else:  # some writers log arguments as an object rather than a JSON string
            parsed, valid = raw, True
            raw = jsonio.text(raw)
        call_id = call.get("id")
        return cls(call_id if isinstance(call_id, str) else None, call_name(call), raw, parsed, valid)

    @property
    def pretty_arguments(self) -> str:
        if not self.arguments_valid:
            return self.arguments_raw
        return jsonio.text(self.arguments, indent=True)

    def summary(self, limit: int = 80) -> str:
        """`name(key=value, ...)` shortened to about `limit` characters."""
        if isinstance(self.arguments, dict):
            parts = []
            for key, value in self.arguments.items():
                text = value if isinstance(value, str) else jsonio.text(value)
                parts.append(f"{key}={text}")
            inner = ", ".join(parts)
        else:
            inner = self.arguments_raw
        inner = " ".join(inner.split())
        if len(inner) > limit:
            inner = inner[: limit - 1] + "…"
        return f"{self.name}({inner})"


def tool_calls(event: Event) -> list[LoggedCall]:
    return [LoggedCall.from_dict(c) for c in tool_calls_of(event)]


@dataclass
class AgentNode:
    """One agent of a session as the index knows it so far: a node of the agent tree and its entries' positions
    (the writer's `viewer.writer.agent.Agent` is the live agent that logs them)."""

    agent_id: str
    ordinal: int  # 0, 1, 2 ... in order of first appearance; a DOM-safe handle
    first_position: int
    name: str | None = None
    language_model: str | None = None
    created_position: int | None = None  # position of its agent_created event
    cause: str | None = None  # the message id its creation names (first, if a list)
    parent_id: str | None = None
    entries: array = field(default_factory=lambda: array("q"))  # positions of its transcript entries (compact)
    by_kind: dict[str, array] = field(default_factory=dict)  # perspective kind -> positions of those entries
    dialog_entries: array = field(default_factory=lambda: array("q"))  # positions of its dialog entries
    usage_entries: array = field(default_factory=lambda: array("q"))  # its entries naming a model or usage
    children: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    # Beside each dialog entry, the position of the message it represents (its substance's, else its own), or -1
    # while that is not logged: the dialog finds its items without reading each entry back (dialogs._DialogOrder).
    dialog_originals: array = field(default_factory=lambda: array("q"))

    def copy(self) -> AgentNode:
        """An independent copy (for an index copied to be extended): its lists copied, not shared."""
        return replace(self, entries=array("q", self.entries), by_kind={k: array("q", v) for k, v in self.by_kind.items()},
                       dialog_entries=array("q", self.dialog_entries),
                       dialog_originals=array("q", self.dialog_originals), usage_entries=array("q", self.usage_entries),
                       children=list(self.children), flags=list(self.flags))

    @property
    def display_name(self) -> str:
        return self.name or self.agent_id

    @property
    def implicit(self) -> bool:
        """Known only from transcript entries: no agent_created event (seed Example 4)."""
        return self.created_position is None
