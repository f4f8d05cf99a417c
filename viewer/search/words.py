"""The words of texts as the search index posts them: `tokens` (the regex \\w+ over the lowered text), and the
postings of many texts at once (`word_postings`), found in C calls over all of them together.
"""

from __future__ import annotations

import re
from array import array
from collections import deque
from itertools import chain, repeat

from viewer.core.positions import POSITIONS_TYPE

TOKEN = re.compile(r"\w+")


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


# ASCII text: the same tokens as TOKEN.findall(text.lower()), by a byte table (word characters
# lowercased, the separator of texts kept, every other character a space) and a split, far
# cheaper than a regex.
_SEPARATOR = "\x01"
_ASCII_WORDS = bytes(c if chr(c).isalnum() or chr(c) in "_" + _SEPARATOR else ord(" ")
                     for c in range(128)).lower() + bytes(range(128, 256))
_ASCII = bytes(range(128))


_NO_POSITIONS = array(POSITIONS_TYPE)


def new_positions(count: int):
    """`count` new empty arrays of positions (POSITIONS_TYPE): copies of an empty one, a third fewer instructions each
    than array(POSITIONS_TYPE) makes (no arguments parsed)."""
    return map(array.__copy__, repeat(_NO_POSITIONS, count))


def word_postings(texts: list[str], start: int) -> dict[str, array]:
    """The postings of consecutive texts at positions start, start+1, ...: token -> the ascending positions of
    the texts holding it (`tokens` of each, each token once per text).

    Tokenizing is most of what indexing costs, so it runs in C over all the texts at once: one translation and
    split of them all, each text's words made a set, and each set's words appended to their positions through
    C calls only (no Python code per word: a dict of every word's empty positions is made first). A text said
    again in the batch (a message delivered to several agents, each delivery with its original's content: a
    third of the texts of a multi-agent log) is tokenized once, and posted once with all its positions."""
    stop = start + len(texts)
    if len(set(texts)) == len(texts):
        word_sets = _word_sets(texts)
        words = _words_of(word_sets)
        postings = dict(zip(words, new_positions(len(words))))
        deque(map(array.append, map(postings.__getitem__, chain.from_iterable(word_sets)), _each_position(
            range(start, stop), word_sets)), 0)
        return postings
    positions_of: dict[str, list[int]] = {}  # each text said -> its positions
    for position, text in zip(range(start, stop), texts):
        positions = positions_of.get(text)
        if positions is None:
            positions_of[text] = [position]
        else:
            positions.append(position)
    word_sets = _word_sets(list(positions_of))
    words = _words_of(word_sets)
    lists = dict(zip(words, map(list, repeat((), len(words)))))
    deque(map(list.extend, map(lists.__getitem__, chain.from_iterable(word_sets)), _each_position(
        positions_of.values(), word_sets)), 0)
    # a word's groups come in the order their texts were first said: sorted, its positions ascend again
    return dict(zip(lists, map(array, repeat(POSITIONS_TYPE), map(sorted, lists.values()))))


def _words_of(word_sets: list[set[str]]) -> set[str]:
    """Every word of the sets once."""
    return set().union(*word_sets)


def _each_position(positions, word_sets: list[set[str]]):
    """Each text's position (or positions) once for each of its words, in the order of the sets' words."""
    return chain.from_iterable(map(repeat, positions, map(len, word_sets)))


def _word_sets(texts: list[str]) -> list[set[str]]:
    """The set of each text's tokens."""
    joined = _SEPARATOR.join(texts)
    if not joined.isascii():  # the ASCII texts together as below, the others together apart (a few, mostly)
        sets = _word_sets([text if text.isascii() else "" for text in texts])
        others = iter(_other_word_sets([text for text in texts if not text.isascii()]))
        return [words if text.isascii() else next(others) for words, text in zip(sets, texts)]
    parts = joined.encode().translate(_ASCII_WORDS).decode().split(_SEPARATOR)
    if len(parts) == len(texts):
        return list(map(set, map(str.split, parts)))
    return [set(tokens(text)) for text in texts]  # a text holds the separator itself


def _other_word_sets(texts: list[str]) -> list[set[str]]:
    """The set of each text's tokens, for texts not all ASCII: lowered as `tokens` lowers them, ASCII by the byte
    table, and each other character that is not a word character made a space (the few a run holds, found in C), so
    a split finds what the regex finds, at a fraction of its cost."""
    data = _SEPARATOR.join([text.lower() for text in texts]).encode("utf-8", "surrogatepass")
    others = set(data.translate(None, _ASCII).decode("utf-8", "surrogatepass"))  # UTF-8 keeps them whole
    apart = "".join(sorted(c for c in others if not TOKEN.fullmatch(c)))
    spaced = data.translate(_ASCII_WORDS).decode("utf-8", "surrogatepass")
    if len(apart) <= 8:
        for character in apart:
            spaced = spaced.replace(character, " ")
    else:
        spaced = re.sub(f"[{re.escape(apart)}]", " ", spaced)
    parts = spaced.split(_SEPARATOR)
    if len(parts) == len(texts):
        return list(map(set, map(str.split, parts)))
    return [set(tokens(text)) for text in texts]  # a text holds the separator itself
