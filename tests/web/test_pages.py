"""Every page and live fragment through the Flask test client, over real sample files."""

import json

from conftest import write_events
from dom import parse


def get(client, url, status=200):
    response = client.get(url)
    assert response.status_code == status, (url, response.status_code, response.data[:300])
    return response


def test_index_lists_every_session(client):
    doc = parse(get(client, "/").data)
    rows = {a.text: a.attrs["href"] for a in doc.by_id("av-sessions").find_all("a") if "badge" not in a.attrs.get("class", "")}
    assert rows["example1_jack_and_jill"] == "/s/example1_jack_and_jill"
    assert rows["research_team"] == "/s/research_team"
    assert len(rows) == 5


def test_session_page_shows_the_nested_tree_with_creators(client):
    doc = parse(get(client, "/s/example2_inner_monologue").data)
    tree = doc.by_id("av-tree")
    roots = [li.attrs["data-agent"] for li in tree.children if li.tag == "li"]
    assert roots == ["agent_root"]
    jill = [li for li in tree.find_all("li") if li.attrs.get("data-agent") == "agent_jill"][0]
    assert [li.attrs["data-agent"] for li in jill.find_all("li")] == ["agent_jill_inner"]
    row = [d for d in jill.find_all("div") if d.attrs.get("class", "").split()[:1] == ["node-row"]][0]
    summary = row.text  # the row beside its open/close marker
    assert "Jill" in summary and "agent_jill" in summary and "claude-sonnet" in summary
    assert "task(name=Jill, system_prompt=You are an aspiring author...)" in summary
    assert "7 entries" in " ".join(summary.split())
    creator = [a for a in row.find_all("a") if a.parent.attrs.get("class") == "created-by"][0]
    assert creator.attrs["href"] == "/s/example2_inner_monologue/agents/agent_root#msg_007"  # the creating call
    at = parse(get(client, "/s/example2_inner_monologue?at=12").data).by_id("av-tree")
    assert "/s/example2_inner_monologue/agents/agent_root?at=12#msg_007" in {a.attrs["href"] for a in at.find_all("a")}
    assert {i.attrs["value"] for i in doc.by_id("av-picker").find_all("input")} == {
        "agent_root", "agent_jack", "agent_jill", "agent_jill_inner"}


def test_implicit_agents_are_roots_named_by_their_id(client):
    doc = parse(get(client, "/s/example4_external_trigger").data)
    (node,) = doc.by_id("av-tree").find_all("li")
    assert node.attrs["data-agent"] == "agent_watcher"
    assert "implicit" in node.text


def test_agent_page_pairs_calls_with_results_and_links_spawned_agents(client):
    doc = parse(get(client, "/s/example1_jack_and_jill/agents/agent_root").data)
    entries = doc.by_id("av-entries")
    call = doc.by_id("msg_011")
    assert "discuss" in call.text and '"speakers"' in call.text
    results = [r.attrs["id"] for r in call.find_all("div", **{"class": "result"})]
    assert results == ["msg_016", "msg_019"]  # c3 answered twice, each shown under its call
    top_level = [a.attrs["id"] for a in entries.children if a.tag == "article"]
    assert "msg_016" not in top_level and "msg_006" not in top_level
    spawned = doc.by_id("msg_003").find_all("ul", **{"class": "spawned"})[0]
    assert [a.text for a in spawned.find_all("a")] == ["Jack"]


def test_agent_page_shows_deliveries_with_sender_and_modified_original(client):
    doc = parse(get(client, "/s/research_team/agents/agent_writer").data)
    redacted = doc.by_id("msg_113")
    assert "modified on its way" in redacted.text
    # delivered beside its original, whose secret is masked (see test_security.py for the reveal toggle)
    assert "api_key=[REDACTED]" in redacted.text and "api_key=[masked]" in redacted.text
    assert "sk-live-51Hx9" not in redacted.text
    assert "from Researcher" in " ".join(redacted.text.split())
    formatted = doc.by_id("msg_027")  # "[Researcher]: " + the original: only formatted
    assert "from Researcher" in " ".join(formatted.text.split())
    assert "modified on its way" not in formatted.text
    assert "modified" not in formatted.attrs["class"] and not formatted.find_all("div", **{"class": "side-by-side"})


