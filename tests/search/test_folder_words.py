"""The folder's words (search.folder_words): a search that passes over the sessions not holding its words answers
exactly what a search looking into every session answers, on a folder of many Claude Code sessions and of native
sessions growing between searches; a rare word's search over sleeping sessions reads the postings of the
session holding it alone."""

from __future__ import annotations

import json
import random
import sys

import pytest

from conftest import REPO
from events import created, say, user
from test_group_cache import run
from viewer.library import background
from viewer.library.library import Library
from viewer.search import query as search
from viewer.search.folder_words import FolderWords
from viewer.search.index import ROLE, run_postings
from viewer.store import folder_cache
from viewer.store.session_cache import SessionCache

sys.path.insert(0, str(REPO / "benchmarks"))

from claude_projects import generate  # noqa: E402

QUERIES = ["def", "return", '"return import"', "quer*", "role:assistant def", "tool:bash", "agent:main def",
           "nothingmatchesthis", "def nothingmatchesthis", "is:error def", "session:warehouse def"]


def searched(library: Library, q: str, **kwargs) -> dict:
    """What a search answers with the folder's words, checked against the same search looking into every session
    (run second: the first took in the events a query takes in, so both see the same ones)."""
    version = library.version  # as the search page reads it: what may be passed over is kept until it changes
    sessions = library.listing()
    fast = search.search(sessions, q, count_budget=50_000, folder_words=library.folder_words, version=version,
                         **kwargs)
    slow = search.search(sessions, q, count_budget=50_000, **kwargs)
    assert search.parse_cursor(fast.pop("cursor")) == search.parse_cursor(slow.pop("cursor")), q
    assert fast == slow, q
    return slow


def every_page(library: Library, q: str, limit: int, **kwargs) -> list:
    hits, resume = [], None
    while True:
        page = searched(library, q, limit=limit, resume=resume, **kwargs)
        hits += [(h["session"], h["position"]) for h in page["hits"]]
        if not page["next"]:
            return hits
        resume = page["next"]


def rare_words(library: Library, most: int = 25, held_by: range = range(1, 3)) -> list[str]:
    """Words held by one or two sessions (what the folder's words are for), picked alike in every run."""
    words = library.folder_words.words
    rare = sorted(w for w, numbers in words.items() if len(numbers) in held_by and not w.isdigit())
    return random.Random(7).sample(rare, min(most, len(rare)))


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    home = tmp_path_factory.mktemp("folder-words")
    return generate(home, sessions=40, projects=4)


def test_searches_passing_over_sessions_answer_what_searching_every_session_answers(folder):
    library = Library(folder["projects_folder"])
    library.scan()
    while background.step(library):
        pass
    rare = rare_words(library)
    assert len(rare) == 25
    some = rare_words(library, 5, held_by=range(8, 20))  # pages of hits with sessions passed over between them
    for q in [*QUERIES, folder["rare_word"], *rare, " ".join(rare[:2]), *some]:
        searched(library, q)
        every_page(library, q, limit=7)
        # the count's visits run out among the sessions passed over, before, on and after the page
        every_page(library, q, limit=3, count_sessions=4)
        every_page(library, q, limit=1, count_sessions=1)
    found = searched(library, folder["rare_word"])
    assert [h["session"].endswith(folder["newest"]) for h in found["hits"]] == [True]
    assert_filed_as_held(library)


def test_the_sessions_passed_over_are_kept_until_the_library_or_what_sessions_were_told_changes(tmp_path):
    root = tmp_path / "logs"
    root.mkdir()
    for name in "abc":
        (root / f"{name}.jsonl").write_text(native_line(created("c0", "main")) + native_line(say("m1", "main", name)))
    library = Library(str(root))
    library.scan()
    words, sessions, version = library.folder_words, library.listing(), library.version
    assert words.holding(["b"], sessions, version).passed_over() == [None, None, None]  # nothing told yet
    while background.step(library):  # their words told: the same listing, the same version
        pass
    assert (library.listing(), library.version) == (sessions, version)
    assert words.holding(["b"], sessions, version).passed_over() == ["a=0-2", None, "c=0-2"]
    with (root / "c.jsonl").open("a") as f:
        f.write(native_line(say("m2", "main", "b")))
    library.refresh(str(root / "c.jsonl"))  # c changed: looked into until its new words are told
    assert library.version != version
    assert words.holding(["b"], sessions, library.version).passed_over() == ["a=0-2", None, None]
    assert [h["session"] for h in searched(library, "b")["hits"]] == ["b", "c"]


