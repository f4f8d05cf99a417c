"""The search page, its live fragment, GET /api/search, and the agent page's filters (Flask test client)."""

import json
from urllib.parse import parse_qs, urlsplit

from conftest import write_events
from dom import parse
from events import calls, created, result, say, tool_call, user
from test_search import CAFE, library_of
from viewer.search import query as search
from viewer.web.search_views import target


def get(client, url, status=200):
    response = client.get(url)
    assert response.status_code == status, (url, response.status_code, response.data[:300])
    return response


def api(client, url, status=200):
    return json.loads(get(client, url, status).data)


def hits_on(doc):
    return [li for li in doc.by_id("av-hits").children if li.tag == "li"]


# --- where a hit is shown (search_views.target) ---------------------------------------------------------

def hits_placed(sessions, q, page_size=200):
    """The hits of a query, each with its target as the search views give it (page_size: the agent page's)."""
    hits = search.search(sessions, q)["hits"]
    by_id = {s.id: s for s in sessions}
    for h in hits:
        s = by_id[h["session"]]
        with s.lock:
            h["target"] = target(s, h["position"], page_size)
    return hits


def test_a_hit_is_shown_on_its_agent_page_or_at_its_node_in_the_tree(tmp_path):
    sessions = library_of(tmp_path, cafe=CAFE).listing()
    (said, heard) = hits_placed(sessions, "password")
    assert said["target"] == {"page": "agent", "agent_id": "agent_jack", "start": 0, "anchor": "m6"}
    (creation,) = hits_placed(sessions, "agent_jack")
    assert creation["target"] == {"page": "tree", "agent_id": "agent_jack", "anchor": "av-node-1"}


def test_a_hit_links_to_the_agent_page_that_shows_it(tmp_path):
    events = [created("m0", "a")] + [user(f"m{i}", "a", f"line {i}") for i in range(1, 451)]
    events += [calls("c", "a", tool_call("t1", "probe")), user("late", "a", "unrelated"),
               result("r", "a", "t1", "needle found")]
    sessions = library_of(tmp_path, long=events).listing()
    page = lambda q: hits_placed(sessions, q, page_size=200)[0]["target"]["start"]  # noqa: E731
    assert (page('"line 1"'), page('"line 200"'), page('"line 201"'), page('"line 401"')) == (0, 0, 200, 400)
    # a paired result is shown under its call (entry 450), not in its own place (entry 452)
    needle = hits_placed(sessions, "needle", page_size=451)[0]["target"]
    assert needle == {"page": "agent", "agent_id": "a", "start": 0, "anchor": "r"}
    assert hits_placed(sessions, "unrelated", page_size=451)[0]["target"]["start"] == 451


def test_pieces_of_text_and_unknown_events_link_to_their_message_page(tmp_path):
    events = [created("m1", "a"), {"message_id": "p1", "event_type": "piece_of_text", "agent_id": "a",
                                   "content": "broadcast words", "cause": "m1"},
              {"message_id": "u1", "event_type": "custom", "agent_id": "a", "content": "custom words"}]
    sessions = library_of(tmp_path, s=events).listing()
    hits = hits_placed(sessions, "words")
    assert [(h["message_id"], h["target"]) for h in hits] == [
        ("p1", {"page": "message", "message_id": "p1"}), ("u1", {"page": "message", "message_id": "u1"})]


# --- GET /api/search -----------------------------------------------------------------------------

def test_api_search_answers_the_contract_fields(client):
    data = api(client, "/api/search?q=%22rotate+it%22")
    assert [(r["session"], r["agent_id"], r["message_id"], r["role"]) for r in data["results"]] == [
        ("research_team", "agent_policy_hook", "msg_111", "assistant"),
        ("research_team", "agent_critic", "msg_115", "assistant"),
        ("research_team", "agent_root", "msg_116", "tool"),
        ("research_team", "agent_researcher", "msg_117", "user"),
        ("research_team", "agent_writer", "msg_118", "user")]
    first = data["results"][0]
    assert first["url"] == "/s/research_team/agents/agent_policy_hook#msg_111"
    assert first["snippet"].endswith("Recommend the sender rotate it.")
    (start, end), = first["highlights"]
    assert first["snippet"][start:end] == "rotate it"
    assert data["next"] is None


