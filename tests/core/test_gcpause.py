"""Ingest leaves the cyclic collector on, and a big session's index out of its full collections."""

import gc
import json

from viewer.library.library import Library


def write(path, count, start=0):
    with open(path, "a") as f:
        if start == 0:
            f.write(json.dumps({"message_id": "m0", "event_type": "agent_created", "agent_id": "a"}) + "\n")
        for i in range(max(start, 1), start + count):
            f.write(json.dumps({"message_id": f"m{i}", "event_type": "transcript_entry", "agent_id": "a",
                                "role": "user", "content": f"hello {i}"}) + "\n")


def test_a_big_batch_is_frozen_and_gc_stays_enabled(tmp_path):
    gc.unfreeze()
    path = tmp_path / "s.jsonl"
    write(path, 5000)
    library = Library(tmp_path)
    library.scan()
    assert gc.isenabled()
    assert gc.get_freeze_count() > 5000  # the index's objects: no longer walked by collections
    (session,) = library.listing()
    assert session.count == 5000 and session.events[4999]["content"] == "hello 4999"
    path.unlink()
    library.refresh(str(path))
    assert library.listing() == []
    assert gc.get_freeze_count() == 0  # forgotten: the collector sees everything again
    assert gc.isenabled()


def test_a_small_append_is_not_frozen(tmp_path):
    path = tmp_path / "s.jsonl"
    write(path, 10)
    library = Library(tmp_path)
    gc.unfreeze()
    library.scan()
    assert gc.get_freeze_count() == 0
    assert gc.isenabled()
    write(path, 10, start=10)
    library.refresh(str(path))
    (session,) = library.listing()
    assert session.count == 20 and gc.get_freeze_count() == 0 and gc.isenabled()


def test_a_big_batch_ending_inside_another_is_still_frozen():
    """An ingest that ends while another batch (an as-of snapshot, another thread) is under way."""
    from viewer.core.gcpause import FREEZE_AFTER, GcPause

    gcpause = GcPause()
    gc.unfreeze()
    kept = []
    with gcpause.batch() as outer:
        with gcpause.batch() as inner:
            kept = [object() for _ in range(FREEZE_AFTER)]
            inner["added"] = len(kept)
        assert not gc.isenabled() and gc.get_freeze_count() == 0  # not while a batch is under way
        outer["added"] = 1
    assert gc.get_freeze_count() > 0 and gc.isenabled()
    gc.unfreeze()
    with gcpause.batch() as small:
        small["added"] = 1
    assert gc.get_freeze_count() == 0  # what earlier pauses added is not counted again
    del kept


def test_closed_it_gives_the_collector_back_as_it_found_it():
    """An app stopping mid-batch, or after freezing, leaves the collector on and nothing frozen by it."""
    from viewer.core.gcpause import FREEZE_AFTER, GcPause

    gc.unfreeze()
    gcpause = GcPause()
    with gcpause.batch() as batch:
        kept = [object() for _ in range(FREEZE_AFTER)]
        batch["added"] = len(kept)
    assert gc.get_freeze_count() > 0
    stopped = GcPause()
    under_way = stopped.batch()
    under_way.__enter__()  # an app stopped while a batch of its was under way
    assert not gc.isenabled()
    stopped.close()
    gcpause.close()
    assert gc.isenabled() and gc.get_freeze_count() == 0
    del kept


def test_a_one_off_read_freezes_its_big_batch_without_collecting_it():
    """`agentview share` keeps every event it read: a young collection before freezing would look at each of them
    for nothing (it exits when done), so it freezes at once; an app collects the batch's garbage first."""
    import weakref

    from viewer.core.gcpause import FREEZE_AFTER, GcPause

    class Node:
        pass

    for collects in (True, False):
        gc.unfreeze()
        pause = GcPause(collects=collects)
        with pause.batch() as batch:
            cycle = Node()
            cycle.self = cycle  # garbage only a collection finds
            gone = weakref.ref(cycle)
            del cycle
            batch["added"] = FREEZE_AFTER
        assert gc.get_freeze_count() > 0 and (gone() is None) == collects
        pause.close()


def test_an_old_claude_code_session_is_read_indexed_and_kept_without_a_cyclic_collection(tmp_path):
    """A first read of a folder of old sessions reads, indexes, keeps and puts each to sleep in one go: the collector
    does not walk the growing heap meanwhile (only where sessions meet)."""
    import os
    import time

    from claude_lines import Transcript
    from viewer.store.session_cache import SessionCache

    folder = tmp_path / "projects" / "-home-dev-app"
    folder.mkdir(parents=True)
    for n in range(20):
        t = Transcript(f"0000{n:04d}-1111-2222-3333-444455556666")
        for turn in range(40):
            t.user(f"question {turn} about parsing")
            t.response(f"msg_{n}_{turn}", [{"type": "text", "text": f"answer {turn} " * 30}])
        (folder / f"{t.session}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in t.lines))
    old = time.time() - 7200
    for path in folder.iterdir():
        os.utime(path, (old, old))
    started = []
    callback = lambda phase, info: phase == "start" and started.append(info["generation"])  # noqa: E731
    threshold = gc.get_threshold()
    library = Library(tmp_path / "projects", cache=SessionCache(str(tmp_path / "cache")))
    gc.set_threshold(50)  # a collection every 50 objects made: many in each session while the collector is on
    gc.callbacks.append(callback)
    try:
        library.scan()
    finally:
        gc.callbacks.remove(callback)
        gc.set_threshold(*threshold)
    assert len(library.listing()) == 20 and all(s.asleep and s.asleep["complete"] for s in library.listing())
    assert len(started) <= 3 * 20, len(started)  # without the pause: some 180