def assert_filed_as_held(library: Library) -> None:
    """Each word's list is the ascending numbers of the sessions whose index holds it, each once."""
    numbers = library.folder_words.numbers
    held: dict[str, list[int]] = {}
    for s in library.listing():
        for word in s.search.words():
            held.setdefault(word, []).append(numbers[s.id])
    filed = {word: list(kept) for word, kept in library.folder_words.words.items()}
    assert filed == {word: sorted(found) for word, found in held.items()}


def postings_read(library: Library) -> list[str]:
    return [s.id for s in library.listing() if "search" in s.__dict__]


def test_a_rare_words_search_of_sleeping_sessions_reads_the_postings_of_the_one_holding_it(folder, tmp_path):
    cache = tmp_path / "cache"
    library = run(folder["projects_folder"], cache)  # read, kept, asleep: the folder's words kept beside them
    sessions = library.listing()
    assert len(sessions) == 40 and all(s.asleep is not None for s in sessions)
    found = searched(library, folder["rare_word"])["hits"]
    assert len(found) == 1
    restarted = run(folder["projects_folder"], cache, settle=False)
    assert restarted.keep_folder() is False  # an idle restart's look at its folder's entry: nothing to write ...
    assert restarted.cache._folder_words is None  # ... and the kept words not read for it (nobody searched)
    assert postings_read(restarted) == []
    fast = search.search(restarted.listing(), folder["rare_word"], folder_words=restarted.folder_words)
    assert [(h["session"], h["position"]) for h in fast["hits"]] == [(h["session"], h["position"]) for h in found]
    assert postings_read(restarted) == [found[0]["session"]]


def test_a_search_while_a_restart_lists_its_sessions_leaves_the_kept_words_as_they_were(folder, tmp_path):
    """A restart lists each session as it finds its files and takes it from the cache afterwards: a search
    meanwhile finds them all empty, and must not tell the folder's words so, or each would then read its postings."""
    cache = tmp_path / "cache"
    found = searched(run(folder["projects_folder"], cache), folder["rare_word"])["hits"]
    restarted = Library(folder["projects_folder"], cache=SessionCache(str(cache)))
    walk, meanwhile = restarted.folders.walk, []

    def walk_then_search(below, **how):
        yield from walk(below, **how)  # every file found, every session listed, none taken from the cache yet
        sessions = restarted.listing()
        meanwhile.append((len(sessions), sum(s.count for s in sessions)))
        search.search(sessions, folder["rare_word"], folder_words=restarted.folder_words)

    restarted.folders.walk = walk_then_search
    restarted.scan()
    assert meanwhile == [(40, 0)]
    assert all(s.asleep is not None for s in restarted.listing())
    again = search.search(restarted.listing(), folder["rare_word"], folder_words=restarted.folder_words)
    assert [(h["session"], h["position"]) for h in again["hits"]] == [(h["session"], h["position"]) for h in found]
    assert postings_read(restarted) == [found[0]["session"]]


def test_without_the_kept_words_a_restart_learns_them_from_its_first_search(folder, tmp_path):
    cache = tmp_path / "cache"
    found = searched(run(folder["projects_folder"], cache), folder["rare_word"])["hits"]
    # a restart without the folder's entry: every session taken asleep from its own entry, no words kept
    SessionCache(str(cache)).store.drop(folder_cache.key_of(folder["projects_folder"], False))
    library = run(folder["projects_folder"], cache, settle=False)
    assert searched(library, folder["rare_word"])["hits"] == found  # it learns every session's words
    for s in library.listing():
        if s.asleep is not None:  # (the one with the hit woke to show it)
            s.sleep(None, None)  # their search postings dropped again
    fast = search.search(library.listing(), folder["rare_word"], folder_words=library.folder_words)
    assert [h["position"] for h in fast["hits"]] == [h["position"] for h in found]
    assert postings_read(library) == [h["session"] for h in found]


UNSIGNED = "BHILQ"  # array's unsigned types: they take an int as it is, where a signed one parses it as an argument


