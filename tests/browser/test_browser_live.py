"""Live pages say what changed, in a real Chromium: counts, sub-agents and the slider's range follow the
log; new entries below the fold bring a "N new below" pill; "follow" keeps the newest in view."""

import re

import pytest
from playwright.sync_api import expect

from conftest import serve, write_events
from events import calls, created, result, say, tool_call, user

pytestmark = pytest.mark.browser


@pytest.fixture
def live(tmp_path):
    folder = tmp_path / "sessions"
    events = [created("c0", "root", name="Root")] + [
        say(f"m{i}", "root", f"entry {i}\n" + "filler line\n" * 5) for i in range(12)]
    write_events(folder / "grow.jsonl", events)
    with serve(folder) as server:
        server.wait_for_session("grow", events=len(events))
        yield server, folder / "grow.jsonl", len(events)


def test_session_header_and_slider_follow_appends(live, page):
    server, path, count = live
    page.goto(f"{server.url}/s/grow")
    expect(page.locator("#av-session-events")).to_have_text(str(count))
    expect(page.locator("#av-at")).to_have_attribute("max", str(count))
    with open(path, "a", encoding="utf-8") as f:
        f.write("{not json\n")  # first: a poll answers when events arrive, and these come with it or after
    write_events(path, [calls("m-call", "root", tool_call("t1", "task", name="Writer")),
                        created("c1", "writer", cause="m-call", name="Writer")], mode="a")
    expect(page.locator("#av-session-events")).to_have_text(str(count + 2))
    expect(page.locator("#av-session-agents")).to_have_text("2")
    expect(page.locator("#av-at")).to_have_attribute("max", str(count + 2))
    expect(page.locator("#av-at-total")).to_have_text(str(count + 2))
    expect(page.locator("#av-at-value")).to_have_text(str(count + 2))
    expect(page.locator("#av-session-problems")).to_contain_text("1 problem")


def test_agent_header_counts_pill_and_follow(live, page):
    server, path, count = live
    page.set_viewport_size({"width": 1000, "height": 600})
    page.goto(f"{server.url}/s/grow/agents/root")
    expect(page.locator("#av-agent-entries")).to_have_text("12")
    page.evaluate("window.scrollTo(0, 0)")
    write_events(path, [calls("m-call", "root", tool_call("t1", "task", name="Writer")),
                        created("c1", "writer", cause="m-call", name="Writer"),
                        say("m-late", "root", "a late answer")], mode="a")
    expect(page.locator("#av-agent-entries")).to_have_text("14")
    expect(page.locator("#av-agent-children")).to_contain_text("sub-agents: Writer")
    pill = page.locator("#av-new-below")
    expect(pill).to_be_visible()
    expect(pill).to_have_text("2 new below")
    pill.click()
    expect(page.locator('[id="m-call"]')).to_be_in_viewport()
    expect(pill).to_be_hidden()
    # follow: the newest entry is scrolled into view as it arrives, and no pill is needed
    page.get_by_label("follow new entries").check()
    page.evaluate("window.scrollTo(0, 0)")
    write_events(path, [say("m-last", "root", "the very last")], mode="a")
    expect(page.locator('[id="m-last"]')).to_be_in_viewport()
    expect(pill).to_be_hidden()


def test_dialog_header_counts_follow_appends_and_problems_without_events(tmp_path, page):
    folder = tmp_path / "sessions"
    path = folder / "talk.jsonl"
    events = [created("c0", "ann", name="Ann"), created("c1", "bob", name="Bob"),
              say("m1", "ann", "hello Bob"), user("d1", "bob", "hello Bob", substance="m1")]
    write_events(path, events)
    with serve(folder) as server:
        server.wait_for_session("talk", events=len(events))
        page.goto(f"{server.url}/s/talk/dialog?agents=ann,bob")
        expect(page.locator("#av-dialog-messages")).to_have_text("1 message")
        expect(page.locator("#av-session-problems")).to_have_text("")
        write_events(path, [say("m2", "bob", "hello Ann"), user("d2", "ann", "hello Ann", substance="m2")], mode="a")
        expect(page.locator("#av-dialog article.dialog-item")).to_have_count(2)
        expect(page.locator("#av-dialog-messages")).to_have_text("2 messages")
        with open(path, "a", encoding="utf-8") as f:  # a line skipped: a problem, no event
            f.write("{not json\n")
        expect(page.locator("#av-session-problems")).to_contain_text("1 problem")
        expect(page.locator("#av-dialog-messages")).to_have_text("2 messages")


def test_session_header_shows_a_problem_that_came_without_events(live, page):
    server, path, count = live
    page.goto(f"{server.url}/s/grow")
    expect(page.locator("#av-session-events")).to_have_text(str(count))
    with open(path, "a", encoding="utf-8") as f:
        f.write("{not json\n")
    expect(page.locator("#av-session-problems")).to_contain_text("1 problem")
    expect(page.locator("#av-session-events")).to_have_text(str(count))
    write_events(path, [say("m-next", "root", "still live")], mode="a")  # the poll goes on from there
    expect(page.locator("#av-session-events")).to_have_text(str(count + 1))


