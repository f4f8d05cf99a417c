"""OTLP/JSON files read back (viewer/formats/otlp_json.py): agentview's own export round trips for every
sample; spans of other GenAI-instrumented programs become agents and entries; a malformed file is problems
on its page, never a 500; a `.json` file of requests a line is tailed as it grows."""

from __future__ import annotations

import json

import pytest

from claude_lines import Transcript
from conftest import SAMPLES, wait_for, write_events
from events import created, say
from viewer.reads import dialogs, queries
from viewer import formats
from viewer.export import otlp
from viewer.files import tailer
from viewer.files.file_source import FileSource
from viewer.formats import ai_agent
from viewer.index import usage
from viewer.library.library import Library
from viewer.library.reading import read_so_far, reader_for
from viewer.core.redact import masking
from viewer.reads.session_viewer import load_index


def sample_sessions():
    library = Library(SAMPLES)
    library.scan()
    return library.listing()


SESSIONS = sample_sessions()


def without_lines(value):
    """A view's data without where its events sit in a file (an export is another file), nor the record a
    format normalizer read (the export carries the event it made, not the source format's record)."""
    if isinstance(value, dict):
        return {k: without_lines(v) for k, v in value.items() if k not in ("line", "file", "source", "raw")}
    if isinstance(value, list):
        return [without_lines(v) for v in value]
    return value


def without_status(value):
    """`value` (agent summaries, nested) without each agent's status."""
    if isinstance(value, list):
        return [without_status(v) for v in value]
    if isinstance(value, dict):
        return {k: without_status(v) for k, v in value.items() if k != "status"}
    return value


@pytest.mark.parametrize("s", SESSIONS, ids=[s.relpath for s in SESSIONS])
def test_export_then_read_back_gives_the_same_tree_dialogs_and_perspectives(s, tmp_path):
    path = tmp_path / "exported.jsonl"
    with masking(False):
        path.write_text(otlp.otlp_json(s), encoding="utf-8")
    back = load_index(path)
    assert back.format is formats.OTLP_JSON
    assert not back.problems
    assert back.count == s.count
    # A sub-agent's status is its format's reading (Format.spawns_answered_at_end): read back as OTLP, none
    assert all(a["status"] is None for a in queries.agents(back))
    assert without_status(queries.tree(back)) == without_status(queries.tree(s))
    assert without_status(queries.agents(back)) == without_status(queries.agents(s))
    everyone = list(s.agents)
    assert without_lines(dialogs.dialog(back, everyone)) == without_lines(dialogs.dialog(s, everyone))
    for agent_id in everyone:
        assert without_lines(queries.perspective(back, agent_id)) == without_lines(queries.perspective(s, agent_id))
        assert queries.perspective_text(back, agent_id, True) == queries.perspective_text(s, agent_id, True)


def test_a_pushed_twice_export_reads_as_one_session(tmp_path):
    s = load_index(SAMPLES / "research_team.jsonl")
    text = otlp.otlp_json(s)
    path = tmp_path / "twice.jsonl"
    path.write_text(text + text, encoding="utf-8")
    assert load_index(path).count == s.count


def attribute(key, value):
    kind = "intValue" if isinstance(value, int) else "stringValue"
    return {"key": key, "value": {kind: str(value) if kind == "intValue" else value}}


def span(span_id, name, parent=None, start=0, **attributes):
    out = {"traceId": "ab" * 16, "spanId": span_id, "name": name, "kind": 1,
           "startTimeUnixNano": str(1_700_000_000_000_000_000 + start * 1_000_000),
           "endTimeUnixNano": str(1_700_000_000_000_000_000 + start * 1_000_000 + 1),
           "attributes": [attribute(k.replace("__", "."), v) for k, v in attributes.items()]}
    if parent:
        out["parentSpanId"] = parent
    return out


