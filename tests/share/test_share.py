"""`agentview share`: one HTML file carrying a whole session, for every format we read, secrets masked in its bytes."""

from __future__ import annotations

import base64
import hashlib
import re
import shutil
from pathlib import Path

import pytest

from conftest import SAMPLES, sample, write_events
from events import calls, created, say, tool_call, user
from shared_files import carried, strings_of
from test_secrets_everywhere import FIELDS, SHAPES, file_name_for, pieces, session_events, values_for
from viewer import cli
from viewer.reads.session_viewer import load_index

CLAUDE_FOLDER = SAMPLES / "claude_code" / "-home-dev-src-parser"
CODEX_ROLLOUT = next((SAMPLES / "codex").rglob("rollout-*-0199a1b2-3c4d-*.jsonl"))


def share(tmp_path: Path, *args: str) -> bytes:
    out = tmp_path / "shared.html"
    assert cli.main(["share", "-o", str(out), *args]) == 0
    return out.read_bytes()


def otlp_file(tmp_path: Path) -> Path:
    """research_team as OTLP/JSON spans, the way `agentview export --format otlp` writes them (a format we read)."""
    from viewer.core.redact import masking
    from viewer.export.text import export

    with masking(False):
        text = export(load_index(sample("research_team")), "otlp")
    path = tmp_path / "research_team.otlp.jsonl"
    path.write_text(text, encoding="utf-8")
    return path


INPUTS = {
    "native": lambda tmp: sample("research_team"),
    "legacy": lambda tmp: next((SAMPLES / "legacy").glob("*.jsonl")),
    "claude code with sub-agent files": lambda tmp: CLAUDE_FOLDER / "5b1e8c2a-audit.jsonl",
    "codex": lambda tmp: CODEX_ROLLOUT,
    "otlp": otlp_file,
    "ai-agent snapshot": lambda tmp: SAMPLES / "ai_agent" / "4b9e-web-research.json.gz",
    "weakincentives": lambda tmp: SAMPLES / "weakincentives" / "review.transcript.TranscriptEntry.jsonl",
    "gemini cli": lambda tmp: next((SAMPLES / "gemini").rglob("session-*.jsonl")),
    "copilot cli": lambda tmp: next((SAMPLES / "copilot").rglob("events.jsonl")),
}


@pytest.mark.parametrize("kind", INPUTS)
def test_a_shared_file_carries_every_agent_and_event_of_the_session(tmp_path, kind):
    path = INPUTS[kind](tmp_path)
    data, _ = carried(share(tmp_path, str(path)))
    session = load_index(path)
    assert [a["id"] for a in data["agents"]] == session.agent_order
    assert len(data["events"]) == session.count > 0
    assert [e["i"] for e in data["events"]] == [session.events[p]["message_id"] for p in range(session.count)]
    for agent in data["agents"]:  # each agent's perspective and dialog entries, as the index has them
        node = session.agents[agent["id"]]
        assert agent["entries"] == list(node.entries) and agent["dialog"] == list(node.dialog_entries)
    if kind == "claude code with sub-agent files":
        assert len(data["agents"]) >= 3  # the main agent and the sub-agents of the files beside it
        assert any(a["created_by"] for a in data["agents"])  # each joined to the Task call that started it


def test_calls_carry_their_results_and_the_agents_they_started(tmp_path):
    data, _ = carried(share(tmp_path, str(sample("research_team"))))
    events = data["events"]
    pairs = list(zip(data["paired"][::2], data["paired"][1::2]))  # (result, the call it answers)
    assert pairs and all(events[r]["k"] == "R" and events[c]["k"] == "D" and events[r]["tc"] in
                         [call.get("id") for call in events[c]["calls"]] for r, c in pairs)
    spawned = {o for e in events for call in e.get("calls", ()) for o in call.get("sp", ())}
    children = {a["ordinal"] for a in data["agents"] if a["parent"] is not None}
    assert spawned and spawned <= children


def test_the_page_runs_only_its_own_scripts_and_asks_for_nothing(tmp_path):
    page = share(tmp_path, str(sample("example1_jack_and_jill"))).decode("utf-8")
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page).group(1)
    assert "default-src 'none'" in policy and "form-action 'none'" in policy
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert len(scripts) == 2
    for script in scripts:  # each inline script is allowed by its hash, and nothing else is
        digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
        assert f"'sha256-{digest}'" in policy
    assert "unsafe-eval" not in policy and "script-src 'unsafe-inline'" not in policy
    assert not re.search(r"<(?:link|img|iframe|object|embed)\b|<script[^>]*\bsrc=", page)


def test_a_shared_file_opens_on_the_agent_asked_for(tmp_path):
    data, _ = carried(share(tmp_path, str(sample("example1_jack_and_jill")), "--agent", "agent_jill"))
    assert data["session"]["opening_agent"] == "agent_jill"


