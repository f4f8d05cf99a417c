"""Rendered entries shared between requests (web/entry_cache.py) are exactly what rendering them again prints.

On real files read by the library: a page served from the cache equals the page of an app without it (every
agent of every sample session, with sub-agents, frozen as of an event, masked and revealed); a file
rewritten, truncated or replaced shows its new content; two sessions holding the same ids never show each
other's entries; a secret is masked in an entry kept from a revealed page, and the other way round.
"""

from __future__ import annotations

import os
import re
import threading
from urllib.parse import quote

import pytest
from conftest import write_events
from events import created, say, user

from viewer.core.redact import MASK, masking
from viewer.reads.asof import snapshot
from viewer.web.app import create_app
from viewer.web.entry_cache import PAGE_INPUTS, EntryCache, Page, _cost, page_key
from viewer.web.render import session_row
from viewer.web.security import REVEAL_COOKIE

SECRET = "sk-proj-Ab3dE5gH7jK9mN1pQ3sT5vW7"


def pages_of(client, s) -> list[str]:
    """Every agent page of a session, with and without sub-agents, live and as of its middle event, and the dialog
    of all its agents, live and as of its middle event."""
    urls = []
    for agent in s.agents:
        base = f"/s/{quote(s.id, safe='')}/agents/{quote(agent, safe='/')}"
        urls += [base, base + "?sub=1", base + f"?at={s.count // 2}"]
    dialog = f"/s/{quote(s.id, safe='')}/dialog?agents={quote(','.join(s.agents), safe='')}"
    return urls + [dialog, dialog + f"&at={s.count // 2}"]


def cache_of(app) -> EntryCache:
    return app.extensions["agentview_entries"]


def test_pages_from_the_cache_equal_pages_rendered_without_it(session_dir):
    cached, plain = create_app(session_dir, watch=False), create_app(session_dir, watch=False)
    plain.config["ENTRY_CACHE_BYTES"] = 0
    with_cache, without = cached.test_client(), plain.test_client()
    sessions = cached.extensions["agentview"].library.listing()
    assert len(sessions) >= 5
    for reveal in (False, True):
        for client in (with_cache, without):
            if reveal:
                client.set_cookie(REVEAL_COOKIE, "1")
        for s in sessions:
            for url in pages_of(with_cache, s):
                first, again, fresh = with_cache.get(url), with_cache.get(url), without.get(url)
                assert first.status_code == fresh.status_code
                assert first.data == again.data == fresh.data, url
    assert cache_of(cached).hits > 1000 and len(cache_of(plain)) == 0


def generation(word: str, count: int = 6) -> list[dict]:
    return [created("c", "a1", name="Alpha")] + [say(f"m{i}", "a1", f"{word} number {i}") for i in range(count)]


def page(client, session_id: str = "s") -> str:
    response = client.get(f"/s/{session_id}/agents/a1")
    assert response.status_code == 200
    return response.get_data(as_text=True)


@pytest.mark.parametrize("change", ["rewritten", "truncated", "replaced"])
def test_a_changed_file_shows_its_new_content(tmp_path, change):
    path = write_events(tmp_path / "s.jsonl", generation("before"))
    app = create_app(tmp_path, watch=False)
    library, client = app.extensions["agentview"].library, app.test_client()
    assert page(client).count("before number") == 6 and page(client) == page(client)
    assert cache_of(app).hits >= 6  # the page was served from the cache

    if change == "rewritten":  # in place, the same ids, other words, the same length
        with open(path, "r+b") as f:
            f.write(path.read_bytes().replace(b"before", b"future"))
    elif change == "truncated":  # fewer entries, then the same ids again with other words
        write_events(path, generation("before", 2))
        library.refresh(str(path))
        page(client)
        write_events(path, generation("after!", 6)[3:], mode="a")
    else:  # another file renamed over it
        write_events(tmp_path / "new.tmp", generation("after!"))
        os.replace(tmp_path / "new.tmp", path)
    library.refresh(str(path))

    shown = page(client)
    fresh = create_app(tmp_path, watch=False)
    fresh.config["ENTRY_CACHE_BYTES"] = 0
    # exactly what an app that never saw the old file shows (but for the live poll's epoch: it was read again)
    assert re.sub(r"after=[0-9]+-", "", shown) == re.sub(r"after=[0-9]+-", "", page(fresh.test_client()))
    new = "future" if change == "rewritten" else "after!"
    assert "before number 5" not in shown and f"{new} number 5" in shown


