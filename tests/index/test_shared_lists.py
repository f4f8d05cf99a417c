"""SharedLists: the dict of lists an index copy shares with its original."""

from viewer.index.shared_lists import SharedLists


def test_shared_lists_copy_a_list_before_it_can_change():
    original = {"a": [1], "b": [2], "c": [3]}
    copy = SharedLists(original)
    copy.get("a").append(10)
    copy["b"].append(20)
    copy.setdefault("c", []).append(30)
    copy.setdefault("d", []).append(40)
    assert original == {"a": [1], "b": [2], "c": [3]}
    assert copy == {"a": [1, 10], "b": [2, 20], "c": [3, 30], "d": [40]}
    assert copy.pop("a") == [1, 10] and copy.get("a") is None and copy.get("a", ()) == ()
    again = SharedLists(copy)  # a copy of a copy
    again.get("b").append(21)
    assert copy["b"] == [2, 20] and again["b"] == [2, 20, 21] and original["b"] == [2]
