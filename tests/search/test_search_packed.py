"""A finished session's search postings packed (search_packed): every query finds what the unpacked index finds, the
packed form holds a fraction of the memory, a packed index that must grow after all is unpacked, and the cache keeps
it packed."""

from __future__ import annotations

import gc
import random
import sys
import tracemalloc
from array import array

import pytest

from conftest import REPO
from test_claude_settled import age
from viewer.core.positions import POSITIONS_TYPE
from viewer.library import background
from viewer.search import query as search
from viewer.library.library import Library
from viewer.search.index import _Postings
from viewer.search.packed import PackedPostings
from viewer.store.session_cache import SessionCache

sys.path.insert(0, str(REPO / "benchmarks"))

from generate_claude import generate  # noqa: E402

QUERIES = ["warehouse", "def", "error deploy", '"return token"', "quer*", "w*", "role:assistant", "role:tool",
           "tool:read", "tool:bash merge", "agent:main index", "kind:tool", "nothingmatchesthis", "a*"]


def hits(library: Library) -> dict:
    sessions = library.listing()
    found = {}
    for q in QUERIES:
        page, pages = search.search(sessions, q, limit=200), []
        while True:
            pages += [(h["session"], h["message_id"]) for h in page["hits"]]
            if not page["next"] or len(pages) > 2000:
                break
            page = search.search(sessions, q, resume=page["next"], limit=200)
        found[q] = pages
    return found


def indexed(root, cache=None) -> Library:
    library = Library(root, cache=SessionCache(str(cache)) if cache else None)
    library.scan()
    while background.step(library):
        pass
    return library


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("packed") / "logs"
    generate(root / "-home-dev-warehouse", 3 << 20, subagents=6, sessions=4)
    fresh = indexed(root)  # just written: not settled, not packed
    assert not any(s.search.packed for s in fresh.listing())
    age(root)
    return root, hits(fresh)


def test_every_query_finds_what_the_unpacked_index_finds(project):
    root, unpacked = project
    library = indexed(root)
    assert all(s.search.packed for s in library.listing())
    assert hits(library) == unpacked
    assert sum(map(len, unpacked.values())) > 100 and not unpacked["nothingmatchesthis"]


def test_packed_postings_hold_a_fraction_of_the_memory(project):
    root, _ = project
    library = Library(root)
    library.scan()
    for s in library.listing():
        s.search.catch_up(s.count)

    def held(build) -> int:
        gc.collect()
        tracemalloc.start()
        try:
            kept = build()
            gc.collect()
            return tracemalloc.get_traced_memory()[0], kept
        finally:
            tracemalloc.stop()

    def as_built(postings):  # what a session's index holds while it grows: a dict of arrays, and its vocabulary
        built = _Postings()
        for token, positions in postings.items():
            built[token].extend(positions)
        return built

    def unpacked(postings):  # small settled sessions are packed as soon as they are read: the dict they came from
        if not isinstance(postings, PackedPostings):
            return postings
        return {token: array(POSITIONS_TYPE, postings.get(token)) for token in postings.tokens}

    postings = [unpacked(s.search._postings) for s in library.listing()]
    as_dicts, _ = held(lambda: [as_built(d) for d in postings])
    as_packed, _ = held(lambda: [PackedPostings.packed(d, s.count) for d, s in zip(postings, library.listing())])
    assert as_packed < as_dicts / 3, (as_packed, as_dicts)


def test_a_packed_index_that_must_grow_is_unpacked_and_grows(tmp_path):
    """Packing is for sessions that will not grow; one that does after all (here a native file, packed by hand)
    takes its new events in as if it had never been packed."""
    from conftest import write_events
    from events import scanned

    lines = [{"message_id": f"m{i}", "event_type": "transcript_entry", "agent_id": "a", "role": "user",
              "content": f"word{i % 7} common text {i}"} for i in range(60)]
    path = write_events(tmp_path / "s.jsonl", lines[:40])
    library = scanned(tmp_path)
    s = library.get("s")
    s.search.catch_up(s.count)
    assert s.search.pack() and s.search.packed
    write_events(path, lines[40:], mode="a")
    library.refresh(str(path))
    s.search.catch_up(s.count)
    assert not s.search.packed
    fresh = scanned(tmp_path)
    for q in ("common", "word3", "word*", "role:user", "agent:a text"):
        assert search.search([s], q, limit=100)["hits"] == search.search(fresh.listing(), q, limit=100)["hits"], q


