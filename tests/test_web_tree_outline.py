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
