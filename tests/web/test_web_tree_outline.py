"""The agent tree beside an agent's transcript (web/tree_outline.py): links that open each agent, nesting, ?at=N."""

from conftest import write_events
from dom import parse
from events import calls, created, tool_call
from viewer.web.app import create_app


def test_every_link_of_the_side_tree_opens_its_agent_even_with_odd_ids(tmp_path):
    odd = ["a/b", "c#d", "e?f", "g h%", "ünï"]
    write_events(tmp_path / "odd.jsonl", [
        created("m0", "root"), calls("m1", "root", *(tool_call(f"c{i}", name=a) for i, a in enumerate(odd))),
        *(created(f"m{i + 2}", a, cause="m1", name=f"Agent {a}") for i, a in enumerate(odd)),
    ])
    client = create_app(tmp_path, watch=False).test_client()
    page = client.get("/s/odd/agents/c%23d?at=7")
    assert page.status_code == 200
    tree = parse(page.data).by_id("av-agent-tree")
    links = tree.find_all("a")
    assert [a.text for a in links] == ["root", *(f"Agent {a}" for a in odd)]
    assert [a.attrs.get("aria-current") for a in links] == [None, None, "page", None, None, None]
    for link in links:
        href = link.attrs["href"]
        assert href.endswith("?at=7")  # the frozen view stays frozen
        assert client.get(href).status_code == 200
    nested = tree.find_all("ul")[1]  # the root's children
    assert len([li for li in nested.children if li.tag == "li"]) == len(odd)


def test_the_side_tree_is_kept_per_session_version_and_marks_the_agent_of_each_page(tmp_path):
    from events import say
    from test_security import SECRETS
    from viewer.core.redact import mask

    key = SECRETS["openai"]
    masked = mask(f"Ann {key}")
    assert key not in masked
    path = tmp_path / "team.jsonl"
    write_events(path, [created("m0", "root"), calls("m1", "root", tool_call("c1"), tool_call("c2")),
                        created("m2", "ann", cause="m1", name=f"Ann {key}"), created("m3", "bob", cause="m1")])
    app = create_app(tmp_path, watch=False)
    client = app.test_client()

    def side_tree(url):
        tree = parse(client.get(url).data).by_id("av-agent-tree")
        return [(a.text, a.attrs.get("aria-current")) for a in tree.find_all("a")]

    assert side_tree("/s/team/agents/ann") == [("root", None), (masked, "page"), ("bob", None)]
    # The same tree served again for another agent: only that agent is marked.
    assert side_tree("/s/team/agents/bob") == [("root", None), (masked, None), ("bob", "page")]
    # Events arrive: a new agent, a name given later; the next page shows them.
    write_events(path, [calls("m4", "bob", tool_call("c3")), created("m5", "cid", cause="m4", name="Cid"),
                        say("m6", "cid", "hello")], mode="a")
    app.extensions["agentview"].library.scan()
    assert side_tree("/s/team/agents/cid") == [("root", None), (masked, None), ("bob", None), ("Cid", "page")]
    # Frozen at an earlier event: that session's tree, its links frozen too; the live one is still right.
    frozen = parse(client.get("/s/team/agents/bob?at=4").data).by_id("av-agent-tree").find_all("a")
    assert [a.text for a in frozen] == ["root", masked, "bob"]
    assert all(a.attrs["href"].endswith("?at=4") for a in frozen)
    assert side_tree("/s/team/agents/ann")[-1] == ("Cid", None)
    # Revealing secrets is a tree of its own, and masking again is the masked one.
    client.set_cookie("agentview_reveal", "1")
    assert side_tree("/s/team/agents/ann")[1] == (f"Ann {key}", "page")
    client.delete_cookie("agentview_reveal")
    assert side_tree("/s/team/agents/ann")[1] == (masked, "page")



def badges(row) -> dict:
    """An agent's status, cost and failures as its row prints them: each span's text and links."""
    def name(e):
        return "status" if "progress" in e.attrs.get("class", "").split() else e.attrs.get("id", "").rsplit("-", 1)[0]

    return {name(e): (" ".join(e.text.split()), [a.attrs["href"] for a in e.find_all("a")])
            for e in row.children if e.tag == "span" and name(e) in ("status", "av-cost", "av-failures")}


def test_the_side_tree_shows_each_agents_status_cost_and_failures_as_the_session_tree_does(tmp_path):
    from events import copy_samples

    folder = copy_samples("ai_agent", tmp_path / "ai")  # costs per operation, failed calls, agents in progress
    app = create_app(folder, watch=False)
    client, library = app.test_client(), app.extensions["agentview"].library
    library.scan()
    shown = []
    for s in library.listing():
        session = parse(client.get(f"/s/{s.id}").data)
        tree = {li.attrs["data-agent"]: badges(li.children[0]) for li in session.by_id("av-tree").find_all("li")}
        for agent_id in tree:
            rail = parse(client.get(f"/s/{s.id}/agents/{agent_id}").data).by_id("av-agent-tree")
            assert {li.children[0].attrs["href"].rsplit("/", 1)[1]: badges(li) for li in rail.find_all("li")} == tree
        shown += tree.values()
    assert any(row.get("status") == ("in progress", []) for row in shown)
    assert any(row["av-cost"][0].startswith("$") for row in shown)
    assert any(row["av-failures"][0].endswith("failed") for row in shown)


def test_the_session_trees_and_pickers_names_and_ids_are_each_escaped_and_masked_as_a_template_prints_them(tmp_path):
    from markupsafe import escape
    from test_security import SECRETS

    from viewer.core.redact import mask

    key = SECRETS["anthropic"]
    named = {"quo\"te": "Ann & <b>'Bold'</b>", "nul": "Bob\x00<i>", "sec": f"Cid {key}", "ünï<": "Dée \"&amp;\"",
             "plain": "plain"}  # ids and names: HTML's characters, a NUL, a secret, beyond ASCII, one as its id
    write_events(tmp_path / "odd.jsonl", [
        created("m0", "root"), calls("m1", "root", *(tool_call(f"c{i}", name=a) for i, a in enumerate(named))),
        *(created(f"m{i + 2}", a, cause="m1", name=None if a == n else n) for i, (a, n) in enumerate(named.items())),
    ])
    page = create_app(tmp_path, watch=False).test_client().get("/s/odd")
    assert page.status_code == 200 and key.encode() not in page.data
    tree, picker = parse(page.data).by_id("av-tree"), parse(page.data).by_id("av-picker")
    assert [li.attrs["data-agent"] for li in tree.find_all("li")] == ["root", *named]
    names = [a.text for a in tree.find_all("a") if "agent-name" in a.attrs.get("class", "")]
    assert names == ["root", *(mask(n) for n in named.values())]
    assert [label.text.strip() for label in picker.find_all("label")] == [
        "root", *(mask(n) if a == n else f"{mask(n)} {a}" for a, n in named.items())]
    for agent_id, name in named.items():  # the bytes a template writes: markupsafe's escape of the masked value
        printed = str(escape(mask(name))).encode()
        assert f' data-agent="{escape(agent_id)}">'.encode() in page.data
        assert b'">' + printed + b"</a>\n" in page.data  # its link in the tree
        assert f'value="{escape(agent_id)}"> '.encode() + printed in page.data  # its checkbox in the picker
