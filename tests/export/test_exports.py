"""Exports: golden files for each format, the DOT read back by a real DOT parser, the command and the routes."""

import json
import os
import subprocess
import sys

import pydot
import pytest

from conftest import REPO, SAMPLES, sample, write_events
from events import calls, created, say, tool_call, user
from viewer.export import text as exports
from viewer.reads.session_viewer import load_index

GOLDEN = REPO / "tests" / "golden"
UPDATE = os.environ.get("AGENTVIEW_UPDATE_GOLDEN") == "1"

CASES = {
    "example1_jack_and_jill.trace.txt": ("example1_jack_and_jill", "trace", {}),
    "example1_jack_and_jill.dot": ("example1_jack_and_jill", "dot", {}),
    "example1_jack_and_jill.json": ("example1_jack_and_jill", "json", {}),
    "example1_jack_and_jill.jill.md": ("example1_jack_and_jill", "markdown", {"agent": "agent_jill"}),
    "example1_jack_and_jill.dialog.md": ("example1_jack_and_jill", "markdown", {"agents": ["agent_jack", "agent_jill"]}),
    "example2_inner_monologue.trace.txt": ("example2_inner_monologue", "trace", {}),
    "research_team.writer.md": ("research_team", "markdown", {"agent": "agent_writer"}),
    "example1_jack_and_jill.md": ("example1_jack_and_jill", "markdown", {}),
}


def golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} differs (AGENTVIEW_UPDATE_GOLDEN=1 rewrites it)"


@pytest.mark.parametrize("name", sorted(CASES))
def test_exports_match_their_golden_files(name):
    session, fmt, args = CASES[name]
    golden(name, exports.export(load_index(sample(session)), fmt, **args))


@pytest.mark.parametrize("name", ["example1_jack_and_jill.trace.txt", "example1_jack_and_jill.dialog.md"])
def test_the_export_command_prints_the_same_text(name):
    session, fmt, args = CASES[name]
    command = [sys.executable, "-m", "viewer", "export", str(sample(session)), "--format", fmt]
    if "agents" in args:
        command += ["--agents", ",".join(args["agents"])]
    out = subprocess.run(command, capture_output=True, cwd=REPO, timeout=30, check=True).stdout.decode("utf-8")
    assert out == (GOLDEN / name).read_text(encoding="utf-8")


def test_the_export_command_explains_a_wrong_request(tmp_path):
    path = str(sample("example1_jack_and_jill"))
    for extra, message in ((["--format", "markdown", "--agent", "nobody"], "no agent 'nobody'"),
                           (["--format", "json", "--agent", "agent_jack"], "whole session")):
        run = subprocess.run([sys.executable, "-m", "viewer", "export", path, *extra], capture_output=True,
                             text=True, cwd=REPO, timeout=30)
        assert run.returncode == 2 and message in run.stderr, (extra, run.stderr)
    run = subprocess.run([sys.executable, "-m", "viewer", "export", str(tmp_path / "none.jsonl"), "--format", "trace"],
                         capture_output=True, text=True, cwd=REPO, timeout=30)
    assert run.returncode == 2 and "is not a file" in run.stderr


def edges_of(graph):
    return {(e.get_source().strip('"'), e.get_destination().strip('"'), e.get_label().strip('"'), e.get_style())
            for e in graph.get_edges()}


def test_dot_parses_and_has_one_solid_edge_per_explicit_link():
    s = load_index(sample("example1_jack_and_jill"))
    (graph,) = pydot.graph_from_dot_data(exports.causality_dot(s))
    edges = edges_of(graph)
    assert ("msg_003", "msg_004", "cause", "solid") in edges  # the call that created Jack
    assert ("msg_011", "msg_012", "cause", "solid") in edges  # the piece of text the discuss call wrote
    assert ("msg_012", "msg_013", "substance", "solid") in edges
    assert ("msg_015", "msg_017", "substance", "solid") in edges
    assert ("msg_003", "msg_006", "tool_call_id", "solid") in edges
    assert len(edges) == len(graph.get_edges()) == 2 + 1 + 4 + 4  # spawn causes, piece cause, results, deliveries
    nodes = {n.get_name().strip('"') for g in graph.get_subgraphs() for n in g.get_nodes()}
    assert nodes == {f"msg_{i:03d}" for i in range(1, 21)}
    assert [g.get_name() for g in graph.get_subgraphs()] == ["cluster_0", "cluster_1", "cluster_2"]


