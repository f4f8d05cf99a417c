"""The templates' url_for, caching the URLs it made. A URL depends on nothing of the request but the path the app
is served under and the page's ?at=N (asked.inject_at; never for NO_AT_ENDPOINTS), and pages print the same links
again and again (the frame's static files and icons on every page, a live page's links on each reload), at a
url_for each.
"""

from __future__ import annotations

from collections.abc import Callable

from flask import current_app, request

from viewer.core.bounded_map import ClearedPast

from .endpoints import NO_AT_ENDPOINTS

CACHED = 4096  # URLs cached at most, all dropped at once past that


class CachedUrls:
    """url_for(endpoint, **values) as `build` (the app's url_for) makes it, cached by the path the app is served
    under, the request's ?at= and the arguments."""

    def __init__(self, build: Callable[..., str]):
        self._build = build
        self._cached: ClearedPast = ClearedPast(CACHED)

    def __call__(self, endpoint: str, **values) -> str:
        try:
            asked = request._get_current_object()
        except RuntimeError:  # no request: made as url_for makes it
            return self._build(endpoint, **values)
        if endpoint[:1] == "." or "_external" in values or "_scheme" in values:  # names the blueprint or the host
            return self._build(endpoint, **values)
        args = asked.args  # not args.get: a key it lacks raises (and catches) an HTTP error, at a cost
        at = args["at"] if "at" in args and endpoint not in NO_AT_ENDPOINTS else None
        # By type too: sub=True and sub=1 are equal keys but write different URLs.
        key = (asked.root_path, at, endpoint, *values.items(), *map(type, values.values()))
        try:
            return self._cached[key]
        except KeyError:
            pass
        except TypeError:  # a value that is not hashable (a list of values for one argument)
            return self._build(endpoint, **values)
        return self._cached.put(key, self._build(endpoint, **values))


def install(app) -> CachedUrls:
    """Make the templates' url_for cache what it makes; returns it, for the frame's other helpers."""
    url_for = app.jinja_env.globals["url_for"] = CachedUrls(app.url_for)
    return url_for


def url_for(endpoint: str, **values) -> str:
    """flask.url_for through the templates' cache (once `install`ed): the views' data objects carry the same
    links on every request too (a page's URL, its session's, the one url_for of render.urls_of)."""
    return current_app.jinja_env.globals["url_for"](endpoint, **values)
