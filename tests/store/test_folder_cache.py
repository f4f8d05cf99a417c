"""The folder's entry (folder_cache): a restart lists every kept group from one entry, opening none of their files;
a file whose stat changed is taken as without it, and bytes that changed under an unchanged stat are found before
anything reads them."""

from __future__ import annotations

import os
import sys

import pytest

from events import scanned
from test_cache_store import kept_entries
from test_claude_settled import pages
from test_group_cache import PROJECT, _main_file, append_a_line, project, read_what_is_due, run  # noqa: F401 (a fixture)
from viewer.core.tuning import Tuning
from viewer.library import background
from viewer.store import folder_cache, group_cache
from viewer.store.session_cache import SessionCache

ENTRY_SECTIONS = ("files",)  # the first section of a group's entry: what its files were


@pytest.fixture
def opened():
    """Every path opened in this process while the list is on (an audit hook: it sees os.open and open)."""
    seen: list[str] = []
    on = [False]

    def hook(event, args):
        if on[0] and event == "open" and isinstance(args[0], str):
            seen.append(args[0])

    sys.addaudithook(hook)  # hooks cannot be removed: this one does nothing once the test is over
    yield seen, on
    on[0] = False


def _folder_key(root) -> str:
    return folder_cache.key_of(os.path.realpath(root), False)


def test_a_restart_lists_every_kept_group_without_opening_one_of_its_files(project, tmp_path, opened):
    first = run(project, tmp_path / "cache")
    seen, on = opened
    on[0] = True
    again = run(project, tmp_path / "cache", settle=False)
    on[0] = False
    assert again.cache.restored == again.cache.restored_listed == 3
    assert [path for path in seen if path.startswith(str(project))] == []
    assert all(s.asleep is not None for s in again.listing())
    assert pages(again) == pages(first) == pages(scanned(project))


def test_a_file_whose_status_changed_is_checked_as_without_the_folders_entry(project, tmp_path):
    """A chmod (even to the same mode) moves a file's status-change time: its group is taken from its own entry,
    after the checks of its files' bytes (group_cache.restore), the others from the folder's."""
    run(project, tmp_path / "cache")
    main = _main_file(project)
    os.chmod(main, main.stat().st_mode)
    again = run(project, tmp_path / "cache", settle=False)
    assert again.cache.restored == 3 and again.cache.restored_listed == 2
    assert pages(again) == pages(scanned(project))


def _kept_facts_edited(project, cache, edit) -> None:
    """Edit what the group entries and the folder's entry (its rows, alike) say each kept file was: `edit(path, was)`
    changes `was` in place."""
    store = SessionCache(str(cache)).store
    listed = folder_cache.load(store, _folder_key(project))
    rows = [list(row) for batch in store.sections(_folder_key(project)) if type(batch) is list for row in batch]
    for row in rows:
        key = listed.group(row[0])[0]
        sections = list(store.sections(key))
        for files in (sections[0][1], row[3]):
            for path, was in files.items():
                edit(path, was)
        store.put(key, iter(sections))
    folder_cache.save(store, _folder_key(project), iter(rows))


def _as_if_rewritten(main: str, taken_late_by: int | None = None):
    """An edit (`_kept_facts_edited`) that says the file at `main` held other bytes than it does (a print that
    differs), as a file rewritten to the same size, times and inode would show; with `taken_late_by`, every file's
    facts taken that long after its last change (else as kept: seconds after the test wrote them)."""
    def edit(path: str, was: dict) -> None:
        if path == main:
            was["print"] ^= 1
        if taken_late_by is not None:
            was["taken"] = max(was["mtime"], was["ctime"]) + taken_late_by

    return edit


@pytest.mark.parametrize("found_by", ["a wake", "background work"])
@pytest.mark.parametrize("taken", ["as kept", "RACY_NS after the file changed"])
def test_bytes_that_changed_under_an_unchanged_stat_are_found_before_anything_reads_them(project, tmp_path, found_by,
                                                                                        taken):
    """Only a racily clean file can: one changed shortly before its facts were taken (group_cache.racy)."""
    run(project, tmp_path / "cache")
    main = str(_main_file(project))
    late = None if taken == "as kept" else group_cache.RACY_NS
    _kept_facts_edited(project, tmp_path / "cache", _as_if_rewritten(main, late))

    again = run(project, tmp_path / "cache", settle=False)
    assert again.cache.restored_listed == 3
    changed = next(s for s in again.listing() if s.path == main)
    epoch = changed.epoch
    if found_by == "a wake":
        changed.wake()
    else:
        while background.step(again):
            pass
        others = [s for s in again.listing() if s.path != main]  # checked, still asleep, woken without a check now
        assert all(s.asleep is not None and s.asleep["wake"].keywords.get("checked", True) for s in others)
    assert changed.count == 0 and changed.epoch > epoch  # emptied: an open page reloads
    read_what_is_due(again)
    assert pages(again) == pages(scanned(project))


