"""The MCP server's tools and resources (the SDK's MCPServer): what each takes and says, each call run by a Viewer.

Every tool is read-only and answers compact text; a bad argument is a tool error the model reads (ToolError, or the
SDK's check of the argument types), never a crash. The same server runs over stdio and at /mcp.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.server.mcpserver.resources.templates import ResourceSecurity
from mcp.types import Resource, ToolAnnotations
from pydantic import Field

from viewer.core.redact import masking, shown

from . import failures, searching, sessions, transcripts
from .context import MAX_LIMIT, Viewer

INSTRUCTIONS = (
    "Read-only access to the agent sessions agentview shows (Claude Code, Codex, native multi-agent logs...): list "
    "and search them, read an agent's perspective, the dialog between agents, one message with what caused it and "
    "what it caused, failures, and usage and cost. Ids in an answer go to the other tools; links are paths of "
    "the agentview viewer's pages (`agentview serve`). Secrets in the logs are masked. Lists are paged: at most "
    f"{MAX_LIMIT} items a call, and an answer ends saying how to read on.")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
IDS = ResourceSecurity(exempt_params=frozenset({"session_id", "agent_id"}))  # looked up as ids, never as paths

Start = Annotated[int, Field(description="where the window starts (0: the first)")]
SessionId = Annotated[str, Field(description="a session's id, as list_sessions or search gives it")]
AgentId = Annotated[str, Field(description="an agent's id, as agent_tree gives it")]


def _limit(default: int) -> type:
    return Annotated[int, Field(description=f"how many to list (1-{MAX_LIMIT}; default {default})")]


class SessionsServer(MCPServer):
    """The SDK's server, its resource list naming the most recently changed sessions (a client attaches one from
    the list; each is read through the session template)."""

    def __init__(self, viewer: Viewer, **options):
        super().__init__(**options)
        self.viewer = viewer

    async def list_resources(self) -> list[Resource]:
        return await super().list_resources() + await anyio.to_thread.run_sync(self._sessions)

    def _sessions(self) -> list[Resource]:
        listed = sorted(self.viewer.library.listing(), key=lambda s: (-(s.updated_at or 0), s.relpath))[:MAX_LIMIT]
        with masking(self.viewer.redact):  # a title is log text
            return [Resource(uri=f"agentview://sessions/{quote(s.id, safe='')}", name=shown(s.id),
                             title=shown(s.title or s.name), mime_type="text/plain",
                             description=f"{s.format.label} session {shown(s.relpath)}: its totals and agent tree")
                    for s in listed]


def build(viewer: Viewer) -> MCPServer:
    server = SessionsServer(viewer, name="agentview", instructions=INSTRUCTIONS, log_level="WARNING")
    tool = server.tool(annotations=READ_ONLY, structured_output=False)

    @tool
    def list_sessions(
        format: Annotated[str | None, Field(description="only this input format: claude-code, codex, native, "
                                                        "legacy, weakincentives, ai-agent, otlp")] = None,
        project: Annotated[str | None, Field(description="only projects whose name holds this text")] = None,
        changed_since: Annotated[str | None, Field(description="only sessions written to since: 30m, 2h, 3d or 1w "
                                                               "ago, or an ISO 8601 date or time")] = None,
        failures: Annotated[bool, Field(description="only sessions with a failure (an error result, a refused call, "
                                                    "an API error...) or a problem reading them")] = False,
        start: Start = 0, limit: _limit(50) = 50) -> str:
        """The sessions, most recently changed first: id, title, format, project, counts, cost, when, page."""
        return viewer.run(lambda: sessions.list_sessions(viewer, format, project, changed_since, failures, start,
                                                         limit))

    @tool
    def search(
        query: Annotated[str, Field(description=f"the viewer's query language: {searching.SYNTAX}")],
        session_id: Annotated[str | None, Field(description="search this session only")] = None,
        cursor: Annotated[str | None, Field(description="where the previous page ended, as it said")] = None,
        limit: _limit(20) = 20) -> str:
        """Full-text search of every session (or one): each hit's session, agent, kind, message id, snippet, page."""
        return viewer.run(lambda: searching.search_sessions(viewer, query, session_id, cursor, limit))

    @tool
    def agent_tree(session_id: SessionId, start: Start = 0, limit: _limit(MAX_LIMIT) = MAX_LIMIT) -> str:
        """A session's agents as a tree (who created whom, with which call): names, models, entries, cost, pages."""
        return viewer.run(lambda: sessions.agent_tree(viewer, session_id, start, limit))

    @tool
    def perspective(
        session_id: SessionId, agent_id: AgentId, start: Start = 0, limit: _limit(50) = 50,
        sub_agents: Annotated[bool, Field(description="also its sub-agents' entries, interleaved")] = False) -> str:
        """What an agent heard, did (tool calls, with their results), received and said, in order, paged."""
        return viewer.run(lambda: transcripts.perspective(viewer, session_id, agent_id, start, limit, sub_agents))

    @tool
    def dialog(
        session_id: SessionId,
        agent_ids: Annotated[list[str], Field(description="the agents whose conversation to read")],
        start: Start = 0, limit: _limit(50) = 50) -> str:
        """The messages among some agents, each once (who said it, who heard it, whether it changed on its way)."""
        return viewer.run(lambda: transcripts.dialog(viewer, session_id, agent_ids, start, limit))

    @tool
    def message(session_id: SessionId,
                message_id: Annotated[str, Field(description="a message's id, as the other tools give it")]) -> str:
        """One message whole, with its causality: the chain that led to it (upstream) and what it led to
        (downstream: its deliveries, the events it caused, its calls' results, the agents it created)."""
        return viewer.run(lambda: transcripts.message(viewer, session_id, message_id))

    @tool
    def session_failures(session_id: SessionId, start: Start = 0, limit: _limit(50) = 50) -> str:
        """What went wrong in a session: error results, refused calls, API errors, interrupted turns, failed
        sub-agents and calls left unanswered (each with its agent, call and error text), and problems reading it."""
        return viewer.run(lambda: failures.failures(viewer, session_id, start, limit))

    @tool
    def usage(session_id: SessionId,
              agent_id: Annotated[str | None, Field(description="one agent (and its sub-agents' cost) only")] = None,
              start: Start = 0, limit: _limit(50) = 50) -> str:
        """Token usage and cost of a session (with each agent's cost) or of one agent; the peak context."""
        return viewer.run(lambda: sessions.usage(viewer, session_id, agent_id, start, limit))

    @server.resource("agentview://sessions/{session_id}", name="session", mime_type="text/plain", security=IDS)
    def session_resource(session_id: str) -> str:
        """A session: its usage and its agent tree."""
        return _resource(lambda: sessions.session_summary(viewer, session_id))

    @server.resource("agentview://sessions/{session_id}/agents/{agent_id}", name="agent", mime_type="text/plain",
                     security=IDS)
    def agent_resource(session_id: str, agent_id: str) -> str:
        """An agent: its usage and the first page of its perspective."""
        return _resource(lambda: sessions.usage(viewer, session_id, agent_id)
                         + transcripts.perspective(viewer, session_id, agent_id, 0, 50))

    def _resource(read) -> str:
        try:
            return viewer.run(read)
        except ToolError as error:
            raise ResourceNotFoundError(str(error)) from None

    return server
