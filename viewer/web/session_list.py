"""The sessions list's rows as HTML, written here (`/` shows 500 of them, and polls them again every second while a
folder is read): the template's loop drew each row through an include, a macro and a score of printed values, most
of the page's time. Every printed value goes through security.printed (masked), then is escaped, as a template
prints it; the rows are the bytes the template's loop made.
"""

from __future__ import annotations

from markupsafe import Markup

from .security import printed_html
from .shell import duration, named, when
from .tree_rows import cost_text
from .url_cache import url_for

NOT_READ_YET = ' <span class="badge progress">not read yet</span>'
FAILURES_TITLE = "failures: calls that failed, were refused or left unanswered, API errors, interrupted turns"



def format_badge(s: dict) -> Markup:
    """The format a session was read as; an unrecognized file, or one not read, says why (also _format_badge.html's)."""
    reason = s["format_reason"]
    titled = f' title="{printed_html(reason)}"' if reason else ""
    badge = f'<span class="badge format format-{printed_html(s["format"])}"{titled}>{printed_html(s["format_label"])}</span>'
    if s["format"] in ("unrecognized", "not-read") and reason:
        badge += f' <span class="hint format-reason">{printed_html(reason)}</span>'
    return Markup(badge)


def session_rows(sessions: list[dict], sort: str, icon) -> Markup:
    """The table rows of `sessions` (rows of render.row_of, each with its "cost"): in the "recent" order, a
    project's heading before its first session; `icon` the templates' (shell.icons)."""
    out, last = [], None
    for s in sessions:
        project = s["project"]
        heading = ""
        if sort == "recent" and project and project != last:
            last = project
            heading = (f'<tr class="project"><th scope="rowgroup" colspan="6">{icon("folder")}project '
                       f'<code>{printed_html(project)}</code></th></tr>')
        out.append(f"\n      {heading}\n      {_row(s, icon)}\n    ")
    return Markup("".join(out))


def _row(s: dict, icon) -> str:
    session_id, events, files = s["id"], s["events"], s["files"]
    unread = s["updated_at"] is None and not events
    problems = failures = more_files = ""
    if s["problems"]:
        problems = (f'<a class="badge warn" href="{printed_html(url_for("pages.problems", session_id=session_id))}">'
                    f'{icon("triangle-alert")}{printed_html(s["problems"])}</a>')
    if s["failures"]:
        failures = (f'<a class="badge failed session-failures" href="'
                    f'{printed_html(url_for("pages.failures", session_id=session_id))}" title="{FAILURES_TITLE}">'
                    f'{printed_html(s["failures"])} failed</a>')
    if files and len(files) > 1:
        more_files = (f' <span class="hint">+ {len(files) - 1} sub-agent file{"s" if len(files) > 2 else ""}'
                      f'</span>')
    started, active = s["started_at"], s["active_at"]
    took = (f' <span class="duration" title="from its first event to its last">{printed_html(duration(active - started))}'
            f'</span>') if started and active and active > started else ""
    path = printed_html(s["path"])
    return (f'<tr id="av-session-{printed_html(session_id)}" class="session-row">\n'
            f'        <td class="session-cell">\n'
            f'          <a class="session-link" href="{printed_html(s["url"])}">{printed_html(named(s))}</a>\n'
            f'          \n'
            f'          <span class="session-details">\n{format_badge(s)}'
            f'{NOT_READ_YET if unread else ""}\n'
            f'            {problems}\n'
            f'            {failures}\n'
            f'            <code class="session-path" title="{path}">{path}</code>{more_files}</span>\n'
            f'        </td>\n'
            f'        <td class="num" data-label="agents">{"–" if unread else printed_html(s["agents"])}</td>\n'
            f'        <td class="num" data-label="messages">{"–" if unread else printed_html(events)}</td>\n'
            f'        <td class="num session-cost" data-label="cost">{cost_text(s["cost"])}</td>\n'
            f'        <td class="when" data-label="started">{when(started)}{took}</td>\n'
            f'        <td class="when" data-label="last activity">{when(active or s["updated_at"])}</td>\n'
            f'      </tr>')
