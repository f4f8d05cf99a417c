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


@pytest.fixture
def collections(monkeypatch):
    """Call it to watch the collections started from then on, the collector at its most eager and a batch of a few files frozen
    as one of thousands is: "made" those set off by what the walk makes (MADE_BY_THE_WALK), "ending" those set off
    as a scan's batch ends (GcPause.batch left by Library.scan; not those of the groups' reads after the walk: what
    they make is garbage in part, collected)."""
    monkeypatch.setattr(gcpause, "FREEZE_AFTER", 2)
    seen = {"made": [], "ending": []}

    def hook(phase, info):
        frame, names = sys._getframe(1), []
        while phase == "start" and frame is not None:
            where = (os.path.basename(frame.f_code.co_filename), frame.f_code.co_name)
            if where in MADE_BY_THE_WALK:
                seen["made"].append(where)
                return
            names.append(where[1])
            if where == ("library.py", "scan"):
                if names[:2] == ["batch", "__exit__"] and "read" not in names:
                    seen["ending"].append(names)
                return
            frame = frame.f_back

    def watch():
        gc.set_threshold(1, 1, 1)
        gc.callbacks.append(hook)
        return seen

    thresholds = gc.get_threshold()
    yield watch
    if hook in gc.callbacks:
        gc.callbacks.remove(hook)
    gc.set_threshold(*thresholds)


def test_the_first_walk_sets_off_no_garbage_collection_while_it_makes_the_sessions(tmp_path, collections):
    root = tmp_path / "logs"
    generate(root / "-home-dev-warehouse", 1 << 20, subagents=3, sessions=4)
    age(root)
    library = Library(root)
    seen = collections()
    library.scan()
    library.host.close()
    assert len(library.listing()) == 4 and all(s.count for s in library.listing())
    assert seen["made"] == []
    assert gc.isenabled()


def test_a_cold_walk_of_many_groups_freezes_them_without_looking_for_garbage(tmp_path, monkeypatch, collections):
    root = tmp_path / "logs"
    generate(root / "-home-dev-warehouse", 1 << 20, subagents=3, sessions=5)
    monkeypatch.setattr(Groups, "read", lambda self, session: None)  # the walk alone
    library = Library(root)
    seen = collections()
    library.scan()
    library.host.close()
    assert len(library.listing()) == 5 and gc.isenabled()
    assert seen["ending"] == []


def test_a_restart_lists_the_kept_groups_without_looking_for_garbage(project, tmp_path, collections):  # noqa: F811
    run(project, tmp_path / "cache")
    seen = collections()
    again = run(project, tmp_path / "cache", settle=False)
    again.host.close()
    assert again.cache.restored_listed == 3 and gc.isenabled()
    assert seen["ending"] == []