def test_the_pagers_of_a_live_dialog_page_follow_appends(tmp_path, page):
    """The last page of a long dialog grows as messages arrive: its pagers ("3–4 of 4") say so."""
    folder = tmp_path / "sessions"
    path = folder / "talk.jsonl"
    events = [created("c0", "ann", name="Ann"), created("c1", "bob", name="Bob")]
    for i in range(4):
        events += [say(f"m{i}", "ann", f"hello {i}"), user(f"d{i}", "bob", f"hello {i}", substance=f"m{i}")]
    write_events(path, events)
    with serve(folder) as server:
        server.wait_for_session("talk", events=len(events))
        page.goto(f"{server.url}/s/talk/dialog?agents=ann,bob&limit=2&start=2")
        pagers = page.locator("nav.pager")
        expect(pagers).to_have_count(2)
        expect(pagers.first).to_contain_text("3–4 of 4")
        write_events(path, [say("m9", "bob", "late"), user("d9", "ann", "late", substance="m9")], mode="a")
        expect(page.locator("#av-dialog article.dialog-item")).to_have_count(3)
        for i in range(2):
            expect(pagers.nth(i)).to_contain_text("3–5 of 5")


def test_the_pagers_of_a_live_agent_page_follow_appends(tmp_path, page):
    folder = tmp_path / "sessions"
    path = folder / "grow.jsonl"
    events = [created("c0", "root", name="Root")] + [say(f"m{i}", "root", f"line {i}") for i in range(4)]
    write_events(path, events)
    with serve(folder) as server:
        server.wait_for_session("grow", events=len(events))
        page.goto(f"{server.url}/s/grow/agents/root?limit=2&start=2")
        pagers = page.locator("nav.pager")
        expect(pagers.first).to_contain_text("3–4 of 4")
        write_events(path, [say("m9", "root", "late")], mode="a")
        expect(page.locator("#av-entries article")).to_have_count(3)
        for i in range(2):
            expect(pagers.nth(i)).to_contain_text("3–5 of 5")


def at(event, second):
    return {**event, "timestamp": f"2026-02-01T10:00:{second:02d}.000Z"}


def test_a_calls_state_and_its_sub_agents_facts_follow_the_log_without_redrawing_the_page(tmp_path, page):
    folder = tmp_path / "sessions"
    events = [created("c0", "root", name="Root"), at(calls("m-call", "root", tool_call("t1", "task", name="Writer")), 0),
              created("c1", "writer", cause="m-call", name="Writer"), at(say("w1", "writer", "a first draft"), 1)]
    path = write_events(folder / "calls.jsonl", events)
    with serve(folder) as server:
        server.wait_for_session("calls", events=len(events))
        page.goto(f"{server.url}/s/calls/agents/root")
        line = page.locator(".call summary.call-head", has=page.locator(".tool", has_text="task"))
        writer = page.locator("li.sub-agent", has=page.locator('a[href$="/agents/writer"]'))
        expect(line.locator(".call-status")).to_have_text("no result")
        expect(writer.locator(".agent-facts")).to_have_text("1 entry")
        page.evaluate("window.drawn = document.getElementById('m-call')")  # the entry the page drew
        write_events(path, [at(say("w2", "writer", "a second draft"), 3)], mode="a")  # the sub-agent writes
        expect(writer.locator(".agent-facts")).to_have_text("2 entries")
        write_events(path, [at(result("r1", "root", "t1", "Writer finished the report"), 5)], mode="a")
        expect(line.locator(".call-status")).to_have_text("done")
        expect(line.locator(".call-duration")).to_have_text("5.0 s")
        expect(writer.locator(".agent-outcome")).to_contain_text("Writer finished the report")
        expect(page.locator(".call .result")).to_have_count(1)
        assert page.evaluate("window.drawn === document.getElementById('m-call') && window.drawn.isConnected")


def test_a_call_whose_result_arrives_as_an_error_turns_red_in_place(tmp_path, page):
    folder = tmp_path / "sessions"
    events = [created("c0", "root", name="Root"), at(calls("m-call", "root", tool_call("t1", "make", target="all")), 0),
              at(calls("m-ok", "root", tool_call("t2", "search", q="log")), 1)]
    path = write_events(folder / "calls.jsonl", events)
    with serve(folder) as server:
        server.wait_for_session("calls", events=len(events))
        page.goto(f"{server.url}/s/calls/agents/root")
        make = page.locator(".call", has=page.locator(".tool", has_text="make"))
        search = page.locator(".call", has=page.locator(".tool", has_text="search"))
        expect(make.locator(".call-status")).to_have_text("no result")
        assert "failed" not in make.get_attribute("class")
        page.evaluate("window.drawn = document.getElementById('m-call')")
        write_events(path, [at(result("r1", "root", "t1", "Error: make failed with exit code 2", name="make"), 4),
                            at(result("r2", "root", "t2", "found no errors", name="search"), 5)], mode="a")
        expect(make.locator(".call-status")).to_have_text("error")
        expect(make).to_have_class(re.compile(r"\bfailed\b"))  # its red box, as a page drawn now has it
        assert make.evaluate("e => getComputedStyle(e).borderLeftStyle") == "solid"
        expect(search.locator(".call-status")).to_have_text("done")
        assert "failed" not in search.get_attribute("class")
        assert page.evaluate("window.drawn === document.getElementById('m-call') && window.drawn.isConnected")


