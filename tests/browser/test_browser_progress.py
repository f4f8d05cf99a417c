"""A big file being read: `/` and its session page say how far, in a browser, and stop saying it once read."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from conftest import serve_app, write_events
from events import created, say
from viewer.core.tuning import Tuning
from viewer.web.app import create_app
from viewer.web.state import KEY


@pytest.fixture
def served_folder(tmp_path):
    """An app on a real port whose ingest the test drives a slice at a time (as the watcher does, but held)."""
    app = create_app(tmp_path, watch=False, tuning=Tuning(batch_bytes=64 * 1024))
    with serve_app(app) as url:
        yield tmp_path, app.extensions[KEY].library, url


def test_a_big_file_read_in_slices_shows_its_progress_until_it_is_read(served_folder, page):
    folder, library, url = served_folder
    path = write_events(folder / "big.jsonl", [created("c0", "root", name="Root")] +
                        [say(f"m{i}", "root", f"answer {i} " + "x" * 200) for i in range(3000)])
    size = path.stat().st_size
    library.slices_per_read = 1
    library.refresh(str(path))  # one slice of 64 KB: listed, read in part
    page.goto(url + "/")
    expect(page.locator("#av-reading-total")).to_contain_text(re.compile(r"Reading 1 file: .* of .* \(\d+%\)"))
    expect(page.locator("ul.reading")).to_contain_text("reading big.jsonl")
    page.goto(url + "/s/big")
    reading = page.locator("#av-session-reading")
    expect(reading).to_contain_text(re.compile(r"reading the file: .* of .*\((\d|[1-9]\d)%\)"))
    shown = int(page.locator("#av-session-events").inner_text().replace(",", ""))
    assert 0 < shown < 3001
    while library.take_unfinished():  # the rest, while the page polls
        library.refresh(str(path))
    expect(reading).to_have_text("", timeout=10_000)  # the poll swaps the line out once the file is read
    expect(page.locator("#av-session-events")).to_have_text("3001")
    page.goto(url + "/")
    expect(page.locator("#av-reading-total")).to_have_count(0)
    assert size > 10 * 64 * 1024  # it took several slices


def test_a_search_while_the_index_is_built_answers_at_once_and_the_rest_of_its_hits_arrive_live(served_folder,
                                                                                                  page):
    from viewer.library import background
    from viewer.search.index import QUERY_BUDGET

    folder, library, url = served_folder
    n = QUERY_BUDGET * 3
    path = write_events(folder / "big.jsonl", [created("c0", "root", name="Root")] +
                        [say(f"m{i}", "root", "needle here" if i % 1000 == 7 else "hay") for i in range(n)])
    library.refresh(str(path))  # read whole, nothing indexed yet (no watcher: the test builds the index)
    page.goto(url + "/search?q=needle&session=big")
    expect(page.locator(".search-partial")).to_contain_text(f"searched 0 of {n + 1:,} events")
    expect(page.locator("#av-hits li")).to_have_count(0)
    while background.index_step(library, budget=2048):  # the background work, while the page polls
        pass
    expect(page.locator("#av-hits li")).to_have_count(len(range(7, n, 1000)), timeout=15_000)
