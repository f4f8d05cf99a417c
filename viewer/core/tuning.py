"""The knobs one running app is tuned by, declared once: name, default, what it bounds.

A `Tuning` is made by whoever starts the app (`create_app(..., tuning=Tuning(batch_bytes=4096))`) and read from
its runtime by the code each knob bounds; tests set a knob there instead of patching a module. What never changes
stays a constant in its own module.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

MB = 1024 * 1024


def knob(default, help: str):
    """A field of a tuning table with the one line that says what it bounds."""
    return field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class Limits:
    """What one file may cost in memory (`agentview serve --max-line-bytes / --max-file-bytes`)."""

    max_line_bytes: int = knob(64 * MB, "a longer line is skipped (never held whole) and reported `line_too_long`")
    max_file_bytes: int = knob(256 * MB, "a gzip inflating to more, or a snapshot costing more parsed: `too_large`")


@dataclass(frozen=True)
class Tuning:
    """How hard one app works at once and how much it keeps."""

    limits: Limits = knob(Limits(), "what one file may cost (see Limits)")
    batch_bytes: int = knob(8 * MB, "a big file is ingested this much at a time: memory stays bounded")
    group_batch_bytes: int = knob(256 * 1024, "each file of a multi-file session is read this much at a time")
    settle_after: float = knob(3600.0, "seconds a multi-file session's files stay unwritten before it settles")
    incomplete_after: float = knob(60.0, "seconds a file ending in part of a line stays unwritten before that is "
                                         "reported `incomplete_last_line`")
    save_gap_s: float = knob(10.0, "a folder's cache entry is written again at most this often (seconds)")
    section_items: int = knob(5_000, "items of a map in one section of a kept session (one marshal call each)")
    section_bytes: int = knob(4 * MB, "bytes of arrays in one section of a kept session")
    section_events: int = knob(200_000, "events' slots in one section of a kept session")
    asof_cache_events: int = knob(2_000_000, "events the as-of snapshots kept hold in all")
    event_cache_bytes: int = knob(8 * MB, "bytes of lines a session keeps parsed (its events read last)")
    walk_read: int = knob(256 * 1024, "bytes read at once by a walk over a session's events")
    one_off: bool = knob(False, "a read that walks every event again and exits (agentview share): events stay "
                                "parsed after ingest, and what it made is frozen uncollected")
    open_files: int | None = knob(None, "session files held open at once, the least recently read closed first (None: "
                                        "a quarter of the descriptor limit, at most 256)")
    cores: int | None = knob(None, "cores the search worker processes may use (None: those this process may run on)")
    read_workers: int | None = knob(None, "worker processes reading a folder's sessions of several files on other "
                                          "cores (None: one when there is a core beside the ingest thread's; 0: none)")
    read_pool_from: int = knob(64, "a first read of fewer sessions of several files than this is done in-process")


def help_table(tuning: type = Tuning) -> list[tuple[str, object, str]]:
    """(name, default, help) of every knob: the declared table, for docs and --help."""
    return [(f.name, f.default, f.metadata.get("help", "")) for f in fields(tuning)]