def _writer_and_root(tmp_path):
    """A session of a root agent and the writer it made, who has said one thing: (folder, file, events)."""
    folder = tmp_path / "sessions"
    events = [created("c0", "root", name="Root"), calls("m-call", "root", tool_call("t1", "task", name="Writer")),
              created("c1", "writer", cause="m-call", name="Writer"), say("w1", "writer", "a first draft")]
    return folder, write_events(folder / "team.jsonl", events), events


def test_an_agent_pages_rail_counts_every_agents_entries_as_they_are_logged(tmp_path, page):
    folder, path, events = _writer_and_root(tmp_path)
    with serve(folder) as server:
        server.wait_for_session("team", events=len(events))
        page.set_viewport_size({"width": 1440, "height": 900})
        errors = []  # htmx says so when a fragment's target is not on the page
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        page.goto(f"{server.url}/s/team/agents/writer")
        rail = page.get_by_role("navigation", name="Agents", exact=True)

        def count(agent):
            return rail.locator(f"li:has(> a.agent-name[href$='/agents/{agent}']) > .rail-count")

        expect(count("root")).to_have_text("1")
        expect(count("writer")).to_have_text("1")
        write_events(path, [say("r1", "root", "waiting"), say("r2", "root", "still waiting")], mode="a")
        expect(count("root")).to_have_text("3")  # another agent wrote: only the rail says so
        write_events(path, [say("w2", "writer", "a second draft")], mode="a")
        expect(count("writer")).to_have_text("2")
        expect(page.locator("#av-agent-entries")).to_have_text("2")
        write_events(path, [calls("m-call2", "root", tool_call("t2", "task", name="Critic")),
                            created("c2", "critic", cause="m-call2", name="Critic"), say("k1", "critic", "hm")],
                     mode="a")
        expect(count("critic")).to_have_text("1")  # an agent that appeared: the rail drawn again with it
        expect(count("root")).to_have_text("4")
        expect(rail.locator("a[aria-current=page]")).to_have_text("Writer")
        write_events(path, [say("k2", "critic", "hmm")], mode="a")
        expect(count("critic")).to_have_text("2")
        assert errors == []


def test_an_agent_pages_rail_drawn_again_in_an_open_drawer_keeps_the_readers_place(tmp_path, page):
    folder, path, events = _writer_and_root(tmp_path)
    with serve(folder) as server:
        server.wait_for_session("team", events=len(events))
        page.set_viewport_size({"width": 360, "height": 800})
        page.goto(f"{server.url}/s/team/agents/writer")
        page.get_by_role("button", name="Agents of this session").click()
        drawer = page.get_by_role("dialog", name="Agents of this session")
        root = drawer.get_by_role("link", name="Root", exact=True)
        root.focus()
        write_events(path, [calls("m-call2", "root", tool_call("t2", "task", name="Critic")),
                            created("c2", "critic", cause="m-call2", name="Critic")], mode="a")
        expect(drawer.get_by_role("link", name="Critic")).to_be_visible()  # drawn again, with the new agent
        expect(root).to_be_focused()


def test_a_sub_agents_status_turns_from_running_to_done_on_the_rail_and_the_tree_without_a_reload(tmp_path, page):
    from claude_lines import Transcript
    from test_agent_status import SESSION, SID, write_team

    folder = tmp_path / "logs"
    main, _ = write_team(folder)  # Claude Code: its Task call's result comes when the sub-agent ends
    with serve(folder) as server:
        server.wait_for_session(SID, events=6)
        page.set_viewport_size({"width": 1440, "height": 900})
        page.goto(f"{server.url}/s/{SID}/agents/agent-ab12")
        rail = page.get_by_role("navigation", name="Agents", exact=True)
        on_rail = rail.locator("li:has(> a.agent-name[href$='/agents/agent-ab12']) > .agent-status")
        expect(on_rail).to_have_text("running")
        expect(on_rail).to_have_attribute("title", "its creating call has no result yet")
        expect(rail.locator(".agent-status")).to_have_count(1)  # the main agent has none
        tree_page = page.context.new_page()
        tree_page.goto(f"{server.url}/s/{SID}")
        in_tree = tree_page.locator('li.node[data-agent="agent-ab12"] > .node-row > .agent-status')
        expect(in_tree).to_have_text("running")
        answer = Transcript(SESSION, "an")
        answer.n = 30
        answer.user([{"type": "tool_result", "tool_use_id": "toolu_A", "content": "parse() and lex()"}])
        with main.open("a") as f:
            f.write(answer.text())
        expect(on_rail).to_have_text("done")
        expect(on_rail).to_have_class(re.compile(r"\bstatus-done\b"))
        expect(in_tree).to_have_text("done")
        assert on_rail.evaluate("e => getComputedStyle(e).color") != rail.locator(".rail-count").first.evaluate(
            "e => getComputedStyle(e).color")  # coloured by its status, not muted like the counts
