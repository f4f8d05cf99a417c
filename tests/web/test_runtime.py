"""Two apps started and stopped in one process leave the interpreter as they found it: its switch interval, the
collector (on, its thresholds, nothing frozen), no thread or child process of theirs, warning filters and every
module-level value of the package unchanged; while they ran, each held its session files open in a pool of its
own and packed its entries with shapes of its own. Run in a process of its own (two_apps.py): what other tests left in this one is not counted."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import REPO

SCRIPT = REPO / "tests" / "web" / "two_apps.py"


def test_two_apps_started_and_stopped_leave_the_interpreter_as_it_was(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True, timeout=300,
                          cwd=REPO)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    before, during, after = seen["before"], seen["during"], seen["after"]
    assert seen["answers"] == [20_000, 3]  # each app served its own folder
    # while they ran, they changed what they undo: else this test would show nothing
    assert during["switch interval"] < before["switch interval"]
    assert during["gc frozen"] > before["gc frozen"]  # the big session's index
    assert len(during["children"]) > len(before["children"])  # search worker processes
    assert any(name.startswith("agentview-ingest") for name in during["threads"])
    assert during["warning filters"] != before["warning filters"]
    one, two = during["open files"]  # each app holds its own files open, in a pool of its own at the cap it was given
    assert one["pool"] != two["pool"] and (one["cap"], two["cap"]) == (7, 5)
    assert one["paths"] and all("/one/" in path for path in one["paths"])
    assert two["paths"] and all("/two/" in path for path in two["paths"])
    one, two = during["shapes"]  # the shapes a Claude Code session's entries were packed with: its app's alone
    assert one["table"] != two["table"] and one["keys"] == [] and "cache_read_input_tokens" in two["keys"]
    for what in ("switch interval", "gc enabled", "gc thresholds", "gc frozen", "threads", "children",
                 "warning filters"):
        assert after[what] == before[what], what
    changed = {name: (before["modules"].get(name), after["modules"].get(name))
               for name in before["modules"].keys() | after["modules"].keys()
               if before["modules"].get(name) != after["modules"].get(name)}
    assert changed == {}
