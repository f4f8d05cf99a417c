"""The Flask application factory: per-app state, security, the blueprints, headers and the access log.

Only the command line, session entry points and tests import this module; blueprints reach the app's
state through state.py.
"""

from __future__ import annotations

import logging
import os
from datetime import datetime, timezone

from flask import Flask, request

from viewer.core import foreground, jsonio
from viewer.files.tailer import size_text
from viewer.index import usage
from viewer.library.library import Library
from viewer.library.watcher import Watcher
from viewer.mcp import http as mcp_http
from viewer.reads import costs, provenance
from viewer.search import count as search_count
from viewer.store import session_cache

from . import (
    api,
    asof,
    colours,
    entry_cache,
    entry_parts,
    exports,
    hooks,
    images,
    pages,
    pictures,
    render,
    search_views,
    security,
    text_filters,
)
from .endpoints import LIVE_ENDPOINTS
from .errors import register_error_pages
from .resources import resource_dir
from .state import KEY, AgentView

access_log = logging.getLogger("agentview.access")


def ago(t: float, now: float) -> str:
    """How long before `now` a time was, as people say it: "just now", "3 min ago", "2 h ago", "5 days ago"."""
    seconds = max(0, now - t)
    for unit, size in (("day", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            n = int(seconds // size)
            return f"{n} {unit}{'s' if unit == 'day' and n != 1 else ''} ago"
    return "just now"


def _served_first(wsgi_app):
    """Count every request as under way while the app makes its answer, so that reading and indexing give way
    to it (see foreground). Behind `agentview serve` a request is counted longer, from its headers until waitress
    has written its answer (web/channel.py); this counts it under any other WSGI server too."""
    def counted(environ, start_response):
        with foreground.serving():
            return wsgi_app(environ, start_response)
    return counted


def create_app(
    root: str | os.PathLike, watch: bool = True, polling: bool = False, *, follow_symlinks: bool = False,
    redact: bool = True, token: str | None = None, allowed_hosts: frozenset[str] | None = security.LOOPBACK_NAMES,
    cache_dir: str | None = None,
) -> Flask:
    """An app serving every session below `root`; with `watch`, kept live by a Watcher.

    Safe by default: answers only for loopback host names, masks secrets, reads only files inside
    `root`. `token`, when given, is required of every request (see security.install). `cache_dir`, when
    given, keeps sessions between runs there (see session_cache); never inside `root`.
    """
    app = Flask(__name__, template_folder=resource_dir("templates"), static_folder=resource_dir("static"))
    app.config["AGENT_PAGE_SIZE"] = 200
    app.config["DIALOG_PAGE_SIZE"] = 200
    app.config["SEARCH_COUNT_BUDGET"] = search_count.COUNT_BUDGET  # looks a search page's total makes at most
    security.install(app, token=token, allowed_hosts=allowed_hosts, redact=redact)
    library = Library(root, follow_symlinks=follow_symlinks, cache=session_cache.for_folder(cache_dir, root))
    watcher = None
    if watch:
        watcher = Watcher(library, polling=polling).start()
    else:
        library.scan()
    app.extensions[KEY] = AgentView(library, watcher)
    app.wsgi_app = _served_first(app.wsgi_app)

    for blueprint in (pages.bp, api.bp, search_views.bp, pictures.bp, exports.bp, hooks.bp, images.bp, mcp_http.bp):
        app.register_blueprint(blueprint)
    register_error_pages(app)
    app.jinja_env.filters["pretty_json"] = lambda value: jsonio.text(value, indent=True)
    app.jinja_env.filters["isotime"] = lambda t: datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    app.jinja_env.filters["word_diff"] = provenance.word_diff
    app.jinja_env.filters["size"] = size_text
    app.jinja_env.filters["ago"] = ago
    app.jinja_env.filters["colour_class"] = colours.colour_class
    app.jinja_env.filters["usd"] = costs.usd
    app.jinja_env.filters["context_fill"] = usage.context_fill
    text_filters.install(app.jinja_env)
    entry_parts.install(app.jinja_env)
    entry_cache.install(app)
    app.jinja_env.globals.update(link_url=render.link_url, as_of=asof.requested, as_of_banner=asof.banner,
                                 agent_colour=colours.agent_colour,
                                 indent_class=colours.indent_class, prices_note=costs.prices_note)
    app.url_defaults(asof.inject_at)  # links on a page frozen at event N stay at N

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
