"""The OTLP/JSON export of a Gemini CLI and of a Copilot CLI session: each sub-agent's invoke_agent span sits under
the execute_tool span of the call that started it, two levels deep, as a trace store draws it."""

import json

import pytest
from events import copy_samples, scanned

from viewer.export import text


@pytest.mark.parametrize("sample, session, nesting", [
    ("gemini", "shop:chats:session-2026-04-20T10-00-5f1c2a3b", {
        "Codebase Investigator Agent": "execute_tool codebase_investigator",
        "File Reader Agent": "execute_tool file_reader"}),
    ("copilot", "b7e3c1d2-4a5f-4b6c-9d8e-0f1a2b3c4d5e:events", {
        "Explore Agent": "execute_tool task", "Rubber Duck": "execute_tool task",
        "General Purpose Agent": "execute_tool task"}),
])
def test_sub_agents_are_spans_under_their_calls(tmp_path, sample, session, nesting):
    s = scanned(copy_samples(sample, tmp_path / sample)).get(session)
    spans = [span for line in text.export(s, "otlp").splitlines() for resource in json.loads(line)["resourceSpans"]
             for scope in resource["scopeSpans"] for span in scope["spans"]]
    by_id = {span["spanId"]: span for span in spans}
    agents = {span["name"].removeprefix("invoke_agent "): by_id.get(span.get("parentSpanId"), {}).get("name")
              for span in spans if span["name"].startswith("invoke_agent ")}
    assert agents == {"main agent": None, **nesting}
