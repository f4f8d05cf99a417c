"""`agentview mcp DIR`: the MCP server over stdin and stdout, as an agent CLI launches it.

The folder is read and watched as `agentview serve` does (an app of its own, never listening on a port), so answers
follow sessions as they grow. stdout carries the protocol only: every log line goes to stderr.
"""

from __future__ import annotations

import anyio

from viewer.web.app import close_app, create_app

from .context import Viewer
from .server import build


def run(folder: str, *, base_url: str = "", redact: bool = True, polling: bool = False,
        follow_symlinks: bool = False, cache_dir: str | None = None) -> None:
    app = create_app(folder, polling=polling, follow_symlinks=follow_symlinks, redact=redact, cache_dir=cache_dir)
    try:
        anyio.run(build(Viewer(app, base_url)).run_stdio_async)
    finally:
        close_app(app)  # its ingest thread, watcher and worker processes, and the interpreter's settings
