"""Sessions asleep (sleeping): a kept Claude Code session nobody looks at holds only what the sessions list shows; a
restart takes every kept session back asleep, reading a few sections of each entry; anything that reads more wakes
it, and it shows exactly what it showed awake; a search reads the postings alone; an entry gone while a session
sleeps reads its files again."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import threading
import time
import tracemalloc
import urllib.request

import pytest
from playwright.sync_api import expect

from conftest import REPO, serve, wait_for
from events import scanned
from test_cache_store import kept_entries
from test_claude_settled import age, pages
from test_group_cache import PROJECT, generate, read_what_is_due, run, searched, without_the_folders_entry
from viewer.library import background
from viewer.reads import queries
from viewer.store import group_cache, session_cache
from viewer.search import query as search
from viewer.search import worker as search_worker
from viewer.index import sleeping, usage
from viewer.index.agent_tree import creation_found, creations
from viewer.library.library import Library
from viewer.store.session_cache import SessionCache


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("sleeping") / "logs"
    generate(root / PROJECT, 2 << 20, subagents=6, sessions=4)
    age(root)
    return root


@pytest.fixture
def cache(project, tmp_path):
    """A cache the first run (read, indexed, saved) left."""
    first = run(project, tmp_path / "cache")
    assert len(first.listing()) == 4
    return tmp_path / "cache"


def listed(library: Library) -> dict:
    """What the sessions list shows of each session, read as the list reads it."""
    return {s.id: (s.count, s.shown_count, s.agent_count, s.problem_count, s.title, s.updated_at,
                   usage.for_session(s)) for s in library.listing()}


def asleep(library: Library) -> list[str]:
    return [s.id for s in library.listing() if s.asleep is not None]


def test_a_restart_takes_every_kept_session_back_asleep_and_lists_it_as_awake(project, cache):
    awake = scanned(project)
    again = run(project, cache, settle=False)
    assert again.cache.restored == 4 and len(asleep(again)) == 4
    assert listed(again) == listed(awake)
    assert len(asleep(again)) == 4  # listing read no more than the summary


def test_a_sleeping_session_wakes_when_read_and_shows_what_it_showed_awake(project, cache):
    again = run(project, cache, settle=False)
    first = again.listing()[0]
    with first.lock:
        first.agents  # one attribute read: that session wakes, the others sleep on
    assert asleep(again) == [s.id for s in again.listing()[1:]]
    assert pages(again) == pages(scanned(project))
    assert asleep(again) == []
    for s in again.listing():  # what a woken session built reads it, not the copy it was read into
        assert s.search._session() is s and s.facets._session() is s


def test_a_woken_session_takes_back_its_usage_totals_from_its_summary_instead_of_summing_them_again(project, cache):
    again = run(project, cache, settle=False)
    for s in again.listing():
        with s.lock:
            s.agents  # woken
            kept = s.usage_totals[None]  # the summary's, before any page asked for them
            assert kept.read == len(s.usage_positions) > 0 and kept.priced_by == s.host.prices.key
            summed = usage.Totals(hourly=True).add(s, s.usage_positions)
            assert (kept.as_dict(), kept.hours) == (summed.as_dict(), summed.hours)
    assert listed(again) == listed(scanned(project))


def test_a_wake_runs_no_cyclic_collection_over_the_index_it_makes(project, cache):
    """Its index is made at once and kept, as a read makes one: the collector does not walk it while it grows."""
    import gc

    from viewer.store import index_state

    again = run(project, cache, settle=False)
    collections = []

    def counted(phase, info):  # a collection started while the entry is restored into an index
        frame = sys._getframe(1)
        while phase == "start" and frame is not None:
            if frame.f_code is index_state.restore.__code__:
                collections.append(info["generation"])
            frame = frame.f_back

    threshold = gc.get_threshold()
    gc.callbacks.append(counted)
    gc.set_threshold(100, 10, 10)  # a collection every 100 objects made, unless paused
    s = max(again.listing(), key=lambda s: s.count)
    try:
        with s.lock:
            s.agents  # woken
    finally:
        gc.callbacks.remove(counted)
        gc.set_threshold(*threshold)
    assert s.asleep is None and s.count > 100 and collections == []


def agents_costs(library: Library) -> dict:
    """Each session's usage per agent and its tree's costs, as its pages read them."""
    from viewer.reads import costs

    found = {}
    for s in library.listing():
        with s.lock:
            found[s.id] = ({agent_id: usage.for_agent(s, agent_id) for agent_id in s.agents}, costs.tree_costs(s))
    return found


def test_a_woken_session_takes_back_each_agents_usage_totals_equal_to_those_summed_from_its_events(project, cache):
    again = run(project, cache, settle=False)
    for s in again.listing():
        with s.lock:
            s.agents  # woken
            priced = {agent_id for agent_id, agent in s.agents.items() if agent.usage_entries}
            assert len(priced) > 1 and priced <= set(s.usage_totals)  # kept, before any page asked for them
            for agent_id in priced:
                positions = s.agents[agent_id].usage_entries
                kept, summed = s.usage_totals[agent_id], usage.Totals().add(s, positions)
                assert kept.read == len(positions) and kept.priced_by == s.host.prices.key
                assert (kept.as_dict(), kept.cost()) == (summed.as_dict(), summed.cost())
    assert agents_costs(again) == agents_costs(scanned(project))


def test_a_woken_session_takes_back_the_call_that_created_each_agent_and_reads_no_message_for_it(project, cache):
    """Its first page names each sub-agent's creating call from its cache entry: no creating message is read."""
    again = run(project, cache, settle=False)
    for s in again.listing():
        with s.lock:
            s.agents  # woken
            made = creations(s)
            assert s.events._cache == {}  # no event read (read_ahead keeps what it reads there)
            assert s.events._later is not None  # nor its events' slots decoded (EventList.extend_later)
            created = {a: agent for a, agent in s.agents.items() if agent.cause is not None}
            assert len(made) == len(created) >= 1
            assert made == {a: creation_found(s, agent) for a, agent in created.items()}
            assert all(position is not None and tool for position, _, _, tool, _ in made.values())
    fresh = scanned(project)  # each agent's row as a session read from its files shows it: its creator, its status
    assert {s.id: queries.agents(s) for s in again.listing()} == {s.id: queries.agents(s) for s in fresh.listing()}
    assert pages(again) == pages(fresh)


