"""Per-app state: the Library an app serves and its Watcher, reached through current_app.extensions.

The one module blueprints use to find the app's data, so none of them imports the app factory.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import current_app

from viewer.library.library import Library
from viewer.library.watcher import Watcher

KEY = "agentview"  # app.extensions[KEY]; tests read it too


@dataclass
class AgentView:
    """Per-app state, kept in app.extensions["agentview"]."""

    library: Library
    watcher: Watcher | None


def state() -> AgentView:
    """This app's AgentView (inside a request)."""
    return current_app.extensions[KEY]


def library() -> Library:
    return state().library


def watched_library() -> Library:
    """This app's Library, its ingest thread started again first if it died (the sessions list asks: the
    page a user reloads when nothing seems to change)."""
    view = state()
    if view.watcher is not None:
        view.watcher.ensure_alive()
    return view.library