def test_api_search_across_sessions_and_within_one(client):
    everywhere = {r["session"] for r in api(client, "/api/search?q=jack")["results"]}
    assert everywhere == {"example1_jack_and_jill", "example2_inner_monologue"}
    one = api(client, "/api/search?q=jack&session=example2_inner_monologue")["results"]
    assert {r["session"] for r in one} == {"example2_inner_monologue"}
    qualified = api(client, "/api/search?q=jack+session:example2")["results"]
    assert [r["message_id"] for r in qualified] == [r["message_id"] for r in one]
    assert api(client, "/api/search?q=")["results"] == []
    assert api(client, "/api/search?q=jack&session=nope")["results"] == []


def test_api_search_pages_with_next(client):
    first = api(client, "/api/search?q=role:heard&limit=10")
    assert len(first["results"]) == 10 and first["next"]
    second = api(client, first["next"])
    assert second["results"][0]["message_id"] != first["results"][-1]["message_id"]
    ids = lambda d: [(r["session"], r["message_id"]) for r in d["results"]]  # noqa: E731
    assert ids(api(client, "/api/search?q=role:heard&limit=20")) == ids(first) + ids(second)
    get(client, "/api/search?q=x&limit=many", 400)


def test_api_search_url_lands_on_the_agent_page_holding_the_entry(session_dir, app, client):
    events = [{"message_id": f"m{i}", "event_type": "transcript_entry", "agent_id": "a", "role": "user",
               "content": f"line {i}"} for i in range(450)]
    write_events(session_dir / "long.jsonl", events)
    app.extensions["agentview"].library.scan()
    (hit,) = api(client, "/api/search?q=%22line+321%22&session=long")["results"]
    assert hit["url"] == "/s/long/agents/a?start=200#m321"
    page = parse(get(client, hit["url"]).data)
    assert page.by_id("m321") is not None


# --- the search page -------------------------------------------------------------------------------

def test_search_page_lists_hits_with_session_agent_role_and_marked_snippet(client):
    doc = parse(get(client, "/search?q=redacted+agent:writer").data)
    hits = hits_on(doc)
    assert [h.find_all("a", **{"class": "hit-link"})[0].text for h in hits] == ["msg_113", "msg_118"]
    first = hits[0]
    assert first.find_all("a", **{"class": "hit-session"})[0].text == "research_team"
    assert first.find_all("a", **{"class": "agent"})[0].text == "Writer"
    assert " ".join(first.find_all("span", **{"class": "kind"})[0].text.split()) == "heard · user"
    assert [m.text for m in first.find_all("mark")] == ["REDACTED"]
    assert first.find_all("a", **{"class": "hit-link"})[0].attrs["href"] == "/s/research_team/agents/agent_writer#msg_113"
    poller = doc.by_id("av-poller")  # all hits shown: the page listens for new ones
    query = parse_qs(urlsplit(poller.attrs["hx-get"]).query)
    assert query["q"] == ["redacted agent:writer"] and "research_team=0-341" in query["after"][0]


def test_search_box_is_on_every_page_and_scoped_on_session_pages(client):
    for url in ["/", "/s/research_team", "/s/research_team/agents/agent_writer", "/s/research_team/dialog",
                "/s/research_team/messages/msg_001", "/s/research_team/problems", "/search?q=x"]:
        doc = parse(get(client, url).data)
        form = doc.find_all("form", role="search")[0]
        assert form.attrs["action"] == "/search"
        assert doc.by_id("av-search-q").attrs["name"] == "q"
        scope = form.find_all("input", type="checkbox", name="session")
        assert (scope[0].attrs["value"] if scope else None) == (None if url in ("/", "/search?q=x") else "research_team")
        assert doc.by_id("av-keys").tag == "dialog"
    doc = parse(get(client, "/search?q=jack&session=example1_jack_and_jill").data)
    assert doc.by_id("av-search-q").attrs["value"] == "jack"
    scope = doc.find_all("form", role="search")[0].find_all("label", **{"class": "scope"})[0]
    assert "only this session" in scope.text and "example1_jack_and_jill" in scope.attrs["title"]
    assert all(not h.find_all("a", **{"class": "hit-session"}) for h in hits_on(doc))


def test_search_page_without_a_query_explains_the_syntax(client):
    body = get(client, "/search").data.decode()
    assert "Query syntax" in body and "agent:jill" in body and 'id="av-poller"' not in body


