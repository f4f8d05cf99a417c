"""Which sessions of a folder hold a word: word -> the sorted numbers of the sessions whose search index posts it.

A rare word's search looks only at the sessions holding it and at those not told yet. A session's words are told
(`take`) once its index caught up, only those first posted since, so N new events cost what their new words cost.
Lists only grow: a session read again under a new epoch may leave words it no longer holds (looked at for nothing,
never missed). A session is passed over only when every word of its events was filed (`Holding.lacks`). A session
gone from the folder (`forget`) names nobody from then on, and its number leaves the lists when next kept (`state`).
"""
from __future__ import annotations

import threading
from array import array
from bisect import bisect_left
from collections import deque
from itertools import repeat

from viewer.core import lockorder
from viewer.core.cursor import Cursor
from viewer.core.positions import POSITIONS_TYPE, intersection

from .words import new_positions


class FolderWords:
    def __init__(self) -> None:
        self.words: dict[str, array] = {}  # word -> ascending numbers of the sessions holding it
        self.numbers: dict[str, int] = {}  # session id -> its number here
        self.ids: list[str] = []  # number -> session id
        # session id -> (epoch, events whose words are all filed, its files' time then, the filing that last added
        # some of its words, the cursor of a reader of those events)
        self.told: dict[str, tuple] = {}
        self.filings = 0  # filings that added words so far
        self.changes = 0  # changes of `told` so far: what may be passed over is kept until the next one (Passable)
        self._passable: tuple | None = None  # (library version, changes, the sessions listed, Passable of them)
        self.forgotten: set[int] = set()  # numbers of sessions gone, still in some lists (see state)
        # the ingest thread and requests file words: a list is bisected and inserted into under it
        self.lock = lockorder.ordered(threading.Lock(), lockorder.CACHE, "folder words")

    def take(self, s) -> None:
        """File the words of session `s` not filed yet (callers hold its lock; its search index is in memory)."""
        index = s.search
        epoch, indexed, updated = s.epoch, index.indexed, s.updated_at
        told = self.told.get(s.id)
        if indexed == 0 and told is not None:
            # Nothing to file, and what was told stands: a restart lists its sessions before it takes them from the
            # cache, and a search meanwhile must not make each of them read its postings again once taken
            return
        if told is not None and told[:3] == (epoch, indexed, updated) and not index.noted:
            return
        if index.noted_from == 0 or (told is not None and told[0] == epoch and index.noted_from <= told[1]):
            new = index.noted  # every word since its first event, or the words of the events before are filed already
        else:
            new = index.words()
        self._tell(s.id, epoch, indexed, updated, new)
        index.noted.clear()
        index.noted_from = indexed

    def take_words(self, s, words: list[str]) -> None:
        """File `words`, every word of session `s`'s events, its index whole and not in memory (read by a worker
        process and taken asleep: library.read_pool)."""
        self._tell(s.id, s.epoch, s.count, s.updated_at, words)

    def _tell(self, session_id: str, epoch: int, indexed: int, updated, new) -> None:
        with self.lock:
            told = self.told.get(session_id)
            filing = told[3] if told is not None else 0
            if new:
                self.filings += 1
                filing = self.filings
                numbered = len(self.ids)
                number = self._number(session_id)
                self._file(number, new, newest=number == numbered)
            self.told[session_id] = (epoch, indexed, updated, filing, str(Cursor(epoch, indexed)))
            self.changes += 1

    def forget(self, session_id: str) -> None:
        """The session is gone: it is told of nothing, and a session listed under its id later has a number of its own
        (its number is never given again)."""
        with self.lock:
            number = self.numbers.pop(session_id, None)
            self.told.pop(session_id, None)
            self.changes += 1
            if number is not None:
                self.ids[number] = None
                self.forgotten.add(number)

    def holding(self, words: list[str], sessions: list | None = None, version: int | None = None) -> Holding:
        """The sessions holding every one of `words` (and maybe some that held them once), as filed now; with
        `sessions` (the library's listing at its `version`), which of those sessions it may pass over."""
        with self.lock:
            lists = [self.words.get(word, _NONE) for word in words]
            ids = {self.ids[number] for number in intersection(lists)}
            ids.discard(None)
            passable = None if sessions is None else self._passable_of(sessions, version)
            return Holding(ids, self.filings, self.told, passable)

    def _passable_of(self, sessions: list, version: int | None) -> Passable:
        """The Passable of `sessions` (under the lock): kept while neither the library (`version`, bumped on every
        change of a session) nor what sessions were told changed, and the listing is the same objects in order."""
        kept = self._passable
        if (version is not None and kept is not None and kept[0] == version and kept[1] == self.changes
                and kept[2] == sessions):
            return kept[3]
        made = Passable(sessions, self.told)
        # the listing is kept with it (its sessions too, until the next change): object ids could be given again
        self._passable = (version, self.changes, sessions, made) if version is not None else None
        return made

    def state(self, size: int):
        """What it holds as plain data, in sections of at most `size` items (kept by the persistent cache: see
        store.folder_cache). What sessions were told is taken first: the words, which only grow, taken after it,
        hold at least what it says. The numbers of the sessions forgotten leave the lists on the way (a word no
        session holds any more, with them)."""
        with self.lock:
            told = [(sid, told[:3]) for sid, told in self.told.items()]
            ids, words = list(self.ids), list(self.words)
            gone, self.forgotten = sorted(self.forgotten), set()
        yield "ids", ids
        for at in range(0, len(told), size):
            yield "told", dict(told[at:at + size])
        for at in range(0, len(words), size):
            with self.lock:
                if gone:
                    self._drop(words[at:at + size], gone)
                yield "words", {word: self.words[word].tobytes() for word in words[at:at + size] if word in self.words}

    def _drop(self, words: list[str], numbers: list[int]) -> None:
        """Take `numbers` out of the lists of `words` (under the lock); a word left with none goes."""
        for word in words:
            filed = self.words.get(word)
            if filed is None or filed[-1] < numbers[0]:
                continue
            for number in numbers:
                at = bisect_left(filed, number)
                if at < len(filed) and filed[at] == number:
                    del filed[at]
            if not filed:
                del self.words[word]

    @classmethod
    def from_state(cls, sections) -> FolderWords:
        """Made again from the sections `state` gave; ValueError (or another error of a value not as made) when
        they do not add up."""
        made = cls()
        for name, value in sections:
            if name == "ids":
                made.ids = list(value)
                made.numbers = {sid: number for number, sid in enumerate(made.ids) if sid is not None}
            elif name == "told":
                made.changes += 1
                for sid, (epoch, indexed, updated) in value.items():
                    made.told[sid] = (epoch, indexed, updated, 0, str(Cursor(epoch, indexed)))
            elif name == "words":
                for word, kept in value.items():
                    numbers = made.words[word] = array(POSITIONS_TYPE)
                    numbers.frombytes(kept)
                    if not numbers or not 0 <= numbers[0] <= numbers[-1] < len(made.ids):
                        raise ValueError(f"the sessions of {word!r} are not among those numbered")
            else:
                raise ValueError(f"folder words keep no {name!r}")
        if len(made.numbers) != len(made.ids) - made.ids.count(None):
            raise ValueError("sessions numbered twice")
        return made

    def _number(self, session_id: str) -> int:
        number = self.numbers.get(session_id)
        if number is None:
            number = self.numbers[session_id] = len(self.ids)
            self.ids.append(session_id)
        return number

    def _file(self, number: int, new: list[str], newest: bool) -> None:
        """File `number` under each word of `new`; `newest`: it was numbered just now, above every number filed."""
        words = self.words
        if newest:  # appended to every list (a first read of a folder files each session so): C calls only
            new = set(new)
            unfiled = new.difference(words)
            words.update(zip(unfiled, new_positions(len(unfiled))))
            deque(map(array.append, map(words.__getitem__, new), repeat(number)), 0)
            return
        for word in new:
            numbers = words.get(word)
            if numbers is None:
                words[word] = array(POSITIONS_TYPE, (number,))
            elif numbers[-1] < number:  # the newest session: most words of a folder read in order
                numbers.append(number)
            else:
                at = bisect_left(numbers, number)
                if numbers[at] != number:
                    numbers.insert(at, number)


