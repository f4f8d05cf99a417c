"""An OpenCode database in a real browser: the session's tree (child sessions two levels down), a sub-agent's
perspective reached from the task call that made it and back, the dialog across them, and a phone's width."""

import pytest
from conftest import serve
from opencode_db import ROOT, write_sample
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
SESSION = f".local:share:opencode:opencode.db:{ROOT}"
CHILD, GRANDCHILD = "session-ChildBBBBBBB", "session-GrandCCCCCCC"


@pytest.fixture
def opencode_server(tmp_path):
    (tmp_path / ".local" / "share" / "opencode").mkdir(parents=True)
    write_sample(tmp_path / ".local" / "share" / "opencode" / "opencode.db").close()
    with serve(tmp_path) as server:
        yield server


def test_the_tree_a_sub_agent_from_its_task_call_and_back_and_their_dialog(opencode_server, page):
    base = f"{opencode_server.url}/s/{SESSION}"
    page.goto(opencode_server.url + "/")
    expect(page.locator("#av-sessions .badge.format", has_text="OpenCode").first).to_be_visible()
    expect(page.locator("#av-sessions")).to_contain_text("Fix the parser's last token")
    page.goto(base)
    grandchild = page.locator(f'li.node[data-agent="main"] li.node[data-agent="{CHILD}"] '
                              f'li.node[data-agent="{GRANDCHILD}"] a.agent-name').first
    expect(grandchild).to_contain_text("List test files (@explore subagent)")
    page.goto(f"{base}/agents/main")
    task = page.locator(".call", has=page.locator(".tool", has_text="task"))
    expect(page.locator(".results", has_text="Error: File not found").first).to_be_visible()
    task.locator("ul.spawned a").first.click()  # the call's "created" link: the sub-agent's perspective
    expect(page).to_have_url(f"{base}/agents/{CHILD}")
    expect(page.locator("main")).to_contain_text("tests/test_parse.py covers parse().")
    page.locator("p.meta a", has_text="task(").click()  # "created by": back to the call
    expect(page).to_have_url(f"{base}/agents/main#prt_007")
    page.goto(f"{base}/dialog?agents=main&agents={CHILD}")
    dialog = page.locator("#av-dialog")
    expect(dialog).to_contain_text("Which tests cover parse()?")
    expect(dialog).to_contain_text("tests/test_parse.py covers parse().")


def test_no_opencode_page_scrolls_sideways_on_a_phone(opencode_server, page):
    page.set_viewport_size({"width": 360, "height": 740})
    base = f"{opencode_server.url}/s/{SESSION}"
    wide = {}
    for path in ("/", f"/s/{SESSION}", f"/s/{SESSION}/agents/main", f"/s/{SESSION}/agents/{CHILD}",
                 f"/s/{SESSION}/dialog?agents=main&agents={CHILD}"):
        page.goto(opencode_server.url + path)
        page.wait_for_load_state("networkidle")
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > 360:
            wide[path] = width
    assert wide == {}, base
