"""Entries as a conversation, in a real Chromium: tool output exactly as logged (never Markdown; ANSI colours as
escaped spans), edits as diffs with line counts, a file written whole highlighted, parallel calls grouped, who
speaks in the reader's words with the perspective's kind beside it, ids in a per-entry menu, a sub-agent inline
in the call that started it, the Focused / Full switch remembered, and nothing wider than a phone."""

import re
import shutil

import pytest
from claude_lines import Transcript
from conftest import SAMPLES, serve
from page_kinds import wider_than_the_screen
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

SESSION = "5e7a2c1d-0000-4000-8000-00000000e171"
GREP_OUTPUT = 'jobs.py:12:@scheduled("0 3 * * *")\njobs.py:30:@scheduled("*/5 * * * *")\n# not a *heading*'
ANSI_OUTPUT = "\x1b[1;32mPASSED\x1b[0m test_jobs <b>bold?</b>\n\x1b[31m1 failed\x1b[0m"
SID = f"app:{SESSION}"  # a session's id: its folder and its file's name
LONG_OUTPUT = "\n".join(f"row {i}: *{i}*" for i in range(60))


def conversation() -> Transcript:
    t = Transcript(SESSION, "e")
    t.user("Find the nightly jobs and fix the schedule.")
    t.response("msg_1", [{"type": "text", "text": "Looking in **two** places."},
                         {"type": "tool_use", "id": "toolu_grep", "name": "Grep",
                          "input": {"pattern": "@scheduled", "path": "/home/dev/app"}},
                         {"type": "tool_use", "id": "toolu_bash", "name": "Bash",
                          "input": {"command": "pytest -q tests/test_jobs.py", "description": "Run the job tests"}},
                         {"type": "tool_use", "id": "toolu_long", "name": "Bash", "input": {"command": "cat rows.txt"}}])
    t.result("toolu_grep", GREP_OUTPUT)
    t.result("toolu_bash", ANSI_OUTPUT)
    t.result("toolu_long", LONG_OUTPUT)
    t.response("msg_2", [{"type": "tool_use", "id": "toolu_edit", "name": "Edit", "input": {
        "file_path": "/home/dev/app/jobs.py", "old_string": "import os\n@scheduled(\"0 3 * * *\")\ndef nightly():",
        "new_string": "import os\n@scheduled(\"0 4 * * *\")\n@retry(3)\ndef nightly():"}}])
    t.result("toolu_edit", "The file /home/dev/app/jobs.py has been updated.")
    t.response("msg_3", [{"type": "tool_use", "id": "toolu_write", "name": "Write", "input": {
        "file_path": "/home/dev/app/retry.py", "content": "def retry(times):\n    return lambda f: f\n"}}])
    t.result("toolu_write", "File created successfully at: /home/dev/app/retry.py")
    t.response("msg_4", [{"type": "text", "text": "Moved the job to **04:00** and added a retry."}])
    return t


@pytest.fixture
def claude_server(tmp_path):
    conversation().write(tmp_path / "app" / f"{SESSION}.jsonl")
    with serve(tmp_path) as server:
        server.wait_for_session(SID, events=11)
        yield server


def agent_page(server) -> str:
    return f"{server.url}/s/{SID}/agents/main"


def call(page, tool_use_id):
    return page.locator(".call", has=page.locator(f'code:text-is("{tool_use_id}")'))


def test_a_grep_result_reads_exactly_as_logged(claude_server, page):
    page.goto(agent_page(claude_server))
    grep = call(page, "toolu_grep")
    output = grep.locator(".result pre.content.output")
    expect(output).to_have_text(GREP_OUTPUT, use_inner_text=True)  # asterisks, quotes and line breaks kept
    expect(grep.locator(".result em, .result .md")).to_have_count(0)  # never through Markdown
    assert "mono" in output.evaluate("e => getComputedStyle(e).fontFamily")
    # the call's one line: tool, what it searched, its status
    expect(grep.locator("summary.call-head")).to_contain_text("Grep")
    expect(grep.locator("summary.call-head .call-line")).to_have_text("/home/dev/app")
    expect(grep.locator("summary.call-head .call-status")).to_have_text("done")
    expect(grep.locator("summary.call-head .call-duration")).to_have_text("4.0 s")  # response at :02, result at :06


def test_command_output_keeps_its_colours_escaped_and_long_output_folds(claude_server, page):
    page.goto(agent_page(claude_server))
    bash = call(page, "toolu_bash")
    passed = bash.locator(".result span.ansi-fg-32.ansi-bold")
    expect(passed).to_have_text("PASSED")
    expect(bash.locator(".result span.ansi-fg-31")).to_have_text("1 failed")
    expect(bash.locator(".result b")).to_have_count(0)  # markup in output is text
    expect(bash.locator(".result pre.content.output")).to_contain_text("<b>bold?</b>")
    assert "\x1b" not in bash.locator(".result").inner_text()
    long = call(page, "toolu_long").locator("details.long.output")
    expect(long.locator("summary .more")).to_have_text("show all 60 lines")
    expect(long.locator("summary pre.preview")).to_contain_text("row 0: *0*")
    long.locator("summary").click()
    expect(long.locator(".text-block pre.content.output")).to_contain_text("row 59: *59*")


