"""The JSON API's declared shapes (viewer/web/shapes.py) are its contract: docs/api.md documents every route and
every key they declare and no other, every /api/ route has one, and real answers on real session files have
exactly their keys."""

import re
import shutil
import typing
from pathlib import Path

import pytest

from conftest import SAMPLES
from viewer.web import shapes
from viewer.web.shape_check import conforms, nested_shape

API_DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"
ERROR_PATH = "/api/..."  # how docs/api.md writes the answer of any /api/ URL that fails

# `GET /api/...` → `{...}`
_DOCUMENTED = re.compile(r"`(?:GET )?(/api/[^`\s?\[]*)[^`]*`\s*→\s*`(\{[^`]*\})`")
_TOKEN = re.compile(r'"([^"]*)"|([{}\[\]:,])|([^"{}\[\]:,\s][^"{}\[\]:,]*)')


def documented() -> dict[str, dict]:
    """Each documented answer: its path as docs/api.md writes it, and the keys it names (nested)."""
    text = " ".join(API_DOC.read_text(encoding="utf-8").split())
    found = {}
    for path, contract in _DOCUMENTED.findall(text):
        tokens = [(q, p, w) for q, p, w in _TOKEN.findall(contract)]
        keys, rest = _object(tokens, 1)
        assert not rest, (path, contract)
        found[path] = keys
    return found


def _object(tokens, at) -> tuple[dict, list]:
    """Keys named between `{` (before tokens[at]) and its `}`; a key's nested keys when its value shows them."""
    keys: dict = {}
    while at < len(tokens):
        quoted, punct, _word = tokens[at]
        if punct == "}":
            return keys, tokens[at + 1:]
        if quoted and at + 1 < len(tokens) and tokens[at + 1][1] == ":":
            nested, tokens, at = _value(tokens, at + 2)
            keys[quoted] = nested
            continue
        if quoted:
            keys[quoted] = None
        if punct in ("{", "["):  # a value without a key (`{kind: n}`): skip it
            _, tokens, at = _value(tokens, at)
            continue
        at += 1
    raise AssertionError("unclosed {")


def _value(tokens, at):
    """A value at tokens[at]: its nested keys (an object, or the objects a list holds), tokens, next index."""
    punct = tokens[at][1]
    if punct == "{":
        keys, rest = _object(tokens, at + 1)
        return keys, rest, 0
    if punct == "[":
        keys, depth, i = {}, 1, at + 1
        while depth:
            quoted, p, _ = tokens[i]
            if p == "{" and depth == 1 and not keys:
                inner, rest = _object(tokens, i + 1)
                keys.update(inner)
                tokens, i = tokens[:i] + [("", "", "")] + rest, i + 1
                continue
            depth += {"[": 1, "]": -1}.get(p, 0)
            if quoted and depth == 1:
                keys[quoted] = None  # `[event + "speaker", ...]`: keys of each item
            i += 1
        return keys or None, tokens, i
    return None, tokens, at + 1


def check_documented(path: str, keys: dict, shape) -> None:
    hints = typing.get_type_hints(shape)
    for key, nested in keys.items():
        assert key in hints, f"docs/api.md documents {key!r} in {path}, {shape.__name__} does not declare it"
        inner = nested_shape(hints[key])
        if nested and inner is not None:
            check_documented(f"{path} {key}", nested, inner)
        elif nested:
            assert hints[key] in (dict, list) or typing.get_origin(hints[key]) in (dict, list), (path, key)


def check_complete(path: str, keys: dict, shape, nested_in: str | None = None) -> None:
    """Every key `shape` declares is documented, and so on inside each nested shape (there, the keys every
    item has: an optional one, like a listed agent's `url`, may be absent where the items lack it)."""
    hints = typing.get_type_hints(shape)
    wanted = set(hints) if nested_in is None else set(shape.__required_keys__)
    missing = wanted - set(keys)
    assert not missing, f"docs/api.md leaves {sorted(missing)} of {shape.__name__} out of {path}"
    for key, nested in keys.items():
        inner = nested_shape(hints[key])
        if inner is not None:
            assert nested, f"docs/api.md names no keys of {key!r} ({inner.__name__}) in {path}"
            check_complete(f"{path} {key}", nested, inner, key)


