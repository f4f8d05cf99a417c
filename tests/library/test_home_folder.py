"""A home-like folder served as DIR: every CLI's dot-folder is walked and each session in it read, told by its
content (an OpenCode database in a folder of any name too), listed with its project and title."""

from events import copy_samples
from opencode_db import ROOT, write_sample

from viewer.web.app import create_app

CLAUDE = ".claude:projects:-home-dev-src-parser:5b1e8c2a-audit"
CODEX = ".codex:sessions:2026:03:01:rollout-2026-03-01T09-15-00-0199a1b2-3c4d-7e5f-8a9b-0c1d2e3f4a5b"
OPENCODE = f".local:share:opencode:opencode.db:{ROOT}"
GEMINI = ".gemini:tmp:shop:chats:session-2026-04-20T10-00-5f1c2a3b"
COPILOT = ".copilot:session-state:b7e3c1d2-4a5f-4b6c-9d8e-0f1a2b3c4d5e:events"


def test_a_home_folder_lists_every_cli_session_with_its_title(tmp_path):
    copy_samples("claude_code", tmp_path / ".claude" / "projects")
    copy_samples("codex", tmp_path / ".codex" / "sessions")
    copy_samples("gemini", tmp_path / ".gemini" / "tmp")
    copy_samples("copilot", tmp_path / ".copilot" / "session-state")
    (tmp_path / ".local" / "share" / "opencode").mkdir(parents=True)
    write_sample(tmp_path / ".local" / "share" / "opencode" / "opencode.db").close()
    (tmp_path / "backup").mkdir()
    write_sample(tmp_path / "backup" / "old.db").close()  # named by no CLI, found by its content
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.jsonl").write_text("{}\n")  # a version control system's folder is not walked
    client = create_app(tmp_path, watch=False).test_client()
    listed = client.get("/api/sessions").get_json()
    rows = {s["id"]: s for s in listed["sessions"]}
    assert rows[CLAUDE]["title"] == "Parser audit" and rows[CLAUDE]["format"] == "claude-code"
    assert rows[CODEX]["format"] == "codex" and rows[CODEX]["title"].startswith("parse() drops the last token.")
    assert rows[OPENCODE]["format"] == "opencode" and rows[OPENCODE]["title"] == "Fix the parser's last token"
    assert rows[OPENCODE]["project"] == "/home/ada/parser" and rows[OPENCODE]["agents"] == 3
    assert rows[GEMINI]["format"] == "gemini" and rows[GEMINI]["title"] == "Login test fails on an expired fixture token"
    assert rows[COPILOT]["format"] == "copilot" and rows[COPILOT]["title"] == "Checkout totals off by a cent"
    assert f"backup:old.db:{ROOT}" in rows
    assert not any(i.startswith(".git") for i in rows) and listed["problems"] == []
    page = client.get("/").data.decode()
    for title in ("Parser audit", "parse() drops the last token.", "Fix the parser&#39;s last token",
                  "Login test fails on an expired fixture token", "Checkout totals off by a cent"):
        assert title in page
