"""The templates' url_for, keeping the URLs no request changes but for the path the app is served under.

Links to the endpoints that never carry ?at=N (static files, the sessions list, usage, the live feeds: see
endpoints.py) depend on nothing else of the request, yet every page's frame prints a dozen of them, each costing a
url_for. They are made once per path the app is served under and kept.
"""

from __future__ import annotations

from collections.abc import Callable

from flask import request

from .endpoints import NO_AT_ENDPOINTS

KEPT = 1024  # URLs kept at most (a live feed's URL names a session), forgotten all at once past that


class FixedUrls:
    """url_for(endpoint, **values) as `build` (the app's url_for) makes it, kept for the endpoints of NO_AT_ENDPOINTS."""

    def __init__(self, build: Callable[..., str]):
        self._build = build
        self._kept: dict[tuple, str] = {}

    def __call__(self, endpoint: str, **values) -> str:
        if endpoint not in NO_AT_ENDPOINTS or "_external" in values or "_scheme" in values:  # the request's host
            return self._build(endpoint, **values)
        key = (request.root_path, endpoint, *values.items())
        try:
            return self._kept[key]
        except KeyError:
            pass
        except TypeError:  # a value that is not hashable (a list of values for one argument)
            return self._build(endpoint, **values)
        url = self._build(endpoint, **values)
        if len(self._kept) >= KEPT:
            self._kept.clear()
        self._kept[key] = url
        return url


def install(app) -> FixedUrls:
    """Make the templates' url_for keep fixed URLs; returns it, for the other helpers of the frame."""
    url_for = app.jinja_env.globals["url_for"] = FixedUrls(app.url_for)
    return url_for
