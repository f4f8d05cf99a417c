"""The writer of seed 000: agents that log a session the viewer reads.

Imports run one way: log (LoggedString, SessionLog: ids, registry, one flushed line per
event) <- agent (Agent, ScriptedModel) <- session (Session, load_session: agents rebuilt from
a log) and tools (task, discuss, whisper, hooks, gates) <- demo (the scripted live demo).
The writer imports nothing from the reading side of the viewer.
"""