def request(*spans):
    return {"resourceSpans": [{"resource": {"attributes": [attribute("service.name", "travel-agent")]},
                               "scopeSpans": [{"scope": {"name": "openai-agents"}, "spans": list(spans)}]}]}


def test_spans_of_another_genai_program_become_agents_and_entries(tmp_path):
    """The GenAI conventions' documented shape (as the OpenAI Agents SDK and OpenInference instrumentations
    emit it): an agent span, its model calls and tools, a sub-agent started by a tool call."""
    output = json.dumps([{"role": "assistant", "parts": [
        {"type": "text", "content": "Let me ask the booking agent."},
        {"type": "tool_call", "id": "call_1", "name": "transfer_to_booking", "arguments": {"city": "Oslo"}}]}])
    inputs = json.dumps([{"role": "system", "parts": [{"type": "text", "content": "You plan trips."}]},
                         {"role": "user", "parts": [{"type": "text", "content": "A weekend in Oslo?"}]}])
    lines = [request(
        span("0000000000000001", "invoke_agent Planner", start=0, gen_ai__operation__name="invoke_agent",
             gen_ai__agent__name="Planner", gen_ai__agent__id="planner", gen_ai__request__model="gpt-4.1"),
        span("0000000000000002", "chat gpt-4.1", "0000000000000001", start=1, gen_ai__operation__name="chat",
             gen_ai__request__model="gpt-4.1", gen_ai__input__messages=inputs, gen_ai__output__messages=output,
             gen_ai__usage__input_tokens=120, gen_ai__usage__output_tokens=30)),
        # a later request: a child may come in a batch of its own, and before its parent
        request(
        span("0000000000000004", "invoke_agent Booking", "0000000000000003", start=3,
             openinference__span__kind="AGENT", gen_ai__agent__name="Booking"),
        span("0000000000000005", "chat gpt-4.1-mini", "0000000000000004", start=4, openinference__span__kind="LLM",
             output__value="Booked: Hotel Fjord, two nights.", llm__model_name="gpt-4.1-mini"),
        span("0000000000000003", "execute_tool transfer_to_booking", "0000000000000001", start=2,
             gen_ai__operation__name="execute_tool", gen_ai__tool__name="transfer_to_booking",
             gen_ai__tool__call__id="call_1", gen_ai__tool__call__arguments='{"city": "Oslo"}',
             gen_ai__tool__call__result="Booked: Hotel Fjord, two nights."))]
    path = tmp_path / "travel.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    s = load_index(path)
    assert s.format is formats.OTLP_JSON and not s.problems
    tree = queries.tree(s)
    assert [node["name"] for node in tree] == ["Planner"]
    child = tree[0]["children"][0]
    assert child["name"] == "Booking"
    assert child["created_by"]["call_id"] == "call_1" and child["created_by"]["tool"] == "transfer_to_booking"
    planner = [(e["role"], e.get("content")) for e in queries.transcript(s, "planner")]
    assert planner == [("system", "You plan trips."), ("user", "A weekend in Oslo?"),
                       ("assistant", "Let me ask the booking agent."), ("assistant", None),
                       ("tool", "Booked: Hotel Fjord, two nights.")]
    booking = queries.transcript(s, child["agent_id"])
    assert [e["content"] for e in booking] == ["Booked: Hotel Fjord, two nights."]
    assert booking[0]["model"] == "gpt-4.1-mini"
    assert queries.transcript(s, "planner")[2]["usage"] == {"input_tokens": 120, "output_tokens": 30}


MALFORMED = [
    json.dumps(request(span("0000000000000001", "invoke_agent A", gen_ai__operation__name="invoke_agent",
                            gen_ai__agent__id="a"))),
    "this line is not JSON",
    json.dumps({"resourceSpans": "not a list"}),
    json.dumps(request({"name": "no ids"}, "not even an object")),
    json.dumps(request(span("0000000000000009", "chat x", agentview__event="{not json", agentview__position=3))),
    json.dumps([1, 2, 3]),
]


