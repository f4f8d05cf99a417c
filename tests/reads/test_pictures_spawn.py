"""The spawn graph (one labelled edge per spawned agent) and the breadcrumbs on agent pages."""

from conftest import sample, write_events
from dom import parse
from events import calls, created, tool_call
from viewer.reads import pictures
from viewer.reads.session_viewer import load_index


def test_spawn_graph_has_one_edge_per_spawned_agent_labelled_with_its_call():
    s = load_index(sample("research_team"))
    graph = pictures.spawn_graph(s)
    spawned = [a for a in s.agent_order if s.agents[a].parent_id]
    assert sorted(e["agent_id"] for e in graph["edges"]) == sorted(spawned) and len(spawned) == 7
    scout = next(e for e in graph["edges"] if e["agent_id"] == "agent_researcher_scout")
    assert (scout["parent_id"], scout["message_id"], scout["tool"]) == ("agent_researcher", "msg_063", "task")
    assert scout["label"].startswith("task(name=Scout")


def test_spawn_graph_centres_parents_over_children_and_keeps_roots_apart(tmp_path):
    path = write_events(tmp_path / "s.jsonl", [
        created("m1", "root"), calls("m2", "root", tool_call("c1", name="a"), tool_call("c2", name="b")),
        created("m3", "a", cause="m2", name="a"), created("m4", "b", cause="m2", name="b"),
        created("m5", "lonely"),
    ])
    graph = pictures.spawn_graph(load_index(path))
    nodes = {n["agent_id"]: n for n in graph["nodes"]}
    assert nodes["root"]["cx"] == (nodes["a"]["cx"] + nodes["b"]["cx"]) / 2
    assert nodes["a"]["y"] == nodes["b"]["y"] > nodes["root"]["y"] == nodes["lonely"]["y"]
    assert len({n["x"] for n in graph["nodes"] if n["agent_id"] != "root"}) == 3  # a, b and lonely side by side
    assert [e["call_id"] for e in graph["edges"]] == ["c1", "c2"]
    assert graph["width"] >= max(n["x"] for n in graph["nodes"]) + graph["node_w"]


def test_spawn_page_draws_the_svg_with_links_and_its_json_twin(client):
    doc = parse(client.get("/s/research_team/spawn").data)
    svg = doc.by_id("av-spawn-graph")
    assert len(svg.find_all("g", **{"class": "spawn-edge"})) == 7
    node = [a for a in svg.find_all("a") if a.attrs.get("data-agent") == "agent_writer_inner"][0]
    assert node.attrs["href"] == "/s/research_team/agents/agent_writer_inner"
    edge = [g for g in svg.find_all("g") if g.attrs.get("data-agent") == "agent_writer_inner"][0]
    assert edge.find_all("a")[0].attrs["href"].startswith("/s/research_team/messages/")
    data = client.get("/api/sessions/research_team/spawn").get_json()
    assert len(data["edges"]) == 7 and data["url"] == "/s/research_team/spawn"


def test_agent_page_shows_why_the_agent_exists(client):
    doc = parse(client.get("/s/research_team/agents/agent_scout_reader").data)
    steps = doc.by_id("av-lineage").find_all("li")
    assert [li.attrs["data-agent"] for li in steps] == [
        "agent_root", "agent_researcher", "agent_researcher_scout", "agent_scout_reader"]
    assert [a.attrs["href"] for a in doc.by_id("av-lineage").find_all("a", **{"class": "call"})] == [
        "/s/research_team/messages/msg_008", "/s/research_team/messages/msg_063", "/s/research_team/messages/msg_080"]
    assert "task(name=PaperReader" in steps[-1].text
    data = client.get("/api/sessions/research_team/lineage/agent_scout_reader").get_json()
    assert [c["message_id"] for c in data["breadcrumbs"]] == [None, "msg_008", "msg_063", "msg_080"]
    assert parse(client.get("/s/research_team/agents/agent_root").data).by_id("av-lineage") is None


def test_spawn_graph_escapes_agent_names_and_call_text(tmp_path):
    from viewer.web.app import create_app

    write_events(tmp_path / "x" / "x.jsonl", [
        created("m1", "root", name="<b>boss</b>"),
        calls("m2", "root", tool_call("c1", name="</text><script>alert(1)</script>")),
        created("m3", "kid", cause="m2", name="kid"),
    ])
    html = create_app(tmp_path / "x", watch=False).test_client().get("/s/x/spawn").get_data(as_text=True)
    assert "<script>alert" not in html and "<b>boss" not in html and "&lt;b&gt;boss&lt;/b&gt;" in html


def test_calls_without_ids_label_each_agent_with_the_call_that_created_it(tmp_path):
    """The spawn graph and breadcrumbs pick the spawning call by the tree's rule (queries.created_by):
    with no call ids, by the agent's name, not the first id-less call of the message."""
    path = write_events(tmp_path / "s.jsonl", [
        created("m1", "root"), calls("m2", "root", tool_call(None, name="a"), tool_call(None, name="b")),
        created("m3", "a", cause="m2", name="a"), created("m4", "b", cause="m2", name="b"),
    ])
    s = load_index(path)
    labels = {e["agent_id"]: e["summary"] for e in pictures.spawn_graph(s)["edges"]}
    assert labels == {"a": "task(name=a)", "b": "task(name=b)"}
    assert pictures.breadcrumbs(s, "b")[-1]["summary"] == "task(name=b)"


def test_a_parent_with_many_children_shows_the_first_ones_and_folds_the_rest(tmp_path, client):
    limit = pictures.CHILD_LIMIT
    kids = [f"kid{i:02d}" for i in range(limit + 8)]
    path = write_events(tmp_path / "many.jsonl", [
        created("m0", "root"), calls("m1", "root", *(tool_call(f"c{i}", name=k) for i, k in enumerate(kids))),
        *(created(f"m{i + 2}", k, cause="m1", name=k) for i, k in enumerate(kids)),
        created("m99", "grandchild", cause="m1", name="grandchild"),
    ])
    graph = pictures.spawn_graph(load_index(path))
    shown = {n["agent_id"] for n in graph["nodes"]}
    assert shown == {"root", *kids[: limit - 1]}
    (box,) = graph["more"]
    assert (box["parent_id"], box["count"]) == ("root", len(kids) + 1 - (limit - 1))
    assert len(graph["edges"]) == limit - 1
    nodes = {n["agent_id"]: n for n in graph["nodes"]}
    assert nodes["root"]["cx"] == (nodes[kids[0]]["cx"] + box["cx"]) / 2  # centred over what is shown
    assert graph["width"] < (limit + 1) * (pictures.NODE_W + pictures.GAP_X) + 2 * pictures.MARGIN
