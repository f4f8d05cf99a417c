"""The first walk of a folder: every group it finds is listed at once, with no cyclic collection over the sessions
it makes meanwhile (thousands of them, all kept)."""

from __future__ import annotations

import gc
import os
import sys

from conftest import REPO
from test_claude_settled import age
from viewer.library.library import Library

sys.path.insert(0, str(REPO / "benchmarks"))

from generate_claude import generate  # noqa: E402

MADE_BY_THE_WALK = {("groups.py", "join"), ("session_index.py", "__init__"), ("detect.py", "classify")}


def test_the_first_walk_sets_off_no_garbage_collection_while_it_makes_the_sessions(tmp_path):
    root = tmp_path / "logs"
    generate(root / "-home-dev-warehouse", 1 << 20, subagents=3, sessions=4)
    age(root)
    library = Library(root)
    during = []  # collections set off by what the walk made

    def seen(phase, info):
        frame = sys._getframe(1)
        while phase == "start" and frame is not None:
            if (os.path.basename(frame.f_code.co_filename), frame.f_code.co_name) in MADE_BY_THE_WALK:
                during.append(frame.f_code.co_name)
                return
            frame = frame.f_back

    thresholds = gc.get_threshold()
    gc.set_threshold(1, 1, 1)  # the collector at its most eager
    gc.callbacks.append(seen)
    try:
        library.scan()
    finally:
        gc.callbacks.remove(seen)
        gc.set_threshold(*thresholds)
        library.host.close()
    assert len(library.listing()) == 4 and all(s.count for s in library.listing())
    assert during == []
    assert gc.isenabled()
