"""What went wrong in a session: its failures by the one rule the pages use (core/failures.py, listed by
reads/failures.py: error results, refused calls, API errors, interrupted turns, failed sub-agents, calls left
unanswered when it ended), and the problems met reading its files.
"""

from __future__ import annotations

from viewer.reads import failures as failed
from viewer.reads import queries

from .context import Viewer, page
from .text import Answer, more, one_line

PROBLEMS_LISTED = 20  # the problems page lists them all; a call names the first few, and counts them by kind


def failures(viewer: Viewer, session_id: str, start: int = 0, limit: int = 50) -> str:
    start, limit = page(start, limit)
    s = viewer.session(session_id)
    listed = failed.listing(s, start, limit)
    report = queries.problems(s)
    counts = ", ".join(f"{n:,} {kind}" for kind, n in report["counts"].items()) or "none"
    answer = Answer(f"Failures in session {s.id} ({s.name}): {listed['total']:,} failures (error results, refused "
                    f"calls, API errors, interrupted turns, failed sub-agents, calls left unanswered), in "
                    f"{len(listed['agents']):,} agents; {len(report['problems']):,} problems reading it ({counts}). "
                    f"All on {viewer.link('pages.failures', session_id=s.id)}.")
    if report["problems"]:
        answer.add(f"Problems (the first {min(PROBLEMS_LISTED, len(report['problems']))}; all on "
                   f"{viewer.link('pages.problems', session_id=s.id)}):")
        for problem in report["problems"][:PROBLEMS_LISTED]:
            line = f" line {problem['line']}" if problem["line"] is not None else ""
            answer.add(f"- {problem['kind']}{line}: {one_line(problem['detail'], 300)}")
    window = listed["failures"]
    if window:
        answer.add(f"Failures {start + 1}-{start + len(window)} (message ids go to `message`):")
    shown = 0
    for item in window:
        call = f"{item['tool']} " if item["tool"] else ""
        if not answer.add(f"- {item['message_id']} · {item['agent_id']} \"{one_line(item['agent_name'])}\" · "
                          f"{item['kind']} · {call}{one_line(item['text'], 300)}"):
            break
        shown += 1
    answer.end(more(start + shown, listed["total"], "failures", f"start={start + shown}"))
    return answer.text()
