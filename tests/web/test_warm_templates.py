"""Once a served folder is read and indexed, the ingest thread compiles the pages' templates: a person's first
page of a session does not wait for them."""

from __future__ import annotations

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