def test_an_edit_is_a_diff_with_line_counts_and_a_write_is_highlighted(claude_server, page):
    page.goto(agent_page(claude_server))
    edit = call(page, "toolu_edit")
    expect(edit.locator("summary.call-head .diff-stat")).to_have_text("+2 \u22121")
    expect(edit.locator("summary.call-head .call-line")).to_have_text("/home/dev/app/jobs.py")
    diff = edit.locator("pre.edit-diff")
    expect(diff.locator(".d-del")).to_have_text(['-@scheduled("0 3 * * *")'])
    expect(diff.locator(".d-add")).to_have_text(['+@scheduled("0 4 * * *")', "+@retry(3)"])
    expect(diff.locator(".d-ctx")).to_have_text([" import os", " def nightly():"])
    assert "\\n" not in diff.inner_text()
    red = diff.locator(".d-del").evaluate("e => getComputedStyle(e).backgroundColor")
    green = diff.locator(".d-add").first.evaluate("e => getComputedStyle(e).backgroundColor")
    assert red != green and "rgba(0, 0, 0, 0)" not in (red, green)
    write = call(page, "toolu_write")
    expect(write.locator("summary.call-head .diff-stat")).to_have_text("+2 \u22120")
    code = write.locator('pre.highlight.file[data-language="python"]')
    expect(code.locator("span.k").first).to_have_text("def")
    expect(code).to_have_text("def retry(times):\n    return lambda f: f\n")


def test_parallel_calls_are_grouped_and_each_opens_in_place(claude_server, page):
    page.goto(agent_page(claude_server))
    group = page.locator(".parallel")
    expect(group).to_have_count(1)
    expect(group.locator(".parallel-head")).to_have_text("parallel · 3 calls")
    expect(group.locator(":scope > .call")).to_have_count(3)
    expect(group).to_have_attribute("aria-label", "parallel · 3 calls")
    grep = call(page, "toolu_grep")
    body = grep.locator("details.call-body")
    output = grep.locator(".result pre.content.output")
    expect(output).to_be_visible()
    grep.locator("summary.call-head").click()  # folds to its one line, in place
    expect(output).to_be_hidden()
    expect(body).not_to_have_attribute("open", "")
    grep.locator("summary.call-head").click()
    expect(output).to_be_visible()


def test_who_speaks_and_the_entry_menu(claude_server, page):
    page.goto(agent_page(claude_server))
    entries = page.locator("#av-entries > article.entry:not(.bookkeeping)")
    heads = entries.locator(":scope > h3.entry-head")
    expect(heads.first.locator(".speaker")).to_have_text("User")
    expect(heads.first.locator(".kind")).to_have_text("heard")  # the perspective's meaning, quietly
    expect(heads.nth(1).locator(".speaker")).to_have_text("Assistant")
    expect(heads.nth(1).locator(".kind")).to_have_text("did")
    expect(heads.last.locator(".kind")).to_have_text("said")
    expect(call(page, "toolu_grep").locator(".result .speaker")).to_have_text("Tool")
    # ids, the link and the JSON are in the entry's menu, not on its face
    first = entries.first
    expect(first.locator(".ids a.msg")).to_be_hidden()
    menu = first.locator(":scope > details.entry-menu")
    menu.locator(":scope > summary").click()
    expect(menu.locator(".ids a.msg")).to_be_visible()
    expect(menu.locator("a.json")).to_have_attribute("href", f"/api/sessions/{SID}/messages/e-0001")
    menu.locator(".copy-link").click()
    expect(menu.locator(".copy-link")).to_have_text("copied")
    menu.locator("details.raw > summary").click()  # the record the entry was read from
    expect(menu.locator("details.raw pre.content")).to_contain_text('"sessionId"')


def test_focused_and_full_are_one_switch_remembered_across_reloads(claude_server, page):
    page.goto(agent_page(claude_server))
    switch = page.get_by_role("group", name="What entries show")
    focused, full = switch.get_by_role("button", name="Focused"), switch.get_by_role("button", name="Full")
    expect(full).to_have_attribute("aria-pressed", "true")
    output = call(page, "toolu_grep").locator(".result pre.content.output")
    expect(output).to_be_visible()
    focused.click()
    expect(focused).to_have_attribute("aria-pressed", "true")
    expect(output).to_be_hidden()  # each call folded to its one line
    expect(call(page, "toolu_grep").locator("summary.call-head")).to_be_visible()
    page.reload()
    expect(page.get_by_role("button", name="Focused")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("html")).to_have_attribute("data-view", "focused")
    expect(call(page, "toolu_grep").locator(".result pre.content.output")).to_be_hidden()
    page.get_by_role("button", name="Full").click()
    page.reload()
    expect(page.get_by_role("button", name="Full")).to_have_attribute("aria-pressed", "true")
    expect(call(page, "toolu_grep").locator(".result pre.content.output")).to_be_visible()


