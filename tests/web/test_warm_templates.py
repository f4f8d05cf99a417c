"""Once a served folder is read and indexed, the ingest thread matches each route once and compiles the pages'
templates: a person's first page or JSON of a session does not wait for them."""

from __future__ import annotations

import re
import re._compiler
import sys

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


def patterns_compiled(action) -> int:
    """How many regular expressions `action()` compiles on this thread (Python's pattern cache missed)."""
    made = 0

    def counted(frame, event, arg):
        nonlocal made
        made += event == "call" and frame.f_code is re._compiler.compile.__code__

    sys.setprofile(counted)
    try:
        action()
    finally:
        sys.setprofile(None)
    return made


def test_a_sessions_first_page_and_json_compile_no_pattern_of_their_route_once_the_server_was_idle(tmp_path):
    (tmp_path / "s.jsonl").write_bytes(dumps(created("c", "main")) + b"\n" + dumps(say("m", "main", "hello")) + b"\n")
    re.purge()  # as a fresh process finds it: no pattern of a route compiled yet (Werkzeug compiles at a first match)
    app = create_app(tmp_path, watch=True)
    try:
        wait_for(lambda: compiled(app) >= {"session.html"}, timeout=60)  # the routes are matched before them
        adapter = app.url_map.bind("localhost")
        for url, endpoint in (("/api/sessions/s", "api.session"), ("/s/s", "pages.session"),
                              ("/s/s/agents/main", "pages.agent")):
            assert patterns_compiled(lambda: adapter.match(url)) == 0, url
            assert adapter.match(url)[0] == endpoint
        client = app.test_client()
        assert client.get("/api/sessions/s").get_json()["id"] == "s"
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