def test_the_calls_kept_for_a_woken_session_are_found_again_once_it_grows(project, cache):
    again = run(project, cache, settle=False)
    s = again.listing()[0]
    with s.lock:
        s.agents  # woken
        cause = next(agent.cause for agent in s.agents.values() if agent.cause is not None)
        s.add({"message_id": "made-late", "event_type": "agent_created", "agent_id": "late-agent", "cause": cause,
               "name": "late"}, 10**6)
        made = creations(s)
        assert made["late-agent"] == creation_found(s, s.agents["late-agent"])
        assert made["late-agent"][0] == s.by_id[cause]


def test_a_woken_sessions_tree_finds_its_message_ids_though_the_session_read_none_yet(project, cache):
    """The tree reads the message ids through its session: read by the tree first (an agent created naming a
    message read before), they are the session's, decoded then, not an empty map waiting for the session to read."""
    again = run(project, cache, settle=False)
    s = max(again.listing(), key=lambda s: s.count)
    with s.lock:
        s.agents  # woken
        assert "by_id" not in s.__dict__ and "by_id" in s.__dict__["_later"]
        creator = next(agent for agent in s.agents.values() if agent.cause is not None)
        s.tree.agent_created({"message_id": "made-late", "event_type": "agent_created", "agent_id": "late-agent"},
                             10**6, 1, [creator.cause], False)
        late = s.agents["late-agent"]
        assert late.parent_id == creator.parent_id is not None and "cause_missing" not in late.flags
        assert "late-agent" not in s.tree.awaiting_cause.get(creator.cause, ())


