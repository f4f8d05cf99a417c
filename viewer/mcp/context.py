"""What every tool call runs in: the app's library, its page URLs and its masking; the checks of a call's arguments.

A tool reads through a Flask app (the one `agentview serve` runs, or one made for stdio) so that it finds sessions
and builds page URLs exactly as the pages do; it runs in a request context of its own, with masking on or off as the
app says. A bad argument raises ToolError: the client shows its message, the server carries on.
"""

from __future__ import annotations

from collections.abc import Callable

from flask import Flask, url_for
from mcp.server.mcpserver.exceptions import ToolError

from viewer.core.redact import masking, shown
from viewer.web.state import KEY

MAX_LIMIT = 200  # the pages' page size: no answer lists more entries, hits or sessions than this


class Viewer:
    """The sessions an MCP server answers about, as the app `app` serves them."""

    def __init__(self, app: Flask, base_url: str = ""):
        self.app = app
        self.base_url = base_url.rstrip("/")  # before every page path; "" leaves paths as they are

    @property
    def library(self):
        return self.app.extensions[KEY].library

    @property
    def redact(self) -> bool:
        return self.app.config["REDACT"]

    def run(self, read: Callable[[], str]) -> str:
        """`read()` in a request context of the app, masked as the pages are: every piece of log text the answer
        quotes was masked whole before it was cut, and the answer is masked again as a whole (ids, names, links)."""
        with self.app.test_request_context("/"), masking(self.redact):
            return shown(read())

    def link(self, endpoint: str, **values) -> str:
        """A page's URL (inside `run`)."""
        return self.base_url + url_for(endpoint, **values)

    def linked(self, path: str) -> str:
        """A path url_for made elsewhere (the pages' own helpers), as this server links it."""
        return self.base_url + path

    # --- finding what a call names ------------------------------------------------------------------

    def session(self, session_id: str):
        library = self.library
        s = library.get(session_id)
        if s is None:
            moved_to = library.resolve(session_id)
            s = library.get(moved_to) if moved_to else None
        if s is None:
            raise ToolError(f"There is no session {session_id!r}: list_sessions gives the ids.")
        return s

    @staticmethod
    def agent(s, agent_id: str) -> str:
        if agent_id not in s.agents:
            raise ToolError(f"Session {s.id!r} has no agent {agent_id!r}: agent_tree gives its agents' ids.")
        return agent_id

    @staticmethod
    def message(s, message_id: str) -> int:
        position = s.by_id.get(message_id)
        if position is None:
            raise ToolError(f"Session {s.id!r} has no message {message_id!r}.")
        return position


def page(start: int, limit: int) -> tuple[int, int]:
    """A window's start and size, or a clear error: pages hold at most MAX_LIMIT items, as the viewer's do."""
    if start < 0:
        raise ToolError(f"start must be 0 or more, not {start}.")
    if not 1 <= limit <= MAX_LIMIT:
        raise ToolError(f"limit must be between 1 and {MAX_LIMIT}, not {limit}.")
    return start, limit