def test_dot_draws_inferred_links_dashed_and_missing_ends_as_notes(tmp_path):
    path = write_events(tmp_path / "s.jsonl", [
        created("m1", "root"), calls("m2", "root", tool_call("c1", name="A")),
        {**created("m3", "a", cause="m2", name="A"), "inferred": {"cause": "name matched"}},  # as a reader marks it
        user("m4", "a", "hi", substance="gone"),
    ])
    s = load_index(path)
    (graph,) = pydot.graph_from_dot_data(exports.causality_dot(s))
    edges = edges_of(graph)
    assert [e for e in edges if e[:2] == ("m2", "m3")] == [("m2", "m3", "cause", "dashed")]
    assert ("gone", "m4", "substance", "solid") in edges
    (note,) = graph.get_node('"gone"')
    assert "not in the log" in note.get_label()


def test_parents_a_reader_inferred_are_dashed_edges():
    """Seed 001 states no cause: the legacy reader infers it from the parent's `task` call (name match)."""
    s = load_index(SAMPLES / "legacy" / "example1_jack_and_jill.jsonl")
    (graph,) = pydot.graph_from_dot_data(exports.causality_dot(s))
    edges = edges_of(graph)
    inferred = [e for e in edges if e[3] == "dashed"]
    assert len(inferred) == 2 and {e[2] for e in inferred} == {"cause"}  # Jack's and Jill's creation
    created_ids = {e["message_id"] for e in s.events if e["event_type"] == "agent_created" and e.get("inferred")}
    assert {e[1] for e in inferred} == created_ids
    assert all(e[3] == "solid" for e in edges if e not in inferred)
    json_edges = exports.session_data(s)["edges"]
    assert sum(not e["explicit"] for e in json_edges) == 2


def test_dot_labels_keep_hostile_log_text_inside_the_string(tmp_path):
    nasty = 'a "quote" \\ back\\nslash } ];\n digraph x { evil -> node'
    path = write_events(tmp_path / "s.jsonl", [created("m1", "root", name='R"} x'), say('m"2', "root", nasty)])
    dot = exports.causality_dot(load_index(path))
    (graph,) = pydot.graph_from_dot_data(dot)
    (cluster,) = graph.get_subgraphs()
    assert len(cluster.get_nodes()) == 2 and not graph.get_edges()
    (node,) = cluster.get_node('"m\\"2"')
    assert 'a \\"quote\\" \\\\ back\\\\nslash } ];' in node.get_label()


def test_markdown_quotes_survive_backticks_and_show_modified_deliveries(tmp_path):
    path = write_events(tmp_path / "s.jsonl", [
        created("m1", "root"), say("m2", "root", "password: 1234 ``` not a fence end"),
        user("m3", "b", "password: [REDACTED]", substance="m2"),
    ])
    s = load_index(path)
    text = exports.perspective_markdown(s, "b")
    assert "**modified on its way**" in text
    assert "Original:\n\n> password: 1234 ``` not a fence end\n" in text
    dialog = exports.dialog_markdown(s, ["root", "b"])
    assert "What b received (`m3`):" in dialog and "password: [REDACTED]" in dialog