def test_a_malformed_otlp_file_is_problems_on_its_page_never_a_500(tmp_path):
    from viewer.web.app import create_app

    (tmp_path / "broken.jsonl").write_text("\n".join(MALFORMED) + "\n", encoding="utf-8")
    s = load_index(tmp_path / "broken.jsonl")
    assert s.format is formats.OTLP_JSON
    assert list(s.agents) == ["a"]
    details = " ".join(p.detail for p in s.problems)
    assert "no resourceSpans list" in details and "without a spanId" in details and "not an event" in details
    client = create_app(tmp_path, watch=False).test_client()
    page = client.get("/s/broken")
    assert page.status_code == 200
    assert "without a spanId" in page.get_data(as_text=True) or client.get("/s/broken/problems").status_code == 200
    for url in ("/s/broken/export/otlp", "/s/broken/export/json", "/s/broken/export/trace", "/api/sessions"):
        assert client.get(url).status_code == 200, url


def test_two_sessions_exported_into_one_file_read_as_one_session_each_trace_whole(tmp_path):
    first = load_index(SAMPLES / "example1_jack_and_jill.jsonl")
    second = load_index(SAMPLES / "example4_external_trigger.jsonl")
    path = tmp_path / "two.jsonl"
    path.write_text(otlp.otlp_json(first) + otlp.otlp_json(second), encoding="utf-8")
    back = load_index(path)
    assert back.count == first.count + second.count
    # each trace's events together, in their own order: the first session's, then the second's
    ids = [back.events[p]["message_id"] for p in range(back.count)]
    assert ids == [first.events[p]["message_id"] for p in range(first.count)] + [
        second.events[p]["message_id"] for p in range(second.count)]
    assert [p.kind for p in back.problems] == ["several_traces"]


@pytest.mark.parametrize("indent", [False, True], ids=["one request a line", "one indented request"])
def test_a_json_file_of_otlp_requests_is_read_as_traces_too(tmp_path, indent):
    """The Collector's file exporter writes to whatever path it is given, `.json` as often as `.jsonl`."""
    s = load_index(SAMPLES / "research_team.jsonl")
    with masking(False):
        requests = list(otlp.requests(s, per_request=50 if not indent else 10_000))
    text = (json.dumps(requests[0], indent=2) + "\n" if indent
            else "".join(json.dumps(r) + "\n" for r in requests))
    assert indent or len(requests) > 3
    (tmp_path / "traces.json").write_text(text, encoding="utf-8")
    library = Library(tmp_path)
    library.scan()
    (back,) = library.listing()
    assert back.format is formats.OTLP_JSON
    assert not back.problems
    assert back.count == s.count
    assert queries.tree(back) == queries.tree(s)


def test_a_growing_json_file_of_otlp_requests_is_tailed_not_read_again(tmp_path, monkeypatch):
    """The Collector's file exporter appends a request a line: only the appended lines are read."""
    s = load_index(SAMPLES / "research_team.jsonl")
    with masking(False):
        lines = [json.dumps(r) + "\n" for r in otlp.requests(s, per_request=20)]
    assert len(lines) >= 4
    path = tmp_path / "traces.json"
    half = len(lines) // 2
    path.write_text("".join(lines[:half]), encoding="utf-8")
    library = Library(tmp_path)
    library.scan()
    (first,) = library.listing()
    assert first.format is formats.OTLP_JSON
    assert 0 < first.count < s.count
    read_before = path.stat().st_size

    reads = []  # (offset, length) of every read of the file through a tailer's source
    real_read = FileSource.read

    def counted(source, offset, length):
        if source.path == str(path):
            reads.append((offset, length))
        return real_read(source, offset, length)

    documents = []  # whole reads of it as a document

    def whole(f, limits, result):
        documents.append(f.name)
        return real_document(f, limits, result)

    real_document = ai_agent.read_document
    monkeypatch.setattr(FileSource, "read", counted)
    monkeypatch.setattr(ai_agent, "read_document", whole)
    for piece in lines[half:]:  # appended a request at a time, read after each
        with path.open("a", encoding="utf-8") as f:
            f.write(piece)
        library.scan()
    monkeypatch.undo()
    (back,) = library.listing()
    assert back is first  # the same session, grown: not read again from its start
    assert back.count == s.count
    assert not back.problems
    assert queries.tree(back) == queries.tree(s)
    assert queries.agents(back) == queries.agents(s)
    assert not documents
    # the bytes before what was read are checked (the tailer's last window), never read again whole
    assert reads and min(offset for offset, _ in reads) >= read_before - tailer.FINGERPRINT_BYTES