def test_the_filters_are_folded_but_reachable_and_their_urls_work(claude_server, page):
    page.goto(agent_page(claude_server) + "?kind=said")
    folded = page.locator("details.filter-panel")
    expect(folded).to_have_attribute("open", "")  # filters on: shown open
    expect(page.locator("#av-entries > article.entry")).to_have_count(1)
    page.goto(agent_page(claude_server))
    expect(page.get_by_role("form", name="Filter messages")).to_be_hidden()
    folded.locator(":scope > summary").click()
    page.get_by_role("form", name="Filter messages").get_by_label("said").check()
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(re.escape(agent_page(claude_server) + "?kind=said")))
    expect(page.locator("#av-entries > article.entry")).to_have_count(1)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_nothing_scrolls_sideways_at_360_px(claude_server, browser, scheme):
    context = browser.new_context(viewport={"width": 360, "height": 800}, color_scheme=scheme)
    page = context.new_page()
    path = f"/s/{SID}/agents/main"
    assert wider_than_the_screen(page, claude_server.url, [path]) == {}
    page.get_by_role("button", name="Expand all texts").click()  # long outputs open, a menu open
    page.locator("#av-entries > article.entry > details.entry-menu > summary").first.click()
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    context.close()


def test_a_task_call_shows_its_sub_agent_inline_and_opens_it(tmp_path, page):
    folder = tmp_path / "copilot"
    shutil.copytree(SAMPLES / "copilot", folder, ignore=shutil.ignore_patterns("*.py"))
    session, sub = "b7e3c1d2-4a5f-4b6c-9d8e-0f1a2b3c4d5e:events", "agent-toolu_02"
    with serve(folder) as server:
        page.goto(f"{server.url}/s/{session}/agents/main")
        inline = page.locator("li.sub-agent", has=page.locator(f'a[href*="/agents/{sub}"]'))
        expect(inline.locator("a.agent")).to_have_text("Explore Agent")
        expect(inline.locator(".agent-facts")).to_contain_text("entries")
        expect(inline.locator(".agent-outcome .call-status")).to_have_text("done")
        inline.locator("a.agent").click()
        expect(page).to_have_url(f"{server.url}/s/{session}/agents/{sub}")


@pytest.mark.parametrize("width", [1440, 360])
def test_a_message_page_reads_as_the_conversation_and_keeps_its_causality_first(claude_server, page, width):
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(agent_page(claude_server))
    result_id = call(page, "toolu_grep").locator(".result").get_attribute("id")
    call_id = page.locator("article.entry", has=call(page, "toolu_grep")).get_attribute("id")
    page.goto(f"{claude_server.url}/s/{SID}/messages/{result_id}")
    expect(page.locator("h1")).to_have_text(re.compile(r"received a tool's result\s+" + re.escape(result_id) + "$"))
    entry = page.locator(".message-entry article.entry")
    expect(entry.locator("h3.entry-head .speaker")).to_have_text("Tool")
    output = entry.locator("pre.content.output")
    expect(output).to_have_text(GREP_OUTPUT, use_inner_text=True)  # as written, never through Markdown
    expect(entry.locator("em, .md")).to_have_count(0)
    menu = entry.locator(":scope > details.entry-menu")  # its id and JSON in the entry's menu
    menu.locator(":scope > summary").click()
    expect(menu.locator("a.json")).to_have_attribute("href", f"/api/sessions/{SID}/messages/{result_id}")
    # its causality chain, right below it: the call it answers, then itself, each step one click away
    steps = page.get_by_role("region", name="How it came to be").locator("ol.flow > li")
    expect(steps).to_have_count(2)
    expect(steps.last).to_have_attribute("aria-current", "true")
    expect(steps.first.locator(".snippet")).to_contain_text("Grep(")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    steps.first.locator("a.msg").click()
    expect(page).to_have_url(f"{claude_server.url}/s/{SID}/messages/{call_id}")
    expect(page.locator("h1")).to_contain_text("called Grep, Bash")
    expect(page.locator(".message-entry .call")).to_have_count(3)  # its calls as the transcript draws them


def test_each_model_turn_says_how_long_it_took(claude_server, page):
    page.goto(agent_page(claude_server))
    heads = page.locator("#av-entries > article.entry:not(.bookkeeping) > h3.entry-head")
    expect(heads.first.locator(".turn-duration")).to_have_count(0)  # the user's message: no turn of a model
    turn = heads.nth(1).locator(".turn-duration")  # the prompt at :01, the response at :02
    expect(turn).to_have_text("turn 1.0 s")
    expect(turn).to_have_attribute("title", "from the input it answered to this response")
    expect(heads.nth(2).locator(".turn-duration")).to_have_text("turn 1.0 s")  # the last result at :08, the edit at :09


def test_an_entrys_time_is_said_as_people_say_it_with_the_logged_time_on_hover(claude_server, page):
    page.goto(agent_page(claude_server))
    stamp = page.locator("#av-entries > article.entry:not(.bookkeeping) time.stamp").first
    expect(stamp).to_have_text(re.compile(r"^Mar 1, (\d\d:\d\d( [AP]M)?|2026)$"))
    expect(stamp).to_have_attribute("title", re.compile(r"\(2026-03-01T10:00:01\.000Z\)$"))
