"""The pages' "Download as HTML": the file `agentview share` writes for the same session, byte for byte (but the
minute it was made), masked the same, sent a part at a time without holding the session while it is sent."""

from __future__ import annotations

import base64
import gzip
import shutil
import threading
from pathlib import Path

import orjson
import pytest

from conftest import SAMPLES, sample
from shared_files import HEAD, PART, carried
from test_share import CLAUDE_FOLDER, CODEX_ROLLOUT, otlp_file, secret_session, share
from viewer.share import page as share_page
from viewer.web.app import create_app
from viewer.web.state import KEY


def served(folder: Path):
    return create_app(folder, watch=False).test_client()


def session_id_of(client, name: str) -> str:
    """The id the server gave the session read from the file `name` (unmasked: the API masks an id's secrets)."""
    found = [s.id for s in client.application.extensions[KEY].library.listing() if s.relpath.endswith(name)]
    assert len(found) == 1, name
    return found[0]


def without_time(page: bytes) -> bytes:
    """The page with its head and parts inflated and the minute it was made left out (all else as it is, byte for
    byte). Inflated: ISA-L's deflate once gave two different streams of the same bytes (both valid) in one run, so
    what must match is what they carry."""
    found = HEAD.search(page)
    head = orjson.loads(gzip.decompress(base64.b64decode(found.group(1))))
    head["session"].pop("shared_at")
    page = page[:found.start(1)] + orjson.dumps(head) + page[found.end(1):]
    return PART.sub(lambda part: part.group(0).replace(part.group(3), gzip.decompress(base64.b64decode(part.group(3)))),
                    page)


def in_folder(tmp_path: Path, kind: str) -> Path:
    """The session of `kind` in a folder of its own (the one served), as its file's path."""
    folder = tmp_path / "served"
    if kind == "claude code with sub-agent files":
        shutil.copytree(CLAUDE_FOLDER.parent, folder, ignore=shutil.ignore_patterns("*.py"))
        return folder / CLAUDE_FOLDER.name / "5b1e8c2a-audit.jsonl"
    if kind == "secrets":
        path, _ = secret_session(folder, 3)
        return path
    source = {"native": lambda: sample("research_team"), "codex": lambda: CODEX_ROLLOUT,
              "otlp": lambda: otlp_file(tmp_path)}[kind]()
    folder.mkdir()
    return Path(shutil.copy(source, folder / source.name))


@pytest.mark.parametrize("kind", ["native", "claude code with sub-agent files", "codex", "otlp", "secrets"])
@pytest.mark.parametrize("part_events", [share_page.PART_EVENTS, 7])
def test_the_pages_download_is_the_file_share_writes(tmp_path, monkeypatch, kind, part_events):
    monkeypatch.setattr(share_page, "PART_EVENTS", part_events)  # 7: every session in several parts
    path = in_folder(tmp_path, kind)
    client = served(tmp_path / "served")
    session_id = session_id_of(client, path.name)
    answer = client.get(f"/s/{session_id}/share.html")
    assert answer.status_code == 200 and answer.headers["Content-Disposition"].startswith("attachment; filename=")
    downloaded = answer.get_data()
    written = share(tmp_path, "--dir", str(tmp_path / "served"), "--", session_id)  # the same id and path
    assert without_time(downloaded) == without_time(written)
    data, _ = carried(downloaded)
    session = client.application.extensions[KEY].library.get(session_id)
    assert len(data["events"]) == session.count > 0
    if kind == "secrets":
        assert b"values that looked like secrets were masked" in downloaded
    agent = data["agents"][-1]["id"]
    opened, _ = carried(client.get(f"/s/{session_id}/share.html", query_string={"agent": agent}).get_data())
    assert opened["session"]["opening_agent"] == agent
    assert without_time(client.get(f"/s/{session_id}/share.html", query_string={"agent": agent}).get_data()) == \
        without_time(share(tmp_path, "--dir", str(tmp_path / "served"), "--agent", agent, "--", session_id))
    assert client.get(f"/s/{session_id}/share.html?agent=nobody").status_code == 404


def free_elsewhere(lock) -> bool:
    """Whether another thread can take `lock` now (the session's is re-entrant: this thread always could)."""
    taken = []

    def take():
        if lock.acquire(blocking=False):
            taken.append(True)
            lock.release()

    other = threading.Thread(target=take)
    other.start()
    other.join()
    return bool(taken)


def test_the_download_is_sent_a_part_at_a_time_without_holding_the_session(tmp_path, monkeypatch):
    monkeypatch.setattr(share_page, "PART_EVENTS", 5)
    folder = tmp_path / "served"
    folder.mkdir()
    shutil.copy(sample("research_team"), folder / "research_team.jsonl")
    client = served(folder)
    session = client.application.extensions[KEY].library.get("research_team")
    answer = client.get("/s/research_team/share.html", buffered=False)
    assert answer.is_streamed
    pieces = iter(answer.response)
    top = next(pieces)
    assert b'<header class="bar">' in top and b"gzip+base64" not in top  # the page starts before any event is read
    sent = [top]
    for piece in pieces:
        assert free_elsewhere(session.lock), "the session is held while its file is sent"
        sent.append(piece)
    answer.close()
    data, _ = carried(b"".join(sent))
    assert len(sent) == 1 + -(-session.count // 5) + 1 and len(data["events"]) == session.count


def test_a_session_read_again_from_its_start_while_it_is_sent_is_an_error_not_a_file_of_two_readings(tmp_path,
                                                                                                   monkeypatch):
    monkeypatch.setattr(share_page, "PART_EVENTS", 5)
    folder = tmp_path / "served"
    folder.mkdir()
    path = Path(shutil.copy(sample("research_team"), folder / "research_team.jsonl"))
    library = served(folder).application.extensions[KEY].library
    session = library.get("research_team")
    lines = path.read_bytes().splitlines(keepends=True)
    epoch, pieces = session.epoch, share_page.share_pieces(session)
    next(pieces), next(pieces)  # the top and the first part
    path.write_bytes(b"".join(lines[:3]))  # rewritten shorter, read again from its start ...
    library.refresh(str(path))
    path.write_bytes(b"".join(lines + lines[1:]))  # ... then longer than it was when the file was begun
    library.refresh(str(path))
    assert session.epoch > epoch and session.count > len(lines)
    with pytest.raises(share_page.ShareError):
        list(pieces)