class Passable:
    """Of a listing of sessions, in its order, each one's part of a search cursor (`id=cursor`) when every word of
    its events is filed (told, and unchanged since), else None; `at`: session id -> its place in the listing."""

    def __init__(self, sessions: list, told: dict) -> None:
        self.pieces = [f"{s.id}={t[4]}" if (t := told.get(s.id)) is not None and t[:3] == (s.epoch, s.count,
                       s.updated_at) else None for s in sessions]
        self.at = {s.id: i for i, s in enumerate(sessions)}


class Holding:
    """The sessions holding a query's words, as filed at one moment (FolderWords.holding)."""

    def __init__(self, ids: set[str], filings: int, told: dict, passable: Passable | None = None) -> None:
        self.ids, self.filings, self.told, self.passable = ids, filings, told, passable

    def passed_over(self) -> list:
        """For each session of the listing `holding` was given, its cursor's part when it surely holds not every
        word (known whole, unchanged, holding not all of them: searched whole, no hit), else None (look into it)."""
        pieces, at = list(self.passable.pieces), self.passable.at
        for session_id in self.ids:
            place = at.get(session_id)
            if place is not None:
                pieces[place] = None
        return pieces

    def lacks(self, s) -> str | None:
        """When `s` surely holds not every word (every word of every event it has was filed, none since the moment
        these sessions were found), the cursor of a reader of all its events (searched whole, no hit); else None.

        Needs no lock: what it says holds of the events the cursor names, even if the session changed meanwhile (a
        poll reads from there). Reads only what a sleeping session keeps."""
        if s.id in self.ids:
            return None
        told = self.told.get(s.id)
        if (told is None or told[3] > self.filings or told[1] != s.count or told[0] != s.epoch
                or told[2] != s.updated_at):
            return None
        return told[4]


_NONE = array(POSITIONS_TYPE)
