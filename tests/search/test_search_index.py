"""Building the search index in batches finds exactly what indexing event by event did."""

import pytest

from conftest import write_events
from events import calls, created, entry, piece, result, say, system, tool_call, user
from viewer.core import model
from viewer.search import index as search_index
from viewer.library.library import Library

TEXTS = [
    "", "Hello, World!", "snake_case and CamelCase 42x", "tabs\tand\nnewlines\r\nand\x1cfile\x1fseparators",
    "a\x00b\x7fc", "café CRÈME brûlée", "İstanbul ΣΟΦΟΣ straße ﬁle", "emoji 🎉 party", "fullwidth ＡＢＣ１２３",
    "combining e\u0301 mark", "lone surrogate \ud800 here", "holds the \x01 separator", "naïve—dash “quotes”",
    "    ", "_", "x" * 5000, "json {\"path\": \"a/b.py\", \"n\": [1, 2]}",
    "«many» ¿signs? ¡sí! • · § ¶ © ® ™ ° ± × ÷ ‰ ‹a›b\u00a0c\u3000d\u2028e Kelvin", "ΟΔΟΣ\x01ΟΔΟΣ é",
]


@pytest.mark.parametrize("texts", [
    TEXTS,
    [t for t in TEXTS if t.isascii() and "\x01" not in t],  # all ASCII: one translation for them all
    [t for t in TEXTS if t.isascii()],  # one holds the separator of texts
    [t for t in TEXTS if not t.isascii()],
    ["naïve—dash", "ünïcödé only", "plain"],  # a few characters that are not word characters
    ["only one"], [],
    # texts said again (deliveries): tokenized once, posted with all their positions, interleaved with others
    TEXTS + TEXTS[::-1] + TEXTS[:3],
    ["say it", "say it", "other words it", "say it", "", "", "other words it", "x y"],
    ["same", "same"],
])
def test_word_postings_are_the_tokens_of_each_text(texts):
    expected = {}
    for position, text in enumerate(texts, start=7):
        for token in dict.fromkeys(search_index.tokens(text)):
            expected.setdefault(token, []).append(position)
    postings = search_index.word_postings(texts, 7)
    assert {token: list(positions) for token, positions in postings.items()} == expected
    assert all(type(token) is str for token in postings)


def keys_of(s, position: int) -> set[str]:
    """What the index holds for the event at `position`: the rule, written out one event at a time."""
    event = s.events[position]
    keys = set(search_index.tokens(search_index.searchable_text(event)))
    agent = s.agents.get(event["agent_id"])
    if agent is not None and agent.first_position == position and (
            agent.created_position is None or agent.created_position > position):
        keys.update(search_index.tokens(agent.agent_id))
    keys.add(search_index.AGENT + event["agent_id"])
    if isinstance(event.get("role"), str):
        keys.add(search_index.ROLE + event["role"].lower())
    keys.add(search_index.KIND + model.perspective_kind(event))
    if event["event_type"] in search_index.EVENT_KINDS:
        keys.add(search_index.KIND + search_index.EVENT_KINDS[event["event_type"]])
    if "tool_calls" in event or "tool_call_id" in event or event.get("role") == "tool":
        keys.update(search_index.TOOL + name for name in search_index.tool_names(s, position))
    return keys


def varied_events(n: int) -> list[dict]:
    """Every kind of event, agents appearing before and after their creation, non-ASCII and odd values."""
    out = [created("c0", "root", name="Root Agent", language_model="acme/model-1")]
    for i in range(n):
        a = f"agent_{i % 7}"
        out += [
            user(f"u{i}", a, f"Question {i}: café naïve ΣΟΦΟΣ?" if i % 5 == 0 else f"Question {i} about Tea_{i % 3}"),
            calls(f"k{i}", a, tool_call(f"t{i}", "Read_File" if i % 2 else "grep", path=f"src/{i}.py"),
                  content="looking" if i % 3 else None),
            result(f"r{i}", a, f"t{i}", [{"type": "text", "text": f"line {i} \x01 sep" if i == 50 else f"line {i}"},
                                         {"n": i}], name="read_file" if i % 4 else "Grep"),
            say(f"s{i}", a, f"Answer {i} — done"),
            entry(f"o{i}", a, ["odd", "role"], content={"nested": i}),
            entry(f"d{i}", a, "Developer", content=f"dev note {i}", name="not a result"),
            entry(f"x{i}", a, "tool", content=f"orphan result {i}", tool_call_id="nowhere"),
            piece(f"p{i}", a, f"piece {i} of text", cause=f"s{i}"),
        ]
        if i % 7 == 3:
            out.append(created(f"late{i}", f"agent_{(i + 2) % 7}", name=f"Late {i}"))
        if i == 40:
            out.append(system("sys", "implicit_agent-9", "Système: pas créé"))
    return out


