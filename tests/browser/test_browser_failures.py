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