def test_a_woken_sessions_message_ids_are_decoded_when_first_read_into_the_map_its_tree_reads(project, cache):
    """Its page and JSON read no message id: they stay encoded until something does, then are those of a read."""
    from viewer.web.app import close_app, create_app

    app = create_app(str(project), watch=False, cache_dir=str(cache))
    try:
        s = max(app.extensions["agentview"].library.listing(), key=lambda s: s.count)
        client = app.test_client()
        assert client.get(f"/s/{s.id}").status_code == client.get(f"/api/sessions/{s.id}").status_code == 200
        assert s.asleep is None and "by_id" not in s.__dict__ and "by_id" in s.__dict__["_later"]
        fresh = next(f for f in scanned(project).listing() if f.id == s.id)
        with s.lock:
            assert s.by_id == fresh.by_id and len(s.by_id) > 100
            assert s.tree._by_id is s.by_id and "by_id" not in s.__dict__.get("_later", {})
    finally:
        close_app(app)


def test_a_session_of_one_agent_keeps_the_sessions_totals_as_its_agents_less_the_hours(tmp_path):
    from claude_lines import Transcript

    root = tmp_path / "logs"
    alone = Transcript("a1one-session", "mn")
    alone.user("Count the files")
    for n, model in enumerate(("claude-sonnet-4-20250514", "claude-opus-4-1-20250805", "claude-sonnet-4-20250514")):
        alone.response(f"msg_{n}", [{"type": "text", "text": f"{n} files"}], model=model,
                       usage={"input_tokens": 10 + n, "output_tokens": 5 * n, "cache_read_input_tokens": 100})
    alone.write(root / PROJECT / "a1one-session.jsonl")
    age(root)
    run(root, tmp_path / "cache")
    again = run(root, tmp_path / "cache", settle=False)
    [s] = again.listing()
    with s.lock:
        s.agents  # woken
        [(agent_id, positions)] = [(a, agent.usage_entries) for a, agent in s.agents.items() if agent.usage_entries]
        assert list(positions) == list(s.usage_positions) and len(positions) == 3
        kept, summed = s.usage_totals[agent_id], usage.Totals().add(s, positions)
        assert kept.hours is None and kept.read == 3 and kept.priced_by == s.host.prices.key
        assert (kept.as_dict(), kept.cost()) == (summed.as_dict(), summed.cost())
    assert agents_costs(again) == agents_costs(scanned(root))


def test_background_work_leaves_sleeping_sessions_asleep(project, cache):
    again = run(project, cache, settle=False)
    while background.step(again):
        pass
    again.look_after = float("-inf")
    assert not background.step(again)
    assert len(asleep(again)) == 4 and not any("search" in s.__dict__ for s in again.listing())  # nothing read


def test_a_search_reads_the_postings_alone_and_wakes_the_sessions_with_hits(project, cache):
    awake = run(project, cache.parent / "other-cache")  # read from the files: the answers to compare with
    again = run(project, cache, settle=False)
    assert search.search(again.listing(), "zzznowhere")["hits"] == []
    assert len(asleep(again)) == 4 and all("search" in s.__dict__ for s in again.listing())
    one = again.listing()[2]
    word = next(w for w in ("warehouse", "def", "error", "return") if search.matches(one, search.parse(w))[0])
    in_one = f"{word} session:{one.id.split(':')[-1]}"
    assert search.search(again.listing(), in_one) == search.search(awake.listing(), in_one)
    assert one.asleep is None and len(asleep(again)) == 3  # only the session with hits woke
    assert searched(again) == searched(awake)


def test_a_search_polled_for_new_hits_leaves_sleeping_sessions_asleep(project, cache):
    """The search page polls `updates` with a cursor of every session in scope: nothing new wakes nothing."""
    again = run(project, cache, settle=False)
    found = search.search(again.listing(), "zzznowhere")
    assert search.updates(again.listing(), "zzznowhere", None, found["cursor"]) is None
    assert len(asleep(again)) == 4


