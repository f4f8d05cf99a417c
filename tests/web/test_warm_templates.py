"""Once a served folder is read and indexed, the ingest thread matches each route once and compiles the pages'
templates: a person's first page or JSON of a session does not wait for them."""

from __future__ import annotations

import re
import re._compiler
import sys
import urllib.parse

from waitress.adjustments import Adjustments
from waitress.parser import HTTPRequestParser

from conftest import wait_for
from events import created, dumps, say
from viewer.web.app import close_app, create_app


def compiled(app) -> set[str]:
    return {name for _, name in app.jinja_env.cache.keys()}


def test_the_pages_templates_are_compiled_while_the_server_is_idle(tmp_path):
    (tmp_path / "s.jsonl").write_bytes(dumps(created("c", "main")) + b"\n" + dumps(say("m", "main", "hello")) + b"\n")
    app = create_app(tmp_path, watch=True)
    try:
        wanted = {name for name in app.jinja_env.list_templates() if name.endswith(".html")}
        assert {"session.html", "base.html", "agent.html", "search.html"} <= wanted
        wait_for(lambda: compiled(app) >= wanted, timeout=60)
        client = app.test_client()
        assert client.get("/api/sessions").get_json()["sessions"]  # the session was read meanwhile
    finally:
        close_app(app)


def calls_of(code, action) -> int:
    """How many times `action()` runs `code` (a function's code object) on this thread."""
    made = 0

    def counted(frame, event, arg):
        nonlocal made
        made += event == "call" and frame.f_code is code

    sys.setprofile(counted)
    try:
        action()
    finally:
        sys.setprofile(None)
    return made


COMPILES = re._compiler.compile.__code__  # a pattern compiled: Python's pattern cache missed
ESCAPES_TABLE = next(c for c in urllib.parse.unquote_to_bytes.__code__.co_consts if getattr(c, "co_name", "") ==
                     "<dictcomp>")  # urllib making its table of escapes, at the first it unquotes


def test_a_sessions_first_page_and_json_compile_nothing_for_their_url_once_the_server_was_idle(tmp_path):
    (tmp_path / "s.jsonl").write_bytes(dumps(created("c", "main")) + b"\n" + dumps(say("m", "main", "hi")) + b"\n")
    # As a fresh process finds them: Werkzeug compiles a route's patterns at its first match, urllib its table of
    # escapes at the first path with one the server unquotes
    re.purge()
    urllib.parse._hextobyte = None
    app = create_app(tmp_path, watch=True)
    try:
        wait_for(lambda: compiled(app) >= {"session.html"}, timeout=60)  # the idle work before the templates is done
        adapter = app.url_map.bind("localhost")
        for url, endpoint in (("/api/sessions/%73", "api.session"), ("/s/%73", "pages.session"),
                              ("/s/%73/agents/main", "pages.agent")):
            request = HTTPRequestParser(Adjustments())  # as the server reads it (%73: an escaped "s")
            assert calls_of(ESCAPES_TABLE, lambda: request.received(
                f"GET {url} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())) == 0, url
            assert calls_of(COMPILES, lambda: adapter.match(request.path)) == 0, url
            assert adapter.match(request.path) == (endpoint, {"session_id": "s", **(
                {"agent_id": "main"} if endpoint == "pages.agent" else {})})
        assert app.test_client().get("/api/sessions/%73").get_json()["id"] == "s"
    finally:
        close_app(app)


def test_a_restart_loads_the_templates_an_earlier_run_compiled_and_refuses_what_it_did_not_write(tmp_path):
    folder, cache = tmp_path / "logs", tmp_path / "cache"
    folder.mkdir()
    (folder / "s.jsonl").write_bytes(dumps(created("c", "main")) + b"\n" + dumps(say("m", "main", "hello")) + b"\n")
    app = create_app(folder, watch=True, cache_dir=str(cache))
    try:
        wanted = {name for name in app.jinja_env.list_templates() if name.endswith(".html")}
        wait_for(lambda: compiled(app) >= wanted, timeout=60)
        first = app.test_client().get("/s/s").get_data()
    finally:
        close_app(app)

    def restarted():
        again = create_app(folder, watch=False, cache_dir=str(cache))
        made, compile_source = [], again.jinja_env.compile

        def counted(source, name=None, *args, **kwargs):
            made.append(name)
            return compile_source(source, name, *args, **kwargs)

        again.jinja_env.compile = counted
        return again, made

    app, made = restarted()
    try:
        assert app.test_client().get("/s/s").get_data() == first
        assert made == []  # session.html and all it includes loaded as the first run compiled them
    finally:
        close_app(app)
    for entry in cache.rglob("*.avc"):  # another hand wrote them: nothing of theirs is run
        data = bytearray(entry.read_bytes())
        data[-1] ^= 0xFF
        entry.write_bytes(bytes(data))
    app, made = restarted()
    try:
        assert app.test_client().get("/s/s").get_data() == first
        assert "session.html" in made
    finally:
        close_app(app)