def test_trace_restricted_to_agents_and_json_round_trips():
    s = load_index(sample("example1_jack_and_jill"))
    trace = exports.trace_text(s, ["agent_jill"])
    assert "msg_014" in trace and "msg_013" not in trace
    data = json.loads(exports.session_json(s))
    assert [e["event"]["message_id"] for e in data["events"]] == [f"msg_{i:03d}" for i in range(1, 21)]
    assert {"source": "msg_015", "target": "msg_017", "link": "substance", "explicit": True} in data["edges"]
    assert data["tree"][0]["children"][0]["agent_id"] == "agent_jack"


@pytest.mark.parametrize("fmt,args,media", [
    ("trace", "", "text/plain; charset=utf-8"),
    ("dot", "", "text/vnd.graphviz; charset=utf-8"),
    ("json", "", "application/json"),
    ("markdown", "?agent=agent_jill", "text/markdown; charset=utf-8"),
    ("markdown", "?agents=agent_jack,agent_jill", "text/markdown; charset=utf-8"),
])
def test_export_routes_serve_the_text_with_its_media_type(client, fmt, args, media):
    response = client.get(f"/s/example1_jack_and_jill/export/{fmt}{args}")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == media
    s = load_index(sample("example1_jack_and_jill"))
    expected = exports.export(s, fmt, "agent_jill" if "agent=" in args else None,
                              ["agent_jack", "agent_jill"] if "agents=" in args else None)
    if fmt == "json":  # the served copy is the same session read from a different folder
        assert json.loads(response.data)["edges"] == json.loads(expected)["edges"]
    else:
        assert response.get_data(as_text=True) == expected


def test_export_routes_refuse_what_they_cannot_answer(client):
    assert client.get("/s/example1_jack_and_jill/export/pdf").status_code == 404
    whole = client.get("/s/example1_jack_and_jill/export/markdown")  # no agent: the whole session
    assert whole.status_code == 200
    assert whole.get_data(as_text=True) == exports.session_markdown(load_index(sample("example1_jack_and_jill")))
    assert client.get("/s/example1_jack_and_jill/export/markdown?agent=nobody").status_code == 400


def test_pages_link_their_exports(client):
    from dom import parse

    def export_hrefs(url):
        return [a.attrs["href"] for a in parse(client.get(url).data).find_all("a", **{"class": "export"})]

    assert export_hrefs("/s/example1_jack_and_jill") == [
        "/s/example1_jack_and_jill/export/markdown", "/s/example1_jack_and_jill/export/trace",
        "/s/example1_jack_and_jill/export/dot", "/s/example1_jack_and_jill/export/json",
        "/s/example1_jack_and_jill/share.html"]
    assert export_hrefs("/s/example1_jack_and_jill/agents/agent_jill") == [
        "/s/example1_jack_and_jill/export/markdown?agent=agent_jill",
        "/s/example1_jack_and_jill/share.html?agent=agent_jill"]
    assert export_hrefs("/s/example1_jack_and_jill/dialog?agents=agent_jack,agent_jill") == [
        "/s/example1_jack_and_jill/export/markdown?agents=agent_jack,agent_jill"]


def test_markdown_renders_prose_as_markdown_and_output_as_written():
    """A Markdown reader renders what agents said (emphasis, lists) and shows tool output exactly as logged,
    and the whole session's export holds every agent's section, sub-agents included."""
    from markdown_it import MarkdownIt

    text = exports.export(load_index(sample("example1_jack_and_jill")), "markdown")
    html = MarkdownIt("commonmark").render(text)
    assert "<em>extends hand</em>" in html  # Jack said "*extends hand*": rendered, not fenced
    assert '<code class="language-text">Created subagent: Jack\n</code>' in html  # a tool's output: a code block
    for heading in ("agent_root (<code>agent_root</code>)", "Jack (<code>agent_jack</code>)",
                    "Jill (<code>agent_jill</code>)"):
        assert f"<h2>{heading}</h2>" in html
    lines = ["> " + line if line else ">" for line in ["# not a heading of the export"]]
    assert exports._quoted("# not a heading of the export") == "\n".join(lines)