@pytest.mark.parametrize("checked_by", ["a wake", "background work"])
def test_a_file_whose_times_were_older_than_its_facts_is_told_unchanged_by_its_stat_without_opening_it(
        project, tmp_path, opened, checked_by):
    """A file last changed more than RACY_NS before its facts were taken, whose stat is as kept, holds the bytes it
    held (a write would have moved its status-change time): its bytes are not read. Shown by an entry that says the
    main file held other bytes than it does: the group wakes from its entry all the same, none of its files opened."""
    first = run(project, tmp_path / "cache")
    kept = pages(first)
    main = str(_main_file(project))
    _kept_facts_edited(project, tmp_path / "cache", _as_if_rewritten(main, group_cache.RACY_NS + 1))
    again = run(project, tmp_path / "cache", settle=False)
    assert again.cache.restored_listed == 3
    seen, on = opened
    on[0] = True
    if checked_by == "a wake":
        for s in again.listing():
            s.wake()
        woken = [s for s in again.listing() if s.asleep is None and s.count]
    else:
        while background.step(again):
            pass
        woken = [s for s in again.listing() if s.asleep is not None and s.asleep["wake"].keywords.get("checked", True)]
    on[0] = False
    assert len(woken) == 3
    assert [path for path in seen if path.startswith(str(project))] == []
    assert pages(again) == kept == pages(scanned(project))


@pytest.mark.parametrize("taken", ["RACY_NS after the files changed", "as kept"])
def test_a_walk_after_a_restart_looks_at_a_file_told_unchanged_by_its_stat_without_opening_it(
        project, tmp_path, opened, taken):
    """The watcher walks the folder again once its watches are added, and then every sweep: a kept file that is not
    racily clean, its stat as kept, is looked at by one stat there (its tailer knows its bytes are those read); a
    racily clean one is opened and its bytes checked; a line appended after the restart is read by that walk."""
    first = run(project, tmp_path / "cache")
    kept = pages(first)
    if taken != "as kept":
        _kept_facts_edited(project, tmp_path / "cache", _as_if_rewritten("", group_cache.RACY_NS + 1))
    again = run(project, tmp_path / "cache", settle=False)
    assert again.cache.restored_listed == 3
    seen, on = opened
    on[0] = True
    again.scan()
    on[0] = False
    files = [path for path in seen if path.startswith(str(project))]
    assert (files == []) if taken != "as kept" else len(set(files)) == sum(len(s.members) for s in again.listing())
    assert all(s.asleep is not None for s in again.listing()) and pages(again) == kept
    append_a_line(project)
    again.scan()
    read_what_is_due(again)
    assert pages(again) == pages(scanned(project)) != kept


@pytest.mark.parametrize("checked_by", ["a wake", "background work"])
def test_a_kept_files_folder_swapped_for_a_link_out_of_the_folder_is_not_vouched_for_by_its_stat(
        project, tmp_path, checked_by):
    """The stat of a file moved out with its folder is unchanged (a folder's rename stamps the folder, not the files
    in it): a file whose folder no longer lies in the served one is opened to be checked, and refused."""
    run(project, tmp_path / "cache")
    _kept_facts_edited(project, tmp_path / "cache", _as_if_rewritten("", group_cache.RACY_NS + 1))
    again = run(project, tmp_path / "cache", settle=False)
    assert again.cache.restored_listed == 3
    folder = project / PROJECT
    outside = tmp_path / "outside"
    outside.mkdir()
    os.rename(folder, outside / PROJECT)
    folder.symlink_to(outside / PROJECT)
    if checked_by == "a wake":
        for s in again.listing():
            s.wake()
    else:
        while background.step(again):
            pass
    assert all(s.count == 0 for s in again.listing())  # emptied: read again, and refused
    read_what_is_due(again)
    assert all("outside_folder" in problems for _, problems, _ in _listed(again).values())


def test_the_background_marks_each_entry_a_restart_took_as_used(project, tmp_path):
    """The folder's entry is read, not the groups': the check after a restart touches theirs (else the cache's LRU
    would evict first what every restart uses)."""
    run(project, tmp_path / "cache")
    entries = {path for path, _, _ in kept_entries(tmp_path / "cache")}  # files of their own and packs
    assert entries
    for entry in entries:
        os.utime(entry, (1, 1))
    again = run(project, tmp_path / "cache", settle=False)
    assert again.cache.restored_listed == 3
    while background.step(again):
        pass
    assert all(entry.stat().st_mtime > 1 for entry in entries)
    assert all(s.asleep is not None for s in again.listing())  # checking woke none