def test_search_page_pages_and_polls_only_on_the_last_page(client):
    doc = parse(get(client, "/search?q=role:heard&limit=5").data)
    # a row per message: deliveries of one message share a row, which counts them (data-hits)
    assert sum(int(h.attrs["data-hits"]) for h in hits_on(doc)) == 5 and doc.by_id("av-poller") is None
    more = doc.find_all("nav", **{"class": "pager"})[0].find_all("a")[0]
    assert "from=" in more.attrs["href"]
    nxt = parse(get(client, more.attrs["href"]).data)
    assert sum(int(h.attrs["data-hits"]) for h in hits_on(nxt)) == 5


def test_search_poll_appends_new_hits_and_answers_204_otherwise(session_dir, app, client):
    cursor = parse_qs(urlsplit(parse(get(client, "/search?q=espresso").data).by_id("av-poller")
                               .attrs["hx-get"]).query)["after"][0]
    get(client, f"/search/poll?q=espresso&after={cursor}", 204)
    write_events(session_dir / "example1_jack_and_jill.jsonl", [say("msg_021", "agent_jack", "An espresso?"),
                                                                say("msg_022", "agent_jack", "Tea?")], mode="a")
    app.extensions["agentview"].library.scan()
    doc = parse(get(client, f"/search/poll?q=espresso&after={cursor}").data)
    appended = [e for e in doc.children if e.attrs.get("hx-swap-oob") == "beforeend:#av-hits"]
    assert [li.attrs["id"] for a in appended for li in a.find_all("li")] == ["av-hit-example1_jack_and_jill-20"]
    assert [m.text for m in appended[0].find_all("mark")] == ["espresso"]
    new_cursor = parse_qs(urlsplit(doc.by_id("av-poller").attrs["hx-get"]).query)["after"][0]
    assert "example1_jack_and_jill=0-22" in new_cursor
    get(client, f"/search/poll?q=espresso&after={new_cursor}", 204)
    # events arrived but none match: a new cursor, no hits
    write_events(session_dir / "example1_jack_and_jill.jsonl", [say("msg_023", "agent_jack", "Tea!")], mode="a")
    app.extensions["agentview"].library.scan()
    doc = parse(get(client, f"/search/poll?q=espresso&after={new_cursor}").data)
    assert "example1_jack_and_jill=0-23" in doc.by_id("av-poller").attrs["hx-get"].replace("%3D", "=")
    assert not [e for e in doc.children if e.attrs.get("hx-swap-oob") == "beforeend:#av-hits"]


def test_search_poll_with_the_library_version_unchanged_answers_204_without_reading_sessions(session_dir, app,
                                                                                                 client):
    poller = parse(get(client, "/search?q=espresso").data).by_id("av-poller").attrs["hx-get"]
    version = parse_qs(urlsplit(poller).query)["v"][0]
    assert version == str(app.extensions["agentview"].library.version)
    # A cursor from a replaced file would reload the page, were any session consulted: none is.
    get(client, f"/search/poll?q=espresso&after=example1_jack_and_jill=99-3&v={version}", 204)
    get(client, poller, 204)
    write_events(session_dir / "example1_jack_and_jill.jsonl", [say("msg_021", "agent_jack", "An espresso?")],
                 mode="a")
    app.extensions["agentview"].library.scan()
    doc = parse(get(client, poller).data)  # the page's own poller, its version now old: the new hit comes
    appended = [e for e in doc.children if e.attrs.get("hx-swap-oob") == "beforeend:#av-hits"]
    assert [li.attrs["id"] for a in appended for li in a.find_all("li")] == ["av-hit-example1_jack_and_jill-20"]
    new_version = parse_qs(urlsplit(doc.by_id("av-poller").attrs["hx-get"]).query)["v"][0]
    assert int(new_version) > int(version)
    get(client, doc.by_id("av-poller").attrs["hx-get"], 204)


def test_search_poll_reloads_when_a_file_was_replaced(client):
    response = get(client, "/search/poll?q=jack&session=example1_jack_and_jill&after=example1_jack_and_jill=5-3")
    assert response.headers["HX-Refresh"] == "true"


def test_search_snippets_are_escaped(session_dir, app, client):
    evil = '<script>alert("x")</script> needle <img src=x onerror=alert(1)>'
    write_events(session_dir / "evil.jsonl", [say("m1", "a", evil)])
    app.extensions["agentview"].library.scan()
    body = get(client, "/search?q=needle").data.decode()
    assert "<script>alert" not in body and "<img src=x" not in body
    assert "<mark>needle</mark>" in body
    assert api(client, "/api/search?q=needle")["results"][0]["snippet"] == evil


