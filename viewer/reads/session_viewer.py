"""The seed's SessionViewer: the Python API, on the same query code as the pages."""

from __future__ import annotations

import os

from viewer.core.host import Host
from viewer.core.model import Event
from viewer.formats import detect
from viewer.index.session_ids import session_id_for
from viewer.index.session_index import SessionIndex
from viewer.library.library import Library
from viewer.library.one_file import open_file, sessions_of_file
from viewer.library.reading import reader_for

from . import causality, dialogs, queries


class NoSuchSession(ValueError):
    """A file of many sessions asked for one it does not hold, or for none when it holds several."""


def load_index(session_file: str | os.PathLike, host: Host | None = None,
               session_id: str | None = None) -> SessionIndex:
    """Read a whole session file into a fresh index, in whatever format it is (with its sub-agent files); of a file
    of many sessions (OpenCode's database or storage folder), the one `session_id` names, or its only one."""
    path = os.path.abspath(os.fspath(session_file))
    if (detect.store_file(path) is not None or os.path.isdir(path)) and os.path.exists(path):
        held = sessions_of_file(Library(os.path.dirname(path), follow_symlinks=True, host=host), path)
        chosen = [s for s in held if session_id in (None, s.id, s.name)]
        if len(chosen) == 1:
            return chosen[0]
        if held:
            ids = ", ".join(s.id for s in held)
            asked = f"no session {session_id!r}" if session_id else f"{len(held)} sessions"
            raise NoSuchSession(f"{os.path.basename(path)} holds {asked}: give one of {ids}")
        if os.path.isdir(path):
            raise NoSuchSession(f"{os.path.basename(path)} is a folder, not a file of sessions (the sessions of a "
                                "folder: agentview serve, or share --dir)")
    if Library.is_session_file(path) and os.path.isfile(path):
        session = open_file(Library(os.path.dirname(path), follow_symlinks=True, host=host), path)
        if session is not None:
            return session
    name = os.path.basename(path)
    session = SessionIndex(session_id_for(name), path, name, host=host)
    result = reader_for(path).read()
    session.ingest(result.lines)
    if result.error:
        session.file_problem(result.error)
    return session


class SessionViewer:
    """Perspectives of one session file: agents, transcripts, dialog, causality."""

    def __init__(self, session_file: str | os.PathLike):
        self.index = load_index(session_file)

    def _known(self, agent_id: str) -> str:
        if agent_id not in self.index.agents:
            raise KeyError(f"no agent {agent_id!r} in this session")
        return agent_id

    def list_agents(self) -> dict[str, str]:
        """{agent_id: name} for every agent, implicit ones included."""
        return queries.agent_names(self.index)

    def get_transcript(self, agent_id: str) -> list[Event]:
        """The agent's transcript_entry events in file order."""
        return queries.transcript(self.index, self._known(agent_id))

    def extract_dialog(self, agent_ids: list[str]) -> list[Event]:
        """The distinct messages among the agents, each once (grouped by substance)."""
        known = [self._known(a) for a in agent_ids]
        return [item["event"] for item in dialogs.dialog(self.index, known)["items"]]

    def extract_agent_perspective(self, agent_id: str, include_subagents: bool = False) -> str:
        """What the agent heard (and from whom), did, received and said, as text."""
        return queries.perspective_text(self.index, self._known(agent_id), include_subagents)

    def build_causality_index(self) -> dict[str, str | list[str]]:
        """{message_id: parent}: substance, else cause, else a tool result's call message."""
        return causality.causality_index(self.index)

    def trace_message_flow(self, message_id: str) -> list[Event]:
        """The causality chain of a message, oldest to newest."""
        return causality.causality_chain(self.index, message_id)

    def trace_content_references(self, content_msg_id: str) -> list[Event]:
        """Every transcript entry whose substance chain reaches the message, in file order."""
        return causality.references(self.index, content_msg_id)
