"""No secret the masking knows is ever printed, whatever field holds it and whatever surrounds it.

A property-based test: every secret shape goes into every field of an event (content, agent name,
agent id, message id, tool name, tool arguments, role, model, file name), surrounded by random text,
control characters and escapes; a real session file is written and read; then no page, live
fragment, JSON answer, search snippet, problem excerpt or export holds the secret, nor any
16-character piece of it. The shapes rotate over the fields (`rotation`), so every shape meets every
field; hypothesis draws the surroundings (derandomized: CI sees the same examples every run).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from conftest import serve, write_events
from events import calls, created, entry, result, say, tool_call, user
from viewer.export import text as exports
from viewer.web.app import create_app
from viewer.index.session_ids import session_id_for
from viewer.core.redact import masking

PEM_BODY = "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfnygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB"
# (how the secret is written, the part of it that must never be shown)
SHAPES = [
    ("sk-proj-Ab3dE5gH7jK9mN1pQ3sT5vW7", "sk-proj-Ab3dE5gH7jK9mN1pQ3sT5vW7"),
    ("sk-ant-api03-Zx8Cv6Bn4Mq2Wr0Ty9Ui7Op5Lk3Jh1", "sk-ant-api03-Zx8Cv6Bn4Mq2Wr0Ty9Ui7Op5Lk3Jh1"),
    ("sk-live-51Hx9fQ2aZ7rL0mN3vB8cT4yW6", "sk-live-51Hx9fQ2aZ7rL0mN3vB8cT4yW6"),
    ("AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("ghp_aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1wX2", "ghp_aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1wX2"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
     "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"),
    ("xoxb-123456789012-abcdefABCDEF", "xoxb-123456789012-abcdefABCDEF"),
    ("AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
    ("glpat-xY9zA8bC7dE6fG5hI4jK", "glpat-xY9zA8bC7dE6fG5hI4jK"),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
     "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"),
    ("x-api-key: k3yV4lue0123456789abcdef", "k3yV4lue0123456789abcdef"),
    ("password:\n  Hunter2CorrectHorse99", "Hunter2CorrectHorse99"),
    ("Cookie: session=c00kieS3ss10nValue77xyz", "c00kieS3ss10nValue77xyz"),
    (f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----", PEM_BODY),
    (f"-----BEGIN PRIVATE KEY-----\n{PEM_BODY}\n{PEM_BODY[::-1]}", PEM_BODY),  # no END line
]
FIELDS = ["content", "agent_name", "agent_id", "message_id", "tool_name", "tool_arguments", "role", "model",
          "file_name"]
PIECE = 16

ESCAPES = ["\x1b[32m", "\x1b[0m", "\x1b[1;31m", "\f", "\x01", "\x7f", "\n", "\t", "\r", "\\", '"', "'", "\\n",
           "\\u001b", " ", "<", "&", "%", "~", "é", "İ", "\u202e"]


def surroundings(forbidden: str = "\x00") -> st.SearchStrategy[str]:
    """Random text, control characters and escapes (what a log may put right before or after a key)."""
    char = st.characters(blacklist_categories=("Cs",), blacklist_characters=forbidden)
    return st.lists(st.one_of(char, st.sampled_from([e for e in ESCAPES if not set(e) & set(forbidden)])),
                    max_size=5).map("".join)


def pieces(needle: str) -> set[str]:
    return {needle[i : i + PIECE] for i in range(max(1, len(needle) - PIECE + 1))}


def session_events(v: dict[str, str], bad_line_padding: int) -> tuple[list[dict], str]:
    """Events with every field set from `v`, and one broken line (a problem with an excerpt)."""
    agent, message = v["agent_id"], v["message_id"]
    events = [
        created("m-created", agent, name=v["agent_name"], language_model=v["model"]),
        created("h-created", "helper", name="Helper"),
        say(message, agent, f"zebra {v['content']} zebra"),
        calls("m-call", agent, tool_call("c1", v["tool_name"], query=v["tool_arguments"])),
        result("m-result", agent, "c1", "zebra result", name=v["tool_name"]),
        entry("m-role", agent, v["role"], "zebra text"),
        entry("m-odd-role", agent, {"as": v["role"]}, "zebra odd role"),  # a role that is not a string
        user("h-heard", "helper", f"zebra {v['content']}", substance=message),
    ]
    broken = '{"message_id": "broken", "content": "' + "y" * bad_line_padding + json.dumps(v["content"])[1:-1]
    return events, broken


def urls(session_id: str, agent_id: str, message_id: str) -> list[str]:
    s, a, m = (urllib.parse.quote(x, safe="") for x in (session_id, agent_id, message_id))
    qa = urllib.parse.quote_plus(agent_id)
    pages = ["/", f"/s/{s}", f"/s/{s}/agents/{a}", f"/s/{s}/agents/{a}?kind=all", f"/s/{s}/messages/{m}",
             f"/s/{s}/messages/m-call", f"/s/{s}/messages/m-odd-role", f"/s/{s}/messages/h-heard",
             f"/s/{s}/problems", f"/s/{s}/dialog?agents={qa},helper", f"/s/{s}/chart", f"/s/{s}/spawn",
             f"/s/{s}/hooks", f"/s/{s}/trace/{m}", f"/s/{s}/agents/helper", "/search?q=zebra",
             f"/s/{s}?at=3", "/s/no-such-session"]
    fragments = ["/poll/sessions", f"/s/{s}/poll/tree?after=0-0", f"/s/{s}/poll/agent?agent={qa}&after=0-0",
                 f"/s/{s}/poll/dialog?agents={qa},helper&after=0-0", "/search/poll?q=zebra&after="]
    api = ["/api/sessions", f"/api/sessions/{s}", f"/api/sessions/{s}/agents/{a}", f"/api/sessions/{s}/messages/{m}",
           f"/api/sessions/{s}/messages/m-odd-role", f"/api/sessions/{s}/events", f"/api/sessions/{s}/problems",
           f"/api/sessions/{s}/dialog?agents={qa},helper", f"/api/sessions/{s}/chart", f"/api/sessions/{s}/spawn",
           f"/api/sessions/{s}/hooks", f"/api/sessions/{s}/trace/{m}", f"/api/sessions/{s}/lineage/{a}",
           "/api/search?q=zebra", "/api/search?q=result", f"/api/sessions/{s}/messages/no-such-message"]
    export = [f"/s/{s}/export/markdown?agent={qa}", f"/s/{s}/export/markdown?agents={qa},helper",
              f"/s/{s}/export/trace", f"/s/{s}/export/dot", f"/s/{s}/export/json"]
    return pages + fragments + api + export


def assert_nothing_leaks(outputs: dict[str, str], needles: dict[str, str]) -> None:
    text = "\x00".join(outputs.values())
    for field, needle in needles.items():
        for piece in pieces(needle):
            if piece in text:
                where = [name for name, body in outputs.items() if piece in body]
                raise AssertionError(f"{field}: {piece!r} of {needle!r} is shown in {where[:5]}")


def values_for(rotation: int, prefixes: list[str], suffixes: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    values, needles = {}, {}
    for j, field in enumerate(FIELDS):
        secret, needle = SHAPES[(rotation + j) % len(SHAPES)]
        values[field] = prefixes[j] + secret + suffixes[j]
        needles[field] = needle
    # ?agents=a,b lists agents with commas: an agent id holding one cannot be asked for in a dialog;
    # a '/' at an id's start makes its URL hold '//', which the router redirects
    values["agent_id"] = values["agent_id"].replace(",", ";").replace("/", "|")
    values["message_id"] = values["message_id"].replace("/", "|")
    return values, needles


def file_name_for(value: str) -> str:
    return "f" + value.replace("/", "|")[:200] + ".jsonl"  # a file name holds no '/'


@pytest.mark.parametrize("rotation", range(len(SHAPES)))
@settings(max_examples=3, deadline=None, derandomize=True, database=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(prefixes=st.lists(surroundings(), min_size=len(FIELDS), max_size=len(FIELDS)),
       suffixes=st.lists(surroundings(), min_size=len(FIELDS), max_size=len(FIELDS)),
       padding=st.integers(min_value=0, max_value=130))
def test_no_output_shows_a_secret_whatever_field_holds_it(tmp_path_factory, rotation, prefixes, suffixes, padding):
    values, needles = values_for(rotation, prefixes, suffixes)
    folder = tmp_path_factory.mktemp("secrets")
    name = file_name_for(values["file_name"])
    events, broken = session_events(values, padding)
    path = write_events(folder / name, events)
    with open(path, "a", encoding="utf-8") as f:
        f.write(broken + "\n")
    app = create_app(folder, watch=False)
    client = app.test_client()
    session_id = session_id_for(name)
    outputs = {}
    for url in urls(session_id, values["agent_id"], values["message_id"]):
        response = client.get(url)
        assert response.status_code in (200, 204, 404), (url, response.status_code)
        outputs[url] = response.get_data(as_text=True)
    assert "zebra" in outputs["/api/search?q=zebra"]  # the search found the texts, so snippets were checked
    session = app.extensions["agentview"].library.get(session_id)
    assert session is not None and session.count == len(events)
    assert any(p.kind == "invalid_json" for p in session.problems)  # the excerpt is there to be checked
    with masking():
        for fmt in ("trace", "dot", "json"):
            outputs[f"export {fmt}"] = exports.export(session, fmt)
        outputs["export markdown"] = exports.export(session, "markdown", agent=values["agent_id"])
        outputs["export dialog"] = exports.export(session, "markdown", agents=[values["agent_id"], "helper"])
    assert_nothing_leaks(outputs, needles)


def test_the_property_test_sees_a_secret_when_masking_is_off(tmp_path):
    """The check itself finds what is shown: with masking off every field's secret is found."""
    values, needles = values_for(0, [""] * len(FIELDS), [""] * len(FIELDS))
    name = file_name_for(values["file_name"])
    events, _ = session_events(values, 0)
    write_events(tmp_path / name, events)
    client = create_app(tmp_path, watch=False, redact=False).test_client()
    outputs = {url: client.get(url).get_data(as_text=True) for url in urls(session_id_for(name), values["agent_id"],
                                                                          values["message_id"])}
    for field, needle in needles.items():
        with pytest.raises(AssertionError):
            assert_nothing_leaks(outputs, {field: needle})


def test_a_real_server_masks_every_field(tmp_path):
    """The same, once, through `agentview serve` over HTTP."""
    values, needles = values_for(5, ["\x1b[32m"] * len(FIELDS), ["\x1b[0m"] * len(FIELDS))
    name = file_name_for(values["file_name"])
    events, broken = session_events(values, 100)
    path = write_events(tmp_path / name, events)
    with open(path, "a", encoding="utf-8") as f:
        f.write(broken + "\n")
    session_id = session_id_for(name)
    with serve(tmp_path) as server:
        server.wait_for_session(urllib.parse.quote(session_id, safe=""), len(events))
        outputs = {}
        for url in urls(session_id, values["agent_id"], values["message_id"]):
            try:
                with urllib.request.urlopen(server.url + url, timeout=10) as response:
                    outputs[url] = response.read().decode("utf-8")
            except urllib.error.HTTPError as error:
                assert error.code == 404, (url, error.code)
                outputs[url] = error.read().decode("utf-8")
    assert "zebra" in outputs["/api/search?q=zebra"]
    assert_nothing_leaks(outputs, needles)