def test_a_secret_is_in_no_search_answer_whichever_word_finds_it(session_dir, app, client):
    secrets = ["zq9secretvaluexx", "abcdefghijklmnopqrstuvwxyz123456"]
    said = f"use Authorization: Bearer {secrets[0]} and key sk-{secrets[1]} needle"
    write_events(session_dir / "keys.jsonl", [say("m1", "a", said)])
    app.extensions["agentview"].library.scan()
    for q in ["needle", "authorization", '"key sk"', "bearer", "zq9*", secrets[0], secrets[1]]:
        (hit,) = api(client, f"/api/search?q={q}&session=keys")["results"]  # (the hits of the secret's own words too)
        assert "[masked]" in hit["snippet"] and not any(secret in json.dumps(hit) for secret in secrets), q
        if not any(secret in q for secret in secrets):  # (a page shows its query)
            page = get(client, f"/search?q={q}").data.decode()
            assert "[masked]" in page and not any(secret in page for secret in secrets), q


# --- the agent page's filters ------------------------------------------------------------------------

def article_ids(doc):
    return [a.attrs["id"] for a in doc.by_id("av-entries").children if a.tag == "article"]


def test_agent_page_filters_are_url_parameters(client):
    doc = parse(get(client, "/s/research_team/agents/agent_writer?modified=1").data)
    assert article_ids(doc) == ["msg_113"]
    form = doc.find_all("form", **{"class": "filters"})[0]
    assert "checked" in form.find_all("input", name="modified")[0].attrs
    doc = parse(get(client, "/s/research_team/agents/agent_root?kind=system,heard").data)
    kinds = {a.attrs["class"].split()[1] for a in doc.by_id("av-entries").children if a.tag == "article"}
    assert kinds == {"kind-system", "kind-heard"}
    checked = [i.attrs["value"] for i in doc.find_all("input", name="kind") if "checked" in i.attrs]
    assert checked == ["heard", "system"]
    doc = parse(get(client, "/s/research_team/agents/agent_researcher?tool=read_file").data)
    assert article_ids(doc) and all(
        any(t.text == "read_file" for t in doc.by_id(i).find_all("span", **{"class": "tool"})) for i in article_ids(doc))
    selected = [o.attrs["value"] for o in doc.by_id("av-filter-tool").find_all("option") if "selected" in o.attrs]
    assert selected == ["read_file"]
    assert "filtered" in doc.by_id("av-entries").attrs["aria-label"]


def test_filters_survive_paging_live_polls_and_the_json_twin(session_dir, app, client):
    events = [{"message_id": f"m{i}", "event_type": "transcript_entry", "agent_id": "a",
               "role": "user" if i % 2 else "assistant", "content": f"line {i}"} for i in range(900)]
    write_events(session_dir / "long.jsonl", events)
    app.extensions["agentview"].library.scan()
    doc = parse(get(client, "/s/long/agents/a?kind=heard").data)
    assert article_ids(doc)[:3] == ["m1", "m3", "m5"] and len(article_ids(doc)) == 200
    later = [a for a in doc.find_all("nav", **{"class": "pager"})[0].find_all("a") if "later" in a.text][0]
    assert parse_qs(urlsplit(later.attrs["href"]).query) == {"kind": ["heard"], "start": ["200"]}
    last = parse(get(client, "/s/long/agents/a?kind=heard&start=400").data)
    poll = parse_qs(urlsplit(last.by_id("av-poller").attrs["hx-get"]).query)
    assert poll["kind"] == ["heard"]
    write_events(session_dir / "long.jsonl", [
        {"message_id": "n1", "event_type": "transcript_entry", "agent_id": "a", "role": "assistant", "content": "x"},
        {"message_id": "n2", "event_type": "transcript_entry", "agent_id": "a", "role": "user", "content": "y"}],
        mode="a")
    app.extensions["agentview"].library.scan()
    fragment = parse(get(client, f"/s/long/poll/agent?agent=a&kind=heard&after={poll['after'][0]}").data)
    appended = [e for e in fragment.children if e.attrs.get("hx-swap-oob") == "beforeend:#av-entries"]
    assert [a.attrs["id"] for e in appended for a in e.find_all("article")] == ["n2"]
    data = api(client, "/api/sessions/long/agents/a?kind=heard&limit=3")
    assert [e["message_id"] for e in data["transcript"]] == ["m1", "m3", "m5"] and data["total"] == 451
    assert "kind=heard" in data["next"] and "kind=heard" in data["url"]


