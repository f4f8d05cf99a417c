"""Log text as people read it, in a real Chromium: Markdown, highlighted code, pretty arguments, ANSI
colours, the raw toggle, "show less", expand / collapse all; and masking through all of them."""

import pytest
from playwright.sync_api import expect

from conftest import serve, write_events
from events import calls, created, result, say, tool_call, user

pytestmark = pytest.mark.browser

SECRET = "sk-proj-Zq8Lm2Nx7Rt5Vw3Yb1Cd9Fg"
MARKDOWN = ("## Plan\n\nThis is **important** and *subtle*.\n\n"
            "```python\ndef greet(name):\n    return f\"hi {name}\"\n```\n\n"
            "<script>window.__pwned=1</script> and [a link](https://example.org/)\n\n"
            f"Key: `{SECRET}`\n\n```bash\nexport OPENAI_API_KEY={SECRET}\n```\n")
LONG = "\n".join(f"line {i} of a long answer" for i in range(40))


@pytest.fixture
def text_server(tmp_path):
    folder = tmp_path / "sessions"
    write_events(folder / "text.jsonl", [
        created("c0", "root", name="Root"),
        user("m1", "root", "Plain question, no markup at all."),
        say("m2", "root", MARKDOWN),
        calls("m3", "root", tool_call("t1", "write_file", path="notes.md",
                                      content="# Notes\n\n## Part one\nfirst\n\n## Part two\nsecond",
                                      headers=f"Authorization: Bearer {SECRET}")),
        say("m4", "root", "\x1b[1;31mFAILED\x1b[0m 2 tests \x1b[32mpassed\x1b[0m"),
        say("m5", "root", LONG),
        calls("m6", "root", tool_call("t2", "search", q="plans"), content="Looking for **plans** first."),
        result("m7", "root", "t2", "Found *two* plans:\n\n- plan A\n- plan B", name="search"),
    ])
    with serve(folder) as server:
        server.wait_for_session("text", events=8)
        yield server


def test_markdown_is_rendered_and_script_stays_text(text_server, page):
    page.goto(f"{text_server.url}/s/text/agents/root")
    page.locator('[id="m2"] details.long > summary').click()  # a long text, shown whole on demand
    md = page.locator('[id="m2"] .md')
    expect(md.locator("strong")).to_have_text("important")
    expect(md.locator("h5")).to_have_text("Plan")  # "## Plan": logged headings sit below the page's (h2 -> h5)
    code = md.locator('pre.highlight[data-language="python"]')
    expect(code.locator("span.k").first).to_have_text("def")  # highlighted by Pygments on the server
    expect(md).to_contain_text("<script>window.__pwned=1</script>")  # shown as text
    assert page.evaluate("window.__pwned") is None
    expect(md.locator("a")).to_have_attribute("rel", "noopener noreferrer nofollow")
    color = code.locator("span.k").first.evaluate("e => getComputedStyle(e).color")
    assert color not in ("rgb(0, 0, 0)", "")  # the highlighting stylesheet applies
    # the raw toggle shows the text as written, and back
    raw = page.locator('[id="m2"] .raw-toggle')
    raw.click()
    expect(page.locator('[id="m2"] pre.content')).to_be_visible()
    expect(page.locator('[id="m2"] pre.content')).to_contain_text("**important**")
    expect(md).to_be_hidden()
    raw.click()
    expect(md).to_be_visible()
    # plain text stays plain, in a proportional font
    plain = page.locator('[id="m1"] pre.content.prose')
    expect(plain).to_have_text("Plain question, no markup at all.")
    assert "mono" not in plain.evaluate("e => getComputedStyle(e).fontFamily")


def test_secrets_in_markdown_code_and_arguments_stay_masked(text_server, page):
    page.goto(f"{text_server.url}/s/text/agents/root")
    expect(page.locator('[id="m2"] .md')).to_contain_text("[masked]")
    body = page.content()
    assert "Zq8Lm2Nx7Rt5Vw3Yb1Cd9Fg" not in body
    page.get_by_role("button", name="Expand all texts").click()
    page.locator('[id="m2"] .raw-toggle').click()
    assert "Zq8Lm2Nx7Rt5Vw3Yb1Cd9Fg" not in page.locator("main").inner_text()
    page.get_by_role("button", name="Menu").click()  # the secrets toggle is in the menu
    page.get_by_role("button", name="Show secrets").click()
    page.get_by_role("button", name="Expand all texts").click()
    expect(page.locator('[id="m2"] .md')).to_contain_text(SECRET)
    page.get_by_role("button", name="Menu").click()  # the secrets toggle is in the menu
    page.get_by_role("button", name="Hide secrets").click()
    expect(page.locator('[id="m2"] .md')).not_to_contain_text(SECRET)


