"""The `~/.claude/projects` generator and the side-by-side runner (benchmarks/claude_projects.py,
versus_agentsview.py) on a small folder, so that they cannot rot."""

import datetime as dt
import json
import os
import subprocess
import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))

from claude_projects import generate  # noqa: E402
from viewer.library.library import Library  # noqa: E402


def test_the_generated_folder_is_read_as_its_sessions_with_their_sub_agents(tmp_path):
    made = generate(tmp_path, sessions=40, projects=4)
    projects = sorted(p.name for p in (tmp_path / ".claude" / "projects").iterdir())
    assert projects == ["-home-dev-src-auth-service", "-home-dev-src-billing", "-home-dev-src-dashboard",
                        "-home-dev-src-warehouse"]
    library = Library(made["projects_folder"])
    library.scan()
    sessions = library.listing()
    assert len(sessions) == 40 and made["subagent_files"] > 0
    assert sum(len(s.agents) for s in sessions) == 40 + made["subagent_files"]  # every sub-agent linked
    newest = [p for p in (tmp_path / ".claude" / "projects").rglob("*.jsonl") if made["rare_word"] in p.read_text()]
    assert [p.stem for p in newest] == [made["newest"]]


def test_the_runner_measures_agentview_and_says_when_agentsview_is_skipped(tmp_path):
    env = {**os.environ, "PATH": os.path.dirname(sys.executable)}  # no agentsview on it
    out = tmp_path / "figures.json"
    run = subprocess.run([sys.executable, str(REPO / "benchmarks" / "versus_agentsview.py"), "--home",
                          str(tmp_path / "home"), "--sessions", "12", "--json", str(out)],
                         capture_output=True, text=True, timeout=300, env=env, cwd=REPO)
    assert run.returncode == 0, run.stderr
    assert "agentsview skipped: not installed" in run.stdout
    (ours,) = json.loads(out.read_text())["agentview"]
    assert ours["cold"]["listed_s"] <= ours["cold"]["found_s"] and ours["cold"]["cpu_s"] > 0
    assert ours["cold"]["peak_rss_mb"] > 20 and ours["restart"]["found_s"] > 0
    assert ours["cold"]["page"]["first_ms"] > 0 and ours["cold"]["rare_answer_kb"] < 10
    # after a restart, the biggest session's first page, and in a second restart its first JSON
    assert ours["restart"]["page"]["first_ms"] > 0 and "json" not in ours["restart"]
    assert ours["restart_json"]["json"]["first_ms"] > 0 and "page" not in ours["restart_json"]
    assert "| biggest session after a restart: JSON first (ms) | " in run.stdout


def test_every_generated_session_ends_before_the_folder_is_written_however_many_there_are(tmp_path):
    """Sessions follow one another minutes to hours apart: many of them would run into the future (20,000 reach
    2032), never settle, and be neither kept nor put to sleep. The gaps shrink to end them all in time."""
    from claude_projects import START

    until = START + dt.timedelta(days=2)  # 40 sessions hours apart take a week
    made = generate(tmp_path, sessions=40, projects=4, until=until)
    files = list((tmp_path / ".claude" / "projects").rglob("*.jsonl"))
    assert len(files) == 40 + made["subagent_files"]
    assert max(p.stat().st_mtime for p in files) <= until.timestamp()
    times = [t for p in files for line in p.open() if isinstance(t := json.loads(line).get("timestamp"), str)]
    assert max(times) <= until.strftime("%Y-%m-%dT%H:%M:%S.999Z")


def test_the_runner_can_stop_once_every_session_is_listed(tmp_path):
    """A folder of 20,000 sessions is listed in seconds and searchable in minutes: `--stop-after listed` ends the
    cold start there, with its CPU and RSS until then, and makes no restart on the part-made cache."""
    env = {**os.environ, "PATH": os.path.dirname(sys.executable)}
    out = tmp_path / "figures.json"
    run = subprocess.run([sys.executable, str(REPO / "benchmarks" / "versus_agentsview.py"), "--home",
                          str(tmp_path / "home"), "--sessions", "12", "--stop-after", "listed", "--json", str(out)],
                         capture_output=True, text=True, timeout=300, env=env, cwd=REPO)
    assert run.returncode == 0, run.stderr
    (ours,) = json.loads(out.read_text())["agentview"]
    assert set(ours) == {"cold"} and set(ours["cold"]) == {"listed_s", "cpu_s", "peak_rss_mb"}
    assert 0 < ours["cold"]["listed_s"] and ours["cold"]["cpu_s"] > 0 and ours["cold"]["peak_rss_mb"] > 20
    assert "| all listed, cold (s) | " in run.stdout and "| restart: listed / found / CPU (s) | – / – / – |" in run.stdout
