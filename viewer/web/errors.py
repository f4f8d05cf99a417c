"""Error answers: a page for a person, JSON for a script (any URL under /api/)."""

from __future__ import annotations

import logging

from flask import render_template, request
from werkzeug.exceptions import HTTPException

from .asked import NotFoundYet
from .render import as_json, wants_json

log = logging.getLogger(__name__)


def register_error_pages(app) -> None:
    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException):
        if isinstance(error, NotFoundYet):
            error = error.answered()
        # Retry-After: a session still being read answers 503 until it holds what was asked (asked.NotFoundYet)
        headers = {k: v for k, v in error.get_headers() if k == "Retry-After"}
        if wants_json():
            return as_json({"error": error.name, "detail": error.description}, error.code or 500), headers
        return render_template("error.html", error=error, retry_after=headers.get("Retry-After")), error.code, headers

    @app.errorhandler(Exception)
    def unexpected_error(error: Exception):
        log.exception("error serving %s", request.path)
        if wants_json():
            return as_json({"error": "Internal Server Error", "detail": "see the server log"}, 500)
        return render_template("error.html", error=None), 500
