"""Plain data packed small (viewer.core.packed): whatever JSON can hold comes back equal, and smaller than marshal;
each app packs with a table of its own, bounded."""

import marshal

from hypothesis import given, settings, strategies as st

from viewer.core import packed
from viewer.core.packed import Shapes

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=6),
    max_leaves=30)

SHAPES = Shapes()


@given(json_values)
@settings(max_examples=300, deadline=None)
def test_whatever_json_holds_comes_back_equal(value):
    assert SHAPES.unpack(SHAPES.pack(value)) == value


@given(st.dictionaries(st.sampled_from(["content", "raw", "role", "usage", "x"]) | st.text(max_size=4), json_values,
                       max_size=8))
@settings(max_examples=300, deadline=None)
def test_a_dict_packed_blanked_is_its_copy_with_those_keys_none_packed(value):
    blank = frozenset({"content", "raw"})
    copy = {key: None if key in blank else item for key, item in value.items()}
    assert SHAPES.pack_blanked(value, blank) == SHAPES.pack(copy)
    assert SHAPES.unpack(SHAPES.pack_blanked(value, blank)) == copy


def test_past_the_table_a_dict_packed_blanked_keeps_its_keys(monkeypatch):
    shapes = Shapes()
    monkeypatch.setattr(packed, "MAX_SHAPES", 0)
    value = {"content": "long text", "role": "user", "usage": {"input_tokens": 3}}
    assert shapes.unpack(shapes.pack_blanked(value, frozenset({"content"}))) == {**value, "content": None}
    assert value["content"] == "long text"  # the dict given is not changed


def test_a_tuple_comes_back_as_the_list_json_would_make():
    shapes = Shapes()
    assert shapes.unpack(shapes.pack({"a": (1, "x"), "b": [(2,)]})) == {"a": [1, "x"], "b": [[2]]}


def test_an_events_small_fields_pack_to_about_half_of_marshal():
    event = {"message_id": "39140609-139a-474a-a459-61f8828a5c7e", "event_type": "transcript_entry",
             "agent_id": "main", "timestamp": "2026-02-22T14:54:56.622Z", "line": 11, "role": "assistant",
             "content": None, "model": "claude-opus-4-1-20250805", "request_id": "req_011CcLTq3EmqK1feSJ9NsB",
             "usage": {"input_tokens": 335, "cache_creation_input_tokens": 4271, "cache_read_input_tokens": 43093,
                       "output_tokens": 120, "service_tier": "standard"}}
    shapes = Shapes()
    shapes.pack(event)  # its shapes known, as after the first of a million events
    assert len(shapes.pack(event)) < 0.6 * len(marshal.dumps(event))
    assert shapes.unpack(shapes.pack(event)) == event


def test_past_the_table_a_dict_keeps_its_keys(monkeypatch):
    shapes = Shapes()
    shapes.pack({"one shape": 1})
    monkeypatch.setattr(packed, "MAX_SHAPES", 1)
    value = {"a never seen key order": 1, "b": {"nested, also new": [1, 2]}}
    assert shapes.unpack(shapes.pack(value)) == value
    assert len(shapes.known()) == 1


def test_a_table_holds_a_bounded_number_of_keys_characters():
    shapes = Shapes()
    values = [{f"{i:07d}" + "k" * 10_000: i} for i in range(150)]  # 1.5M characters of keys in all
    assert [shapes.unpack(shapes.pack(value)) for value in values] == values
    assert 0 < sum(len(k) for keys in shapes.known().values() for k in keys) <= packed.MAX_KEYS


def test_two_tables_share_nothing():
    one, two = Shapes(), Shapes()
    data = one.pack({"only in one": 1})
    assert two.known() == {} and one.known()
    assert two.learn(one.known()) and two.unpack(data) == {"only in one": 1}


def test_bytes_packed_in_another_run_read_back_once_its_shapes_are_learnt():
    import subprocess
    import sys

    from conftest import REPO

    code = ("import marshal, sys; from viewer.core.packed import Shapes; shapes = Shapes(); "
            "data = shapes.pack({'zeta only there': 1, 'usage': {'in there': 2}}); "
            "sys.stdout.buffer.write(marshal.dumps((data, shapes.known())))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, check=True).stdout
    data, known = marshal.loads(out)
    shapes = Shapes()
    assert shapes.learn(known)
    assert shapes.unpack(data) == {"zeta only there": 1, "usage": {"in there": 2}}


def test_a_shape_that_is_not_what_its_id_says_is_refused():
    shapes = Shapes()
    shapes.pack({"a": 1})
    some_id = next(iter(shapes.known()))
    assert not shapes.learn({some_id: ("not", "these", "keys")})
    assert not shapes.learn({12345: ("x",)}) or packed._shape_id(("x",)) == 12345