def test_arguments_show_multiline_strings_as_text(text_server, page):
    page.goto(f"{text_server.url}/s/text/agents/root")
    block = page.locator('[id="m3"] pre.json .j-text')
    expect(block).to_have_text("# Notes\n\n## Part one\nfirst\n\n## Part two\nsecond")
    expect(page.locator('[id="m3"] pre.json')).not_to_contain_text("\\n")
    expect(page.locator('[id="m3"] pre.json')).to_contain_text("[masked]")
    expect(page.locator('[id="m3"] pre.json')).not_to_contain_text("Zq8Lm2Nx7Rt5Vw3Yb1Cd9Fg")


def test_ansi_colours_are_shown_as_colours(text_server, page):
    page.goto(f"{text_server.url}/s/text/agents/root")
    failed = page.locator('[id="m4"] span.ansi-fg-31')
    expect(failed).to_have_text("FAILED")
    assert failed.evaluate("e => getComputedStyle(e).fontWeight") == "700"
    assert "[1;31m" not in page.locator('[id="m4"]').inner_text()
    assert "\u241b" not in page.locator('[id="m4"]').inner_text()


def test_show_less_and_expand_collapse_all(text_server, page):
    page.goto(f"{text_server.url}/s/text/agents/root")
    long = page.locator('[id="m5"] details.long')
    long.locator("summary").click()
    expect(long.locator("summary")).to_have_text("show less", use_inner_text=True)
    long.locator("summary").click()
    expect(long.locator("summary .more")).to_be_visible()
    page.get_by_role("button", name="Expand all texts").click()
    expect(page.locator("#av-entries details.long[open]")).to_have_count(page.locator("#av-entries details.long").count())
    page.get_by_role("button", name="Collapse all texts").click()
    expect(page.locator("#av-entries details.long[open]")).to_have_count(0)


def test_one_raw_toggle_per_entry_shows_its_text_as_written_and_a_result_is_never_markdown(text_server, page):
    page.goto(f"{text_server.url}/s/text/agents/root")
    call = page.locator('[id="m6"]')  # its own text is Markdown; its result is a tool's output
    expect(call.locator(".text-block.has-md")).to_have_count(1)
    toggle = call.get_by_role("button", name="raw")
    expect(toggle).to_have_count(1)
    rendered, written = call.locator(".text-block.has-md > .md"), call.locator(".text-block.has-md > pre.content")
    output = call.locator(".result pre.content.output")
    expect(rendered.locator("strong")).to_have_text("plans")
    expect(output).to_have_text("Found *two* plans:\n\n- plan A\n- plan B", use_inner_text=True)  # as the tool wrote it
    expect(call.locator(".result li, .result em")).to_have_count(0)
    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "true")
    expect(written).to_be_visible()
    expect(rendered).to_be_hidden()
    expect(written).to_have_text("Looking for **plans** first.")
    expect(output).to_be_visible()  # as written either way
    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "false")
    expect(rendered).to_be_visible()
    expect(written).to_be_hidden()
    # An entry without Markdown has no toggle; another entry's toggle leaves this one rendered.
    expect(page.locator('[id="m1"] .raw-toggle')).to_be_hidden()
    page.locator('[id="m2"] .raw-toggle').click()
    expect(rendered).to_be_visible()


def test_a_result_arriving_with_markdown_reads_as_written(tmp_path, page):
    folder = tmp_path / "sessions"
    path = folder / "late.jsonl"
    write_events(path, [created("c0", "root"), calls("m1", "root", tool_call("t1", "search", q="x"))])
    with serve(folder) as server:
        server.wait_for_session("late", events=2)
        page.goto(f"{server.url}/s/late/agents/root")
        toggle = page.locator('[id="m1"] .raw-toggle')
        expect(toggle).to_be_hidden()
        pending = page.locator('[id="m1"] summary.call-head .status-pending')
        expect(pending).to_have_text("no result")
        write_events(path, [result("m2", "root", "t1", "Found **it**", name="search")], mode="a")
        expect(page.locator('[id="m1"] .result pre.content.output')).to_have_text("Found **it**")
        expect(pending).to_be_hidden()  # its call's line no longer says it has none
        expect(page.locator('[id="m1"] .result strong')).to_have_count(0)
        expect(toggle).to_be_hidden()  # nothing of it was rendered: nothing to show as written
