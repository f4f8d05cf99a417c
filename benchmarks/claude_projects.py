"""A `~/.claude/projects` folder as a person's months of Claude Code use leave it: many small sessions.

    .venv/bin/python benchmarks/claude_projects.py OUT_HOME [--sessions 2000] [--projects 20] [--seed 1]

Writes OUT_HOME/.claude/projects/<encoded cwd>/ for `--projects` projects and spreads `--sessions` sessions over
them, in the shapes Claude Code 2.1.x writes (benchmarks/generate_claude.py: one line per content block of a
response, tool results with `toolUseResult`, Task spawns answered by sub-agent files with their meta files,
file-history snapshots, titles). Sizes are skewed as real ones are: most sessions a few tens of kB, a few near
1 MB; one in four spawns one to three sub-agents. Sessions follow one another in time with gaps of minutes to
hours, shorter where that would run past the present (20,000 sessions would reach 2032, never settle and never be
kept): every one ends two hours before the folder is written at the latest. Each file's mtime is its last line's
time. The newest session's last answer holds RARE_WORD, a word no other session has. OUT_HOME/manifest.json says what was written (the newest session, the rare word, counts).
2,000 sessions: about 97k lines (66k events once read) and 200 MB.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate_claude import WORDS, Clock, Writer  # noqa: E402

RARE_WORD = "quetzalcoatlus"
START = dt.datetime(2025, 9, 1, 8, 0, tzinfo=dt.timezone.utc)
GAP_MS = (60_000, 6 * 3_600_000)  # the next session starts minutes to hours after the last one ended
# The newest session ends this long before the folder is written at the latest: every session is one a person left
# (settled: Tuning.settle_after), none written in the future, however many there are
LEFT_FOR = dt.timedelta(hours=2)
PROJECT_NAMES = ("warehouse", "billing", "auth-service", "dashboard", "mobile-app", "infra", "docs-site",
                 "data-pipeline", "search", "notifications", "payments", "cli", "sdk-python", "sdk-go",
                 "analytics", "scheduler", "gateway", "design-system", "ml-serving", "website")


class DateClock(Clock):
    """Claude Code's timestamps over months (generate_claude's Clock counts days within one month)."""

    def tick(self, ms: int) -> str:
        self.ms += ms
        return self.at().strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.ms % 1000:03d}Z"

    def at(self) -> dt.datetime:
        return START + dt.timedelta(milliseconds=self.ms)


class SmallReads(Writer):
    """Read results of 0.3-5 kB and long texts (thinking, command output) half as long: a person's sessions read
    parts of files more often than whole big ones."""

    READ_SMALLEST, READ_SPREAD = 300, 16

    def text(self, low: int, high: int) -> str:
        return super().text(low, high // 2 if high > 1000 else high)

def project_folder(home: Path, name: str) -> tuple[Path, str]:
    """Claude Code's folder for a cwd: every character that is not a letter or digit becomes '-'."""
    cwd = f"/home/dev/src/{name}"
    encoded = "".join(c if c.isalnum() else "-" for c in cwd)
    return home / ".claude" / "projects" / encoded, cwd


def generate(home: str | Path, sessions: int = 2000, projects: int = 20, seed: int = 1,
             until: dt.datetime | None = None) -> dict:
    """Writes the folder (see the module); every session ends by `until` (LEFT_FOR before now by default): the gaps
    between sessions shrink when minutes to hours each would run past it (thousands of sessions)."""
    home = Path(home)
    until = until or dt.datetime.now(dt.timezone.utc) - LEFT_FOR
    room_ms = int((until - START).total_seconds() * 1000)
    spent_ms = 0  # in sessions so far (their lines' times), gaps left out
    writer, clock = SmallReads(seed), DateClock()
    rng = random.Random(seed + 1)
    folders = [project_folder(home, PROJECT_NAMES[i % len(PROJECT_NAMES)] + (f"-{i // 20}" if i >= 20 else ""))
               for i in range(projects)]
    total = subagent_files = 0
    for i in range(sessions):
        root, writer.cwd = folders[rng.randrange(projects)]
        budget = int(7_800 * 100 ** (rng.random() ** 2.2))  # 8 kB to 780 kB, most under 40 kB
        subagents = rng.randint(1, 3) if rng.random() < 0.25 else 0
        left = sessions - i
        # the time left for the gaps left (each session to come taking twice the time they took so far): none
        # longer than it, a gap in the middle of what they would have if they were even
        spare = room_ms - clock.ms - left * (spent_ms // i if i else 0) * 2
        clock.ms += rng.randint(GAP_MS[0], max(GAP_MS[0] + 1, min(GAP_MS[1], 2 * spare // left, spare)))
        last = i == sessions - 1
        began = clock.ms
        total += writer.session(root, budget, subagents, clock, f" {RARE_WORD}" if last else "")
        spent_ms += clock.ms - began
        subagent_files += subagents
        stamp = clock.at().timestamp()
        for path in [root / f"{writer.last_session}.jsonl", *(root / writer.last_session).rglob("*")]:
            os.utime(path, (stamp, stamp))
    lines = sum(1 for p in (home / ".claude" / "projects").rglob("*.jsonl") for _ in open(p, "rb"))
    manifest = {"sessions": sessions, "projects": projects, "subagent_files": subagent_files, "bytes": total,
                "lines": lines, "newest": writer.last_session, "rare_word": RARE_WORD,
                "common_word": WORDS[0], "phrase": "return import",
                "projects_folder": str(home / ".claude" / "projects")}
    (home / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_home", help="the HOME the folder is written under (.claude/projects inside)")
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--projects", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(json.dumps(generate(args.out_home, args.sessions, args.projects, args.seed), indent=1))


if __name__ == "__main__":
    main()
