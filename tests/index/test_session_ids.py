"""Every session file gets a distinct, stable id, whatever its name.

Ids of ordinary names stay what they were (links people shared keep working); a file named after
another session file, a Claude Code session named like a file of another format and a name that is
not UTF-8 each get an id of their own, and are listed, shown and served like any other.
"""

import gzip
import json
import os
import urllib.parse
import urllib.request

import orjson
import pytest

from conftest import serve, wait_for, write_events
from events import claude_user, say, scanned, user
from viewer.export.text import FORMATS
from viewer.library.library import Library
from viewer.index.session_ids import session_id_for

SHARED_LINKS = {  # ids as they were before: they must not change
    "example1_jack_and_jill.jsonl": "example1_jack_and_jill",
    "team/a.jsonl": "team:a",
    "a b.jsonl": "a~20b",
    "é.jsonl": "~C3~A9",
    "a.jsonl.gz": "a.jsonl.gz",
    "x.json": "x.json",
    "x.json.gz": "x.json.gz",
    "x.gz.jsonl": "x.gz",
    "x.jsonl.jsonl": "x.jsonl",
    "-home-dev-src-parser/5b1e8c2a-audit.jsonl": "-home-dev-src-parser:5b1e8c2a-audit",
}


def test_ordinary_names_keep_the_ids_links_were_shared_under():
    assert {p: session_id_for(p) for p in SHARED_LINKS} == SHARED_LINKS


NAMED_LIKE_ANOTHER = ["x.json", "x.json.jsonl", "y.jsonl.gz", "y.jsonl.gz.jsonl", "z.json.gz", "z.json.gz.jsonl",
                      "x.json.jsonl.jsonl", "n.meta.json.jsonl"]


def _write_session_file(path, message_id):
    """A session of one event, in whatever format the file's name calls for."""
    line = orjson.dumps(user(message_id, "main", f"hello from {path.name}")) + b"\n"
    snapshot = orjson.dumps({"traceId": message_id, "turns": [], "opTree": {"id": message_id, "children": []}})
    if path.name.endswith(".jsonl"):
        path.write_bytes(line)
    elif path.name.endswith(".jsonl.gz"):
        path.write_bytes(gzip.compress(line))
    elif path.name.endswith(".json.gz"):
        path.write_bytes(gzip.compress(snapshot))
    else:
        path.write_bytes(snapshot)


def test_a_file_named_after_another_session_file_is_listed_under_its_own_id(tmp_path):
    for i, name in enumerate(NAMED_LIKE_ANOTHER):
        _write_session_file(tmp_path / name, f"m{i}")
    library = scanned(tmp_path)
    listed = {s.relpath: s.id for s in library.listing()}
    assert sorted(listed) == sorted(NAMED_LIKE_ANOTHER)  # none hides another
    assert len(set(listed.values())) == len(listed)
    assert listed["x.json"] == "x.json" and listed["y.jsonl.gz"] == "y.jsonl.gz"  # the plain names keep theirs
    for i, name in enumerate(NAMED_LIKE_ANOTHER):
        s = library.get(listed[name])
        assert s.relpath == name and s.count >= 1
        if name.endswith(".jsonl"):
            assert [e["message_id"] for e in s.events] == [f"m{i}"]


def _claude_subagent(session_id):
    return {**claude_user("sub-1", "a sub-agent's prompt"), "sessionId": session_id, "isSidechain": True,
            "agentId": "1"}


def _native_beside_claude(root, order):
    """A native `p/s.jsonl` and a Claude Code sub-agent file of session "s" beside it (2.0.x layout);
    `p/t.jsonl` and a 2.1.x `p/t/subagents/` folder of session "t"; the files refreshed in `order`."""
    files = {
        "p/s.jsonl": [user("native-s", "main", "a native session")],
        "p/agent-1.jsonl": [_claude_subagent("s")],
        "p/t.jsonl": [user("native-t", "main", "another native session")],
        "p/t/subagents/agent-2.jsonl": [_claude_subagent("t")],
    }
    for rel, events in files.items():
        write_events(root / rel, events)
    library = Library(root)
    for rel in (sorted(files) if order == "sorted" else sorted(files, reverse=True)):
        library.refresh(str(root / rel))
    return library


@pytest.mark.parametrize("order", ["sorted", "reversed"])
def test_a_claude_code_session_named_like_a_native_file_does_not_hide_it(tmp_path, order):
    library = _native_beside_claude(tmp_path, order)
    assert {s.id: (s.format.name, s.count) for s in library.listing()} == {
        "p:s": ("native", 1), "p:s~group": ("claude-code", library.get("p:s~group").count),
        "p:t": ("native", 1), "p:t~group": ("claude-code", library.get("p:t~group").count)}
    assert [e["message_id"] for e in library.get("p:s").events] == ["native-s"]
    assert "agent-1" in library.get("p:s~group").agents
    # the native file goes: the group has the plain id back, and the marked link follows it
    os.remove(tmp_path / "p/s.jsonl")
    library.refresh(str(tmp_path / "p/s.jsonl"))
    assert "agent-1" in library.get("p:s").agents and library.resolve("p:s~group") == "p:s"


def test_a_session_id_with_a_slash_names_no_folder(tmp_path):
    write_events(tmp_path / "p/a/b.jsonl", [user("native", "main", "a native session in p/a")])
    write_events(tmp_path / "p/agent-1.jsonl", [_claude_subagent("a/b")])
    library = scanned(tmp_path)
    assert {s.id: s.format.name for s in library.listing()} == {"p:a:b": "native", "p:a~2Fb": "claude-code"}


# --- names that are not UTF-8 ------------------------------------------------------------------------