def test_the_cache_keeps_it_packed_and_a_restart_finds_the_same(project, tmp_path):
    root, unpacked = project
    indexed(root, tmp_path / "cache")
    again = Library(root, cache=SessionCache(str(tmp_path / "cache")))
    again.scan()
    assert again.cache.restored == 4 and all(s.search.packed for s in again.listing())
    assert hits(again) == unpacked


def test_packed_postings_read_as_the_dict_they_were_made_of():
    postings = {"beta": array("i", [1, 5]), "alpha": array("i", [0]), "\x01a:main": array("i", [0, 1, 5]),
                "alps": array("i", [7])}
    packed = PackedPostings.packed(postings)
    assert {t: list(p) for t, p in packed.items()} == {t: list(p) for t, p in postings.items()}
    assert list(packed.get("beta")) == [1, 5] and packed.get("gamma") is not None and not packed.get("gamma")
    assert packed.get("zzz", None) is None and "alps" in packed and "alp" not in packed
    assert sorted(packed.prefixed("al")) == ["alpha", "alps"] and packed.prefixed("\x01") == []
    again = PackedPostings.from_state(packed.state())
    assert {t: list(p) for t, p in again.items()} == {t: list(p) for t, p in postings.items()}
    tokens, starts, typecode, positions = packed.state()
    with pytest.raises(ValueError):
        PackedPostings.from_state((tokens[:-1], starts, typecode, positions))
    small = PackedPostings.packed(postings, count=8)  # positions of a session under 65,536 events: 2 bytes each
    assert small.positions.itemsize == 2 and {t: list(p) for t, p in small.items()} == {
        t: list(p) for t, p in postings.items()}
    assert PackedPostings.packed({"x": array("i", [70_000])}, count=70_001).get("x")[0] == 70_000
    alone = PackedPostings.packed(postings, count=8, interned=False)  # saved and dropped: the same postings
    assert alone.state() == small.state()


def test_a_session_that_settles_after_its_index_is_complete_is_packed_then(tmp_path):
    """Live when indexed (not packed), left alone later: settling packs it, and its queries find the same."""
    root = tmp_path / "logs"
    generate(root / "-home-dev-warehouse", 1 << 20, subagents=2, sessions=2)
    library = indexed(root)
    before = hits(library)
    assert not any(s.search.packed or s.normalizer.settled for s in library.listing())
    for s in library.listing():
        assert library.settle(s, now=s.updated_at + library.host.tuning.settle_after)
    assert all(s.search.packed for s in library.listing())
    assert hits(library) == before


def test_two_byte_positions_keep_every_position_of_a_session_under_65536_events():
    """Packed in 2 bytes each (each position's low half taken from the 4-byte ones): every bit of a position kept,
    the top one too, and none taken from a neighbour's bytes."""
    postings = {"a": array("i", [0, 1, 255, 256, 32767, 32768, 65534]), "b": array("i", [257, 65280, 65533])}
    packed = PackedPostings.packed(postings, count=65535)
    assert packed.positions.typecode == "H"
    assert {t: list(p) for t, p in packed.items()} == {t: list(p) for t, p in postings.items()}
    assert list(PackedPostings.packed({}, count=3).items()) == []


@pytest.mark.parametrize("count", [5_000, 70_000])
def test_many_tokens_of_every_length_pack_to_their_own_positions(count):
    """Each token's positions are cut from one run of them all: a token must get its own, whatever the lengths
    before it (one position, a hundred), in 2-byte positions and in 4."""
    rng = random.Random(count)
    postings = {f"w{i:04d}{'x' * rng.randrange(3)}": array("i", sorted(rng.sample(range(count), rng.choice(
        (1, 2, 100))))) for i in range(2_000)}
    packed = PackedPostings.packed(postings, count)
    assert packed.positions.itemsize == (2 if count < 65536 else 4)
    assert {t: list(p) for t, p in packed.items()} == {t: list(p) for t, p in postings.items()}
    assert all(list(packed.get(token)) == list(positions) for token, positions in postings.items())
