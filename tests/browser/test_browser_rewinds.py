"""A rewound conversation in a real browser: the branch left behind folded and marked "rewound", the kept branch
in line; a rewind written while the page is open folds what the page already shows."""

import json

import pytest
from playwright.sync_api import expect

from conftest import serve
from test_formats_claude_rewinds import SID, rewound_session, write

pytestmark = pytest.mark.browser


def test_the_abandoned_branch_is_folded_and_marked_and_the_kept_one_reads_in_line(tmp_path, page):
    records = rewound_session()
    path = write(tmp_path, records[:4])
    with serve(tmp_path) as server:
        server.wait_for_session(SID, events=5)
        page.goto(f"{server.url}/s/{SID}/agents/main")
        expect(page.locator('[id="b1a"]')).to_contain_text("First answer")
        expect(page.locator("article.rewound")).to_have_count(0)
        with path.open("a") as f:  # the person went back to "Ready" and asked again
            f.write("".join(json.dumps(r) + "\n" for r in records[4:]))
        expect(page.locator("article.rewound")).to_have_count(2, timeout=10000)
        first = page.locator('article.rewound[id="b1u"]')
        expect(first.locator(".badge.rewound")).to_have_text("rewound")
        expect(first.locator(".entry-head")).to_be_hidden()  # folded
        expect(first.locator("summary .preview")).to_have_text("First attempt")
        first.locator("details.rewound-branch > summary").click()
        expect(first.locator(".text-block")).to_contain_text("First attempt")
        for kept in ("b2u", "b2a", "b2u2", "b2a2"):
            expect(page.locator(f'article.entry:not(.rewound)[id="{kept}"] .entry-head')).to_be_visible()
        expect(page.locator('[id="b2u"] .badge.marker-rewind')).to_be_visible()


def test_a_link_to_a_rewound_message_unfolds_it(tmp_path, page):
    write(tmp_path, rewound_session())
    with serve(tmp_path) as server:
        server.wait_for_session(SID, events=9)
        page.goto(f"{server.url}/s/{SID}/agents/main#b1a")
        expect(page.locator('article.rewound[id="b1a"] .entry-head')).to_be_visible()
        expect(page.locator('article.rewound[id="b1u"] .entry-head')).to_be_hidden()
