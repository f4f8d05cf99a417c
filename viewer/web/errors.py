"""Error answers: a page for a person, JSON for a script (any URL under /api/)."""

from __future__ import annotations

import logging

from flask import render_template, request
from werkzeug.exceptions import HTTPException

from .render import as_json, wants_json

log = logging.getLogger(__name__)


def register_error_pages(app) -> None:
    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException):
        if wants_json():
            return as_json({"error": error.name, "detail": error.description}, error.code or 500)
        return render_template("error.html", error=error), error.code

    @app.errorhandler(Exception)
    def unexpected_error(error: Exception):
        log.exception("error serving %s", request.path)
        if wants_json():
            return as_json({"error": "Internal Server Error", "detail": "see the server log"}, 500)
        return render_template("error.html", error=None), 500
