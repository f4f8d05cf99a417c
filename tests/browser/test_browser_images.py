"""Images a Claude Code log carries, in a real browser: shown small in line, full size a click away, from their
own URL under the page's CSP; the ones that may not be shown say why."""

import pytest
from playwright.sync_api import expect

from conftest import serve
from test_images import write_session

pytestmark = pytest.mark.browser
SESSION = "-home-dev-app:5e551011-imgs"


def test_images_show_in_line_capped_and_open_at_full_size(tmp_path, page):
    write_session(tmp_path)
    refused = []
    page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
    with serve(tmp_path) as server:
        server.wait_for_session(SESSION, events=5)
        page.goto(f"{server.url}/s/{SESSION}/agents/main")
        prompt = page.locator('[id="im-0001"] .images img.inline-image')
        expect(prompt).to_have_count(1)
        prompt.scroll_into_view_if_needed()
        page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=prompt.element_handle())
        assert prompt.evaluate("img => [img.naturalWidth, img.naturalHeight]") == [40, 30]
        result = page.locator(".call .results .images img.inline-image")
        expect(result).to_have_count(1)
        result.scroll_into_view_if_needed()
        page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=result.element_handle())
        assert result.evaluate("img => img.naturalWidth") == 5
        expect(page.locator(".hidden-image", has_text="image/svg+xml is not shown")).to_be_visible()
        expect(page.locator(".hidden-image", has_text="too large to show")).to_be_visible()
        assert page.locator("svg[onload]").count() == 0
        big = page.locator('[id="im-0001"] a.image-link')
        href = big.get_attribute("href")
        assert href == f"/s/{SESSION}/image/0/im-0001"
        full = page.request.get(server.url + href)
        assert full.status == 200 and full.headers["content-type"] == "image/png"
        box = prompt.bounding_box()
        assert box["width"] <= 322 and box["height"] <= 322
    assert refused == []