def test_a_dialog_item_heard_by_one_more_agent_shows_its_new_recipient(tmp_path):
    path = write_events(tmp_path / "s.jsonl", [say("u1", "jack", "Hello all"),
                                               user("d1", "jill", "[Jack]: Hello all", substance="u1"),
                                               say("u2", "joe", "Hi")])
    app = create_app(tmp_path, watch=False)
    library, client = app.extensions["agentview"].library, app.test_client()
    url = "/s/s/dialog?agents=jack,jill,joe"
    before = client.get(url).get_data(as_text=True)
    assert client.get(url).get_data(as_text=True) == before and cache_of(app).hits >= 2
    write_events(path, [user("d2", "joe", "[Jack]: Hello all", substance="u1")], mode="a")
    library.refresh(str(path))
    after = client.get(url).get_data(as_text=True)
    recipients = re.search(r'id="av-rcpt-0">(.*?)</span>', after, re.S).group(1)
    assert ">jill</a>" in recipients and ">joe</a>" in recipients
    assert ">joe</a>" not in re.search(r'id="av-rcpt-0">(.*?)</span>', before, re.S).group(1)


def test_two_sessions_with_the_same_ids_never_show_each_others_entries(tmp_path):
    write_events(tmp_path / "one.jsonl", generation("same words"))
    write_events(tmp_path / "two.jsonl", generation("same words"))
    app = create_app(tmp_path, watch=False)
    client = app.test_client()
    one, two = page(client, "one"), page(client, "two")
    assert one.count('href="/s/one/messages/m') == 6 and "/s/two/" not in one
    assert two.count('href="/s/two/messages/m') == 6 and "/s/one/" not in two
    assert len(cache_of(app)) == 12  # kept apart, though the items are the same


def test_masking_applies_to_entries_kept_from_a_revealed_page_and_back(tmp_path):
    write_events(tmp_path / "s.jsonl", [created("c", "a1"), say("m1", "a1", f"the key is {SECRET} ok")])
    app = create_app(tmp_path, watch=False)
    masked, revealed = app.test_client(), app.test_client()
    revealed.set_cookie(REVEAL_COOKIE, "1")
    for first, second in ((revealed, masked), (masked, revealed)):
        cache_of(app).clear()
        page(first), page(second)
        for _ in range(2):
            assert SECRET not in page(masked) and MASK in page(masked)
            assert SECRET in page(revealed)


def test_the_cache_keeps_within_its_bytes_and_drops_the_least_recently_used():
    cache = EntryCache(budget=10_000)
    for i in range(100):
        cache.put(("page", None, f"item {i}".encode()), f"<article>{i}</article>" * 10)
        assert cache.size <= cache.budget
    assert 0 < len(cache) < 100
    assert cache.get(("page", None, b"item 99")) is not None and cache.get(("page", None, b"item 0")) is None
    cache.put(("page", None, b"huge"), "x" * 5_000)  # more than a sixteenth of the budget: never kept
    assert cache.get(("page", None, b"huge")) is None


def test_threads_sharing_the_cache_keep_it_within_its_bytes_counted_exactly():
    """Request threads take and keep entries without a lock; the bytes kept are still counted exactly (each
    entry's cost added once by the thread that kept it, taken off once by the thread that evicted it)."""
    cache = EntryCache(budget=200_000)
    start = threading.Barrier(8)

    def work(n):
        start.wait()
        for i in range(3_000):
            key = ("page", None, f"item {(i * 7 + n) % 900}".encode())
            if cache.get(key) is None:
                cache.put(key, f"<article>{i} of {n}</article>" * (1 + i % 9))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    cache.put(("page", None, b"last"), "<article>last</article>")  # one thread alone: it settles what is queued
    assert cache.size == sum(_cost(key, html) for key, html in cache._kept.items()) <= cache.budget
    assert 0 < len(cache) < 900 and cache.hits > 0


