"""Sorted position lists: each operation agrees with the same operation on plain sets."""

from array import array

from hypothesis import given, settings
from hypothesis import strategies as st

from viewer.core import positions

sorted_lists = st.lists(st.sets(st.integers(0, 300), max_size=60).map(sorted), max_size=5)


def _as(kind: str, values: list[int]):
    return array("q", values) if kind == "array" else values


@given(sorted_lists, st.sampled_from(["list", "array"]))
def test_union_is_the_sorted_set_union(lists, kind):
    lists = [_as(kind, l) for l in lists]
    assert list(positions.union(lists)) == sorted(set().union(*lists))


@given(st.lists(st.integers(0, 300), unique=True, max_size=120), st.integers(1, 5), st.data())
def test_merge_of_disjoint_lists_is_their_sorted_union(values, parts, data):
    owner = [data.draw(st.integers(0, parts - 1)) for _ in values]
    lists = [sorted(v for v, o in zip(values, owner) if o == i) for i in range(parts)]
    assert list(positions.merge(lists)) == sorted(values)


@settings(max_examples=300)
@given(sorted_lists, st.integers(0, 310), st.sampled_from([1, 2, 3, positions.CHUNK]))
def test_intersection_from_a_start_is_the_set_intersection(lists, start, chunk):
    expected = sorted(p for p in set.intersection(*map(set, lists)) if p >= start) if lists else []
    assert list(positions.intersection(lists, start)) == expected
    chunks = list(positions.intersection_chunks(lists, start, chunk))
    assert [p for c in chunks for p in c] == expected and all(c and len(c) <= chunk for c in chunks)


def test_a_much_longer_list_is_looked_up_not_read():
    long = array("q", range(0, 100_000))
    assert list(positions.intersection([[5, 77, 99_999, 100_001], long])) == [5, 77, 99_999]


@given(st.lists(st.integers(0, 300), unique=True, max_size=120), st.integers(1, 4), st.data(),
       st.integers(0, 310), st.integers(1, 50))
def test_window_is_the_first_positions_after_and_where_the_next_starts(values, parts, data, after, limit):
    owner = [data.draw(st.integers(0, parts - 1)) for _ in values]
    lists = [sorted(v for v, o in zip(values, owner) if o == i) for i in range(parts)]
    later = sorted(v for v in values if v >= after)
    taken, stop = positions.window(lists, after, limit, end=1000)
    assert taken == later[:limit]
    assert stop == (later[limit] if len(later) > limit else 1000)


@given(st.lists(st.integers(0, 50), unique=True).map(sorted), st.integers(-1, 51))
def test_contains(values, p):
    assert positions.contains(values, p) == (p in values)


@given(st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 1000)), max_size=40))
def test_positions_filed_under_keys_read_back_as_filed(filings):
    """file_at keeps a key's only position as an int: read back, every key has its positions in filing order, also
    through an index copy's SharedLists, which never changes the original."""
    from viewer.index.shared_lists import SharedLists

    mapping, expected = {}, {}
    for key, position in filings:
        positions.file_at(mapping, key, position)
        expected.setdefault(key, []).append(position)
    assert {k: list(positions.filed_at(mapping, k)) for k in "abc"} == {k: expected.get(k, []) for k in "abc"}
    assert all(type(v) is int for k, v in mapping.items() if len(expected[k]) == 1)
    before = {k: list(positions.filed_at(mapping, k)) for k in "abc"}
    copy = SharedLists(mapping)
    for key in "abcd":
        positions.file_at(copy, key, 2000)
    assert {k: list(positions.filed_at(mapping, k)) for k in "abc"} == before
    assert {k: list(positions.filed_at(copy, k)) for k in "abcd"} == {
        k: before.get(k, []) + [2000] for k in "abcd"}
