"""The events of a record format indexed: a format's normalizer makes them from the records of a session's files
(several files merged by time), and each is filed in its SessionIndex like a native line's event."""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator

from viewer.core import jsonio, model
from viewer.core.model import Event
from viewer.files.tailer import Line
from viewer.formats.base import line_crc
from viewer.formats.native import intern_values


def ingest(s, batches: list[tuple[dict, Iterable[Line]]], in_hand: bool = False) -> int:
    """Index the lines of a record format into session `s` (see SessionIndex.ingest_records); how many events
    were added. The lines of a member may be an iterator read as it goes: records are parsed one at a time, so a
    big group is never in memory whole (unless the format must reorder a member's records first). `in_hand`: the
    events stored as loaders stay cached as read (as far as the session's event cache holds), for a caller that
    walks them next (a session indexed as soon as it is read)."""
    added = 0
    normalizer = s.normalizer
    with s.lock, s.host.gc.batch() as counter:
        streams = [normalizer.order(_records(s, member, lines)) for member, lines in batches]
        merged = heapq.merge(*streams, key=lambda item: item[0]) if len(streams) > 1 else (streams or [[]])[0]
        # after a record too deep, each event is checked: a normalizer may make its events later (a response
        # is emitted when the next record or the flush shows it complete)
        deep_line = None
        for _, number, member, record, source, too_deep in merged:
            deep_line = number if too_deep else deep_line
            for event in normalizer.feed(record, number, member, source):
                added += add_normalized(s, event, number, deep_line, in_hand)
        for event in normalizer.flush():
            added += add_normalized(s, event, event.get("line") or 0, deep_line, in_hand)
        s.format_summary = normalizer.summary
        s.title = normalizer.title
        unread = normalizer.problems  # files of the session it did not read (sidecars)
        while unread:
            kind, detail = unread.pop(0)
            s.file_problem(detail, kind)
        counter["added"] = added
    return added


def _records(s, member: dict, lines: Iterable[Line]) -> Iterator[tuple]:
    """(time, line number, member, record, source, too deep) for each record of a member's lines, in file
    order; source = (path, offset, length, CRC-32) of the line when it can be read again, else None (also
    when the record was read with care: orjson would read it differently); too deep: it nests deeper
    than jsonio.MAX_DEPTH (the events made of it are cut there)."""
    time_of, parse_record = s.normalizer.time_of, s.parser.parse  # a record parser (its `records`)
    path = member.get("path")
    last = ""
    for line in lines:
        parsed = parse_record(line)
        if parsed is None:
            continue
        record, read_with_care, too_deep = parsed
        stamp = time_of(record)
        last = (stamp if isinstance(stamp, str) else None) or last
        addressable = path and line.offset >= 0 and not read_with_care
        source = (path, line.offset, len(line.data), line_crc(line.data)) if addressable else None
        yield last, line.number, member, record, source, too_deep


def _cut(s, event: Event, line_number: int) -> None:
    """An event made of a record that nests too deep, cut where it is (its normalizer may still change it);
    a message that grew by such a record (response_part) is cut instead."""
    shown = s.normalizer.item_of(event) if event["event_type"] == model.RESPONSE_PART else event
    if type(shown) is dict and jsonio.deeper_than(shown):
        jsonio.cut(shown, in_place=True)
        s.parser.too_deep(line_number, shown.get("message_id"))


def add_normalized(s, event: Event, line_number: int, deep_line: int | None = None, in_hand: bool = False) -> int:
    """Index a normalized event; `deep_line`: the line of a record too deep read before it (it is checked);
    `in_hand`: keep the event cached as read when it is stored as a loader (see `ingest`)."""
    intern_values(event)
    normalizer = s.normalizer
    stored = normalizer.keep(event)  # the event without its content, read again when read (None: the event)
    if event["message_id"] in s.by_id:  # a record seen twice (e.g. a resumed session copies lines)
        return 0
    if deep_line is not None:
        _cut(s, event, deep_line)
    if event["event_type"] == model.RESPONSE_PART:
        grown, item = s.by_id.get(event.get("grows")), normalizer.item_of(event)
        if grown is not None and item is not None:
            s.events.keep_raw(grown, item)  # it grew: what is stored for it now, its cached copy dropped
    s.add(event, line_number)
    if stored is not None:  # a cut event is not what its loader reads: never in hand
        s.events.keep_raw(len(s.events) - 1, stored, event if in_hand and deep_line is None else None)
    return 1