def test_pollers_of_a_live_agent_share_its_new_entries(tmp_path):
    """Every poller of an agent asks for the same new entries: only the first renders them, however the values
    were held in between (the key of an entry at position 300 was made of another int object each time)."""
    earlier = [created("c2", "a2", name="Beta")] + [say(f"b{i}", "a2", f"earlier {i}") for i in range(300)]
    path = write_events(tmp_path / "s.jsonl", [created("c", "a1", name="Alpha")] + earlier)
    app = create_app(tmp_path, watch=False)
    library, client, cache = app.extensions["agentview"].library, app.test_client(), cache_of(app)
    cursor = re.search(r'id="av-poller"[^>]*after=([0-9]+-[0-9]+)', page(client)).group(1)
    write_events(path, [say(f"m{i}", "a1", f"live line {i} " + "words " * i) for i in range(40)], mode="a")
    library.refresh(str(path))
    answers = []
    for _ in range(3):
        misses = cache.misses
        response = client.get(f"/s/s/poll/agent?agent=a1&after={cursor}")
        assert response.status_code == 200
        answers.append((response.get_data(as_text=True), cache.misses - misses))
    (first, rendered), *again = answers
    assert rendered == 40 and first.count('<article class="entry') == 40
    assert again == [(first, 0), (first, 0)]


def test_every_declared_input_of_a_page_changes_its_entries_key_and_equal_inputs_share_it(tmp_path):
    """entry_cache.PAGE_INPUTS is what the key of a page's entries is made of: each one varied alone makes another
    key (in its own place), the same inputs the same key; an input declared later must be varied here too."""
    write_events(tmp_path / "one.jsonl", generation("same words"))
    write_events(tmp_path / "two.jsonl", generation("same words"))
    app = create_app(tmp_path, watch=False)
    library = app.extensions["agentview"].library
    one, two = library.get("one"), library.get("two")
    names = [given.name for given in PAGE_INPUTS]

    def key(page: Page, url: str = "/s/one/agents/a1", base_url: str = "http://localhost/", masked: bool = True):
        with app.test_request_context(url, base_url=base_url), masking(masked):
            return page_key(page._replace(session=session_row(page.s) | page.session))

    base = Page({}, one)
    same = key(base)

    def replaced():  # "one" read again (another file renamed over it), its page as of event 3 the same snapshot
        frozen = Page({"id": "one"}, snapshot(one, 3))
        before = key(frozen, url="/s/one/agents/a1?at=3")
        write_events(tmp_path / "new.tmp", generation("same words"))
        os.replace(tmp_path / "new.tmp", tmp_path / "one.jsonl")
        library.refresh(str(tmp_path / "one.jsonl"))
        return before, key(frozen, url="/s/one/agents/a1?at=3")

    varied = {
        "session id": lambda: (same, key(base._replace(session={"id": "two"}))),
        "reading": lambda: (same, key(base._replace(s=two, session={"id": "one"}))),
        "sub-agents shown": lambda: (same, key(base._replace(show_agent=True))),
        "out of band": lambda: (same, key(base._replace(oob=True))),
        "top agent": lambda: (same, key(base._replace(top="a1"))),
        "masking": lambda: (same, key(base, masked=False)),
        "as of": lambda: (same, key(base, url="/s/one/agents/a1?at=3")),
        "root path": lambda: (same, key(base, base_url="http://localhost/under/a/prefix/")),
        "live session": replaced,  # last: it reads the session the others read again
    }
    assert set(varied) == set(names), "each declared input is varied here, and only those"
    assert same == key(Page({}, one)) == key(base, url="/s/one/agents/a1?sub=0")  # equal inputs: one key
    for name, vary in varied.items():
        reference, changed = vary()
        differs = [n for n, a, b in zip(names, reference, changed) if a != b]
        # that input alone (another id also names another live session: it is looked up by its id)
        assert differs == ([name, "live session"] if name == "session id" else [name]), name
