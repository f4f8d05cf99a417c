"""Shared files opened from file:// in a real Chromium with every network request refused: the tree, perspectives,
dialogs (the same items as the server's), search, message links, a phone's width and both colour schemes."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from conftest import SAMPLES, sample, write_events
from events import calls, created, result, say, tool_call, user
from test_share import CLAUDE_FOLDER, CODEX_ROLLOUT, otlp_file
from viewer import cli
from viewer.reads.session_viewer import load_index
from viewer.share import page as share_page
from viewer.web.app import create_app

pytestmark = pytest.mark.browser


def shared(folder: Path, source: Path, *args: str) -> Path:
    out = folder / (source.stem + "".join(args).replace("-", "") + ".html")
    assert cli.main(["share", "-o", str(out), *args, str(source)]) == 0
    return out


def long_session(folder: Path) -> Path:
    """A lead who hears 300 messages from a scout, one of them holding a planted word."""
    events = [created("c1", "lead", name="Lead"), created("c2", "scout", name="Scout", cause="c1")]
    for n in range(300):
        text = "the zanzibar clue is here" if n == 250 else f"note {n} about nothing much"
        events.append(say(f"s{n:03d}", "scout", text))
        events.append(user(f"h{n:03d}", "lead", text, substance=f"s{n:03d}"))
    return write_events(folder / "long.jsonl", events)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("shared")
    inputs = {"native": sample("research_team"), "claude": CLAUDE_FOLDER / "5b1e8c2a-audit.jsonl",
              "codex": CODEX_ROLLOUT, "otlp": otlp_file(folder), "long": long_session(folder),
              "jack_and_jill": sample("example1_jack_and_jill")}
    return {name: shared(folder, path) for name, path in inputs.items()} | {"sources": inputs}


@pytest.fixture
def offline(page):
    """The page may read its own file and nothing else: any other request is refused and remembered."""
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
                       else route.abort())
    yield page
    assert all(url.startswith("file:") for url in asked), f"the shared file asked the network: {asked}"
    assert len(set(asked)) <= 1, asked


def open_shared(page, path: Path, fragment: str = "") -> None:
    page.goto(path.as_uri() + fragment)
    page.wait_for_selector("body[data-ready]")


def everything_rendered(page, timeout: float = 30) -> None:
    """Scroll until the lazily rendered list has no more to add (a loaded machine draws slowly: waited for, up to
    `timeout` seconds, not a fixed number of scrolls)."""
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        if page.locator(".sentinel").count() == 0:
            return
        page.evaluate("document.querySelector('.sentinel')?.scrollIntoView()")  # it may go as more are drawn
        page.wait_for_timeout(20)
    raise AssertionError("the list never finished rendering")


@pytest.mark.parametrize("kind", ["native", "claude", "codex", "otlp"])
def test_the_tree_shows_every_agent_and_a_click_opens_a_perspective(offline, files, kind):
    page = offline
    session = load_index(files["sources"][kind])
    open_shared(page, files[kind])
    tree = page.locator("#tree")
    for agent_id in session.agent_order:
        expect(tree.locator(f'a[data-agent="{agent_id}"]')).to_have_count(1)
    last = session.agent_order[-1]
    tree.locator(f'a[data-agent="{last}"]').click()
    expect(page.locator("main h1")).to_have_text(f"{session.agents[last].display_name}’s perspective")
    assert page.evaluate("location.hash") == f"#agent={last}"
    if session.agents[last].entries:
        expect(page.locator("#entries .entry").first).to_be_visible()


def test_a_perspective_and_a_dialog_open_by_fragment_and_by_click(offline, files):
    page = offline
    open_shared(page, files["jack_and_jill"], "#agent=agent_jill")
    expect(page.locator("main h1")).to_have_text("Jill’s perspective")
    expect(page.locator("#entries .entry")).to_have_count(4)
    page.goto(files["jack_and_jill"].as_uri() + "#dialog=agent_jack,agent_jill")
    expect(page.locator("main h1")).to_have_text("Dialog")
    expect(page.locator("#entries .dialog-item").first).to_be_visible()
    page.locator('#picker input[value="agent_root"]').check()
    page.locator("#picker button").click()
    assert page.evaluate("decodeURIComponent(location.hash)") == "#dialog=agent_root,agent_jack,agent_jill"


@pytest.mark.parametrize("agents", [["agent_root"], ["agent_researcher", "agent_writer"], ["agent_critic", "agent_writer_inner"], None])
def test_a_dialog_holds_the_servers_items_in_the_servers_order(offline, files, tmp_path, agents):
    page = offline
    folder = tmp_path / "served"
    folder.mkdir()
    shutil.copy(sample("research_team"), folder / "research_team.jsonl")
    client = create_app(folder, watch=False).test_client()
    session = client.get("/api/sessions/research_team").get_json()
    chosen = agents or [a["agent_id"] for a in session["agents"]]
    expected = [m["message_id"] for m in
                client.get(f"/api/sessions/research_team/dialog?agents={','.join(chosen)}").get_json()["messages"]]
    open_shared(page, files["native"], "#dialog=" + ",".join(chosen))
    everything_rendered(page)
    shown = page.eval_on_selector_all("#entries .dialog-item", "items => items.map(i => i.id.slice(2))")
    assert shown == expected and expected


def test_search_finds_a_planted_word_and_its_hit_opens_the_message(offline, files):
    page = offline
    open_shared(page, files["long"])
    page.locator("#search-input").fill("zanzibar")
    page.locator("#search-input").press("Enter")
    hits = page.locator("#hits li")
    expect(hits).to_have_count(2)  # said by the scout, heard by the lead
    expect(hits.first.locator("mark")).to_have_text("zanzibar")
    hits.first.locator("a").first.click()
    target = page.locator(".entry.target")
    expect(target).to_be_in_viewport()
    expect(target).to_contain_text("zanzibar")


def test_a_messages_fragment_scrolls_to_it_with_how_it_came_to_be(offline, files):
    page = offline
    open_shared(page, files["long"], "#h250")
    target = page.locator("#m-h250")
    expect(target).to_be_in_viewport()
    expect(target).to_have_class("entry k-H target")
    expect(page.locator(".causality")).to_contain_text("Represents s250")
    page.locator('.causality a[href="#s250"]').click()
    expect(page.locator("#m-s250")).to_be_in_viewport()
    expect(page.locator("main h1")).to_have_text("Scout’s perspective")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_nothing_scrolls_sideways_on_a_phone_in_either_scheme(browser, files, scheme):
    context = browser.new_context(viewport={"width": 360, "height": 740}, color_scheme=scheme)
    page = context.new_page()
    for name, fragment in [("native", ""), ("native", "#agent=agent_researcher"), ("long", "#h250"),
                           ("native", "#dialog=agent_root,agent_writer"), ("long", "#search=zanzibar"),
                           ("claude", "")]:
        open_shared(page, files[name], fragment)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 360, f"{name}{fragment} is {width} px wide"
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert (background == "rgb(21, 23, 27)") == (scheme == "dark"), background
    context.close()


def test_download_as_html_from_the_agent_page_opens_on_that_perspective(live_server, page, tmp_path):
    page.goto(f"{live_server.url}/s/example1_jack_and_jill/agents/agent_jill")
    with page.expect_download() as download:
        page.locator("#av-share").click()
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)
    assert saved.name == "example1_jack_and_jill.html"
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    open_shared(page, saved)
    expect(page.locator("main h1")).to_have_text("Jill’s perspective")
    assert requests == [saved.as_uri()]


def test_a_file_in_many_parts_draws_its_first_screen_from_a_few_and_shows_every_event(offline, tmp_path, monkeypatch):
    """A lead's calls whose results, and deliveries whose originals, are in other parts than they are."""
    events = [created("c1", "lead", name="Lead"), created("c2", "scout", name="Scout", cause="c1")]
    for n in range(100):
        text = "the zanzibar clue is here" if n == 99 else f"note {n} about nothing much"
        events += [calls(f"d{n:03d}", "lead", tool_call(f"t{n}", "look", query=f"q{n}")), say(f"s{n:03d}", "scout", text),
                   user(f"h{n:03d}", "lead", text, substance=f"s{n:03d}"), result(f"r{n:03d}", "lead", f"t{n}", f"found {n}", "look")]
    monkeypatch.setattr(share_page, "PART_EVENTS", 7)
    path = shared(tmp_path, write_events(tmp_path / "parts.jsonl", events))
    page = offline
    open_shared(page, path, "#agent=lead")
    drawn = page.evaluate("performance.getEntriesByName('agentview:first-view')[0].detail")
    assert drawn["parts"] == 58 and 0 < drawn["inflated"] < 58, drawn
    expect(page.locator("header.bar + p.masking-note")).to_contain_text("masked in this file")  # made last, shown first
    everything_rendered(page)
    entries = page.locator("#entries .entry")
    expect(entries).to_have_count(200)  # its calls (each with its result) and what it heard
    expect(page.locator("#entries details.call .result")).to_have_count(100)
    assert page.locator("#entries .badge", has_text="no result").count() == 0
    expect(page.locator("#entries .delivery", has_text="delivered from Scout")).to_have_count(100)
    open_shared(page, path, "#h099")
    expect(page.locator("#m-h099")).to_be_in_viewport()
    expect(page.locator(".causality")).to_contain_text("Represents s099")
    open_shared(page, path, "#search=zanzibar")
    expect(page.locator("#hits li")).to_have_count(2)



