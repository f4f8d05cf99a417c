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
