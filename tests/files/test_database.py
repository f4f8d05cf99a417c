"""Reading a SQLite database another program writes: read-only, only when it changed, a commit caught even when its
log was written before its index, locked and damaged said (never raised), refused files never opened."""

import os
import shutil
import sqlite3

import pytest

from viewer.files.database import DatabaseReader, is_database
from viewer.files.safe_open import OutsideFolder


def count(connection):
    return connection.execute("SELECT count(*) FROM t").fetchone()[0]


@pytest.fixture
def db(tmp_path):
    writer = sqlite3.connect(tmp_path / "a.db", isolation_level=None)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("CREATE TABLE t (x)")
    yield tmp_path / "a.db", writer
    writer.close()


def test_read_only_when_it_changed_and_never_written(db):
    path, writer = db
    reader = DatabaseReader(str(path))
    assert reader.read(count).result == 0
    assert reader.read(count).changed is False  # nothing changed: not opened at all
    writer.execute("INSERT INTO t VALUES (1)")
    assert reader.read(count).result == 1
    writer.execute("INSERT INTO t VALUES (2)")
    failed = reader.read(lambda c: c.execute("INSERT INTO t VALUES (3)"))
    assert "readonly" in failed.error  # opened read-only: it cannot write
    assert writer.execute("SELECT count(*) FROM t").fetchone()[0] == 2
    assert is_database(str(path)) and not is_database(__file__)


def test_a_log_written_before_its_index_is_waited_for(db, tmp_path):
    """The `-wal` of one moment and the `-shm` of the moment before (a commit under way): in flight."""
    path, writer = db
    writer.execute("INSERT INTO t VALUES (1)")
    before = (tmp_path / "a.db-shm").read_bytes()
    writer.execute("INSERT INTO t VALUES (2)")
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(path, copy / "a.db")
    shutil.copy(str(path) + "-wal", copy / "a.db-wal")
    (copy / "a.db-shm").write_bytes(before)
    assert DatabaseReader(str(copy / "a.db"))._in_flight() is True
    assert DatabaseReader(str(path))._in_flight() is False


def test_a_locked_database_is_said_and_read_again_once_free(tmp_path):
    writer = sqlite3.connect(tmp_path / "b.db", isolation_level=None)
    writer.execute("CREATE TABLE t (x)")
    writer.execute("BEGIN EXCLUSIVE")
    writer.execute("INSERT INTO t VALUES (1)")
    reader = DatabaseReader(str(tmp_path / "b.db"), timeout=0.05)
    read = reader.read(count)
    assert (read.kind, read.result) == ("database_locked", None) and "locked" in read.error
    writer.execute("COMMIT")
    assert reader.read(count).result == 1  # the failed read left nothing behind to say it was read
    writer.close()


def test_a_damaged_database_is_said(tmp_path):
    path = tmp_path / "c.db"
    sqlite3.connect(path).execute("CREATE TABLE t (x)").connection.close()
    data = bytearray(path.read_bytes())
    data[100:] = b"\xff" * (len(data) - 100)
    path.write_bytes(bytes(data))
    read = DatabaseReader(str(path)).read(count)
    assert read.kind == "damaged_database" and read.result is None


def test_a_link_out_of_the_folder_is_refused_unopened(db, tmp_path):
    path, _ = db
    inside = tmp_path / "inside"
    inside.mkdir()
    os.symlink(path, inside / "a.db")
    with pytest.raises(OutsideFolder):
        DatabaseReader(str(inside / "a.db"), inside=str(inside)).read(count)
