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


def test_an_agent_page_opened_before_its_part_of_the_file_is_read_waits_then_opens(served_folder, page):
    """A link to an agent opened in the first seconds after a start (its session listed, its file read on): the
    page says it is still reading and opens the agent once read, where it was a 404 with nothing to poll."""
    import json
    import urllib.error
    import urllib.request

    folder, library, url = served_folder
    path = write_events(folder / "big.jsonl", [created("c0", "root", name="Root")] +
                        [say(f"m{i}", "root", "filler " + "x" * 200) for i in range(3000)] +
                        [created("c1", "late", name="Late"), say("last", "late", "made it")])
    library.slices_per_read = 1
    library.refresh(str(path))  # the first 64 KB only: agent `late` and message `last` are further on
    for asked in ("/api/sessions/big/agents/late", "/api/sessions/big/messages/last"):
        with pytest.raises(urllib.error.HTTPError) as answer:
            urllib.request.urlopen(url + asked, timeout=5)
        assert answer.value.code == 503 and answer.value.headers["Retry-After"] == "1"
        assert "still being read" in json.load(answer.value)["detail"]
    page.goto(url + "/s/big/agents/late")
    expect(page.locator("h1")).to_have_text("Still reading this session")
    expect(page.locator("[data-reload-when-ready]")).to_contain_text("has no agent 'late' yet")
    expect(page.get_by_role("link", name="The session so far")).to_have_attribute("href", "/s/big")
    while library.take_unfinished():  # the rest of the file, while the page waits
        library.refresh(str(path))
    expect(page.locator("main")).to_contain_text("made it", timeout=10_000)  # the agent's page, opened by itself
    with pytest.raises(urllib.error.HTTPError) as answer:  # read whole: what it does not hold is a 404 again
        urllib.request.urlopen(url + "/api/sessions/big/agents/nobody", timeout=5)
    assert answer.value.code == 404


def test_a_first_read_of_a_folder_says_how_many_sessions_are_read_until_all_are(tmp_path, page):
    from test_unread_groups import generate

    projects = tmp_path / ".claude" / "projects"
    projects.mkdir(parents=True)
    app = create_app(projects, watch=False)
    library = app.extensions[KEY].library
    with serve_app(app) as url:
        generate(tmp_path, sessions=4, projects=1)
        walk = library.groups.read_after()
        with walk:  # the groups listed, not read yet, as a first walk leaves them
            for path in library.folders.session_files(None):
                library.refresh(path)
            page.set_viewport_size({"width": 360, "height": 740})
            page.goto(url + "/")
            line = page.get_by_role("status").filter(has_text="Reading the folder")
            expect(line).to_have_text(re.compile(r"Reading the folder: 0 of 4 sessions read\. Search finds what is read"))
            expect(page.locator("#av-folder-reading progress")).to_have_attribute("value", "0")
            expect(page.locator(".session-row .badge.progress")).to_have_count(4)
            assert set(page.locator("td[data-label=messages]").all_inner_texts()) == {"–"}
        expect(line).to_have_count(0, timeout=10_000)  # read: the list's poll drops the line
        counts = page.locator("td[data-label=messages]").all_inner_texts()
        assert len(counts) == 4 and all(int(n.replace(",", "")) > 0 for n in counts)
