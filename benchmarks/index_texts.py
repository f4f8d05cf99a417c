"""What a folder's cold read must cut into words: its events, their files' bytes, the characters of the texts its
search indexes post (each event's index text, as the read gives them to search/words.py), and the CPU of cutting
those texts into postings alone, apart from the rest of the read. Per event and per character, set beside the same
figures of another folder (a native log's), it tells how much of a read's cost is the size of what it indexes.

    .venv/bin/python benchmarks/index_texts.py FOLDER [--repo CHECKOUT]
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time

import timing


def main() -> None:
    args = timing.folder_in_checkout(__doc__)
    from viewer.core.tuning import Tuning
    from viewer.library import background
    from viewer.library.runtime import Runtime
    from viewer.search import index, words

    batches: list[list[str]] = []  # each call's texts: a session's events, or a run of a big one's

    def kept(texts: list[str], start: int):
        batches.append(list(texts))
        return words.word_postings(texts, start)

    index.word_postings = kept  # run_postings' own name for it; every session read here (no worker process)
    with tempfile.TemporaryDirectory(prefix="index-texts-") as cache:
        cpu = time.process_time()
        runtime = Runtime(args.folder, watch=False, cache_dir=cache, tuning=Tuning(read_workers=0))
        library = runtime.library
        while True:
            library.looked_at = library.look_after = float("-inf")  # background work at once
            if not background.step(library):
                break
        read = time.process_time() - cpu
        events = sum(s.count for s in library.listing())
        runtime.close()
    size = sum(os.path.getsize(os.path.join(top, name)) for top, _, names in os.walk(args.folder)
               for name in names if name.endswith(".jsonl"))
    chars = sum(len(text) for texts in batches for text in texts)
    cutting = []
    for _ in range(3):
        start = time.process_time()
        for texts in batches:
            words.word_postings(texts, 0)
        cutting.append(time.process_time() - start)
    cut = statistics.median(cutting)
    per = max(events, 1)
    print(f"{args.repo}: {events:,} events, {size / 1e6:.1f} MB of lines ({size / per:,.0f} bytes an event), "
          f"{chars / 1e6:.1f} M characters of index texts ({chars / per:,.0f} an event)")
    print(f"  the read: {read:.2f} s CPU, {read / per * 1e6:.0f} µs an event, {read / max(size, 1) * 1e9:.0f} ns a "
          f"byte, {read / max(chars, 1) * 1e9:.0f} ns a character of text")
    print(f"  cutting the texts into postings alone (median of 3): {cut:.2f} s CPU, {cut / per * 1e6:.0f} µs an "
          f"event, {cut / max(chars, 1) * 1e9:.1f} ns a character")


if __name__ == "__main__":
    main()
