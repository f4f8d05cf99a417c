"""The search tool: the viewer's query language over every session (or one), a page of hits with their pages.

The search page's own read (search.query.search) and its placing of each hit on the page that shows it
(web.search_views.place); a page ends with the cursor the next call passes back.
"""

from __future__ import annotations

from mcp.server.mcpserver.exceptions import ToolError

from viewer.search import query as search
from viewer.web.asked import whole_number
from viewer.web.search_views import place

from .context import Viewer, page
from .text import Answer, one_line

SYNTAX = ('words (all must match; word* is a prefix), "quoted phrases", and agent:, role:, tool:, session: '
          "qualifiers (the same one twice means either)")


def _checked_cursor(cursor: str | None) -> str | None:
    """A cursor as a search's answer gave it ("<session id>=<position>"), or a clear error."""
    if not cursor:
        return None
    session_id, sep, position = cursor.rpartition("=")
    if not sep or not session_id or whole_number(position) is None:
        raise ToolError(f"cursor takes what the previous search answered after `cursor=`, not {cursor!r}.")
    return cursor


def search_sessions(viewer: Viewer, query: str, session_id: str | None = None, cursor: str | None = None,
                    limit: int = 20) -> str:
    _, limit = page(0, limit)
    resume = _checked_cursor(cursor)
    if search.parse(query).empty:
        raise ToolError(f"The query finds nothing to look for: give {SYNTAX}.")
    scope = None
    if session_id:
        scope = viewer.session(session_id).id
    library = viewer.library
    version = library.version  # read before it lists (see search.search)
    data = search.search(library.listing(), query, scope, resume, limit,
                         count_budget=viewer.app.config["SEARCH_COUNT_BUDGET"], folder_words=library.folder_words,
                         version=version)
    place(data["hits"], data["cursor"])
    total = data["total"]
    counted = (f"{total['count']:,}{'+' if not total.get('exact', True) else ''}"
               if isinstance(total, dict) and "count" in total else "some")
    answer = Answer(f"{counted} hits for {query!r}{f' in session {scope}' if scope else ''}; this page has "
                    f"{len(data['hits'])}, in session and file order. Message ids go to `message`.",
                    "(a session is still being indexed: more hits may come)" if data["partial"] else "",
                    "(unclosed quote: the phrase runs to the end)" if search.unclosed_quote(query) else "")
    for hit in data["hits"]:
        snippet = "".join(f"**{text}**" if marked else text for text, marked in hit["pieces"])
        if not answer.add(f"- {hit['session']} · {hit['agent_id']} \"{one_line(hit['agent_name'], 60)}\" · "
                          f"{hit['kind']} · [{hit['message_id']}]: {one_line(snippet, 400)}\n"
                          f"  {viewer.linked(hit['url'])}"):
            break
    if data["next"] and not answer.full:
        answer.end(f"(more hits follow: call again with cursor={data['next']!r})")
    elif answer.full:
        answer.end("(the answer is full: ask for fewer hits with a smaller limit)")
    else:
        answer.end("(end of the hits)")
    return answer.text()