def expected_index(s) -> dict[str, list[int]]:
    expected: dict[str, list[int]] = {}
    for position in range(s.count):
        for key in keys_of(s, position):
            expected.setdefault(key, []).append(position)
    return expected


def library_with(tmp_path, events) -> Library:
    write_events(tmp_path / "s.jsonl", events)
    library = Library(tmp_path)
    library.scan()
    return library


@pytest.mark.parametrize("budget", [None, 1, 7, search_index.SearchIndex.BATCH + 3])
def test_the_index_holds_each_events_tokens_and_facets(tmp_path, budget):
    s = library_with(tmp_path, varied_events(140)).get("s")
    assert s.count > 2 * search_index.SearchIndex.BATCH
    while not s.search.catch_up(s.count, budget):
        pass
    expected = expected_index(s)
    facets = {k: v for k, v in expected.items() if k[:3] in search_index.CLASS_FIELDS}
    assert {k: list(v) for k, v in s.search._postings.items()} == {k: v for k, v in expected.items() if k not in facets}
    assert {k: list(s.search.get(k)) for k in facets} == facets
    assert search_index.ROLE + "developer" in facets and search_index.KIND + "piece" in facets  # and others
    assert len(s.search._merged) > 0  # some were merged from several classes
    assert s.search.get(search_index.AGENT + "nobody") == s.search.get(search_index.ROLE + "nobody") == search_index.array("i")
    words = sorted(t for bucket in s.search.vocabulary.values() for t in bucket)
    assert words == sorted(k for k in expected if not k.startswith("\x01"))
    assert sorted(s.search.prefixed("caf")) == sorted(k for k in expected if k.startswith("caf")) == ["café"]


def test_a_facets_positions_grow_with_the_session(tmp_path):
    library = library_with(tmp_path, varied_events(20))
    s = library.get("s")
    user, noted, agent = search_index.ROLE + "user", search_index.KIND + "noted", search_index.AGENT + "agent_3"
    before = {key: list(s.search.get(key)) for key in (user, noted, agent)}
    assert before == {key: expected_index(s)[key] for key in before} and len(before[user]) == 20
    assert noted in s.search._merged  # noted: entries of odd roles, pieces, creations (several classes)
    write_events(tmp_path / "s.jsonl", varied_events(30)[len(varied_events(20)):], mode="a")
    library.refresh(str(tmp_path / "s.jsonl"))
    expected = expected_index(s)
    assert {key: list(s.search.get(key)) for key in before} == {key: expected[key] for key in before}
    assert len(expected[user]) == 30 and len(expected[noted]) > len(before[noted])


def test_prefixes_find_the_words_of_events_indexed_after_a_prefix_was_first_looked_up(tmp_path):
    library = library_with(tmp_path, [user("u1", "main", "Caffeine first"), say("s1", "main", "décaféiné")])
    s = library.get("s")
    assert sorted(s.search.prefixed("caf")) == ["caffeine"] and s.search.prefixed("déc") == ["décaféiné"]
    write_events(tmp_path / "s.jsonl", [say("s2", "main", "CAFÉ au lait, cafeteria"), user("u2", "main", "Décor")],
                 mode="a")
    library.scan()
    assert sorted(s.search.prefixed("caf")) == ["cafeteria", "caffeine", "café"]
    assert sorted(s.search.prefixed("dé")) == ["décaféiné", "décor"]
    assert sorted(s.search.words()) == sorted(["au", "cafeteria", "caffeine", "café", "décaféiné", "décor", "first",
                                               "lait", "main"])
