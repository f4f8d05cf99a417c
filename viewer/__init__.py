"""agentview: a local, live web viewer for multi-agent LLM session logs."""

from viewer.reads.session_viewer import SessionViewer

__all__ = ["SessionViewer"]
__version__ = "0.1.0"
