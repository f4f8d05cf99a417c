"""agentview: a local, live web viewer for multi-agent LLM session logs."""

__all__ = ["SessionViewer"]
__version__ = "0.1.0"


def __getattr__(name: str):
    # Imported when first asked for: `agentview serve` (and every module of the package) imports this package, and
    # the Python API's reading code is most of the pages' code, which a server only listing and searching never runs.
    if name == "SessionViewer":
        from viewer.reads.session_viewer import SessionViewer

        return SessionViewer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