def test_include_subagents_interleaves_descendants_in_file_order(client):
    doc = parse(get(client, "/s/example2_inner_monologue/agents/agent_jill?sub=1").data)
    articles = [a for a in doc.by_id("av-entries").children if a.tag == "article"]
    assert [a.attrs["id"] for a in articles] == [
        "msg_009", "msg_014", "msg_030", "msg_032", "msg_033", "msg_034", "msg_036", "msg_037", "msg_039"]
    labels = {a.attrs["id"]: a.find_all("span", **{"class": "who"})[0].text for a in articles}
    assert labels["msg_037"] == "Inner" and labels["msg_039"] == "Jill"
    without = parse(get(client, "/s/example2_inner_monologue/agents/agent_jill").data)
    assert without.by_id("msg_037") is None


def test_long_transcripts_are_paginated(session_dir, app, client):
    events = [{"message_id": "m0", "event_type": "agent_created", "agent_id": "a"}]
    events += [{"message_id": f"m{i}", "event_type": "transcript_entry", "agent_id": "a", "role": "user",
                "content": f"line {i}"} for i in range(1, 451)]
    write_events(session_dir / "long.jsonl", events)
    app.extensions["agentview"].library.scan()
    first = parse(get(client, "/s/long/agents/a").data)
    assert len([a for a in first.by_id("av-entries").children if a.tag == "article"]) == 200
    assert first.by_id("av-poller") is None  # live appends only on the page that shows the end
    last = parse(get(client, "/s/long/agents/a?start=400").data)
    ids = [a.attrs["id"] for a in last.by_id("av-entries").children if a.tag == "article"]
    assert ids == [f"m{i}" for i in range(401, 451)]
    assert last.by_id("av-poller") is not None


def test_dialog_page_shows_each_distinct_message_once(client):
    doc = parse(get(client, "/s/example1_jack_and_jill/dialog?agents=agent_jack,agent_jill").data)
    items = [a for a in doc.by_id("av-dialog").children if a.tag == "article"]
    assert [a.attrs["id"] for a in items] == ["msg_012", "msg_015", "msg_018"]
    speakers = [a.find_all("span", **{"class": "speaker"})[0].text.strip() for a in items]
    assert speakers == ["agent_root", "Jack", "Jill"]
    recipients = [" ".join(doc.by_id(f"av-rcpt-{a.attrs['data-position']}").text.split()) for a in items]
    assert recipients == ["to Jack, Jill", "to Jill", "to Jack"]
    # the picker form's repeated ?agents= gives the same dialog
    same = parse(get(client, "/s/example1_jack_and_jill/dialog?agents=agent_jack&agents=agent_jill").data)
    assert [a.attrs["id"] for a in same.by_id("av-dialog").children if a.tag == "article"] == [
        "msg_012", "msg_015", "msg_018"]


def test_dialog_marks_modified_deliveries(client):
    doc = parse(get(client, "/s/research_team/dialog?agents=agent_researcher,agent_writer,agent_critic").data)
    item = doc.by_id("msg_109")
    assert "modified" in item.attrs["class"]
    assert "[REDACTED]" in item.text
    assert "modified" not in doc.by_id("msg_025").attrs["class"]


def test_message_page_links_flow_and_references(client):
    doc = parse(get(client, "/s/example1_jack_and_jill/messages/msg_012").data)
    flow = doc.find_all("ol", **{"class": "flow"})[0]
    assert [li.attrs["id"] for li in flow.find_all("li")] == ["msg_011", "msg_012"]
    refs = doc.find_all("ol", **{"class": "references"})[0]
    assert [li.attrs["id"] for li in refs.find_all("li")] == ["msg_013", "msg_014"]
    assert refs.find_all("a", **{"class": "msg"})[0].attrs["href"] == "/s/example1_jack_and_jill/messages/msg_013"
    for row in flow.find_all("li") + refs.find_all("li"):  # who, and a link to the step's own page
        assert [a for a in row.find_all("a") if "/agents/" in a.attrs["href"]]
        assert row.find_all("a", **{"class": "msg"})[0].attrs["href"].endswith("/messages/" + row.attrs["id"])
    assert flow.find_all("li")[-1].attrs.get("aria-current") == "true"  # the message itself, marked in its chain
    as_logged = doc.find_all("details", **{"class": "as-logged"})[0]
    assert '"cause": "msg_011"' in as_logged.find_all("pre")[0].text


