"""The lock order and the give-way rule are checked while testing: a thread taking the locks out of order, or
giving way to requests while holding one, raises at once (instead of deadlocking one day under load)."""

import os
import subprocess
import sys
import threading

import pytest

from conftest import REPO, write_events
from events import user
from viewer.core import lockorder
from viewer.core.lockorder import LockOrderError
from viewer.library.library import Library


@pytest.fixture
def locks_in_order():
    """These tests take locks out of order on purpose (conftest's fixture fails a test that does)."""
    yield
    lockorder.violations.clear()


@pytest.fixture
def library(tmp_path):
    write_events(tmp_path / "s.jsonl", [user("m1", "main", "hello")])
    library = Library(tmp_path)
    library.scan()
    return library


def test_the_suite_runs_with_the_checks_on():
    assert lockorder.CHECKING


def test_the_library_lock_then_a_sessions_is_the_order(library):
    session = library.get("s")
    with library.lock:
        with session.lock:
            assert session.count == 1


def test_a_sessions_lock_then_the_library_lock_raises(library):
    session = library.get("s")
    with session.lock:
        with pytest.raises(LockOrderError, match="library lock .* taken while holding the session lock"):
            library.lock.acquire()
    with library.lock:  # nothing was left held: both can be taken again, in order
        with session.lock:
            pass


def test_each_thread_is_checked_for_the_locks_it_holds_itself(library):
    """A thread holding a session's lock does not stop another taking the library's; one that does it itself
    raises, and records nothing half way."""
    session = library.get("s")
    errors, taken = [], []

    def report(detail):
        try:
            with library.lock:
                taken.append(detail)
        except LockOrderError as error:
            errors.append(error)

    def out_of_order():
        with session.lock:
            report("taken out of order")

    with session.lock:
        other = threading.Thread(target=report, args=("in order",))
        other.start()
        other.join(10)
    assert errors == [] and taken == ["in order"]
    wrong = threading.Thread(target=out_of_order)
    wrong.start()
    wrong.join(10)
    assert len(errors) == 1 and "library lock" in str(errors[0])
    assert taken == ["in order"]


def test_a_lock_taken_again_by_its_holder_raises_instead_of_waiting_forever(library):
    with library.lock:
        with pytest.raises(LockOrderError, match="taken again"):
            library.folder_problem("watcher_failed", ".", "its own caller holds the lock")


def test_giving_way_to_requests_while_holding_a_lock_raises(library):
    session = library.get("s")
    give_way = library.host.foreground.give_way
    give_way()  # holding nothing: as it should
    with session.lock:
        with pytest.raises(LockOrderError, match="giving way to requests while holding the session lock"):
            give_way()


def test_without_the_setting_the_locks_are_plain_locks(tmp_path):
    script = ("import sys, threading\n"
              "from viewer.core import lockorder\n"
              "from viewer.library.library import Library\n"
              "print(lockorder.CHECKING, type(Library(sys.argv[1]).lock) is type(threading.Lock()))\n")
    env = {k: v for k, v in os.environ.items() if k != "AGENTVIEW_CHECK_LOCKS"}
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.stdout.split() == ["False", "True"], done.stderr


def test_a_wrong_order_a_thread_catches_is_still_on_record(library):
    """The ingest thread logs what fails and reads on: the suite still sees the wrong order (conftest)."""
    session = library.get("s")

    def swallowed():
        try:
            with session.lock:
                library.folder_problem("watcher_failed", ".", "out of order")
        except Exception:
            pass

    thread = threading.Thread(target=swallowed)
    thread.start()
    thread.join(10)
    assert len(lockorder.violations) == 1 and "library lock" in lockorder.violations[0]
