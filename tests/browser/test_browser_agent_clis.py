"""Gemini CLI and GitHub Copilot CLI folders in a real browser (the sample sessions, served as the CLIs' own
`~/.gemini/tmp` and `~/.copilot/session-state`): listed with project and title, the tree two sub-agents deep, a
sub-agent's perspective reached from the call that started it and back, the dialog across them, appends shown
live, and at 360 px no page scrolls sideways."""

import json
import shutil
from dataclasses import dataclass

import pytest
from conftest import SAMPLES, serve
from page_kinds import wider_than_the_screen
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


@dataclass
class Case:
    sample: str
    label: str
    session: str
    title: str
    project: str
    sub: str  # started by a call of the main agent
    nested: str  # started by a call of `sub`
    sub_says: str  # something on the sub-agent's page
    nested_says: str  # the nested sub-agent's answer
    appended: tuple[str, dict]  # a file below the folder and a line the CLI appends to it


GEMINI = Case("gemini", "Gemini CLI", "shop:chats:session-2026-04-20T10-00-5f1c2a3b",
              "Login test fails on an expired fixture token", "shop",
              "agent-7a1b2c3d-1111-4222-8333-944455566677", "agent-9c2d3e4f-2222-4333-8444-a55566677788",
              "Find where TOKEN is made for the tests", "It expires on 2026-03-01.",
              ("shop/chats/session-2026-04-20T10-00-5f1c2a3b.jsonl",
               {"id": "g-9", "timestamp": "2026-04-20T10:05:00.000Z", "type": "gemini", "content": "One more thing.",
                "model": "gemini-2.5-pro", "thoughts": [], "tokens": None}))
COPILOT = Case("copilot", "GitHub Copilot CLI", "b7e3c1d2-4a5f-4b6c-9d8e-0f1a2b3c4d5e:events",
               "Checkout totals off by a cent", "shop", "agent-toolu_02", "agent-toolu_04",
               "Find every place totals are rounded", "Yes: floats lose the cent; sum Decimals.",
               ("b7e3c1d2-4a5f-4b6c-9d8e-0f1a2b3c4d5e/events.jsonl",
                {"id": "late", "timestamp": "2026-05-11T14:05:00.000Z", "parentId": None, "type": "assistant.message",
                 "data": {"messageId": "m-late", "content": "One more thing.", "toolRequests": []}}))


@pytest.fixture(params=[GEMINI, COPILOT], ids=lambda c: c.sample)
def served(request, tmp_path):
    case = request.param
    folder = tmp_path / case.sample
    shutil.copytree(SAMPLES / case.sample, folder, ignore=shutil.ignore_patterns("*.py"))
    with serve(folder) as server:
        yield case, server


def test_the_tree_a_sub_agent_from_its_call_and_back_and_the_dialog(served, page):
    case, server = served
    page.goto(server.url + "/")
    row = page.locator("#av-sessions tr").filter(has_text=case.title).first
    expect(row).to_contain_text(case.label)
    # its project heads the rows of its sessions
    expect(page.locator("#av-sessions tr.project code", has_text=case.project)).to_be_visible()
    page.goto(f"{server.url}/s/{case.session}")
    nested = page.locator(f'li.node[data-agent="main"] li.node[data-agent="{case.sub}"] '
                          f'li.node[data-agent="{case.nested}"] a.agent-name').first
    expect(nested).to_be_visible()
    page.goto(f"{server.url}/s/{case.session}/agents/main")
    spawned = page.locator(f'ul.spawned a[href*="/agents/{case.sub}"]').first
    spawned.click()
    expect(page).to_have_url(f"{server.url}/s/{case.session}/agents/{case.sub}")
    expect(page.locator("main")).to_contain_text(case.sub_says)
    back = page.locator('a[href*="/agents/main#"]').first
    anchor = back.get_attribute("href").rsplit("#", 1)[1]
    back.click()
    expect(page).to_have_url(f"{server.url}/s/{case.session}/agents/main#{anchor}")
    expect(page.locator(f'ul.spawned a[href*="/agents/{case.sub}"]').first).to_be_visible()
    agents = "&".join(f"agents={a}" for a in ("main", case.sub, case.nested))
    page.goto(f"{server.url}/s/{case.session}/dialog?{agents}")
    expect(page.locator("#av-dialog")).to_contain_text(case.nested_says)


def test_a_line_the_cli_appends_shows_on_the_open_page(served, page):
    case, server = served
    rel, line = case.appended
    page.goto(f"{server.url}/s/{case.session}/agents/main")
    page.locator("#av-poller").wait_for(state="attached")
    with open(server.folder / rel, "a") as f:
        f.write(json.dumps(line) + "\n")
    expect(page.locator("main")).to_contain_text("One more thing.", timeout=10000)


def test_no_page_scrolls_sideways_on_a_phone(served, page):
    case, server = served
    session = f"/s/{case.session}"
    paths = ("/", session, f"{session}/agents/main", f"{session}/agents/{case.sub}", f"{session}/agents/{case.nested}",
             f"{session}/dialog?agents=main&agents={case.sub}&agents={case.nested}")
    assert wider_than_the_screen(page, server.url, paths, answering=True) == {}


def test_a_gemini_message_appended_again_with_its_call_grows_on_the_open_page(tmp_path, page):
    folder = tmp_path / "gemini"
    shutil.copytree(SAMPLES / "gemini", folder, ignore=shutil.ignore_patterns("*.py"))
    rel, message = GEMINI.appended
    with serve(folder) as server:
        page.goto(f"{server.url}/s/{GEMINI.session}/agents/main")
        page.locator("#av-poller").wait_for(state="attached")
        with open(folder / rel, "a") as f:
            f.write(json.dumps(message) + "\n")
        expect(page.locator("main")).to_contain_text("One more thing.", timeout=10000)
        call = {"id": "c-9", "name": "glob", "args": {"pattern": "*.py"}, "status": "success", "timestamp": "x",
                "result": [{"functionResponse": {"id": "c-9", "name": "glob", "response": {"output": "a.py"}}}]}
        with open(folder / rel, "a") as f:  # recordToolCalls: the same message again, with its call
            f.write(json.dumps({**message, "toolCalls": [call]}) + "\n")
        expect(page.locator(".call .tool", has_text="glob")).to_be_visible(timeout=10000)
        expect(page.locator("main")).to_contain_text("a.py")