BAD_FILE = os.fsdecode(b"bad\xff.jsonl")
BAD_FOLDER = os.fsdecode(b"dir\xfe")
LATER_FILE = os.fsdecode(b"later\xfd\xfc.jsonl")


def _get(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.status == 200
        return response.read().decode("utf-8")


def _api(url):
    return json.loads(_get(url))


def test_a_name_that_is_not_utf8_is_listed_escaped_and_served(tmp_path):
    folder = tmp_path / "sessions"
    write_events(folder / BAD_FILE, [user("u1", "main", "needle in a badly named file"), say("a1", "main", "hi")])
    write_events(folder / BAD_FOLDER / "in.jsonl", [user("u2", "main", "in a badly named folder")])
    write_events(folder / "ok.jsonl", [user("u3", "main", "plain")])
    with serve(folder) as server:
        server.wait_for_session("bad~FF", 2)
        rows = {row["id"]: row for row in _api(f"{server.url}/api/sessions")["sessions"]}
        assert {i: (r["path"], r["name"], r["events"]) for i, r in rows.items()} == {
            "bad~FF": ("bad\\xff.jsonl", "bad\\xff", 2), "dir~FE:in": ("dir\\xfe/in.jsonl", "in", 1),
            "ok": ("ok.jsonl", "ok", 1)}
        index = _get(f"{server.url}/")
        assert "bad\\xff" in index and "dir\\xfe/in.jsonl" in index and "/s/bad~FF" in index
        for sid in ("bad~FF", "dir~FE:in"):
            base = f"{server.url}/s/{sid}"
            assert _api(f"{server.url}/api/sessions/{sid}")["id"] == sid
            for page in ("", "/agents/main", "/dialog?agents=main", "/problems", "/chart", "/spawn", "/hooks"):
                _get(base + page)
            for fmt in FORMATS:
                _get(f"{base}/export/{fmt}" + ("?agent=main" if fmt == "markdown" else ""))
            assert _api(f"{server.url}/api/sessions/{sid}/agents/main")["total"] >= 1
        _get(f"{server.url}/s/bad~FF/messages/u1")
        hits = wait_for(lambda: _api(f"{server.url}/api/search?q=needle")["results"])  # indexed after ingest
        assert [(h["session"], h["message_id"]) for h in hits] == [("bad~FF", "u1")]
        assert "needle" in _get(f"{server.url}/search?q=needle")

        # live: appended to the odd file, and a new odd file in the odd folder
        write_events(folder / BAD_FILE, [say("a2", "main", "more")], mode="a")
        server.wait_for_session("bad~FF", 3)
        write_events(folder / BAD_FOLDER / LATER_FILE, [user("u4", "main", "later")])
        server.wait_for_session("dir~FE:later~FD~FC", 1)
        assert "later\\xfd\\xfc" in _get(f"{server.url}/")
        os.rename(folder / BAD_FILE, folder / os.fsdecode(b"renamed\xfb.jsonl"))  # followed under its new name
        server.wait_for_session("renamed~FB", 3)
        assert "renamed\\xfb" in _get(f"{server.url}/s/bad~FF")  # the old link leads to it
        assert not [line for line in server.output if "Traceback" in line or "Error" in line]


def test_names_differing_only_in_bytes_that_are_not_utf8_get_distinct_ids(tmp_path):
    names = [b"n\xff.jsonl", b"n\xfe.jsonl", b"n\xc3\xbf.jsonl", b"n~FF.jsonl", b"n\\xff.jsonl"]
    for i, name in enumerate(names):
        write_events(tmp_path / os.fsdecode(name), [user(f"m{i}", "main", "x")])
    library = scanned(tmp_path)
    ids = [s.id for s in library.listing()]
    assert len(ids) == len(names) == len(set(ids))
    assert {"n~FF", "n~FE", "n~C3~BF", "n~7EFF", "n~5Cxff"} == set(ids)
    assert all(urllib.parse.quote(i, safe=":~") == i for i in ids)  # each one URL path segment as it is


def test_a_claude_code_project_folder_that_is_not_utf8_is_served(tmp_path):
    from events import copy_samples
    from viewer.web.app import create_app

    copy_samples("claude_code/-home-dev-src-parser", tmp_path / os.fsdecode(b"proj\xff"))
    client = create_app(tmp_path, watch=False).test_client()
    rows = client.get("/api/sessions").get_json()["sessions"]
    assert {r["id"]: (r["project"], len(r["files"])) for r in rows} == {
        "proj~FF:1a2b3c4d-legacy": ("proj\\xff", 1), "proj~FF:5b1e8c2a-audit": ("proj\\xff", 4),
        "proj~FF:9c04d7b3-docs": ("proj\\xff", 2)}
    for row in rows:
        for url in (row["url"], f"{row['url']}/agents/main", f"{row['url']}/export/json", f"/api/sessions/{row['id']}",
                    f"/api/sessions/{row['id']}/agents/main"):
            assert client.get(url).status_code == 200, url
    assert "proj\\xff" in client.get("/").get_data(as_text=True)


def test_session_ids_are_one_url_segment_and_distinct():
    ids = {p: session_id_for(p) for p in ["a.jsonl", "team/a.jsonl", "team:a.jsonl", "team~2Fa.jsonl",
                                          "a b.jsonl", "é.jsonl", "..jsonl", "a.jsonl.gz"]}
    assert ids["a.jsonl"] == "a"
    assert ids["team/a.jsonl"] == "team:a"
    assert len(set(ids.values())) == len(ids)
    for sid in ids.values():
        assert "/" not in sid and "?" not in sid and "#" not in sid and " " not in sid
        assert sid not in (".", "..", "")
