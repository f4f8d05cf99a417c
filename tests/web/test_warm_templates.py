"""Once a first page is shown and the served folder is read and indexed, the ingest thread compiles the pages'
templates: a person's first page of a session does not wait for them, and a server only asked for JSON never
compiles them."""

from __future__ import annotations

import threading

from conftest import wait_for
from events import created, dumps, say
from viewer.web.app import close_app, create_app


def compiled(app) -> set[str]:
    return {name for _, name in app.jinja_env.cache.keys()}


def test_the_pages_templates_are_compiled_while_the_server_is_idle_once_a_page_is_shown(tmp_path):
    (tmp_path / "s.jsonl").write_bytes(dumps(created("c", "main")) + b"\n" + dumps(say("m", "main", "hello")) + b"\n")
    app = create_app(tmp_path, watch=True)
    try:
        runtime = app.extensions["agentview"].runtime
        idle = threading.Event()
        runtime.when_idle(idle.set)  # after whatever was asked of idle time before it
        wanted = {name for name in app.jinja_env.list_templates() if name.endswith(".html")}
        assert {"session.html", "base.html", "agent.html", "search.html"} <= wanted
        client = app.test_client()
        assert client.get("/api/sessions").get_json()["sessions"]
        assert client.get("/api/search?q=hello").get_json()["results"]
        assert idle.wait(60)
        assert compiled(app) == set()  # JSON only: nothing to compile
        assert client.get("/").status_code == 200  # a person looks: the sessions page compiles its own at once ...
        wait_for(lambda: compiled(app) >= wanted, timeout=60)  # ... and the rest are compiled meanwhile
    finally:
        close_app(app)
