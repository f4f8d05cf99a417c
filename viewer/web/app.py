"""The Flask application factory: per-app state, security, the blueprints, headers and the access log.

Only the command line, session entry points and tests import this module; blueprints reach the app's
state through state.py.
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import re
import weakref
from datetime import datetime, timezone
from urllib.parse import unquote_to_bytes

from flask import Flask, request
from werkzeug.exceptions import HTTPException
from werkzeug.routing import Map, RoutingException

from viewer.core import jsonio, pricing
from viewer.core.foreground import Foreground
from viewer.core.tuning import Tuning
from viewer.files.tailer import size_text
from viewer.index import usage
from viewer.library.runtime import Runtime
from viewer.mcp import http as mcp_http
from viewer.reads import asof as asof_reads
from viewer.reads import costs, provenance, queries
from viewer.search import count as search_count

from . import (
    api,
    asked,
    compare_views,
    entry_cache,
    entry_parts,
    exports,
    hooks,
    images,
    jinja_env,
    pages,
    pictures,
    render,
    search_views,
    security,
    session_list,
    shell,
    text_filters,
    timeline_views,
    tree_outline,
    tree_rows,
    usage_views,
)
from .endpoints import LIVE_ENDPOINTS
from .errors import register_error_pages
from .resources import resource_dir
from .state import KEY, AgentView

log = logging.getLogger("agentview")
access_log = logging.getLogger("agentview.access")


def _served_first(wsgi_app, foreground: Foreground):
    """Count every request as under way while the app makes its answer, so that reading and indexing give way
    to it (see foreground). Behind `agentview serve` a request is counted longer, from its headers until waitress
    has written its answer (web/channel.py); this counts it under any other WSGI server too."""
    serving = foreground.serving

    def counted(environ, start_response):
        with serving():
            return wsgi_app(environ, start_response)
    return counted


def _close_if_alive(runtime: weakref.ref) -> None:
    alive = runtime()
    if alive is not None:
        alive.close()


def close_app(app: Flask) -> None:
    """Stop what the app runs (its Runtime: ingest thread, watcher, worker processes, interpreter settings)."""
    view: AgentView = app.extensions[KEY]
    view.runtime.close()


_ARGUMENT = re.compile(r"<[^>]*>")  # a rule's variable part, as `<converter:name>`


def _matching_routes(url_map: Map) -> None:
    """Each route matched once, by a URL of its shape: Werkzeug compiles the pattern of a route's variable part at
    its first match (0.1-0.15 ms of a restart's first session page or JSON; Python's pattern cache keeps it). Any
    answer (a 404, a 405, a redirect) has compiled the patterns tried on the way."""
    adapter = url_map.bind("localhost")
    for rule in url_map.iter_rules():
        try:
            adapter.match(_ARGUMENT.sub("x", rule.rule))
        except (HTTPException, RoutingException):
            pass


def _unquoting_once() -> None:
    """An escaped path unquoted once, as the server unquotes each request's path: urllib makes its table of escapes
    at the first it meets (0.13 ms of the first request whose URL holds one: a session id's colon escaped by its
    client, as Python's `quote` does)."""
    unquote_to_bytes(b"/s/%41")


def idle_work(app: Flask) -> list:
    """What the ingest thread does for the app once idle, an action a step, so that a person's first page or JSON
    of a kind does not wait for it: its routes matched once and an escaped path unquoted, then each page's template
    compiled (or loaded as an earlier run compiled it; a few hundred ms for them all)."""
    env = app.jinja_env
    return [functools.partial(_matching_routes, app.url_map), _unquoting_once,
            *[functools.partial(env.get_template, name) for name in env.list_templates() if name.endswith(".html")]]


def create_app(
    root: str | os.PathLike, watch: bool = True, polling: bool = False, *, follow_symlinks: bool = False,
    redact: bool = True, token: str | None = None, allowed_hosts: frozenset[str] | None = security.LOOPBACK_NAMES,
    cache_dir: str | None = None, tuning: Tuning | None = None, prices: pricing.Prices | None = None,
) -> Flask:
    """An app serving every session below `root`; with `watch`, kept live by a Watcher.

    Safe by default: answers only for loopback host names, masks secrets, reads only files inside
    `root`. `token`, when given, is required of every request (see security.install). `cache_dir`, when
    given, keeps sessions between runs there (see session_cache); never inside `root`. `tuning`: its knobs
    (core.tuning); `prices`: the prices costs are shown at (genai-prices' with AGENTVIEW_PRICES over them).
    What it runs is stopped by `close_app(app)`, else when the interpreter exits.
    """
    app = Flask(__name__, template_folder=resource_dir("templates"), static_folder=resource_dir("static"))
    app.jinja_environment = jinja_env.FlatGlobalsEnvironment  # before the app's jinja_env is first made
    app.config["AGENT_PAGE_SIZE"] = 200
    app.config["DIALOG_PAGE_SIZE"] = 200
    app.config["SEARCH_COUNT_BUDGET"] = search_count.COUNT_BUDGET  # looks a search page's total makes at most
    security.install(app, token=token, allowed_hosts=allowed_hosts, redact=redact)
    runtime = Runtime(root, watch=watch, polling=polling, follow_symlinks=follow_symlinks, cache_dir=cache_dir,
                      tuning=tuning, prices=prices)
    at_exit = functools.partial(_close_if_alive, weakref.ref(runtime))  # not kept alive by it
    atexit.register(at_exit)
    runtime.on_close(lambda: atexit.unregister(at_exit))
    app.extensions[KEY] = AgentView(runtime, runtime.keep(asof_reads.snapshots(runtime.tuning.asof_cache_events)),
                                    runtime.keep(tree_outline.drawings()))
    app.wsgi_app = _served_first(app.wsgi_app, runtime.foreground)

    for blueprint in (pages.bp, api.bp, search_views.bp, compare_views.bp, pictures.bp, timeline_views.bp, exports.bp,
                      hooks.bp, images.bp, usage_views.bp, mcp_http.bp):
        app.register_blueprint(blueprint)
    register_error_pages(app)
    app.jinja_env.filters["pretty_json"] = lambda value: jsonio.text(value, indent=True)
    app.jinja_env.filters["isotime"] = lambda t: datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    app.jinja_env.filters["word_diff"] = provenance.word_diff
    app.jinja_env.filters["size"] = size_text
    app.jinja_env.filters["usd"] = costs.usd
    app.jinja_env.filters["context_fill"] = lambda event: usage.context_fill(event, runtime.host.prices)
    text_filters.install(app.jinja_env)
    shell.install(app)
    entry_parts.install(app.jinja_env)
    entry_cache.install(app)
    app.jinja_env.globals.update(link_url=render.link_url, as_of=asked.requested, as_of_banner=asked.banner,
                                 prices_note=lambda: costs.prices_note(runtime.host.prices),
                                 status_meanings=queries.STATUS_MEANINGS, tree_rows=tree_rows.tree_rows,
                                 cost_html=tree_rows.cost_text, node_cost_html=tree_rows.node_cost,
                                 node_failures_html=tree_rows.node_failures, node_status_html=tree_rows.node_status,
                                 picker_items=tree_rows.picker_items,
                                 session_list_rows=session_list.session_rows,
                                 format_badge=session_list.format_badge)
    app.url_defaults(asked.inject_at)  # links on a page frozen at event N stay at N
    if runtime.library.cache is not None:  # a restart loads the templates an earlier run compiled
        try:
            app.jinja_env.bytecode_cache = jinja_env.KeptTemplates(runtime.library.cache.folder)
        except OSError as error:  # then compiled at every start, as without a cache
            log.warning("not keeping compiled templates: %s", error)
    runtime.when_idle(*idle_work(app))

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
