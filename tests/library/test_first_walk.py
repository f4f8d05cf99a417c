"""The first walk of a folder: every group it finds is listed at once, with no cyclic collection over the sessions
it makes meanwhile (thousands of them, all kept), nor one looking for garbage among them once it is over (cold, or a
restart taking them from the cache)."""

from __future__ import annotations

import gc
import os
import sys

import pytest

from conftest import REPO
from test_claude_settled import age
from test_group_cache import project, run  # noqa: F401 (a fixture)
from viewer.core import gcpause
from viewer.library.groups import Groups
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


@pytest.fixture
def scans_collecting(monkeypatch):
    """Collections the end of a scan's batch sets off (GcPause.batch left by Library.scan), the collector at its
    most eager and a batch of a few files frozen as one of thousands is; the groups' reads after the walk are left
    out (what they make is garbage in part: collected)."""
    monkeypatch.setattr(gcpause, "FREEZE_AFTER", 2)
    seen = []

    def hook(phase, info):
        frame = sys._getframe(1)
        names = []
        while phase == "start" and frame is not None and len(names) < 4:
            names.append(frame.f_code.co_name)
            frame = frame.f_back
        if names[:2] == ["batch", "__exit__"] and "scan" in names and "read" not in names:
            seen.append(names)

    thresholds = gc.get_threshold()
    gc.set_threshold(1, 1, 1)
    gc.callbacks.append(hook)
    yield seen
    gc.callbacks.remove(hook)
    gc.set_threshold(*thresholds)


def test_a_cold_walk_of_many_groups_freezes_them_without_looking_for_garbage(tmp_path, monkeypatch, scans_collecting):
    root = tmp_path / "logs"
    generate(root / "-home-dev-warehouse", 1 << 20, subagents=3, sessions=5)
    monkeypatch.setattr(Groups, "read", lambda self, session: None)  # the walk alone
    library = Library(root)
    library.scan()
    library.host.close()
    assert len(library.listing()) == 5 and gc.isenabled()
    assert scans_collecting == []


def test_a_restart_lists_the_kept_groups_without_looking_for_garbage(project, tmp_path, scans_collecting):  # noqa: F811
    run(project, tmp_path / "cache")
    scans_collecting.clear()
    again = run(project, tmp_path / "cache", settle=False)
    again.host.close()
    assert again.cache.restored_listed == 3 and gc.isenabled()
    assert scans_collecting == []