def test_a_session_nobody_looks_at_goes_to_sleep_and_one_being_read_stays_awake(project, cache):
    again = run(project, cache, settle=False)
    for s in again.listing():
        s.wake()
    watched, left = again.listing()[:2]
    before = pages(again)
    for s in again.listing():  # woken a while ago
        s.seen_at = time.monotonic() - session_cache.SLEEP_AFTER_S - 1
    again.get(watched.id)  # a page asked for it just now
    assert again.sleep_quiet()
    assert watched.asleep is None and left.asleep is not None and len(asleep(again)) == 3
    assert not again.sleep_quiet()  # nothing more to put to sleep
    assert pages(again) == before


def test_a_session_read_and_kept_in_this_run_sleeps_too(project, tmp_path):
    """The first run: each session read from its files goes to sleep once kept (nobody asked for it)."""
    first = run(project, tmp_path / "cache")
    assert len(asleep(first)) == 4
    assert pages(first) == pages(scanned(project))


def _live() -> int:
    """The memory traced that is still reachable: garbage in cycles (a read pauses the collector) is not held."""
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def test_sleeping_sessions_hold_a_small_part_of_the_memory(project, cache):
    tracemalloc.start()
    try:
        base = _live()
        awake = run(project, cache, settle=False)
        for s in awake.listing():
            s.wake()
            s.search  # made when first searched (sleeping.later): a session searched holds it
            s.by_id  # likewise its message ids, once something reads them
            s.events[0]  # ... and its events, read from its entry when one is first read
        held_awake = _live() - base
        del awake
        base = _live()
        sleeping = run(project, cache, settle=False)
        held_asleep = _live() - base
    finally:
        tracemalloc.stop()
    assert len(asleep(sleeping)) == 4
    assert held_asleep < 0.15 * held_awake, (held_asleep, held_awake)