def test_one_indented_request_in_a_json_file_stays_a_document_read_whole(tmp_path):
    s = load_index(SAMPLES / "example1_jack_and_jill.jsonl")
    with masking(False):
        request = next(iter(otlp.requests(s, per_request=10_000)))
    path = tmp_path / "one.json"
    path.write_text(json.dumps(request, indent=2) + "\n", encoding="utf-8")
    reader = reader_for(str(path))
    result = reader.read()
    assert reader.tail is None and len(result.lines) == 1  # one document, one record
    lines = tmp_path / "lines.json"
    lines.write_text(json.dumps(request) + "\n", encoding="utf-8")
    reader = reader_for(str(lines))
    assert len(reader.read().lines) == 1 and reader.tail is not None
    # rewritten as one indented request (a new file renamed over it): looked at again, read whole, from the start
    (tmp_path / "new.json").write_text(json.dumps(request, indent=2) + "\n", encoding="utf-8")
    (tmp_path / "new.json").replace(lines)
    result = reader.read()
    assert result.restarted and reader.tail is None and len(result.lines) == 1
    assert result.lines[0].data.startswith(b"{\n")


def test_telling_a_json_file_of_requests_reads_its_first_line_not_all_of_it(tmp_path, monkeypatch):
    s = load_index(SAMPLES / "research_team.jsonl")
    with masking(False):
        lines = [json.dumps(r) + "\n" for r in otlp.requests(s, per_request=5)]
    path = tmp_path / "traces.json"
    path.write_text("".join(lines * 20), encoding="utf-8")
    reads = []
    real_read = FileSource.read

    def counted(source, offset, length):
        reads.append(length)
        return real_read(source, offset, length)

    monkeypatch.setattr(FileSource, "read", counted)
    record, why = ai_agent.read_record(str(path))
    monkeypatch.undo()
    assert why == "" and record == json.loads(lines[0])
    assert formats.detect_record(record)[0] is formats.OTLP_JSON
    assert sum(reads) < path.stat().st_size / 4


def test_a_big_json_file_of_requests_read_part_way_says_how_far(tmp_path):
    s = load_index(SAMPLES / "research_team.jsonl")
    with masking(False):
        lines = [json.dumps(r) + "\n" for r in otlp.requests(s, per_request=5)]
    path = tmp_path / "traces.json"
    path.write_text("".join(lines), encoding="utf-8")
    reader = reader_for(str(path), limit=len(lines[0]) + 1)
    result = reader.read()
    assert result.more and reader.tail is not None
    done = read_so_far(str(path), reader)
    assert 0 < done["read"] < done["size"] == path.stat().st_size