def test_every_message_has_an_anchor_and_a_copy_link(client):
    doc = parse(get(client, "/s/example1_jack_and_jill/agents/agent_jill").data)
    for mid in ["msg_009", "msg_014", "msg_017", "msg_018"]:
        element = doc.by_id(mid)
        assert element.find_all("button", **{"class": "copy-link", "data-anchor": mid})
        assert element.find_all("a", **{"class": "permalink", "href": f"#{mid}"})


def test_unknown_things_get_a_clear_404_page(client):
    for url, words in [("/s/nope", "no session 'nope'"),
                       ("/s/example1_jack_and_jill/agents/agent_nobody", "no agent 'agent_nobody'"),
                       ("/s/example1_jack_and_jill/messages/msg_999", "no message 'msg_999'"),
                       ("/s/example1_jack_and_jill/dialog?agents=agent_jack,ghost", "no agent 'ghost'")]:
        response = get(client, url, 404)
        assert words in response.data.decode().replace("&#39;", "'")
        assert b"<h1>404 Not Found</h1>" in response.data


def test_log_content_is_escaped_everywhere(session_dir, app, client):
    evil = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    write_events(session_dir / "evil.jsonl", [
        {"message_id": "m1", "event_type": "agent_created", "agent_id": evil, "name": evil},
        {"message_id": "m2", "event_type": "transcript_entry", "agent_id": evil, "role": "assistant", "content": evil},
        {"message_id": evil, "event_type": "transcript_entry", "agent_id": evil, "role": "assistant",
         "tool_calls": [{"id": evil, "function": {"name": evil, "arguments": evil}}]},
    ])
    app.extensions["agentview"].library.scan()
    from urllib.parse import quote
    for url in ["/", "/s/evil", f"/s/evil/agents/{quote(evil, safe='')}", f"/s/evil/messages/{quote(evil, safe='')}",
                f"/s/evil/dialog?agents={quote(evil, safe='')}"]:
        body = get(client, url).data.decode()
        assert "<script>alert" not in body and "<img src=x" not in body, url
        response = client.get(url)
        assert "script-src 'self'" in response.headers["Content-Security-Policy"]


def test_polls_answer_204_when_nothing_is_new(client):
    cursor = json.loads(get(client, "/api/sessions/example1_jack_and_jill").data)["cursor"]
    assert cursor == "0-20"
    for url in [f"/s/example1_jack_and_jill/poll/tree?after={cursor}",
                f"/s/example1_jack_and_jill/poll/agent?agent=agent_jill&after={cursor}",
                f"/s/example1_jack_and_jill/poll/dialog?agents=agent_jack,agent_jill&after={cursor}"]:
        response = get(client, url, 204)
        assert response.data == b""
    version = parse(get(client, "/").data).by_id("av-sessions").attrs["hx-get"].split("v=")[1]
    get(client, f"/poll/sessions?v={version}", 204)


def test_tree_poll_sends_only_new_agents_and_counts_out_of_band(client):
    # As if the page had been drawn after 4 events: Jill (created at msg_008) is new to it.
    doc = parse(get(client, "/s/example1_jack_and_jill/poll/tree?after=0-4").data)
    poller = doc.by_id("av-poller")
    assert "after=0-20" in poller.attrs["hx-get"]
    appends = [e for e in doc.children if e.attrs.get("hx-swap-oob", "").startswith("beforeend:#av-children-0")]
    assert [li.attrs["data-agent"] for a in appends for li in a.find_all("li")] == ["agent_jill"]
    counts = {e.attrs["id"]: e.text for e in doc.children if e.attrs.get("id", "").startswith("av-count-")}
    assert counts == {"av-count-0": "8", "av-count-1": "4", "av-count-2": "4"}


def test_agent_poll_appends_new_entries_and_results_under_their_calls(client):
    # Drawn after msg_012 (12 events): root's call msg_011 is on the page, its results are not.
    doc = parse(get(client, "/s/example1_jack_and_jill/poll/agent?agent=agent_root&after=0-12").data)
    results = [e for e in doc.children if e.attrs.get("hx-swap-oob", "").startswith("beforeend:#av-results-10-0")]
    assert [r.attrs["id"] for e in results for r in e.find_all("div", **{"class": "result"})] == [
        "msg_016", "msg_019"]
    appended = [e for e in doc.children if e.attrs.get("hx-swap-oob") == "beforeend:#av-entries"]
    assert appended == []  # the only new root entries are those results