def test_threads_reading_a_sleeping_session_at_once_wake_it_once(project, cache, monkeypatch):
    wakes, arrived = [], []
    real = group_cache.wake

    def counted(*args, **kwargs):
        wakes.append(kwargs.get("search_only", False))
        wait_for(lambda: len(arrived) == 6)  # a slow disk: the others arrive while it wakes
        return real(*args, **kwargs)

    monkeypatch.setattr(group_cache, "wake", counted)
    again = run(project, cache, settle=False)
    expected = pages(scanned(project))
    target = again.listing()[1]
    seen = []
    threads = [threading.Thread(target=lambda: arrived.append(1) or seen.append([target.events[p]
                                                                                  for p in range(target.count)]))
               for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wakes == [False]
    assert seen == [expected[target.id]["events"]] * 6


@pytest.mark.parametrize("how", ["evicted", "rewritten"])
def test_a_session_whose_entry_went_while_it_slept_reads_its_files_again(project, cache, how):
    again = run(project, cache, settle=False)
    target = again.listing()[0]
    epoch = target.epoch
    for path, _, end in kept_entries(cache):
        if how == "evicted":
            path.unlink(missing_ok=True)
        else:  # another server's entry under the same key: not the one it slept with
            data = bytearray(path.read_bytes())
            data[end - 3] ^= 0xFF
            path.write_bytes(bytes(data))
    assert target.count and target.events is not None  # woken: found nothing to wake from
    assert target.count == 0 and target.epoch > epoch  # emptied under a new epoch: an open page reloads
    read_what_is_due(again)
    for s in again.listing():
        s.wake()
    read_what_is_due(again)
    assert pages(again) == pages(scanned(project))


def test_a_restarted_server_lists_sleeping_sessions_as_before_and_opens_them(project, cache, tmp_path, page):
    """Through `agentview serve` and a browser: the sessions list after a restart (every session asleep) shows
    what the first run showed; a session opened shows its transcript."""
    def rows(server):
        with urllib.request.urlopen(f"{server.url}/api/sessions") as response:
            return {row["id"]: row for row in json.load(response)["sessions"]}

    def events(server, session):
        with urllib.request.urlopen(f"{server.url}/api/sessions/{session}/events?limit=100000") as response:
            return json.load(response)["events"]

    server_cache = tmp_path / "server-cache"
    with serve(project, "--cache-dir", str(server_cache)) as server:
        # every session's entry, and the folder's two (folder_cache), written after them: 4 may also be 3 and those
        wait_for(lambda: len(kept_entries(server_cache)) == 6, timeout=60)
        first = rows(server)
        session = sorted(first)[0]
        first_events = events(server, session)
        page.goto(server.url + "/")
        first_text = page.locator("#av-sessions").inner_text()
    with serve(project, "--cache-dir", str(server_cache)) as server:
        wait_for(lambda: rows(server) == first, timeout=30)  # listed as being read until restored
        page.goto(server.url + "/")
        expect(page.locator("#av-sessions")).to_be_visible()
        assert page.locator("#av-sessions").inner_text() == first_text  # counts, cost, times: all as before
        page.goto(f"{server.url}/s/{session}/agents/main")
        expect(page.locator("main article.entry").first).to_be_visible()
        assert events(server, session) == first_events and first_events


def test_a_first_read_keeps_each_small_session_once_whole_and_asleep_as_soon_as_it_is_read(project, tmp_path):
    """A settled session small enough for its search index to be built in-process is indexed as soon as it is
    read, and kept once, whole, asleep: background work has nothing left to wake it for."""
    library = Library(project, cache=SessionCache(str(tmp_path / "cache")))
    library.scan()
    assert len(asleep(library)) == 4 and all(s.indexed_whole for s in library.listing())
    assert library.cache.store._puts == 4  # one entry a session, not one before indexing and one after
    assert listed(library) == listed(scanned(project))
    while background.step(library):
        pass
    assert library.cache.store._puts == 4 + 2 and len(asleep(library)) == 4  # and the folder's two entries
    assert searched(library) == searched(run(project, tmp_path / "other-cache"))
    assert pages(library) == pages(scanned(project))
    again = run(project, tmp_path / "cache", settle=False)  # a restart takes them whole
    assert all(s.indexed_whole for s in again.listing()) and len(asleep(again)) == 4


def test_a_first_read_keeps_each_big_session_asleep_as_soon_as_it_is_read(project, tmp_path, monkeypatch):
    """A session whose search index is built by the worker processes is kept and put to sleep once read, before
    its search index and facets are built; background work wakes each in turn to build them, keeps it whole and
    puts it back to sleep (the sessions here are small: every one is taken for big)."""
    monkeypatch.setattr(search_worker, "MIN_BEHIND", 0)
    library = Library(project, cache=SessionCache(str(tmp_path / "cache")))
    library.scan()
    assert len(asleep(library)) == 4 and not any(s.indexed_whole for s in library.listing())
    assert listed(library) == listed(scanned(project))
    while background.step(library):
        pass
    assert len(asleep(library)) == 4 and all(s.indexed_whole for s in library.listing())
    assert searched(library) == searched(run(project, tmp_path / "other-cache"))
    assert pages(library) == pages(scanned(project))
    again = run(project, tmp_path / "cache", settle=False)  # a restart takes them whole
    assert all(s.indexed_whole for s in again.listing()) and len(asleep(again)) == 4


MEMORY = """
import gc, sys, tracemalloc
from viewer.library import background
from viewer.library.library import Library
from viewer.store.session_cache import SessionCache
# The interpreter's table of interned words grows in blocks as big as all it interned so far (its libraries':
# genai-prices' database): grown here first, so that no growth of the process's own table is counted as the sessions'
warm = [sys.intern(f"warm-{n}") for n in range(1 << 18)]
del warm
from viewer.core import pricing
pricing.load().window("claude-sonnet-4-5")  # genai-prices' database, loaded when a first response is priced: not theirs
gc.collect()
tracemalloc.start()
library = Library(sys.argv[1], cache=SessionCache(sys.argv[2]) if sys.argv[2] else None)
library.scan()
gc.collect()  # what is alive: not what a collection would free
read = tracemalloc.get_traced_memory()[0]
while background.step(library):
    pass
gc.collect()
print(read, *tracemalloc.get_traced_memory())
"""


def test_a_first_read_of_many_sessions_holds_a_few_at_a_time(tmp_path):
    """What a first read holds once read and once done, and at its peak, with sessions kept asleep as read, against
    the same read with no cache (every session awake). Each in a process of its own: what earlier tests left in the
    interpreter's shared tables (interned words) is not counted. The peak keeps a part that does not grow with the
    sessions (the batches being read)."""
    root = tmp_path / "logs"
    generate(root / PROJECT, 16 << 20, subagents=2, sessions=64)
    age(root)

    def memory(cache: str) -> list[int]:
        done = subprocess.run([sys.executable, "-c", MEMORY, str(root), cache], capture_output=True, text=True,
                              cwd=REPO, check=True)
        return [int(n) for n in done.stdout.split()]

    awake = memory("")
    kept = memory(str(tmp_path / "cache"))
    read, held, peak = (k / a for k, a in zip(kept, awake))
    # small sessions are indexed as they are read: once read, the folder holds what it holds when done
    assert kept[0] <= kept[1] * 1.01 and held < 0.5 and peak < 0.75, (kept, awake)


def test_an_entry_whose_summary_lacks_a_part_is_a_miss_not_a_failure(project, cache, monkeypatch):
    """An entry written by code whose summary had fewer parts (same layout) is read again from the files."""
    from viewer.store import index_state

    real = index_state.sections

    def without_complete(s, **given):
        for section in real(s, **given):
            if type(section) is tuple and section[0] == "head":
                section = ("head", {**section[1], "summary": {k: v for k, v in section[1]["summary"].items()
                                                             if k != "complete"}})
            yield section

    monkeypatch.setattr(index_state, "sections", without_complete)
    written = run(project, cache.parent / "short-cache")
    monkeypatch.undo()
    assert written.cache.store.total_bytes() > 0
    without_the_folders_entry(project, cache.parent / "short-cache")
    again = run(project, cache.parent / "short-cache", settle=False)
    assert again.cache.restored == 0
    assert pages(again) == pages(scanned(project))


def test_a_sleeping_sessions_cost_read_at_other_prices_is_summed_again_at_them(project, cache, tmp_path):
    """A summary keeps what its responses cost at the prices of the run that summed them: read by a run at other
    prices (a --prices file given since), the session wakes and is priced at these."""
    from viewer.core import pricing
    from viewer.core.host import Host

    models = sorted({m for s in scanned(project).listing() for m in usage.for_session(s)["models"]})
    mine = tmp_path / "prices.json"
    mine.write_text(json.dumps({"models": {m: {"input": 1000, "output": 1000, "cache_write": 1000, "cache_read": 1000}
                                           for m in models}}))
    prices = pricing.load(str(mine))
    other = Library(project, cache=SessionCache(str(cache), host=Host(prices=prices)))
    other.scan()
    assert len(asleep(other)) == 4
    fresh = Library(project, host=Host(prices=prices))
    fresh.scan()
    assert listed(other) == listed(fresh) and asleep(other) == []
    assert agents_costs(other) == agents_costs(fresh)  # its agents' kept totals are of the other prices too


def test_a_woken_session_makes_its_search_index_only_when_first_searched(project, cache):
    """Its page reads everything else: the search index's sections are decoded when a search first reads it."""
    awake = run(project, cache.parent / "other-cache")
    again = run(project, cache, settle=False)
    one = again.listing()[0]
    with one.lock:
        one.agents  # woken
        assert "search" not in one.__dict__ and one.indexed_whole and sleeping.read_state(one) == "read"
    assert pages(again)[one.id] == pages(awake)[one.id]
    while background.step(again):  # nothing left to build: it stays unmade
        pass
    assert "search" not in one.__dict__
    word = next(w for w in ("warehouse", "def", "error", "return") if search.matches(one, search.parse(w))[0])
    assert "search" in one.__dict__ and one.search._session() is one
    in_one = f"{word} session:{one.id.split(':')[-1]}"
    assert search.search(again.listing(), in_one) == search.search(awake.listing(), in_one)