@pytest.mark.parametrize("damage", ["corrupt", "gone"])
def test_without_a_good_folders_entry_each_group_is_taken_from_its_own_and_the_folders_written_again(
        project, tmp_path, damage):
    run(project, tmp_path / "cache")
    store = SessionCache(str(tmp_path / "cache")).store
    path = store._path(_folder_key(project))
    if damage == "corrupt":
        data = bytearray(open(path, "rb").read())
        data[len(data) // 2] ^= 0xFF
        open(path, "wb").write(bytes(data))
    else:
        os.unlink(path)
    again = run(project, tmp_path / "cache")  # with its background work: the folder's entry is written again
    assert again.cache.restored == 3 and again.cache.restored_listed == 0
    assert pages(again) == pages(scanned(project))
    third = run(project, tmp_path / "cache", settle=False)
    assert third.cache.restored_listed == 3
    assert pages(third) == pages(scanned(project))


def test_a_group_that_changed_leaves_the_folders_entry_for_the_others(project, tmp_path):
    from test_group_cache import append_a_line

    run(project, tmp_path / "cache")
    append_a_line(project)
    again = run(project, tmp_path / "cache", settle=False)
    assert again.cache.restored == again.cache.restored_listed == 2
    assert pages(again) == pages(scanned(project))
    assert group_cache.stat_unchanged(str(_main_file(project)), {"identity": (0, 0), "size": 0, "mtime": 0}) is False


def _listed(library) -> dict:
    return {s.id: (s.format.name, sorted(p.kind for p in s.problems), s.count) for s in library.listing()}


@pytest.mark.parametrize("replaced_by", ["a symlink out of the folder", "a FIFO"])
def test_a_kept_file_replaced_by_one_it_may_not_read_is_refused_as_without_a_cache(project, tmp_path, replaced_by):
    """The folder's entry never vouches for what stands at a path now: a kept file moved out of the folder and
    replaced by a symlink to it, or by a FIFO, is refused as a first read refuses it."""
    run(project, tmp_path / "cache")
    main = _main_file(project)
    outside = tmp_path / "outside.jsonl"
    os.rename(main, outside)  # the very file kept, now outside
    if replaced_by == "a FIFO":
        os.mkfifo(main)
    else:
        main.symlink_to(outside)
    again = run(project, tmp_path / "cache", settle=False)
    assert again.cache.restored_listed == 2
    kinds = {kind for _, problems, _ in _listed(again).values() for kind in problems}
    assert ("not_a_regular_file" if replaced_by == "a FIFO" else "outside_folder") in kinds
    assert _listed(again) == _listed(scanned(project))


def test_a_group_whose_files_are_gone_leaves_the_folders_entry(project, tmp_path):
    """Library.forget tells the cache: the folder's entry is written again without the group (at once: the gap
    between two writes set to nothing, not 10 s)."""
    library = run(project, tmp_path / "cache", tuning=Tuning(save_gap_s=0.0))
    main = _main_file(project)
    session = next(s for s in library.listing() if s.path == str(main))
    members = list(session.members)
    for path in members:
        os.unlink(path)
        library.refresh(path)
    assert library.get(session.id) is None
    assert library.keep_folder()
    listed = folder_cache.load(library.cache.store, _folder_key(project))
    assert len(listed) == 2 and listed.group(str(main)) is None
    assert str(main) not in library.cache._entries


def test_the_folders_words_are_an_entry_of_their_own_so_a_restarts_listing_decodes_none_of_them(project, tmp_path):
    """Rows and words each in their own entry: a restart's list reads no word, a restart's first search no row."""
    library = run(project, tmp_path / "cache")
    store, key = library.cache.store, _folder_key(project)
    rows = list(store.sections(key))
    assert rows and all(type(section) is list for section in rows)
    assert sum(len(section) for section in rows) == 3
    words = folder_cache.load_words(store, key)
    assert words is not None and len(words.ids) == 3 and words.words
    assert words.words == library.folder_words.words


def test_a_restart_lists_and_searches_without_loading_the_price_database(project, tmp_path):
    """genai-prices' database (a quarter of a second, 20 MB) is loaded when a response is first priced: a first read
    prices every response, a restart whose sums all come from the cache lists and searches the same without it."""
    import json
    import subprocess

    from conftest import REPO

    def served(cache_dir) -> list:
        code = ("import json, sys\nfrom viewer.web.app import create_app\n"
                f"app = create_app({str(project)!r}, watch=False, cache_dir={str(cache_dir)!r})\n"
                "client = app.test_client()\n"
                "listed = client.get('/api/sessions').get_json()['sessions']\n"
                "found = client.get('/api/search?q=warehouse').get_json()['results']\n"
                "print(json.dumps([listed, found, 'genai_prices' in sys.modules]))")
        done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120,
                              check=False, env={**os.environ, "PYTHONPATH": str(REPO)})
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.splitlines()[-1])

    run(project, tmp_path / "cache")
    listed, found, priced = served(tmp_path / "empty")  # read from the files: its responses priced
    assert priced and len(listed) == 3 and found
    assert served(tmp_path / "cache") == [listed, found, False]