def test_a_served_json_file_of_requests_shows_appended_spans_reading_only_them(tmp_path, monkeypatch):
    from viewer.web.app import create_app

    s = load_index(SAMPLES / "research_team.jsonl")
    with masking(False):
        lines = [json.dumps(r) + "\n" for r in otlp.requests(s, per_request=20)]
    path = tmp_path / "traces.json"
    path.write_text("".join(lines[:2]), encoding="utf-8")
    app = create_app(tmp_path)  # watched, as `agentview serve` does
    watcher = app.extensions["agentview"].watcher
    try:
        watcher.ready.wait(10)
        client = app.test_client()

        def shown() -> int:
            answer = client.get("/api/sessions")
            return sum(row["events"] for row in answer.get_json()["sessions"]) if answer.status_code == 200 else -1

        first = shown()
        assert 0 < first < s.count
        read_before = path.stat().st_size
        reads = []
        real_read = FileSource.read

        def counted(source, offset, length):
            if source.path == str(path):
                reads.append(offset)
            return real_read(source, offset, length)

        monkeypatch.setattr(FileSource, "read", counted)
        with path.open("a", encoding="utf-8") as f:
            f.write("".join(lines[2:]))
        wait_for(lambda: shown() >= s.count, timeout=20)
        monkeypatch.undo()
        assert shown() == s.count
        assert reads and min(reads) >= read_before - tailer.FINGERPRINT_BYTES
    finally:
        watcher.stop()


def _usage_through_exports(s, tmp_path, times: int, strip_flag: bool = False):
    """The session exported and read back `times` times (each read's export the next one's input); strip_flag:
    the exports written as before the resource said `agentview.normalized`."""
    for n in range(times):
        with masking(False):
            text = otlp.otlp_json(s)
        requests = [json.loads(line) for line in text.splitlines()]
        for request in requests:
            for rs in request["resourceSpans"]:
                attributes = rs["resource"]["attributes"]
                assert [a["value"] for a in attributes if a["key"] == "agentview.normalized"] == [
                    {"boolValue": s.format.adds_keys}]
                if strip_flag:
                    rs["resource"]["attributes"] = [a for a in attributes if a["key"] != "agentview.normalized"]
        path = tmp_path / f"exported{n}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in requests), encoding="utf-8")
        s = load_index(path)
        assert s.format is formats.OTLP_JSON and not s.problems
    return usage.for_session(s)


def _claude_session(tmp_path):
    main = Transcript("5e551e55-0000-4000-8000-000000000001", "mn")
    main.user("Count the tokens")
    main.response("msg_1", [{"type": "text", "text": "Counted."}], model="claude-sonnet-4-5-20250929",
                  usage={"input_tokens": 1000, "output_tokens": 500, "cache_read_input_tokens": 7})
    return load_index(main.write(tmp_path / "claude" / "session.jsonl"))


def test_a_normalized_session_s_usage_survives_exports_of_exports(tmp_path):
    s = _claude_session(tmp_path)
    before = usage.for_session(s)
    assert before["input_tokens"] == 1000 and before["output_tokens"] == 500
    assert _usage_through_exports(s, tmp_path, 2) == before  # the second export is of an OTLP session


def test_native_lines_usage_stays_uncounted_through_an_export(tmp_path):
    """A native line's `usage` key is the writer's, not a normalizer's: counted neither before nor after."""
    s = load_index(write_events(tmp_path / "native.jsonl", [
        created("c1", "a1"), {**say("m1", "a1", "hi"), "usage": {"input_tokens": 5, "output_tokens": 5}}]))
    before = usage.for_session(s)
    assert not before.get("input_tokens")
    assert _usage_through_exports(s, tmp_path, 1) == before


def test_an_export_written_before_the_flag_is_read_by_the_format_it_names(tmp_path):
    """Such a file names its format only: every one but native lines was made by a normalizer (see _normalized)."""
    s = _claude_session(tmp_path)
    assert _usage_through_exports(s, tmp_path, 1, strip_flag=True) == usage.for_session(s)
    native = load_index(write_events(tmp_path / "native.jsonl", [
        created("c1", "a1"), {**say("m1", "a1", "hi"), "usage": {"input_tokens": 5, "output_tokens": 5}}]))
    assert _usage_through_exports(native, tmp_path, 1, strip_flag=True) == usage.for_session(native)
