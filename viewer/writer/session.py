"""The writer side of seed 000: Session (a SessionLog that rebuilds its agents: `revive`) and load_session
(the whole agent tree rebuilt from a log).
"""

from __future__ import annotations

import os

from .agent import Agent
from .log import SessionLog, read_events, transcripts_of


class Session(SessionLog):
    """Event-stream backed state of a multi-agent system: ids, registry, logging, and its agents."""

    def revive(self, agent_id: str, **options) -> Agent:
        """The agent, from memory or rebuilt from the log with its whole transcript."""
        if agent_id in self.live:
            return self.live[agent_id]
        if agent_id not in self.registry:
            raise KeyError(f"no agent {agent_id!r} in this session")
        record = self.registry[agent_id]
        transcript = self.transcripts().get(agent_id, []) if os.path.exists(self.path) else []
        return Agent(self, init_prompt=transcript, agent_id=agent_id, name=record.name,
                     language_model=record.language_model, **options)


def load_session(session_file: str | os.PathLike, model=None, tools=None,
                 name: str | None = None) -> tuple[Agent, Session]:
    """(root agent, session): a fresh root for a new file, else the whole agent tree rebuilt.

    `model` and `tools` are given to the root and to every agent rebuilt from the log;
    `name` names a fresh root.
    """
    path = os.fspath(session_file)
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        session = Session(path)
        root = Agent(session, model=model, tools=tools, name=name)
        root.log_created()
        return root, session
    events = list(read_events(path))  # one read serves the counters, the registry and the transcripts
    session = Session._restore(path, events)
    transcripts = transcripts_of(events)
    agents = {
        agent_id: Agent(session, init_prompt=transcripts.get(agent_id, []), agent_id=agent_id, name=record.name,
                        language_model=record.language_model, model=model, tools=tools)
        for agent_id, record in session.registry.items()
    }
    roots = []
    for agent_id, agent in agents.items():  # registry order is the order of first appearance
        parent_id = session.registry[agent_id].parent_id
        if parent_id in agents and parent_id != agent_id:
            agents[parent_id].adopt(agent)
        else:
            roots.append(agent)
    return (roots or list(agents.values()))[0], session
