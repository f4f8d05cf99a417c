"""The who-said-what-to-whom chart (windowed, per session and per dialog) and tracing a message."""

from conftest import sample, write_events
from dom import parse
from events import created, piece, say, user
from viewer.reads import pictures
from viewer.reads.session_viewer import load_index

DELIVERIES_EX1 = {"msg_013", "msg_014", "msg_017", "msg_020"}


def test_chart_draws_one_arrow_per_delivery_from_its_original():
    s = load_index(sample("example1_jack_and_jill"))
    chart = pictures.chart(s)
    assert (chart["start"], chart["end"], chart["total"]) == (0, 20, 20)
    assert [lane["agent_id"] for lane in chart["lanes"]] == ["agent_root", "agent_jack", "agent_jill"]
    assert {(a["from_id"], a["to_id"]) for a in chart["arrows"]} == {
        ("msg_012", "msg_013"), ("msg_012", "msg_014"), ("msg_015", "msg_017"), ("msg_018", "msg_020")}
    assert len(chart["arrows"]) == 4
    marks = {m["message_id"]: m for m in chart["marks"]}
    assert [marks[m]["css"] for m in ("msg_003", "msg_004", "msg_006", "msg_012", "msg_015", "msg_017")] == [
        "call", "spawn", "result", "piece", "said", "heard"]
    lanes = {lane["agent_id"]: lane["x"] for lane in chart["lanes"]}
    arrow = next(a for a in chart["arrows"] if a["to_id"] == "msg_017")
    assert arrow["x1"] == lanes["agent_jack"] and arrow["y1"] == marks["msg_015"]["y"]
    assert marks["msg_017"]["y"] > marks["msg_015"]["y"]  # file order downward
    assert {(link["css"]) for link in chart["links"]} == {"spawn-link", "result-link", "cause-link"}


def test_chart_window_keeps_arrows_from_originals_above_it():
    s = load_index(sample("example1_jack_and_jill"))
    chart = pictures.chart(s, start=14, size=4)
    assert [m["message_id"] for m in chart["marks"]] == ["msg_015", "msg_016", "msg_017", "msg_018"]
    (arrow,) = chart["arrows"]
    assert (arrow["from_id"], arrow["to_id"], arrow["earlier"]) == ("msg_015", "msg_017", False)
    later = pictures.chart(s, start=16, size=4)
    earlier = next(a for a in later["arrows"] if a["to_id"] == "msg_017")
    assert earlier["earlier"] and earlier["y1"] == later["head_h"]
    assert pictures.chart(s, start=500, size=4)["start"] == 16  # clamped to the last full window


def test_chart_of_a_dialog_selection_brings_the_senders_lanes():
    s = load_index(sample("example1_jack_and_jill"))
    chart = pictures.chart(s, agent_ids=["agent_jill"])
    assert [lane["agent_id"] for lane in chart["lanes"]] == ["agent_root", "agent_jack", "agent_jill"]
    assert {a["to_id"] for a in chart["arrows"]} == {"msg_014", "msg_017"}
    assert "msg_013" not in {m["message_id"] for m in chart["marks"]}


def test_chart_highlights_modified_deliveries(tmp_path):
    path = write_events(tmp_path / "s.jsonl", [say("m1", "a", "pw 1234"), user("m2", "b", "pw [X]", substance="m1"),
                                               user("m3", "c", "[a]: pw 1234", substance="m1")])
    chart = pictures.chart(load_index(path))
    assert [(a["to_id"], a["modified"]) for a in chart["arrows"]] == [("m2", True), ("m3", False)]
    assert [m["modified"] for m in chart["marks"]] == [False, True, False]


def test_chart_of_50_agents_and_5000_events_draws_only_its_window(tmp_path):
    events = [created("m0", "a0")]
    for i in range(1, 50):
        events.append(created(f"c{i}", f"a{i}"))
    n = len(events)
    while n < 5000:
        speaker = f"a{n % 50}"
        events.append(say(f"m{n}", speaker, f"message {n}"))
        events.append(user(f"m{n}d", f"a{(n + 7) % 50}", f"[{speaker}]: message {n}", substance=f"m{n}"))
        n += 2
    s = load_index(write_events(tmp_path / "big.jsonl", events))
    chart = pictures.chart(s, start=2500, size=200)
    assert chart["total"] == 5000 and len(chart["marks"]) == 200
    assert len(chart["arrows"]) == sum(1 for m in chart["marks"] if m["message_id"].endswith("d"))
    assert len(chart["lanes"]) == 50


def test_trace_goes_upstream_and_downstream():
    s = load_index(sample("example1_jack_and_jill"))
    discuss = pictures.trace(s, "msg_011")
    assert [r["message_id"] for r in discuss["downstream"]] == ["msg_012", "msg_013", "msg_014", "msg_016", "msg_019"]
    assert discuss["upstream"] == [] and discuss["agents"] == []
    assert [r["message_id"] for r in pictures.trace(s, "msg_013")["upstream"]] == ["msg_011", "msg_012"]
    spawn = pictures.trace(s, "msg_003")
    assert [r["message_id"] for r in spawn["downstream"]] == ["msg_004", "msg_006"]
    assert spawn["agents"] == ["agent_jack"]
    said = pictures.trace(s, "msg_015")
    assert [r["message_id"] for r in said["downstream"]] == ["msg_017"]


def test_trace_follows_lists_of_causes_and_chains_of_deliveries(tmp_path):
    path = write_events(tmp_path / "s.jsonl", [
        created("m1", "root"), say("m2", "a", "one"), say("m3", "b", "two"),
        piece("m4", "root", "both", cause=["m2", "m3"]), user("m5", "c", "both", substance="m4"),
        user("m6", "d", "fwd: both", substance="m5"),
    ])
    s = load_index(path)
    assert [r["message_id"] for r in pictures.trace(s, "m6")["upstream"]] == ["m2", "m3", "m4", "m5"]
    assert [r["message_id"] for r in pictures.trace(s, "m2")["downstream"]] == ["m4", "m5", "m6"]