def test_dialog_poll_sends_new_items_and_new_recipients(client):
    # Drawn after msg_013 (13 events): msg_012 was shown with Jack only; Jill hears it in msg_014.
    doc = parse(get(client, "/s/example1_jack_and_jill/poll/dialog?agents=agent_jack,agent_jill&after=0-13").data)
    rcpt = [e for e in doc.children if e.attrs.get("id") == "av-rcpt-11"]
    assert rcpt and rcpt[0].attrs["hx-swap-oob"] == "true" and "Jill" in rcpt[0].text
    appended = [e for e in doc.children if e.attrs.get("hx-swap-oob") == "beforeend:#av-dialog"]
    assert [a.attrs["id"] for a in appended[0].children if a.tag == "article"] == ["msg_015", "msg_018"]


def test_polls_of_a_deleted_session_stop_with_a_notice(session_dir, app, client):
    (session_dir / "example4_external_trigger.jsonl").unlink()
    app.extensions["agentview"].library.refresh(str(session_dir / "example4_external_trigger.jsonl"))
    response = get(client, "/s/example4_external_trigger/poll/tree?after=0-2", 286)
    assert b"gone" in response.data
    get(client, "/s/example4_external_trigger", 404)


def test_a_poll_from_before_the_file_was_replaced_reloads_the_page(session_dir, app, client):
    path = session_dir / "example4_external_trigger.jsonl"
    path.write_text(path.read_text().splitlines()[0] + "\n")  # truncated: read again from the start
    app.extensions["agentview"].library.refresh(str(path))
    response = get(client, "/s/example4_external_trigger/poll/tree?after=0-2")
    assert response.headers["HX-Refresh"] == "true"


def test_the_live_badge_shows_only_where_a_poller_runs(client):
    def badge(url):
        doc = parse(get(client, url).data)
        return (bool(doc.find_all("span", **{"class": "live-dot"})), doc.by_id("av-poller") is not None
                or doc.by_id("av-sessions") is not None)

    for url in ["/", "/s/research_team", "/s/research_team/agents/agent_writer",
                "/s/research_team/dialog?agents=agent_writer"]:
        assert badge(url) == (True, True), url
    assert badge("/s/research_team/messages/msg_114") == (False, False)
    assert badge("/s/research_team/agents/agent_root?limit=5") == (False, False)  # an earlier page


def test_problems_page_lists_every_problem_with_counts_and_links(session_dir, app, client):
    good = {"message_id": "m1", "event_type": "agent_created", "agent_id": "a"}
    (session_dir / "broken.jsonl").write_text("\n".join([
        json.dumps(good), "{oops <b>", json.dumps([1]), json.dumps(good),
        json.dumps({"message_id": "m2", "event_type": "mystery", "agent_id": "a"}),
    ]) + "\n")
    app.extensions["agentview"].library.scan()
    session_page = parse(get(client, "/s/broken").data)
    (badge,) = [a for a in session_page.find_all("a") if "badge" in a.attrs.get("class", "")]
    assert badge.text == "5 problems" and badge.attrs["href"] == "/s/broken/problems"
    index_badges = [a.attrs["href"] for a in parse(get(client, "/").data).find_all("a")
                    if "badge" in a.attrs.get("class", "") and "failed" not in a.attrs.get("class", "")]
    assert index_badges == ["/s/broken/problems", "/s/research_team/problems"]  # its call with invalid arguments

    doc = parse(get(client, "/s/broken/problems").data)
    counts = {row.find_all("code")[0].text: row.find_all("td")[0].text
              for row in doc.find_all("table", **{"class": "counts"})[0].find_all("tr")}
    assert counts == {"duplicate_agent_created": "1", "duplicate_message_id": "1", "invalid_json": "1",
                      "not_an_object": "1", "unknown_event_type": "1"}
    rows = doc.find_all("table", **{"class": "problems"})[0].find_all("tbody")[0].find_all("tr")
    cells = [[td.text.strip() for td in row.find_all("td")] for row in rows]
    assert [c[:2] for c in cells] == [["2", "invalid_json"], ["3", "not_an_object"],
                                      ["4", "duplicate_message_id"], ["4", "duplicate_agent_created"],
                                      ["5", "unknown_event_type"]]
    assert "{oops <b>" in cells[0][2]  # the excerpt, shown literally
    assert rows[2].find_all("a")[0].attrs["href"] == "/s/broken/messages/m1"

    data = client.get("/api/sessions/broken/problems").get_json()
    assert data["counts"]["invalid_json"] == 1 and len(data["problems"]) == 5
    assert data["problems"][2] == {"kind": "duplicate_message_id", "line": 4,
                                   "detail": "m1 first seen on line 1", "message_id": "m1"}
    get(client, "/s/nope/problems", 404)


