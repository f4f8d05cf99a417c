"""Serialized JSON is searched for the masking's trigger words in one pass that skips ahead: it must find every
occurrence the plain finds of each word find, overlapping ones too (a word inside another's match)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from viewer.core import redact

# Triggers, their pieces and what runs into them: words overlap (`xoxox`, `ghp_ghp_`, `sk-sk-`, `asiakia`)
PIECES = [*redact._TRIGGERS, "xo", "sk", "-", "_", "as", "ia", "gh", "p_", "api", "key", "token", "a", " ", "\"", "é"]


def every_occurrence(lowered: bytes) -> list[int]:
    starts = []
    for trigger in redact._TRIGGERS:
        at = lowered.find(trigger.encode())
        while at >= 0:
            starts.append(at)
            at = lowered.find(trigger.encode(), at + 1)
    return sorted(starts)


@settings(max_examples=1000, derandomize=True, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30))
def test_every_trigger_occurrence_is_found(pieces):
    lowered = "".join(pieces).lower().encode()
    assert sorted(redact.trigger_starts(lowered)) == every_occurrence(lowered)


def test_triggers_inside_a_match_and_at_the_end_are_found():
    for text in ["xoxoxox", "ghp_ghp_", "sk-sk-sk-", "asiakiasia", "-----begin-----begin", "passwordpasswd",
                 "api_keyapi-keyapikey", "x-auth-tokenaccess_token", "xox"]:
        lowered = text.encode()
        assert sorted(redact.trigger_starts(lowered)) == every_occurrence(lowered), text


@settings(max_examples=500, derandomize=True, deadline=None)
@given(st.lists(st.lists(st.sampled_from([*PIECES, "\0", "İ", "K", "sk-abcdefghijklmnopqrstu"]), max_size=8)
                .map("".join), max_size=12))
def test_texts_found_unmasked_together_are_those_holding_no_trigger(texts):
    """A page looks for triggers in all its names and ids at once: those found to hold none are exactly the texts
    with no trigger (each one masked alone is left as it is), whatever the others hold or the NUL between them."""
    found = redact.unmasked([*texts, 3, None])
    for text in texts:
        lowered = text.lower()
        held = len(lowered) != len(text) or bool(every_occurrence(lowered.encode()))
        if text in found:
            assert redact.mask(text) == text and not held
        elif not any(len(t.lower()) != len(t) for t in texts):  # else each is masked alone: none is found
            assert held, text


def test_texts_beyond_ascii_are_told_apart_by_where_their_bytes_end():
    """Names of characters of two, three and four bytes around one holding a trigger: only that one is held."""
    texts = ["é" * 40, "日本語の名前", "🙂 agent", "naïve sk-abcdefghijklmnopqrstu", "ß", "plain", "\u212aelvin api-\u212aey"]
    assert redact.unmasked(texts) == {"é" * 40, "日本語の名前", "🙂 agent", "ß", "plain"}
