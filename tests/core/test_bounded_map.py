"""The app's bounded maps: the least recently used goes first (by count or weight); a hot path's dict is dropped
whole past its bound."""

from __future__ import annotations

from viewer.core.bounded_map import BoundedMap, ClearedPast


def test_the_least_recently_used_entry_goes_first_past_the_count():
    kept = BoundedMap("test", most=2)
    kept.put("a", 1)
    kept.put("b", 2)
    assert kept.get("a") == 1  # now the most recently used
    kept.put("c", 3)
    assert kept.keys() == ["a", "c"] and kept.get("b", "gone") == "gone"


def test_entries_go_past_the_weight_but_the_newest_stays_however_heavy():
    kept = BoundedMap("test", most=10, weigh=len, most_weight=5)
    kept.put("abc", 1)
    kept.put("de", 2)
    kept.put("fg", 3)  # 7 > 5: the oldest goes
    assert kept.keys() == ["de", "fg"]
    kept.put("heavy-key", 4)  # alone over the weight: kept, the rest dropped
    assert kept.keys() == ["heavy-key"]


def test_a_hot_paths_dict_is_dropped_whole_past_its_bound_and_put_returns_the_value():
    made = ClearedPast(3)
    assert [made.put(n, n * n) for n in range(3)] == [0, 1, 4]
    assert dict(made) == {0: 0, 1: 1, 2: 4}
    assert made.put(3, 9) == 9
    assert dict(made) == {3: 9}