def test_positions_and_session_numbers_are_kept_in_arrays_of_an_unsigned_type(folder, tmp_path):
    """A cold read appends millions of positions and session numbers: every list of them is an array of an unsigned
    type, as a run of events posts them, as a session's index and the folder's words keep them, and as the folder's
    words are taken back from the cache."""
    library = run(folder["projects_folder"], tmp_path / "cache")
    lists = list(library.folder_words.words.values())
    for s in library.listing():
        lists += run_postings(s.events.walk(0, s.count), 0)[1].values()
        lists += [s.search.get(token) for token in [*s.search.words(), ROLE + "assistant"]]
    restarted = run(folder["projects_folder"], tmp_path / "cache", settle=False)
    assert len(searched(restarted, folder["rare_word"])["hits"]) == 1  # its kept words read for it
    lists += restarted.folder_words.words.values()
    assert len(lists) > 10_000 and {positions.typecode for positions in lists} <= set(UNSIGNED)


def native_line(event: dict) -> str:
    return json.dumps(event) + "\n"


def test_sessions_growing_between_searches_are_searched_as_searching_every_session_would(folder, tmp_path):
    root = tmp_path / "logs"
    root.mkdir()
    paths = [root / f"native-{i}.jsonl" for i in range(4)]
    for i, path in enumerate(paths):
        path.write_text(native_line(created(f"c{i}", "main")) + native_line(user(f"u{i}", "main", "begin here")))
    library = Library(str(root))
    library.scan()
    while background.step(library):
        pass
    rng = random.Random(3)
    words = [f"zyzzyva{n}" for n in range(12)]
    written = 0
    for round_ in range(30):
        path = rng.choice(paths)
        many = 5000 if round_ == 10 else rng.randint(1, 40)  # once far behind: searched as far as it is indexed
        with path.open("a") as f:
            for _ in range(many):
                written += 1
                said = " ".join(rng.choice(words) if rng.random() < 0.02 else "plain" for _ in range(8))
                f.write(native_line(say(f"m{written}", "main", said)))
        library.refresh(str(path))
        for _ in range(rng.randint(0, 3)):  # the background catches up a little, or not at all
            background.step(library)
        # the hits, totals and cursors (what the next poll reads from) of both
        for q in rng.sample(words, 4) + ["plain", f'"plain {words[0]}"']:
            searched(library, q)
    while background.step(library):
        pass
    for q in words:
        every_page(library, q, limit=50)
    assert any(searched(library, q)["hits"] for q in words)
    assert_filed_as_held(library)


def test_a_session_gone_from_the_folder_is_forgotten_and_its_words_leave_the_lists_kept(tmp_path):
    root = tmp_path / "logs"
    root.mkdir()
    for name, said in [("a", "shared aardvark"), ("b", "shared bittern"), ("c", "shared cassowary")]:
        (root / f"{name}.jsonl").write_text(native_line(created("c0", "main")) + native_line(say("m1", "main", said)))
    library = Library(str(root))
    library.scan()
    while background.step(library):
        pass
    words = library.folder_words
    assert words.holding(["bittern"]).ids == {"b"}
    (root / "b.jsonl").unlink()
    library.refresh(str(root / "b.jsonl"))  # what the watcher does when a file goes
    assert [s.id for s in library.listing()] == ["a", "c"]
    assert "b" not in words.numbers and "b" not in words.told
    assert words.holding(["bittern"]).ids == set() and words.holding(["shared"]).ids == {"a", "c"}
    kept = FolderWords.from_state(list(words.state(2)))  # as the cache keeps them: its number is in no list
    assert "bittern" not in words.words and "bittern" not in kept.words
    assert {w: list(n) for w, n in kept.words.items()} == {w: list(n) for w, n in words.words.items()}
    assert kept.holding(["shared"]).ids == {"a", "c"} and kept.numbers == words.numbers
    # a new file under its name: a session of its own, holding only its own words
    (root / "b.jsonl").write_text(native_line(created("c0", "main")) + native_line(say("m1", "main", "shared dodo")))
    library.refresh(str(root / "b.jsonl"))
    while background.step(library):
        pass
    assert words.holding(["dodo"]).ids == {"b"} and words.holding(["bittern"]).ids == set()
    assert words.holding(["shared"]).ids == {"a", "b", "c"}
    assert_filed_as_held(library)
    for q in ["shared", "bittern", "dodo", "aardvark"]:
        searched(library, q)