def answers() -> dict[str, type]:
    return {**shapes.ANSWERS, ERROR_PATH: shapes.Error}


def test_the_api_doc_documents_only_declared_keys():
    found = documented()
    for path, keys in found.items():
        assert path in answers(), f"docs/api.md documents {path}, shapes.ANSWERS does not declare it"
        check_documented(path, keys, answers()[path])


def test_the_api_doc_documents_every_route_and_every_declared_key():
    found = documented()
    assert set(answers()) - set(found) == set(), "routes docs/api.md does not document"
    for path, shape in answers().items():
        check_complete(path, found[path], shape)


def test_the_api_doc_parser_reads_nested_keys():
    found = documented()
    assert set(found["/api/sessions"]["sessions"]) >= {"id", "name", "path", "events", "agents", "url"}
    assert set(found["/api/sessions/<id>/dialog"]["messages"]) == {"speaker", "recipients", "modified"}
    assert found["/api/sessions/<id>/problems"]["counts"] == {}  # `{kind: n}` names no key
    assert found["/api/search"]["total"] == {"count": None, "exact": None, "at_most": None}


def test_every_api_route_declares_its_answer(app):
    api_paths = {re.sub(r"<(?:path:)?([a-z_]+)>", lambda m: "<id>" if m[1] == "session_id" else f"<{m[1]}>",
                           rule.rule) for rule in app.url_map.iter_rules() if rule.rule.startswith("/api/")}
    assert api_paths == set(shapes.ANSWERS)


@pytest.fixture
def folder(session_dir) -> Path:
    shutil.copytree(SAMPLES / "claude_code", session_dir / "claude_code")
    return session_dir


@pytest.mark.parametrize("name", ["example3_hook_intervention", "research_team", "claude_code"])
def test_real_answers_have_the_declared_shapes(folder, name):
    from viewer.web.app import create_app

    client = create_app(folder, watch=False).test_client()

    def answer(url: str, shape) -> dict:
        response = client.get(url)
        assert response.status_code == 200, url
        data = response.get_json()
        conforms(shape, data, url)
        return data

    listed = answer("/api/sessions", shapes.Sessions)["sessions"]
    sid = next(s["id"] for s in listed if s["id"].startswith(name))
    base = f"/api/sessions/{sid}"
    session = answer(base, shapes.Session)
    agents = [a["agent_id"] for a in session["agents"]]
    assert agents
    for agent_id in agents:
        answer(f"{base}/agents/{agent_id}?perspective=1&limit=5", shapes.Agent)
        answer(f"{base}/lineage/{agent_id}", shapes.Lineage)
        answer(f"{base}/hooks?agent={agent_id}", shapes.Hooks)
    answer(f"{base}/dialog?agents={','.join(agents[:2])}", shapes.Dialog)
    events = answer(f"{base}/events?limit=50", shapes.Events)["events"]
    for event in events[:10]:
        answer(f"{base}/messages/{event['message_id']}", shapes.Message)
        answer(f"{base}/trace/{event['message_id']}", shapes.Trace)
    answer(f"{base}/problems", shapes.Problems)
    hooks = answer(f"{base}/hooks", shapes.Hooks)
    answer(f"{base}/spawn", shapes.Spawn)
    answer(f"{base}/chart", shapes.Chart)
    answer(f"{base}/timeline", shapes.Timeline)
    answer(f"/api/search?q=the&session={sid}", shapes.Search)
    if name == "research_team":
        assert hooks["groups"], "this sample has modified deliveries: its groups are checked too"


def test_errors_have_the_declared_shape(client):
    for url in ("/api/sessions/nope", "/api/sessions/research_team/events?after=z", "/api/search?limit=zz",
                "/api/sessions/research_team/agents/nobody"):
        response = client.get(url)
        assert response.status_code >= 400
        conforms(shapes.Error, response.get_json(), url)
