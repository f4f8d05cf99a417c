"""Per-app state: the Runtime an app runs on (its Library, Watcher, host) and what its views keep between
requests, reached through current_app.extensions.

The one module blueprints use to find the app's data, so none of them imports the app factory.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

from flask import current_app

from viewer.core.bounded_map import BoundedMap
from viewer.library.library import Library
from viewer.library.runtime import Runtime
from viewer.library.watcher import Watcher
from viewer.reads.folder_status import Counts

KEY = "agentview"  # app.extensions[KEY]; tests read it too


@dataclass
class AgentView:
    """Per-app state, kept in app.extensions["agentview"]."""

    runtime: Runtime
    snapshots: BoundedMap  # sessions as of event N (reads.asof)
    drawings: BoundedMap  # agent trees drawn for the agent pages (tree_outline)
    sums: weakref.WeakKeyDictionary = field(default_factory=weakref.WeakKeyDictionary)  # session -> tree_outline.Sums
    folder_counts: Counts = field(default_factory=Counts)  # what /api/status counts, recounted at most so often

    @property
    def library(self) -> Library:
        return self.runtime.library

    @property
    def watcher(self) -> Watcher | None:
        return self.runtime.watcher


def state() -> AgentView:
    """This app's AgentView (inside a request)."""
    return current_app.extensions[KEY]


def library() -> Library:
    return state().runtime.library


def watched_library() -> Library:
    """This app's Library, its ingest thread started again first if it died (the sessions list asks: the
    page a user reloads when nothing seems to change)."""
    runtime = state().runtime
    if runtime.watcher is not None:
        runtime.watcher.ensure_alive()
    return runtime.library