def test_a_session_is_found_by_its_id_in_a_folder(tmp_path):
    folder = tmp_path / "projects"
    shutil.copytree(SAMPLES / "claude_code", folder, ignore=shutil.ignore_patterns("*.py"))
    from viewer.library.library import Library

    library = Library(folder)
    library.scan()
    session_id = next(s.id for s in library.listing() if s.relpath.endswith("5b1e8c2a-audit.jsonl"))
    assert session_id.startswith("-")  # Claude Code's project folders are named so: the id goes after --
    data, _ = carried(share(tmp_path, "--dir", str(folder), "--", session_id))
    assert data["session"]["id"] == session_id and len(data["agents"]) >= 3


@pytest.mark.parametrize("args, said", [
    (["no-such-file.jsonl"], "is not a file"),
    (["no-such-session", "--dir", "."], "no session 'no-such-session'"),
    ([str(sample("example1_jack_and_jill")), "--agent", "agent_nobody"], "no agent 'agent_nobody'"),
])
def test_bad_arguments_are_a_clear_error(tmp_path, capsys, monkeypatch, args, said):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["share", *args, "-o", str(tmp_path / "out.html")]) == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "out.html").exists()


def secret_session(folder: Path, rotation: int) -> tuple[Path, dict[str, str]]:
    values, needles = values_for(rotation, [""] * len(FIELDS), [" tail"] * len(FIELDS))
    events, broken = session_events(values, 10)
    path = write_events(folder / file_name_for(values["file_name"]), events)
    with open(path, "a", encoding="utf-8") as f:
        f.write(broken + "\n")
    return path, needles


@pytest.mark.parametrize("rotation", range(len(SHAPES)))
def test_no_secret_shape_in_any_field_reaches_the_file(tmp_path, rotation):
    """Every shape the masking knows, in every field (rotated so each shape meets each field): no 16-character
    piece of it is in the file's bytes, in the inflated data, or in any string of it."""
    path, needles = secret_session(tmp_path / "in", rotation)
    page = share(tmp_path, str(path))
    data, raw = carried(page)
    ours = re.sub(r"<script>.*?</script>|<style>.*?</style>", "", page.decode("utf-8"), flags=re.S)  # code, not data
    shown = "\x00".join([ours, raw.decode("utf-8"), *strings_of(data)])
    for field, needle in needles.items():
        for piece in pieces(needle):
            assert piece not in shown, f"{field}: {piece!r} of {needle!r} is in the shared file"
    note = re.search(r'<p class="masking-note" id="masking-note">(.*?)</p>', page.decode("utf-8"), re.S).group(1)
    assert re.search(r"\d+ values that looked like secrets were masked", note) and "--no-redact" in note


def test_no_redact_keeps_the_secrets(tmp_path):
    path, needles = secret_session(tmp_path / "in", 0)
    page = share(tmp_path, str(path), "--no-redact")
    data, _ = carried(page)
    shown = "\x00".join(strings_of(data))
    for field, needle in needles.items():
        assert needle in shown, field
    assert "Nothing was masked in this file" in page.decode("utf-8")


def test_anonymized_paths_replace_each_user_name_the_same_way(tmp_path):
    events = [
        created("m1", "lead", name="Lead"),
        user("m2", "lead", "look at /home/alice/proj/main.py and /Users/bob/notes.md"),
        calls("m3", "lead", tool_call("c1", "read", path="/home/alice/proj/util.py")),
        say("m4", "lead", r"C:\Users\carol\repo and -home-alice-proj and /home/alice again"),
    ]
    path = write_events(tmp_path / "in" / "paths.jsonl", events)
    _, raw = carried(share(tmp_path, str(path), "--anonymize-paths"))
    text = raw.decode("utf-8")
    for name in ("alice", "bob", "carol"):
        assert name not in text
    assert "/home/user1/proj/main.py" in text and "/home/user1/proj/util.py" in text and "/Users/user2/notes.md" in text
    assert "-home-user1-proj" in text and "/home/user1 again" in text and r"C:\\Users\\user3\\repo" in text
    _, plain = carried(share(tmp_path, str(path)))
    assert b"/home/alice/proj/main.py" in plain  # without the flag, paths are as logged


@pytest.mark.parametrize("path", sorted(p for p in SAMPLES.rglob("*.jsonl") if "subagents" not in p.parts),
                         ids=lambda p: p.name)
def test_the_kinds_the_file_takes_from_the_index_are_the_rules(path):
    """The file reads each event's kind from the index's lists (fast), which must agree with the rule itself."""
    from viewer.core import model
    from viewer.share.events import kinds_by_position

    session = load_index(path)
    kinds = kinds_by_position(session)
    assert kinds == [model.perspective_kind(e) for e in session.events.walk(0, session.count)]