def test_a_clean_session_says_it_has_no_problems(client):
    doc = parse(get(client, "/s/example1_jack_and_jill/problems").data)
    assert "No problems" in doc.find_all("main")[0].text


def test_pages_are_access_logged_and_live_polls_are_not(session_dir, app, client, caplog):
    write_events(session_dir / "named.jsonl", [{"message_id": "m1", "event_type": "agent_created",
                                                 "agent_id": "events"}])
    app.extensions["agentview"].library.scan()
    with caplog.at_level("INFO", logger="agentview.access"):
        get(client, "/s/named/agents/events")  # a page, whatever the agent is called
        get(client, "/s/named/poll/tree?after=0-1", 204)
        get(client, "/s/named/poll/agent?agent=events&after=0-1", 204)
        get(client, "/api/sessions/named/events?after=0-1")
        get(client, "/poll/sessions?v=0")
        get(client, "/search/poll?q=events&after=")
    logged = [r.getMessage() for r in caplog.records if r.name == "agentview.access"]
    assert logged == ["GET /s/named/agents/events 200"]


def test_an_unexpected_error_gets_a_clean_500_and_a_log_line_and_serving_goes_on(client, monkeypatch, caplog):
    from viewer.reads import queries

    def broken(*args, **kwargs):
        raise RuntimeError("injected failure <b>secret internals</b>")

    monkeypatch.setattr(queries, "tree_rows", broken)  # what the session page reads its tree with
    page = client.get("/s/example1_jack_and_jill")
    assert page.status_code == 500 and b"injected failure" not in page.data  # no internals leak
    assert "text/html" in page.content_type and b"agentview" in page.data
    assert any("error serving /s/example1_jack_and_jill" in r.getMessage() and r.exc_info for r in caplog.records)
    monkeypatch.setattr(queries, "agents", broken)
    api = client.get("/api/sessions/example1_jack_and_jill")
    assert api.status_code == 500 and api.get_json() == {"error": "Internal Server Error", "detail": "see the server log"}
    assert client.get("/s/example1_jack_and_jill/agents/agent_jill").status_code == 200  # the rest still serves


def test_entries_have_headings_and_agent_links_carry_the_agents_colour(client):
    doc = parse(get(client, "/s/example1_jack_and_jill/agents/agent_jill").data)
    entries = [a for a in doc.iter() if a.tag == "article" and "entry" in a.attrs.get("class", "").split()]
    assert entries and all(len(e.find_all("h3")) == 1 for e in entries)  # one heading per entry
    assert len(doc.find_all("h1")) == 1  # logged Markdown never adds a second h1
    dialog = parse(get(client, "/s/example1_jack_and_jill/dialog?agents=agent_jack,agent_jill").data)
    items = [a for a in dialog.by_id("av-dialog").children if a.tag == "article"]
    assert all(len(a.find_all("h2")) == 1 for a in items)
    speakers = [a.find_all("span", **{"class": "speaker"})[0].find_all("a")[0].attrs["class"].split() for a in items]
    colours = [next(c for c in classes if c.startswith("agent-c")) for classes in speakers]
    assert colours[1] != colours[2]  # Jack and Jill: two agents, two colours
    tree = parse(get(client, "/s/example1_jack_and_jill").data)
    (jill_node,) = [li for li in tree.iter() if li.tag == "li" and li.attrs.get("data-agent") == "agent_jill"]
    assert colours[2] in jill_node.find_all("div")[0].attrs["class"].split()  # the same colour on the tree


