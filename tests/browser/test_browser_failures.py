"""Failures in a real browser: a failed result under its call is red with its error's first line, the tree's badges
roll up, `/` counts them, and the Failures page lists each linked to its entry; at 360 px and in the dark."""

import pytest
from playwright.sync_api import expect

from conftest import serve, write_events
from events import calls, created, result, say, tool_call, user

pytestmark = pytest.mark.browser

SID = "run"
LIGHT_RED, DARK_RED = "rgb(179, 38, 30)", "rgb(255, 138, 128)"  # --fail in each theme


def write_run(folder):
    write_events(folder / "run.jsonl", [
        created("m0", "root", name="root"), user("m1", "root", "Build it"),
        calls("m2", "root", tool_call("c1", "task", name="builder"), tool_call("c2", "search", q="log")),
        created("m3", "builder", cause="m2", name="builder"),
        result("m4", "root", "c2", "found 2 errors in the log; the error rate is normal", name="search"),
        calls("m5", "builder", tool_call("c3", "make", target="all")),
        result("m6", "builder", "c3", "Error: make failed with exit code 2\nTraceback (most recent call last):\n  x",
               name="make"),
        calls("m7", "root", tool_call("c4", "deploy")),
        result("m8", "root", "c4", "Error: Action blocked by hook 'Guard': deploys are frozen", name="deploy"),
        say("m9", "root", "Done, with errors noted.")])


def test_a_failed_call_the_tree_the_list_and_the_failures_page(tmp_path, page):
    folder = tmp_path / "logs"
    write_run(folder)
    with serve(folder) as server:
        server.wait_for_session(SID, events=10)
        page.goto(f"{server.url}/s/{SID}/agents/builder")
        call = page.locator(".call.failed")
        expect(call).to_have_count(1)
        line = call.locator(".result.failed .failure-line")
        expect(line).to_contain_text("tool error")
        expect(line.locator(".failure-text")).to_have_text("Error: make failed with exit code 2")
        assert line.evaluate("e => getComputedStyle(e).color") == LIGHT_RED
        expect(page.locator("#av-agent-failures")).to_have_text("1 failed")

        page.goto(f"{server.url}/s/{SID}/agents/root")
        expect(page.locator(".result.failed")).to_have_count(1)  # the search that said "errors" succeeded
        expect(page.locator("#av-agent-failures")).to_have_text("1 failed (2 with its sub-agents)")

        page.goto(f"{server.url}/s/{SID}")
        expect(page.locator('li.node[data-agent="root"] > .node-row .node-failures')).to_have_text("2 failed")
        expect(page.locator('li.node[data-agent="builder"] > .node-row .node-failures')).to_have_text("1 failed")
        expect(page.locator("#av-session-failures")).to_have_text("2 failures")

        page.goto(server.url + "/")
        expect(page.locator(f'[id="av-session-{SID}"] .session-failures')).to_have_text("2 failed")
        page.locator(f'[id="av-session-{SID}"] .session-failures').click()

        expect(page).to_have_url(f"{server.url}/s/{SID}/failures")
        items = page.locator("li.failure")
        expect(items).to_have_count(2)
        expect(items.nth(0)).to_contain_text("builder")
        expect(items.nth(0).locator(".failure-text")).to_have_text("Error: make failed with exit code 2")
        expect(items.nth(1)).to_contain_text("refused")
        expect(items.nth(0).locator(".copy-error")).to_be_visible()  # shown once the script runs
        items.nth(1).locator("a.failure-entry").click()
        expect(page).to_have_url(f"{server.url}/s/{SID}/messages/m8")

        page.set_viewport_size({"width": 360, "height": 740})
        page.emulate_media(color_scheme="dark")
        for path in (f"/s/{SID}/failures", f"/s/{SID}/agents/builder"):
            page.goto(server.url + path)
            assert page.evaluate("document.documentElement.scrollWidth") <= 360, path
            text = page.locator(".failure-line .failure-text").first
            assert text.evaluate("e => getComputedStyle(e.parentNode).color") == DARK_RED, path


def test_a_failure_appears_live_in_an_agent_pages_rail_and_header(tmp_path, page):
    folder = tmp_path / "logs"
    path = write_events(folder / "team.jsonl", [
        created("m0", "root", name="root"), calls("m1", "root", tool_call("c1", "task", name="builder")),
        created("m2", "builder", cause="m1", name="builder"), calls("m3", "builder", tool_call("c2", "task")),
        created("m4", "helper", cause="m3", name="helper"), say("m5", "helper", "on it")])
    with serve(folder) as server:
        server.wait_for_session("team", events=6)
        page.set_viewport_size({"width": 1440, "height": 900})
        page.goto(f"{server.url}/s/team/agents/root")
        rail = page.get_by_role("navigation", name="Agents", exact=True)

        def failed(agent):
            return rail.locator(f"li:has(> a.agent-name[href$='/agents/{agent}']) > span > a.node-failures")

        header = page.locator("#av-agent-failures")
        expect(rail.locator("a.agent-name")).to_have_count(3)
        expect(rail.locator(".node-failures")).to_have_count(0)
        expect(header).to_have_count(0)
        # A sub-agent's sub-agent fails: nothing on the page but the rail and the header's rolled-up count.
        write_events(path, [calls("m6", "helper", tool_call("c3", "make", target="all")),
                            result("m7", "helper", "c3", "Error: make failed with exit code 2", name="make")], mode="a")
        expect(failed("helper")).to_have_text("1 failed")
        expect(failed("builder")).to_have_text("1 failed")
        expect(failed("root")).to_have_text("1 failed")
        expect(header).to_have_text("1 failed in its sub-agents")
        expect(failed("root")).to_have_attribute("href", "/s/team/failures?agent=root")
        # Its own call fails: drawn in the transcript, and counted in the rail and the header.
        write_events(path, [calls("m8", "root", tool_call("c4", "deploy")),
                            result("m9", "root", "c4", "Error: deploys are frozen", name="deploy")], mode="a")
        expect(page.locator(".call.failed")).to_have_count(1)
        expect(failed("root")).to_have_text("2 failed")
        expect(header).to_have_text("1 failed (2 with its sub-agents)")
        expect(failed("helper")).to_have_text("1 failed")
