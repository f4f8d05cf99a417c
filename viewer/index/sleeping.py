"""A session asleep: its index dropped from memory while a cache entry holds it, taken back the moment it is read.

A kept session nobody looked at for a while keeps only what the sessions list shows and its settled normalizer,
so memory does not grow with what nobody looks at. Reading any dropped attribute wakes it from its entry, under
its lock (`__getattr__`); if the entry is gone, the session starts empty under a new epoch and is read again.
"""

from __future__ import annotations

import time

from . import failed, usage

# What a session keeps while asleep: who it is, what the sessions list shows, and its (settled) normalizer.
KEPT_ASLEEP = frozenset({"id", "path", "relpath", "name", "host", "lock", "serial", "members", "project", "epoch",
                         "updated_at", "format", "format_reason", "_adds_keys", "normalizer", "title",
                         "format_summary", "internal", "seen_at", "_asleep", "first_time", "last_time"})
SUMMARY = ("epoch", "updated_at", "title", "format_summary", "internal", "first_time", "last_time")  # kept attributes restored from a summary
LISTED = ("count", "agents", "problems", "failures", "usage", "complete")  # what a sleeping session answers without waking


class Sleeps:
    """The sleeping and waking of SessionIndex (a mixin: see the module)."""

    @property
    def asleep(self) -> dict | None:
        """What a sleeping session answers without waking (LISTED, and how to wake it), else None."""
        return self.__dict__.get("_asleep")

    def __getattr__(self, name: str):
        # Called only for an attribute the instance does not have: a sleeping session's dropped index
        asleep = self.__dict__.get("_asleep")
        if asleep is None or name.startswith("__"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        if name != "search" or not self._search_alone():
            self.wake()
        return getattr(self, name)

    def _search_alone(self) -> bool:
        """Take back a sleeping session's search index alone: a search of thousands of sessions reads their postings
        and wakes only the sessions with hits. Whether it could (else it wakes whole)."""
        with self.lock:
            asleep = self.__dict__.get("_asleep")
            if asleep is None or "search" in self.__dict__:
                return True
            search = asleep["wake"](self, search_only=True)
            if search is None:
                return False
            self.__dict__["search"] = search
            self.seen_at = time.monotonic()
            return True

    def summary(self) -> dict:
        """What the sessions list reads of it: the same asleep or awake (callers hold the lock)."""
        asleep = self.asleep
        if asleep is not None:
            return {**{k: asleep[k] for k in LISTED}, **{name: getattr(self, name) for name in SUMMARY}}
        usage.for_session(self)  # summed and kept in usage_totals
        totals = self.usage_totals[None]
        return {"count": self.count, "agents": len(self.agents), "problems": len(self.problems),
                "failures": failed.total(self, caught_up=False), "usage": totals.state(), "complete": self.indexed_whole,
                **{name: getattr(self, name) for name in SUMMARY}}

    @property
    def indexed_whole(self) -> bool:
        """Whether its search index and facets hold every event (a session kept as soon as it was read sleeps
        before they are built: background work wakes it to build them)."""
        asleep = self.asleep
        if asleep is not None:
            return asleep["complete"]
        return self.search.indexed >= self.count and self.facets.indexed >= self.count

    @property
    def agent_count(self) -> int:
        asleep = self.asleep
        return asleep["agents"] if asleep is not None else len(self.agents)

    @property
    def failure_count(self) -> int:
        """Its failures (index/failed.py), as far as its facets are built: the sessions list reads it often."""
        asleep = self.asleep
        return asleep["failures"] if asleep is not None else failed.total(self, caught_up=False)

    @property
    def problem_count(self) -> int:
        asleep = self.asleep
        return asleep["problems"] if asleep is not None else len(self.problems)

    def sleep(self, wake, lost, summary: dict | None = None) -> None:
        """Drop the index, keeping what the list shows; `wake(self)` gives the index back (a SessionIndex equal to
        this one when it went to sleep) or None, then `lost(self)` is told (outside the lock) and its files are read
        again. `summary` (from a cache entry): what it shows, for a session that was never awake in this run."""
        with self.lock:
            if self.asleep is not None:  # asleep with its search index: drop that
                self.__dict__.pop("search", None)
                return
            if summary is None:
                summary = self.summary()
            else:
                for name in SUMMARY:
                    setattr(self, name, summary[name])
            self.__dict__["_asleep"] = {**{k: summary[k] for k in LISTED}, "wake": wake, "lost": lost}
            # `_asleep` first: a reader without the lock that misses an attribute from now on wakes it (after this)
            for name in [n for n in self.__dict__ if n not in KEPT_ASLEEP]:
                del self.__dict__[name]

    def wake(self, seen: bool = True) -> None:
        """Take the index back from where it was kept (see the module); nothing when awake. `seen`: someone reads
        it (else background work, which puts it back to sleep when done): it stays awake SLEEP_AFTER_S at least."""
        with self.lock:
            asleep = self.__dict__.get("_asleep")
            if asleep is None:
                return
            restored = asleep["wake"](self)
            if restored is not None and restored.count == asleep["count"]:
                self._take(restored)
                lost = None
            else:
                self._clear()  # empty under a later epoch: an open page reloads, and fills as the files are read
                self.epoch += 1
                lost = asleep["lost"]
            if seen:
                self.seen_at = time.monotonic()
        if lost is not None:
            lost(self)

    def _take(self, restored) -> None:
        """Become awake with `restored`'s index (caller holds the lock)."""
        self.__dict__.update({k: v for k, v in restored.__dict__.items() if k not in KEPT_ASLEEP})
        restored.__dict__.clear()  # its parser's methods refer to it: freed now, not at the next collection
        for built in (self.search, self.facets):  # they read their session through a weak reference
            built.belong_to(self)
        self._new_parser()
        del self.__dict__["_asleep"]

    def sleepy(self, now: float, after: float) -> bool:
        """Whether nothing has looked at it for `after` seconds (Library.get, a wake and a search mark it seen), and
        it holds more than its summary."""
        return now - self.seen_at >= after and (self.asleep is None or "search" in self.__dict__)
