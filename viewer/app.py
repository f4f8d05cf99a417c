"""The Flask application factory."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from flask import Flask, current_app, request

from . import jsonio, security
from .library import Library
from .watcher import Watcher

access_log = logging.getLogger("agentview.access")
# Live feeds are requested every second by every open page: kept out of the access log.
LIVE_ENDPOINTS = {"pages.poll_sessions", "pages.poll_tree", "pages.poll_agent", "pages.poll_dialog", "api.events",
                  "search.poll"}


def _resource_dir(name: str) -> str:
    """templates/ and static/: inside the package when installed from a wheel, else the checkout's."""
    package = Path(__file__).resolve().parent
    installed = package / f"_{name}"
    return str(installed if installed.is_dir() else package.parent / name)


@dataclass
class AgentView:
    """Per-app state, kept in app.extensions["agentview"]."""

    library: Library
    watcher: Watcher | None


def create_app(
    root: str | os.PathLike, watch: bool = True, polling: bool = False, *, follow_symlinks: bool = False,
    redact: bool = True, token: str | None = None, allowed_hosts: frozenset[str] | None = security.LOOPBACK_NAMES,
) -> Flask:
    """An app serving every session below `root`; with `watch`, kept live by a Watcher.

    Safe by default: answers only for loopback host names, masks secrets, reads only files inside
    `root`. `token`, when given, is required of every request (see security.install).
    """
    app = Flask(__name__, template_folder=_resource_dir("templates"), static_folder=_resource_dir("static"))
    app.config["AGENT_PAGE_SIZE"] = 200
    app.config["DIALOG_PAGE_SIZE"] = 200
    security.install(app, token=token, allowed_hosts=allowed_hosts, redact=redact)
    library = Library(root, follow_symlinks=follow_symlinks)
    watcher = None
    if watch:
        watcher = Watcher(library, polling=polling).start()
    else:
        library.scan()
    app.extensions["agentview"] = AgentView(library, watcher)

    from . import api, flow_views, pages, search_views

    app.register_blueprint(pages.bp)
    app.register_blueprint(api.bp)
    app.register_blueprint(search_views.bp)
    app.register_blueprint(flow_views.bp)
    pages.register_error_pages(app)
    app.jinja_env.filters["pretty_json"] = lambda value: jsonio.text(value, indent=True)
    app.jinja_env.filters["isotime"] = lambda t: datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")

    @app.after_request
    def secure_and_log(response):
        # Log content is untrusted: no inline script, nothing from elsewhere, no sniffing.
        response.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
            "object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
        )
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        if request.endpoint not in LIVE_ENDPOINTS:
            access_log.info("%s %s %s", request.method, request.full_path.rstrip("?"), response.status_code)
        return response

    return app


def state() -> AgentView:
    """This app's AgentView (inside a request)."""
    return current_app.extensions["agentview"]


def watched_library() -> Library:
    """This app's Library, its ingest thread started again first if it died (the sessions list asks: the
    page a user reloads when nothing seems to change)."""
    view = state()
    if view.watcher is not None:
        view.watcher.ensure_alive()
    return view.library