def test_chart_page_marks_link_to_messages_and_json_twin(client):
    doc = parse(client.get("/s/example1_jack_and_jill/chart").data)
    svg = doc.by_id("av-chart")
    marks = [a for a in svg.find_all("a") if "mark" in a.attrs.get("class", "").split()]
    assert len(marks) == 20
    assert marks[16].attrs["href"] == "/s/example1_jack_and_jill/messages/msg_017"
    assert {line.attrs["data-to"] for line in svg.find_all("line") if "substance" in line.attrs.get("class", "")} == DELIVERIES_EX1
    data = client.get("/api/sessions/example1_jack_and_jill/chart?start=2&size=5").get_json()
    assert (data["start"], data["end"], len(data["marks"])) == (2, 7, 5)
    assert data["url"] == "/s/example1_jack_and_jill/chart?start=2&size=5"


def test_a_traced_message_opens_its_window_near_the_top_third(client):
    s = load_index(sample("research_team"))
    focus = s.by_id["msg_200"]
    data = client.get("/api/sessions/research_team/chart?trace=msg_200&size=30").get_json()
    assert data["start"] == focus - 10 and data["marks"][10]["message_id"] == "msg_200"
    # In a dialog selection the window counts the selection's rows, not the file's positions.
    writer = [a for a in s.agent_order if a == "agent_writer"]
    rows = pictures.chart(s, 0, 1000, writer)["marks"]
    row = next(i for i, m in enumerate(rows) if m["agent_id"] == "agent_writer" and i >= 12)
    traced_id = rows[row]["message_id"]
    data = client.get(f"/api/sessions/research_team/chart?agents=agent_writer&size=9&trace={traced_id}").get_json()
    assert data["start"] == row - 3 and data["marks"][3]["message_id"] == traced_id
    assert client.get("/api/sessions/research_team/chart?trace=msg_200&size=30&start=0").get_json()["start"] == 0


def test_chart_page_traces_a_message(client):
    doc = parse(client.get("/s/example1_jack_and_jill/chart?trace=msg_011").data)
    marks = {a.attrs["data-message"]: a.attrs["class"].split() for a in doc.by_id("av-chart").find_all("a")
             if a.attrs.get("data-message")}
    assert "focus" in marks["msg_011"]
    assert {m for m, c in marks.items() if "downstream" in c} == {"msg_012", "msg_013", "msg_014", "msg_016", "msg_019"}
    assert not any("upstream" in c for c in marks.values())
    assert client.get("/s/example1_jack_and_jill/chart?trace=nope").status_code == 404
    assert client.get("/s/example1_jack_and_jill/chart?agents=nobody").status_code == 404


def test_trace_page_and_json(client):
    doc = parse(client.get("/s/example1_jack_and_jill/trace/msg_013").data)
    up = doc.find_all("ol", **{"class": "trace-list upstream"})[0]
    assert [li.attrs["data-message"] for li in up.find_all("li")] == ["msg_011", "msg_012"]
    assert doc.by_id("av-trace-chart").attrs["href"] == "/s/example1_jack_and_jill/chart?trace=msg_013"
    data = client.get("/api/sessions/example1_jack_and_jill/trace/msg_003").get_json()
    assert data["agents"] == ["agent_jack"] and data["url"] == "/s/example1_jack_and_jill/trace/msg_003"


def test_chart_escapes_log_text(tmp_path):
    from viewer.web.app import create_app

    write_events(tmp_path / "x" / "x.jsonl", [created("m1", "a", name="</text><script>x</script>"),
                                              say("m2", "a", "<img src=x onerror=alert(1)>")])
    html = create_app(tmp_path / "x", watch=False).test_client().get("/s/x/chart").get_data(as_text=True)
    assert "<script>x" not in html and "<img src=x" not in html


SAMPLE_NAMES = ["example1_jack_and_jill", "example2_inner_monologue", "example3_hook_intervention",
                "example4_external_trigger", "research_team"]


def test_every_flow_view_answers_on_every_sample_session(client):
    for name in SAMPLE_NAMES:
        s = load_index(sample(name))
        middle = s.events[s.count // 2]["message_id"]
        for url in (f"/s/{name}/chart", f"/s/{name}/chart?size=3&start=1", f"/s/{name}/spawn", f"/s/{name}/hooks",
                    f"/s/{name}/trace/{middle}", f"/s/{name}/chart?trace={middle}", f"/s/{name}?at={s.count // 2}",
                    f"/s/{name}/export/trace", f"/s/{name}/export/dot", f"/s/{name}/export/json",
                    f"/api/sessions/{name}/chart", f"/api/sessions/{name}/spawn", f"/api/sessions/{name}/hooks",
                    f"/api/sessions/{name}/trace/{middle}"):
            assert client.get(url).status_code == 200, url
        deliveries = sum(len(v) for k, v in s.references.items() if k in s.by_id)
        assert len(client.get(f"/api/sessions/{name}/chart?size=1000").get_json()["arrows"]) == deliveries, name


def test_the_dialog_page_links_its_chart(client):
    doc = parse(client.get("/s/example1_jack_and_jill/dialog?agents=agent_jack,agent_jill").data)
    (link,) = doc.find_all("a", **{"class": "chart-link"})
    assert link.attrs["href"] == "/s/example1_jack_and_jill/chart?agents=agent_jack,agent_jill"
    chart = parse(client.get(link.attrs["href"]).data)
    assert "among Jack, Jill" in " ".join(chart.find_all("h1")[0].text.split())
