"""The flow views as a person sees and clicks them: a real Chromium against `agentview serve`."""

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_a_modified_delivery_shows_its_word_diff(live_server, page):
    page.goto(f"{live_server.url}/s/research_team/hooks")
    expect(page.locator("#av-hook-counts tbody tr")).to_have_count(2)
    writer = page.locator('section.hook-group[data-agent="agent_writer"]')
    # The key itself may be masked where secrets are: the diff marks one run removed, two added.
    expect(writer.locator(".diff-original del")).to_have_count(1)
    expect(writer.locator(".diff-delivered ins")).to_have_count(2)
    expect(writer.locator(".diff-delivered ins").first).to_have_text("[Researcher]: ")
    expect(writer.locator(".diff-delivered ins").last).to_contain_text("REDACTED")
    writer.locator("a.msg", has_text="msg_113").first.click()
    expect(page).to_have_url(f"{live_server.url}/s/research_team/messages/msg_113")
    expect(page.locator("#av-provenance .diff-original del")).to_have_count(1)
    expect(page.locator("#av-provenance .diff-delivered ins").last).to_contain_text("REDACTED")


def test_the_spawn_graph_has_one_edge_per_spawned_agent_and_opens_agents(live_server, page):
    page.goto(f"{live_server.url}/s/research_team")
    page.get_by_role("link", name="spawn graph").click()
    graph = page.locator("#av-spawn-graph")
    expect(graph.locator("g.spawn-edge")).to_have_count(7)
    expect(graph.locator("a.spawn-node")).to_have_count(8)
    graph.locator('a.spawn-node[data-agent="agent_scout_reader"]').click()
    expect(page).to_have_url(f"{live_server.url}/s/research_team/agents/agent_scout_reader")
    lineage = page.get_by_role("navigation", name="Why this agent exists")
    expect(lineage.locator("li")).to_have_count(4)
    lineage.locator("a.call").nth(1).click()
    expect(page).to_have_url(f"{live_server.url}/s/research_team/messages/msg_063")


def test_the_chart_draws_one_arrow_per_delivery_and_a_mark_opens_its_message(live_server, page):
    page.goto(f"{live_server.url}/s/example1_jack_and_jill")
    page.get_by_role("link", name="who said what to whom").click()
    chart = page.locator("#av-chart")
    arrows = chart.locator("line.arrow.substance")
    expect(arrows).to_have_count(4)
    assert sorted(arrows.evaluate_all("els => els.map(e => e.dataset.to)")) == ["msg_013", "msg_014", "msg_017", "msg_020"]
    chart.locator('a.mark[data-message="msg_017"]').click()
    expect(page).to_have_url(f"{live_server.url}/s/example1_jack_and_jill/messages/msg_017")
    expect(page.locator("h1")).to_contain_text("msg_017")


def test_the_window_control_moves_the_chart(live_server, page):
    page.goto(f"{live_server.url}/s/research_team/chart?size=50")
    expect(page.locator("#av-window-shown")).to_have_text("1–50 of 341")
    page.locator("#av-window select[name=size]").select_option("100")
    expect(page).to_have_url(f"{live_server.url}/s/research_team/chart?start=0&size=100")
    expect(page.locator("#av-chart a.mark")).to_have_count(100)
    page.get_by_role("link", name="later →").click()
    expect(page.locator("#av-window-shown")).to_have_text("101–200 of 341")
    expect(page.locator("#av-chart a.mark").first).to_have_attribute("data-position", "100")


def test_tracing_highlights_upstream_and_downstream_in_the_chart_and_the_agent_page(live_server, page):
    page.goto(f"{live_server.url}/s/example1_jack_and_jill/messages/msg_011")
    page.get_by_role("link", name="in the chart").click()
    chart = page.locator("#av-chart")
    expect(chart.locator("a.mark.downstream")).to_have_count(5)
    assert chart.locator("a.mark.downstream").evaluate_all("els => els.map(e => e.dataset.message)") == [
        "msg_012", "msg_013", "msg_014", "msg_016", "msg_019"]
    expect(chart.locator("a.mark.focus")).to_have_attribute("data-message", "msg_011")
    # In the agent page: the call's results (shown under it) are downstream.
    page.goto(f"{live_server.url}/s/example1_jack_and_jill/trace/msg_011")
    page.get_by_role("link", name="show in agent_root's page").click()
    expect(page.locator(".traced.focus")).to_have_attribute("id", "msg_011")
    downstream = page.locator(".traced.downstream")
    expect(downstream).to_have_count(2)
    assert downstream.evaluate_all("els => els.map(e => e.id)") == ["msg_016", "msg_019"]
    # Across agents: in Jill's page the prompt the call broadcast to her is downstream, nothing else.
    page.goto(f"{live_server.url}/s/example1_jack_and_jill/agents/agent_jill?trace=msg_011")
    expect(page.locator(".traced.downstream")).to_have_count(1)
    expect(page.locator(".traced.downstream")).to_have_attribute("id", "msg_014")
    expect(page.locator(".traced.upstream")).to_have_count(0)
    # Tracing a result marks the call it answers upstream.
    page.goto(f"{live_server.url}/s/example1_jack_and_jill/trace/msg_016")
    page.locator("ol.upstream a.agent").first.click()
    expect(page.locator(".traced.upstream")).to_have_attribute("id", "msg_011")
    expect(page.locator(".traced.focus")).to_have_attribute("id", "msg_016")


