"""A session asleep: its index dropped from memory while a cache entry holds it, taken back the moment it is read.

A kept session nobody looked at for a while keeps only what the sessions list shows and its settled normalizer,
so memory does not grow with what nobody looks at. Reading any dropped attribute wakes it from its entry, under
its lock (SessionIndex.__getattr__ calls `woken`); if the entry is gone, the session starts empty under a new
epoch and is read again. A group listed before it is read is asleep the same way, its index made when first read
(`unread`). These functions operate on the session, whose own attributes are dropped and taken back.
"""

from __future__ import annotations

import marshal
import time

from viewer.search.index import far_behind

from . import failed, usage

# What a session keeps while asleep: who it is, what the sessions list shows, and its (settled) normalizer.
KEPT_ASLEEP = frozenset({"id", "path", "relpath", "name", "host", "lock", "serial", "members", "project", "epoch",
                         "updated_at", "format", "format_reason", "_adds_keys", "normalizer", "title",
                         "format_summary", "internal", "seen_at", "_asleep", "first_time", "last_time",
                         "changed_at"})
SUMMARY = ("epoch", "updated_at", "title", "format_summary", "internal", "first_time", "last_time")  # kept attributes restored from a summary
LISTED = ("count", "agents", "problems", "failures", "usage", "complete")  # what a sleeping session answers without waking
# An unread session's usage: none, encoded as a kept summary's is (decoded by usage.kept_state, a copy each time)
_UNREAD_USAGE = marshal.dumps(usage.Totals(hourly=True).state())


def unread(s) -> None:
    """A session listed before any of its files is read (a first walk of 20,000 groups): what the list shows of
    an empty one, without its index (some 12 kB and 50 us each), made empty when anything reads it (`wake`)."""
    s.title = s.format_summary = s.first_time = s.last_time = None
    s.internal = 0
    s.__dict__["_asleep"] = {"count": 0, "agents": 0, "problems": 0, "failures": 0, "usage": _UNREAD_USAGE,
                             "complete": True, "unread": True}


def asleep(s) -> dict | None:
    """What a sleeping session answers without waking (LISTED, and how to wake it), else None."""
    return s.__dict__.get("_asleep")


def later(s, name: str, make, indexed: int) -> None:
    """A part of a session taken back from a cache entry (`name`: its search index, its message ids) made only when
    first read, by `make(s)`; `indexed`: how many events it holds (`built_to`). One it holds is dropped."""
    _pending(s, (name,), lambda s: {name: make(s)}, indexed)


def later_together(s, names: tuple[str, ...], make) -> None:
    """Attributes `names` made at once when any of them is first read, by `make(s)`: {name: value} (a part and
    the containers of it the session holds as its own: its tool calls). Those it holds are dropped."""
    _pending(s, names, make, 0)


def _pending(s, names: tuple[str, ...], make, indexed: int) -> None:
    pending = s.__dict__.setdefault("_later", {})
    for name in names:
        s.__dict__.pop(name, None)
        pending[name] = (make, indexed)


def built_to(s, name: str) -> int:
    """How many events the session's search index or facets (`name`) hold, without making one made `later`."""
    pending = s.__dict__.get("_later", {}).get(name)
    return pending[1] if pending is not None else getattr(s, name).indexed


def _made_later(s, name: str):
    """Attribute `name` of `later`'s, made now (once: under the session's lock)."""
    with s.lock:
        pending = s.__dict__.get("_later")
        if name not in s.__dict__ and pending is not None and name in pending:
            made = pending.pop(name)[0](s)  # {name: value} of each attribute it makes
            for other in made:
                pending.pop(other, None)
            s.__dict__.update(made)
            if not pending:
                del s.__dict__["_later"]
    return getattr(s, name)


def woken(s, name: str):
    """Attribute `name` the session does not have: one made when first read (`later`), or a sleeping session's
    dropped index, taken back for it."""
    if name in s.__dict__.get("_later", ()):
        return _made_later(s, name)
    if s.__dict__.get("_asleep") is None or name.startswith("__"):
        raise AttributeError(f"{type(s).__name__!r} object has no attribute {name!r}")
    if name != "search" or not _search_alone(s):
        wake(s)
    return getattr(s, name)


def _search_alone(s) -> bool:
    """Take back a sleeping session's search index alone: a search of thousands of sessions reads their postings
    and wakes only the sessions with hits. Whether it could (else it wakes whole)."""
    with s.lock:
        found = s.__dict__.get("_asleep")
        if found is None or "search" in s.__dict__:
            return True
        if found.get("unread"):
            return False
        search = found["wake"](s, search_only=True)
        if search is None:
            return False
        s.__dict__["search"] = search
        s.seen_at = time.monotonic()
        return True


