"""Long search cursors kept under short names (search.cursor_names)."""

from viewer.search.cursor_names import INLINE, NAME, CursorNames


def long_cursor(sessions: int, count: int = 7) -> str:
    return ",".join(f"session-{i:05d}=0-{count}" for i in range(sessions))


def test_a_short_cursor_is_itself_and_a_long_one_a_name_of_fixed_size():
    names = CursorNames()
    assert names.name("a=0-3,b=1-9") == "a=0-3,b=1-9" and names.cursor("a=0-3,b=1-9") == "a=0-3,b=1-9"
    for sessions in (INLINE // 10, 2000, 20000):
        cursor = long_cursor(sessions)
        name = names.name(cursor)
        assert NAME.fullmatch(name) and len(name) < 40
        assert names.cursor(name) == cursor
    assert names.name(long_cursor(2000)) == names.name(long_cursor(2000))  # one name for one cursor
    assert names.name(long_cursor(2000)) != names.name(long_cursor(2000, count=8))
    # named again right after: the same name, and kept again (the first cursor's entry was dropped meanwhile)
    again = CursorNames(most=1)
    first, second = long_cursor(2000), long_cursor(2000, count=8)
    assert again.name(first) == again.name(first) != again.name(second) == again.name(second)
    assert again.cursor(again.name(first)) == first and again.name(first) == names.name(first)


def test_the_least_recently_used_names_go_first_past_the_characters_kept():
    names = CursorNames(most=100, most_characters=3 * len(long_cursor(2000)))
    first, second, third = (names.name(long_cursor(2000, count)) for count in (1, 2, 3))
    assert names.cursor(first) is not None  # now the most recently used
    names.name(long_cursor(2000, 4))
    assert names.cursor(second) is None and names.cursor(first) and names.cursor(third)
    assert names.cursor(f"~{'0' * 20}.10") is None