def entry_ids(page):
    return page.locator("#av-entries > article").evaluate_all("els => els.map(e => e.id)")


def arrived(page, url):
    """At `url` with its scripts run: a key pressed before the page's handlers exist is lost."""
    expect(page).to_have_url(url)
    page.wait_for_load_state("load")


def test_as_of_steps_one_event_with_the_keyboard(live_server, page):
    base = f"{live_server.url}/s/example1_jack_and_jill"
    page.goto(base)
    slider = page.get_by_label("Show the session as of event")
    expect(slider).to_have_value("20")
    slider.focus()
    page.keyboard.press("ArrowLeft")  # the slider itself: one event back, reloads frozen at 19
    arrived(page, f"{base}?at=19")
    expect(page.locator("#av-as-of")).to_contain_text("As of event 19 of 20")
    for n in (18, 17, 16):
        page.keyboard.press(",")
        arrived(page, f"{base}?at={n}")
    # Jill's transcript at 16 and at 17: what she knew right after each event.
    page.locator('li.node[data-agent="agent_jill"] a.agent-name').click()
    arrived(page, f"{base}/agents/agent_jill?at=16")
    expect(page.locator("#av-entries > article")).to_have_count(2)
    assert entry_ids(page) == ["msg_009", "msg_014"]
    page.keyboard.press(".")
    arrived(page, f"{base}/agents/agent_jill?at=17")
    expect(page.locator("#av-entries > article")).to_have_count(3)
    assert entry_ids(page) == ["msg_009", "msg_014", "msg_017"]
    expect(page.locator(".live-dot")).to_have_count(0)
    page.get_by_role("link", name="back to live").click()
    expect(page).to_have_url(f"{base}/agents/agent_jill")
    expect(page.locator("#av-entries > article")).to_have_count(4)


PAYLOADS = ['"><img src=x onerror="window.__pwned=1">', "</text><script>window.__pwned=1</script>",
            "<svg onload=window.__pwned=1>", "javascript:window.__pwned=1"]


def test_hostile_log_text_stays_text_in_every_flow_view(live_server, page):
    from conftest import write_events
    from events import calls, created, say, tool_call, user

    events = [created("m0", "root", name=PAYLOADS[0])]
    for i, payload in enumerate(PAYLOADS, 1):
        events += [calls(f"c{i}", "root", tool_call(f"t{i}", name=payload, prompt=payload)),
                   created(f"a{i}", f"agent{i}", cause=f"c{i}", name=payload),
                   say(f"s{i}", f"agent{i}", payload + " secret 1234"),
                   user(f"d{i}", "root", f"[{payload}]: {payload} secret XXXX", substance=f"s{i}")]
    write_events(live_server.folder / "hostile.jsonl", events)
    base = f"{live_server.url}/s/hostile"
    page.goto(f"{live_server.url}/")
    page.locator('a[href="/s/hostile"]').first.wait_for()
    for url in (f"{base}/chart", f"{base}/chart?trace=c1", f"{base}/spawn", f"{base}/hooks", f"{base}/trace/s1",
                f"{base}/messages/d1", f"{base}/agents/agent1?trace=s1", f"{base}/agents/root?at=5", f"{base}?at=3"):
        page.goto(url)
        page.wait_for_load_state("load")
        report = page.evaluate("""() => ({
            pwned: window.__pwned === 1,
            handlers: [...document.querySelectorAll("*")].flatMap(el => [...el.attributes]
                .filter(a => a.name.startsWith("on")).map(a => el.tagName + " " + a.name)),
            links: [...document.querySelectorAll("a[href]")].map(a => a.getAttribute("href"))
                .filter(h => /^\\s*javascript:/i.test(h)),
        })""")
        assert report == {"pwned": False, "handlers": [], "links": []}, url
    page.goto(f"{base}/hooks")
    expect(page.locator(".hook-group ins").first).to_contain_text("[")
    expect(page.locator("body")).to_contain_text("<svg onload=window.__pwned=1>")