def test_agent_page_links_its_neighbours_in_the_tree(client):
    doc = parse(get(client, "/s/example2_inner_monologue/agents/agent_jill").data)
    nav = doc.find_all("nav", **{"class": "agent-nav"})[0]
    assert [(a.attrs["data-key"], a.attrs["href"]) for a in nav.find_all("a")] == [
        ("[", "/s/example2_inner_monologue/agents/agent_jack"),
        ("]", "/s/example2_inner_monologue/agents/agent_jill_inner")]


def test_search_page_groups_deliveries_counts_all_hits_and_explains_an_unclosed_quote(tmp_path):
    from conftest import write_events
    from events import created, say, user
    from viewer.web.app import create_app

    write_events(tmp_path / "relay.jsonl", [
        created("c0", "boss", name="Boss"), created("c1", "ann", name="Ann"), created("c2", "bob", name="Bob"),
        say("m1", "boss", "please rotate the zebra keys"),
        user("d1", "ann", "please rotate the zebra keys", substance="m1"),
        user("d2", "bob", "please rotate the zebra keys", substance="m1"),
        say("m2", "ann", "zebra keys rotated"),
    ])
    client = create_app(tmp_path, watch=False).test_client()
    doc = parse(get(client, "/search?q=zebra").data)
    rows = hits_on(doc)
    assert [int(r.attrs["data-hits"]) for r in rows] == [3, 1]
    assert "said by Boss, delivered to Ann and Bob" in rows[0].text
    assert doc.by_id("av-hits-total").text == "4 hits"
    body = get(client, '/search?q=zebra "rotate the').data.decode()
    assert "is not closed" in body and "<code>rotate the</code>" in body
    assert "is not closed" not in get(client, '/search?q="rotate the"').data.decode()


def test_the_keys_help_lists_every_key_the_pages_answer(client):
    import re

    from conftest import REPO
    help_text = get(client, "/").data.decode().split('id="av-keys"')[1].split("</dialog>")[0]
    scripts = "".join((REPO / "static" / name).read_text() for name in ("agentview.js", "agentview-flow.js"))
    keys = set(re.findall(r'key === "(.)"', scripts)) | set(re.findall(r'"(.)": "(?:prev|next)"', scripts))
    assert keys >= {"/", "?", "j", "k", "o", "[", "]", ",", "."}
    for key in keys:
        assert f"<kbd>{key}</kbd>" in help_text, key


def test_the_search_page_says_when_its_total_is_a_lower_bound_and_why(tmp_path):
    from viewer.web.app import create_app

    write_events(tmp_path / "s.jsonl", [created("c", "a")] + [say(f"m{i}", "a", "alpha beta gamma") for i in range(30)])
    app = create_app(tmp_path, watch=False)
    client = app.test_client()
    doc = parse(get(client, "/search?q=alpha+beta&limit=5").data)
    assert doc.by_id("av-hits-total").text == "30 hits" and doc.by_id("av-hits-bound") is None
    # A phrase is checked on the page's hits only: "5+", and how many events could hold it.
    doc = parse(get(client, '/search?q="alpha beta"&limit=5').data)
    assert doc.by_id("av-hits-total").text == "5+ hits"
    assert doc.by_id("av-hits-bound").text == "(at least 5, at most 30: only the hits on this page were checked for the exact phrase)"
    assert parse(get(client, '/search?q="alpha beta"').data).by_id("av-hits-total").text == "30 hits"  # one page
    assert api(client, '/api/search?q="alpha beta"&limit=5')["total"] == {"count": 5, "exact": False, "at_most": 30}
    assert api(client, "/api/search?q=alpha+beta&limit=5")["total"] == {"count": 30, "exact": True, "at_most": None}
    # Past its budget the count stops: a lower bound, worded as one.
    app.config["SEARCH_COUNT_BUDGET"] = 12  # (a query not counted yet: a complete count is kept)
    doc = parse(get(client, "/search?q=alpha+gamma&limit=5").data)
    assert doc.by_id("av-hits-total").text == "12+ hits"
    assert "at least 12, at most 30: counting them all would take too long" in doc.by_id("av-hits-bound").text