def summary(s) -> dict:
    """What the sessions list reads of it: the same asleep or awake (callers hold the lock)."""
    found = asleep(s)
    if found is not None:
        return {**{k: found[k] for k in LISTED}, **{name: getattr(s, name) for name in SUMMARY}}
    usage.for_session(s)  # summed and kept in usage_totals
    totals = s.usage_totals[None]
    return {"count": s.count, "agents": len(s.agents), "problems": len(s.problems),
            "failures": failed.total(s, caught_up=False), "usage": totals.state(), "complete": indexed_whole(s),
            **{name: getattr(s, name) for name in SUMMARY}}


def indexed_whole(s) -> bool:
    """Whether its search index and facets hold every event (a session kept as soon as it was read sleeps before
    they are built: background work wakes it to build them)."""
    found = asleep(s)
    if found is not None:
        return found["complete"]
    return built_to(s, "search") >= s.count and s.facets.indexed >= s.count


def read_state(s) -> str:
    """"unread" (listed, none of its files read yet), "indexing" (read, its search index further behind than a
    query takes in: a search of it now is partial) or "read", without waking a sleeping session."""
    if s.members and s.updated_at is None:  # a group listed by a first walk (asleep as `unread`, or made empty by a
        return "unread"                       # page that looked at it first)
    found = asleep(s)
    if found is not None:
        behind = not found["complete"] and far_behind(0, found["count"])
    else:
        behind = far_behind(built_to(s, "search"), s.count)
    return "indexing" if behind else "read"


def sleep(s, wake_with, lost, given: dict | None = None) -> None:
    """Drop the index, keeping what the list shows; `wake_with(s)` gives the index back (a SessionIndex equal to
    this one when it went to sleep) or None, then `lost(s)` is told (outside the lock) and its files are read
    again. `given`: what it shows (a summary from a cache entry, for a session never awake in this run; or its
    own, taken just now)."""
    with s.lock:
        found = asleep(s)
        if found is not None and found.get("unread") and given is None:
            wake(s, seen=False)  # made empty, then asleep as any other
        elif found is not None and not found.get("unread"):  # asleep with its search index: drop that
            s.__dict__.pop("search", None)
            return
        if given is None:
            given = summary(s)
        else:  # plain attributes (none is a property): set as one
            s.__dict__.update({name: given[name] for name in SUMMARY})
        s.__dict__["_asleep"] = {**{k: given[k] for k in LISTED}, "wake": wake_with, "lost": lost}
        # `_asleep` first: a reader without the lock that misses an attribute from now on wakes it (after this)
        for name in s.__dict__.keys() - KEPT_ASLEEP:
            del s.__dict__[name]


def wake(s, seen: bool = True) -> None:
    """Take the index back from where it was kept (see the module); nothing when awake. `seen`: someone reads it
    (else background work, which puts it back to sleep when done): it stays awake SLEEP_AFTER_S at least."""
    with s.lock:
        found = s.__dict__.get("_asleep")
        if found is None:
            return
        if found.get("unread"):  # nothing was read: made empty, as a new session is (a page that asks is seen: Library.get)
            s.empty()
            return
        restored = found["wake"](s)
        if restored is not None and restored.count == found["count"]:
            _take(s, restored)
            usage.take_back(s, usage.kept_state(found))
            lost = None
        else:
            s.empty()  # empty under a later epoch: an open page reloads, and fills as the files are read
            s.epoch += 1
            lost = found["lost"]
        if seen:
            s.seen_at = time.monotonic()
    if lost is not None:
        lost(s)


def _take(s, restored) -> None:
    """Become awake with `restored`'s index (caller holds the lock)."""
    s.__dict__.update({k: v for k, v in restored.__dict__.items() if k not in KEPT_ASLEEP})
    restored.__dict__.clear()  # its parser's methods refer to it: freed now, not at the next collection
    for name in [n for n in s.__dict__.get("_later", ()) if n in s.__dict__]:  # its search index, taken alone
        del s.__dict__["_later"][name]
    # They read their session through a weak reference (made later: made for `s`; the tree: made for `restored`)
    for built in (s.__dict__.get("search"), s.__dict__.get("facets"), s.__dict__.get("tree")):
        if built is not None:
            built.belong_to(s)
    s.new_parser()
    del s.__dict__["_asleep"]


def spoiled(s) -> None:
    """A woken session a part of whose entry could not be read when first needed (what stands for its events says
    so): not kept again (index_state.cacheable) until it is read again from its files (`empty` forgets this)."""
    s.__dict__["_spoiled"] = True


def sleepy(s, now: float, after: float) -> bool:
    """Whether nothing has looked at it for `after` seconds (Library.get, a wake and a search mark it seen), and it
    holds more than its summary."""
    return now - s.seen_at >= after and (asleep(s) is None or "search" in s.__dict__)