def test_a_damaged_part_is_said_where_the_list_stops_and_what_was_drawn_stays(offline, tmp_path, monkeypatch):
    """A file whose later part does not inflate (a damaged copy): the entries before it are shown, then an error
    that says so; nothing fails silently and the first screen is not replaced by an error."""
    events = [created("c1", "lead", name="Lead")] + [say(f"s{n:03d}", "lead", f"note {n}") for n in range(200)]
    monkeypatch.setattr(share_page, "PART_EVENTS", 20)
    path = shared(tmp_path, write_events(tmp_path / "parts.jsonl", events))
    html = path.read_text()
    tail = html.index('data-first="180"')  # the last part: its gzip cut short
    start = html.index(">", tail) + 1
    end = html.index("</script>", start)
    path.write_text(html[:start] + html[start:end][: (end - start) // 2] + html[end:])
    page = offline
    open_shared(page, path, "#agent=lead")
    alert = page.locator("p.error[role=alert]").first
    expect(alert).to_contain_text("Part of this file could not be read", timeout=10_000)
    expect(page.locator("#entries .entry").first).to_contain_text("note 0")
    everything_rendered(page)
    expect(page.locator("#entries p.error[role=alert]")).to_contain_text("entries are missing from here on")
    drawn = page.locator("#entries .entry").count()  # the chunks before the one needing the damaged part
    assert 30 <= drawn < 180
    expect(page.locator("#entries .entry").last).to_contain_text(f"note {drawn - 1}")
    expect(page.locator("p.error[role=alert]")).to_have_count(2)  # and once every part was tried: searches say so
    expect(page.locator("p.error[role=alert]").first).to_contain_text("missing from searches and dialogs")