def test_an_interleaved_transcript_indents_each_sub_agent_by_its_depth(client):
    doc = parse(get(client, "/s/example2_inner_monologue/agents/agent_root?sub=1").data)
    depth = {}
    for article in doc.iter():
        if article.tag == "article" and "entry" in article.attrs.get("class", "").split():
            classes = article.attrs["class"].split()
            who = article.find_all("span", **{"class": "who"})[0].text.strip()
            depth.setdefault(who, {c for c in classes if c.startswith("depth-")})
    assert depth["agent_root"] == set() and depth["Jill"] == {"depth-1"} and depth["Inner"] == {"depth-2"}
    plain = parse(get(client, "/s/example2_inner_monologue/agents/agent_jill").data)  # one agent: no indent
    assert not [a for a in plain.iter() if a.tag == "article" and "depth-" in a.attrs.get("class", "")]


def test_polls_answer_a_problem_found_without_an_event(tmp_path):
    from events import created, say, user
    from viewer.web.app import create_app

    path = tmp_path / "talk.jsonl"
    write_events(path, [created("c0", "ann"), created("c1", "bob"), say("m1", "ann", "hi"),
                        user("d1", "bob", "hi", substance="m1")])
    app = create_app(tmp_path, watch=False)
    client = app.test_client()
    tree = parse(get(client, "/s/talk").data).by_id("av-poller").attrs["hx-get"]
    dialog = parse(get(client, "/s/talk/dialog?agents=ann,bob").data).by_id("av-poller").attrs["hx-get"]
    assert "problems=0" in tree and "problems=0" in dialog
    get(client, tree, 204)
    get(client, dialog, 204)
    with open(path, "a", encoding="utf-8") as f:
        f.write("{not json\n")
    app.extensions["agentview"].library.scan()
    for url in (tree, dialog):
        answer = parse(get(client, url).data)
        assert answer.by_id("av-session-problems").text.strip() == "· 1 problem"
        assert "problems=1" in answer.by_id("av-poller").attrs["hx-get"]
        get(client, answer.by_id("av-poller").attrs["hx-get"], 204)  # told: nothing new again
    assert parse(get(client, dialog).data).by_id("av-dialog-messages").text == "1 message"


def test_an_agent_poll_while_only_other_agents_write_moves_its_cursor_and_counts_them_in_its_rail(tmp_path):
    from events import created, say, user
    from viewer.web.app import create_app

    path = write_events(tmp_path / "s.jsonl", [created("c1", "a1", name="One"), created("c2", "a2", name="Two"),
                                               say("m1", "a1", "first")])
    app = create_app(tmp_path, watch=False)
    library, client = app.extensions["agentview"].library, app.test_client()

    def append_and_poll(events, query=""):
        write_events(path, events, mode="a")
        library.refresh(str(path))
        return parse(get(client, f"/s/s/poll/agent?agent=a1&after=0-{count}{query}").data)

    def only_the_poller(doc):  # and the rail's counts of the agents that wrote
        return [e.attrs.get("id") for e in doc.children if e.tag and e.attrs.get("id") not in counts(doc)] == ["av-poller"]

    def counts(doc):
        return {e.attrs["id"]: e.text for e in doc.children if e.tag and e.attrs.get("id", "").startswith("av-count-")}

    count = 3
    doc = append_and_poll([say(f"o{i}", "a2", f"other {i}") for i in range(5)])
    assert only_the_poller(doc) and "after=0-8" in doc.by_id("av-poller").attrs["hx-get"]
    assert counts(doc) == {"av-count-1": "5"}  # Two's entries, in the rail
    count = 8
    doc = append_and_poll([say("m2", "a1", "second")])  # its own entry: drawn, with its count
    assert not only_the_poller(doc) and doc.by_id("m2") and doc.by_id("av-agent-entries").text == "2"
    count = 9
    doc = append_and_poll([created("c3", "a3", cause="m2", name="Three")])  # a sub-agent: its header lists it
    assert not only_the_poller(doc) and "Three" in doc.by_id("av-agent-children").text
    rail = doc.by_id("av-agent-tree")  # and the rail, drawn again with it, this page's agent marked
    assert rail.attrs["hx-swap-oob"] == "true"
    assert [(a.text, a.attrs.get("aria-current")) for a in rail.find_all("a")] == [
        ("One", "page"), ("Three", None), ("Two", None)]
    count = 10
    doc = append_and_poll([user("m3", "a1", "hidden by the filter")], "&kind=said")  # filtered out, still counted
    assert not only_the_poller(doc) and doc.by_id("av-agent-entries").text == "3"
