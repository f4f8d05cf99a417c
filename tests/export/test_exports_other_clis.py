"""Exports, `agentview share` and `agentview push` on the agent CLIs whose files are not one session each: an OpenCode
database (many sessions in one file, its sub-agents child sessions), and Gemini CLI and Copilot CLI folders pushed
to a real OTLP receiver."""

from __future__ import annotations

import json

import pytest
from events import copy_samples
from opencode_db import ROOT, T0, OpenCodeDb, OpenCodeStorageTree, answer, prompt, write_sample
from otlp_receiver import receiver  # noqa: F401 (a fixture)
from shared_files import carried
from test_otlp_push import agentview, json_spans

from viewer import cli
from viewer.core.redact import masking
from viewer.library.library import Library

DB = ".local/share/opencode/opencode.db"
SESSION = f"opencode.db:{ROOT}"
CHILD, GRAND = "session-ChildBBBBBBB", "session-GrandCCCCCCC"


@pytest.fixture
def db(tmp_path):
    path = tmp_path / DB
    path.parent.mkdir(parents=True)
    write_sample(path).close()
    return path


def exported(capsys, *args) -> str:
    assert cli.main(["export", *map(str, args)]) == 0
    return capsys.readouterr().out


def test_every_export_of_an_opencode_database_carries_its_session_and_sub_agents(db, capsys):
    markdown = exported(capsys, db, "--format", "markdown")
    assert markdown.startswith("# Fix the parser's last token") and f"(`{GRAND}`)" in markdown
    data = json.loads(exported(capsys, db, "--format", "json"))
    assert data["session"]["id"] == SESSION and data["session"]["events"] == 21
    (root,) = data["tree"]
    assert [(c["agent_id"], [g["agent_id"] for g in c["children"]]) for c in root["children"]] == [(CHILD, [GRAND])]
    trace = exported(capsys, db, "--format", "trace")
    assert "Events: 21 · Agents: 3" in trace and "Which tests cover parse()?" in trace
    spans = [span for line in exported(capsys, db, "--format", "otlp").splitlines()
             for resource in json.loads(line)["resourceSpans"] for scope in resource["scopeSpans"]
             for span in scope["spans"]]
    by_id = {span["spanId"]: span for span in spans}
    parents = {span["name"]: by_id.get(span.get("parentSpanId"), {}).get("name") for span in spans
               if span["name"].startswith("invoke_agent ")}
    assert parents == {"invoke_agent main agent": None,
                       "invoke_agent Find covering tests (@general subagent)": "execute_tool task",
                       "invoke_agent List test files (@explore subagent)": "execute_tool task"}


def test_a_database_of_several_sessions_exports_the_one_asked_for(tmp_path, capsys):
    path = tmp_path / "opencode.db"
    w = OpenCodeDb(path)
    for n, (sid, title) in enumerate([(ROOT, "First"), ("ses_4a1b2c3d4e70OtherDDDDDDD", "Second")]):
        w.session(sid, title, T0 + 100 * n)
        prompt(w, sid, 10 * n + 1, T0 + 100 * n + 1, f"{title} question")
        answer(w, sid, 10 * n + 2, T0 + 100 * n + 2, f"{title} answer", (10, 10, 0, 0, 0.01))
    w.close()
    assert cli.main(["export", str(path), "--format", "markdown"]) == 2
    said = capsys.readouterr().err
    assert "opencode.db holds 2 sessions: give one of" in said and "opencode.db:ses_4a1b2c3d4e70OtherDDDDDDD" in said
    second = exported(capsys, path, "--format", "markdown", "--session", "opencode.db:ses_4a1b2c3d4e70OtherDDDDDDD")
    assert second.startswith("# Second") and "Second answer" in second and "First" not in second
    assert cli.main(["export", str(path), "--format", "json", "--session", "nope"]) == 2
    assert "opencode.db holds no session 'nope'" in capsys.readouterr().err
    assert cli.main(["share", str(path), "-o", str(tmp_path / "x.html")]) == 2
    assert f"with --dir {tmp_path}" in capsys.readouterr().err


def test_share_writes_an_opencode_session_with_every_agent_and_event(db, tmp_path):
    out = tmp_path / "shared.html"
    assert cli.main(["share", str(db), "-o", str(out)]) == 0
    data, _ = carried(out.read_bytes())
    assert data["session"]["id"] == SESSION and len(data["events"]) == 21
    assert [a["id"] for a in data["agents"]] == ["main", CHILD, GRAND]


def test_the_older_storage_folder_exports_and_shares_as_the_database_does(tmp_path, capsys):
    storage = tmp_path / ".local/share/opencode/storage"
    storage.mkdir(parents=True)
    write_sample(storage, OpenCodeStorageTree).close()
    assert "Events: 21 · Agents: 3" in exported(capsys, storage, "--format", "trace")
    out = tmp_path / "shared.html"
    assert cli.main(["share", str(storage), "-o", str(out)]) == 0
    assert [a["id"] for a in carried(out.read_bytes())[0]["agents"]] == ["main", CHILD, GRAND]
    assert cli.main(["export", str(tmp_path), "--format", "trace"]) == 2  # a folder of no sessions: said, no trace
    assert f"{tmp_path.name} is a folder, not a file of sessions" in capsys.readouterr().err


@pytest.mark.parametrize("sample", ["opencode", "gemini", "copilot"])
def test_push_sends_each_session_of_a_file_or_folder_to_a_real_receiver(receiver, tmp_path, sample):
    if sample == "opencode":
        target = tmp_path / DB
        target.parent.mkdir(parents=True)
        write_sample(target).close()
        folder = target.parent
    else:
        target = folder = copy_samples(sample, tmp_path / sample)
    done = agentview("push", target, "--endpoint", receiver.url)
    assert done.returncode == 0, done.stderr
    library = Library(folder)
    library.scan()
    with masking(True):
        expected = [span for s in library.listing() for span in json_spans(s)]
    assert expected and f"sent {len(expected)} spans" in done.stderr
    assert sorted((sp["traceId"], sp["spanId"], sp["parentSpanId"], sp["name"]) for sp in receiver.spans) == sorted(
        (sp["traceId"], sp["spanId"], sp.get("parentSpanId"), sp["name"]) for sp in expected)
