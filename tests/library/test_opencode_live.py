"""OpenCode's database while OpenCode writes it: a real server reads it read-only; rows another process inserts
appear live; a locked or damaged database is a problem on `/`, never a crash, and is read once it can be."""

import json
import sqlite3
import urllib.request

from conftest import serve, wait_for
from opencode_db import ROOT, T0, OpenCodeDb, tool, write_sample

DB = ".local/share/opencode/opencode.db"
SESSION = f".local:share:opencode:opencode.db:{ROOT}"


def get(server, path):
    with urllib.request.urlopen(server.url + path, timeout=5) as response:
        return json.load(response) if path.startswith("/api/") else response.read().decode()


def events_of(server, session_id):
    return [e["message_id"] for e in get(server, f"/api/sessions/{session_id}/events?limit=500")["events"]]


def problems(server):
    return [(p["kind"], p["path"]) for p in get(server, "/api/sessions")["problems"]]


def test_rows_inserted_by_another_process_appear_live_and_the_database_is_never_written(tmp_path):
    (tmp_path / DB).parent.mkdir(parents=True)
    writer = write_sample(tmp_path / DB)
    with serve(tmp_path) as server:
        server.wait_for_session(SESSION, events=21)
        writer.message("msg_010", ROOT, T0 + 200, "assistant")
        given = {"command": "pytest -q"}
        writer.part("prt_020", "msg_010", ROOT, T0 + 201, **tool("call_live", "bash", "running", given, T0 + 201))
        wait_for(lambda: "prt_020" in events_of(server, SESSION))
        assert "prt_020:result" not in events_of(server, SESSION)  # still running
        writer.update_part("prt_020", T0 + 205, **tool("call_live", "bash", "completed", given, T0 + 201, T0 + 205,
                                                        output="3 passed"))
        wait_for(lambda: "prt_020:result" in events_of(server, SESSION))
        writer.session("ses_4a1b2c3d4e70NewDDDDDDDDDD", "A second session", T0 + 300)
        writer.message("msg_300", "ses_4a1b2c3d4e70NewDDDDDDDDDD", T0 + 301, "user")
        writer.part("prt_300", "msg_300", "ses_4a1b2c3d4e70NewDDDDDDDDDD", T0 + 301, type="text", text="hello")
        second = ".local:share:opencode:opencode.db:ses_4a1b2c3d4e70NewDDDDDDDDDD"
        wait_for(lambda: second in [s["id"] for s in get(server, "/api/sessions")["sessions"]])
        titles = {s["id"]: s.get("title") for s in get(server, "/api/sessions")["sessions"]}
        assert titles[second] == "A second session"
        result = [e for e in get(server, f"/api/sessions/{SESSION}/events?limit=500")["events"]
                  if e["message_id"] == "prt_020:result"]
        assert result[0]["content"] == "3 passed"
        # it wrote nothing: the writer can still take its write lock at once
        writer.db.execute("BEGIN IMMEDIATE")
        writer.db.execute("COMMIT")
    writer.close()


def test_a_locked_database_is_a_problem_on_the_front_page_and_is_read_once_released(tmp_path):
    (tmp_path / DB).parent.mkdir(parents=True)
    writer = OpenCodeDb(tmp_path / DB)
    writer.db.execute("PRAGMA journal_mode = DELETE")  # as on a file system without WAL: a writer locks out readers
    writer.session(ROOT, "Locked for a while", T0)
    writer.db.execute("BEGIN EXCLUSIVE")
    writer.message("msg_001", ROOT, T0 + 1, "user")
    writer.part("prt_001", "msg_001", ROOT, T0 + 1, type="text", text="written under the lock")
    with serve(tmp_path) as server:
        wait_for(lambda: ("database_locked", DB) in problems(server), timeout=15)
        assert "database is locked" in get(server, "/")
        writer.db.execute("COMMIT")
        writer.message("msg_002", ROOT, T0 + 2, "user")  # a change after the lock: read now
        writer.part("prt_002", "msg_002", ROOT, T0 + 2, type="text", text="after")
        server.wait_for_session(f".local:share:opencode:opencode.db:{ROOT}", events=3, timeout=15)
        wait_for(lambda: problems(server) == [])
    writer.close()


def test_a_damaged_database_is_a_problem_and_the_rest_of_the_folder_is_read(tmp_path):
    (tmp_path / DB).parent.mkdir(parents=True)
    write_sample(tmp_path / DB).close()
    sqlite3.connect(tmp_path / DB).execute("PRAGMA wal_checkpoint(TRUNCATE)").close()
    data = bytearray((tmp_path / DB).read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the schema page overwritten: still a SQLite header, no tables
    (tmp_path / DB).write_bytes(bytes(data))
    for side in ("-wal", "-shm"):
        (tmp_path / (DB + side)).unlink(missing_ok=True)
    (tmp_path / "other.jsonl").write_text(json.dumps({"message_id": "m1", "event_type": "transcript_entry",
                                                      "agent_id": "a", "role": "user", "content": "hi"}) + "\n")
    with serve(tmp_path) as server:
        server.wait_for_session("other")
        wait_for(lambda: ("damaged_database", DB) in problems(server))
        page = get(server, "/")
        assert "damaged_database" in page or "cannot be read" in page
        assert server.process.poll() is None
