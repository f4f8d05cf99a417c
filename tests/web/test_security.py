"""Opening a log cannot hurt: Host allowlist, access token, secret masking, ids that stay inside DIR, read-only."""

import hashlib
import http.client
import json
import os
import urllib.parse

import pytest

from conftest import serve, write_events
from events import calls, created, say, tool_call, user
from viewer.web.app import create_app
from viewer.core.redact import mask, mask_json

SECRETS = {
    "openai": "sk-proj-Ab3dE5gH7jK9mN1pQ3sT5vW7",
    "anthropic": "sk-ant-api03-Zx8Cv6Bn4Mq2Wr0Ty9Ui7Op5",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "github": "ghp_aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1wX2",
    "slack": "xoxb-123456789012-abcdefABCDEF",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
}


def secret_session(folder):
    text = (f"Authorization: Bearer {SECRETS['bearer']}\nx-api-key: hunter2-the-key\n"
            f"Cookie: session=s3cr3t-cookie; theme=dark\nkeys: {SECRETS['openai']} {SECRETS['anthropic']} "
            f"{SECRETS['aws']} {SECRETS['github']} {SECRETS['slack']}")
    return write_events(folder / "secrets.jsonl", [
        created("m1", "a", name="Agent"),
        user("m2", "a", text),
        calls("m3", "a", tool_call("c1", "http", headers={"Authorization": f"Bearer {SECRETS['bearer']}"})),
    ])


def leaked(body: str) -> list[str]:
    return [s for s in [*SECRETS.values(), "hunter2-the-key", "s3cr3t-cookie"] if s in body]


# --- secret masking -----------------------------------------------------------------------------

@pytest.mark.parametrize("text, shown", [
    ("Authorization: Bearer abc.def.ghi", "Authorization: [masked]"),
    ('{"x-api-key": "k-123456"}', '{"x-api-key": "[masked]"}'),
    ("set-cookie: id=42; HttpOnly", "set-cookie: [masked]"),
    ("use sk-proj-Ab3dE5gH7jK9mN1pQ3sT5vW7 now", "use sk-p…[masked] now"),
    ("AKIAIOSFODNN7EXAMPLE", "AKIA…[masked]"),
    ("token ghp_aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1wX2.", "token ghp_…[masked]."),
    ("xoxp-1234567890-abcdef", "xoxp…[masked]"),
    ("curl -H 'Authorization: Bearer xyz123'", "curl -H 'Authorization: [masked]'"),
    ("api_key=` through the end of the line", "api_key=` through the end of the line"),
    ("api_key=[REDACTED]", "api_key=[REDACTED]"),  # a hook's own redaction stays as it is
    ("nothing secret here: sk-short", "nothing secret here: sk-short"),
    ("-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----!", "[masked]!"),
])
def test_mask(text, shown):
    assert mask(text) == shown


KEY = SECRETS["openai"]


@pytest.mark.parametrize("text", [
    f"\x1b[32m{KEY}\x1b[0m", f"\f{KEY}", f"\x01{KEY}", f"key{KEY}", f"9{KEY}", f"é{KEY}",  # glued or after an escape
    "\x1b[32mAKIAIOSFODNN7EXAMPLE", "xAKIAIOSFODNN7EXAMPLEQ", f"{KEY}xyz",
    "password:\n  Hunter2CorrectHorse", "password:\r\n\tHunter2CorrectHorse", "DB_PASSWORD=Hunter2CorrectHorse",
    "\x1b[1mpassword: Hunter2CorrectHorse", "x-api-key: k3yV4lue0123(query=password: Hunter2CorrectHorse)",
    "-----BEGIN PRIVATE KEY-----\nMIIEHunter2CorrectHorse\nmore",
    'x="-----BEGIN EC PRIVATE KEY-----\nMIIEHunter2CorrectHorse',
    "/s/x/messages/password%3A%0A%20%20Hunter2CorrectHorse?agent=a", "fpassword~3A~0A~20~20Hunter2CorrectHorse",
    "?agent=Authorization%3A+Bearer+Hunter2CorrectHorse",
])
def test_mask_finds_keys_whatever_is_around_them(text):
    """In text and in serialized JSON (where \x1b is \\u001b, \\f stays \\f, a newline is \\n, twice
    escaped inside JSON text held in JSON)."""
    for needle in ("Hunter2CorrectHorse", KEY[8:24], "IOSFODNN7EXAMPLE"):
        assert needle not in mask(text), text
        assert needle not in mask_json(json.dumps({"a": text}).encode()).decode(), text
        assert needle not in mask_json(json.dumps({"a": json.dumps({"b": text})}).encode()).decode(), text
    json.loads(mask_json(json.dumps({"a": text}).encode()))  # still valid JSON


@pytest.mark.parametrize("text", [
    "tasks-for-the-next-agent-in-line", "asks-whether-the-answer-is-right", "Eurasiandevelopmentbank",
    "EURASIANDEVELOPMENTBANK", "asiandevelopmentbank", "pallbearer carrying the weight", "the password is not here",
    "passwordless login",
    "Please type your password: ", "nothing secret here: sk-short", "-----BEGIN CERTIFICATE-----\nMIIB",
])
def test_mask_leaves_ordinary_words_alone(text):
    """A key shape glued to a word is a key only when its random part holds a digit, as generated keys do."""
    assert mask(text) == text
    assert mask_json(json.dumps({"a": text}).encode()) == json.dumps({"a": text}).encode()


def test_a_problem_excerpt_never_ends_inside_a_secret():
    from viewer.core.problems import EXCERPT_CHARS, excerpt

    for padding in range(80, 130):
        line = ('{"content": "' + "y" * padding + KEY + " and more " * 20).encode()
        shown = excerpt(line)
        assert len(shown) <= EXCERPT_CHARS + 1 and shown.endswith("…")
        assert KEY in shown or KEY[:4] not in shown.replace('{"content"', ""), (padding, shown)
        assert mask(shown).count(KEY[8:16]) == 0
    pem = b'{"key": "-----BEGIN PRIVATE KEY-----\\nMIIE' + b"A" * 1000  # no END line, longer than the window
    assert "MIIE" not in excerpt(pem) and excerpt(pem).startswith('{"key": "')


def test_a_role_that_is_not_a_string_is_printed_as_masked_json(tmp_path):
    write_events(tmp_path / "odd.jsonl", [created("m1", "a"), user("m2", "a", "hi") | {"role": {"as": KEY, "n": 1}}])
    client = create_app(tmp_path, watch=False).test_client()
    for url in ["/s/odd/messages/m2", "/s/odd/agents/a", "/api/sessions/odd/messages/m2", "/s/odd/export/trace",
                "/s/odd/export/dot", "/s/odd/export/json", "/s/odd/export/markdown?agent=a"]:
        body = client.get(url).get_data(as_text=True)
        assert KEY[4:20] not in body and "{'as'" not in body, url
    page = client.get("/s/odd/messages/m2").get_data(as_text=True)
    assert "{&#34;as&#34;:&#34;sk-p…[masked]&#34;,&#34;n&#34;:1}" in page  # printed as JSON, masked


def test_the_token_filter_masks_token_parameters_and_the_token_itself():
    import logging

    from viewer.web.security import HideTokens

    record = logging.LogRecord("agentview.access", logging.INFO, __file__, 1, "%s %s %s",
                               ("GET", "/s/x?a=1&token=abc-def&b=2", 401), None)
    HideTokens("s3cret-token").filter(record)
    assert record.getMessage() == "GET /s/x?a=1&token=[masked]&b=2 401"
    record = logging.LogRecord("waitress", logging.INFO, __file__, 1, "saw s3cret-token in %s", ("Referer",), None)
    HideTokens("s3cret-token").filter(record)
    assert record.getMessage() == "saw [masked] in Referer"


def test_masking_serialized_json_keeps_it_valid():
    data = {"a": 'Authorization: Bearer tok"en\\x', "b": [f"{SECRETS['openai']}\\", 'password="p\\"w"'],
            "c": {"Cookie": "k=v; k2=v2"}, "d": "\u2603 x-api-key: abc\nnext line",
            "e": "Please type your password: ", "f": "a field after it", "g": "password=", "h": "-x-",
            "k": "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----"}
    body = json.dumps(data).encode()
    masked = json.loads(mask_json(body))
    assert masked["c"]["Cookie"] == "[masked]" and masked["d"] == "\u2603 x-api-key: [masked]\nnext line"
    assert SECRETS["openai"] not in json.dumps(masked)
    assert masked["e"] == data["e"] and masked["f"] == data["f"] and masked["k"] == "[masked]"


def test_pages_and_api_mask_secrets_by_default_and_reveal_on_the_cookie_only(tmp_path):
    secret_session(tmp_path)
    client = create_app(tmp_path, watch=False).test_client()
    urls = ["/s/secrets/agents/a", "/s/secrets/messages/m2", "/s/secrets/messages/m3", "/s/secrets",
            "/api/sessions/secrets/agents/a", "/api/sessions/secrets/messages/m3", "/api/sessions/secrets/events",
            "/s/secrets/agents/a?reveal=1", "/api/sessions/secrets/agents/a?reveal=1"]  # no URL reveals
    for url in urls:
        body = client.get(url).get_data(as_text=True)
        assert leaked(body) == [], url
    page = client.get("/s/secrets/agents/a").get_data(as_text=True)
    assert "[masked]" in page and 'class="secrets-toggle" data-reveal="1"' in page

    client.set_cookie("agentview_reveal", "1")
    revealed = client.get("/s/secrets/agents/a")
    assert len(leaked(revealed.get_data(as_text=True))) == 8 and revealed.headers["Cache-Control"] == "no-store"
    assert "secrets shown" in revealed.get_data(as_text=True)
    assert len(leaked(client.get("/api/sessions/secrets/messages/m3").get_data(as_text=True))) == 1


def test_text_cut_short_on_a_page_is_masked_whole_first(tmp_path):
    """A preview or snippet cut through a secret must not show the part before the cut."""
    key = SECRETS["openai"]
    long_text = "x" * 262 + " " + key + " " + "y" * 600  # the 280-character preview ends inside the key
    write_events(tmp_path / "cut.jsonl", [
        created("m1", "a", name="Agent"),
        say("m2", "a", long_text),
        user("m3", "a", "x" * 140 + " " + key + " " + "y" * 40, substance="m2"),  # a snippet of 160 characters
        user("m4", "a", None, substance="m2") | {"tool_calls": [tool_call("c1", "http", auth=f"Bearer {key}")]},
    ])
    client = create_app(tmp_path, watch=False).test_client()
    for url in ["/s/cut/agents/a", "/s/cut/messages/m2"]:
        body = client.get(url).get_data(as_text=True)
        assert key[8:13] not in body and "Bearer" + " " + key[:8] not in body, url
    client.set_cookie("agentview_reveal", "1")
    assert key[8:17] in client.get("/s/cut/agents/a").get_data(as_text=True)


def test_no_redact_shows_everything_and_no_toggle(tmp_path):
    secret_session(tmp_path)
    client = create_app(tmp_path, watch=False, redact=False).test_client()
    page = client.get("/s/secrets/agents/a").get_data(as_text=True)
    assert len(leaked(page)) == 8 and "secrets-toggle" not in page


# --- who may ask --------------------------------------------------------------------------------

def test_only_allowed_host_names_are_answered(tmp_path):
    client = create_app(tmp_path, watch=False).test_client()
    for host in ["localhost", "127.0.0.1:8000", "localhost:1234", "[::1]:8000"]:
        assert client.get("/", headers={"Host": host}).status_code == 200, host
    for host in ["evil.example", "evil.example:8000", "127.0.0.1.evil.example", "localhost.evil.example:80"]:
        response = client.get("/api/sessions", headers={"Host": host})
        assert response.status_code == 400 and "does not answer" in response.get_json()["detail"], host


def raw_get(url: str, path: str, headers: dict | None = None):
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    connection.request("GET", path, headers=headers or {})
    response = connection.getresponse()
    return response.status, dict(response.getheaders()), response.read()


def test_a_server_reachable_from_other_machines_requires_its_token(tmp_path):
    secret_session(tmp_path)
    with serve(tmp_path, "--host", "0.0.0.0") as server:
        assert "?token=" in server.printed_url
        token = server.printed_url.split("?token=")[1]
        url = server.url.replace("0.0.0.0", "127.0.0.1")
        assert raw_get(url, "/api/sessions")[0] == 401
        assert raw_get(url, "/api/sessions?token=wrong")[0] == 401
        assert raw_get(url, "/static/agentview.js")[0] == 401
        status, headers, _ = raw_get(url, f"/s/secrets?token={token}&x=1")
        assert status == 302 and headers["Location"] == "/s/secrets?x=1"  # the token leaves the address bar
        cookie = headers["Set-Cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert raw_get(url, "/s/secrets", {"Cookie": cookie.split(";")[0]})[0] == 200
        assert raw_get(url, "/api/sessions", {"Authorization": f"Bearer {token}"})[0] == 200


def test_loopback_needs_no_token_and_refuses_foreign_host_names(tmp_path):
    with serve(tmp_path) as server:
        assert "token" not in server.printed_url
        assert raw_get(server.url, "/api/sessions")[0] == 200
        assert raw_get(server.url, "/api/sessions", {"Host": "attacker.example:80"})[0] == 400


# --- ids from URLs stay inside DIR ----------------------------------------------------------------

@pytest.mark.parametrize("path", [
    "/s/..", "/s/../etc", "/s/..%2F..%2Fetc%2Fpasswd", "/s/%2Fetc%2Fpasswd", "/s/%252e%252e%252fpasswd",
    "/s/..%5C..%5Cwindows", "/api/sessions/..%2Foutside", "/api/sessions/%2Ftmp%2Foutside",
    "/s/inside/agents/..%2F..%2Foutside", "/s/inside/messages/..%2F..%2F..%2Fetc%2Fpasswd",
    "/s/outside", "/static/..%2Foutside.jsonl", "/static/../../outside.jsonl", "/s/inside/../../outside",
])
def test_ids_from_urls_cannot_reach_outside_the_folder(tmp_path, path):
    write_events(tmp_path / "outside.jsonl", [say("o1", "x", "PRIVATE-OUTSIDE")])
    folder = tmp_path / "sessions"
    write_events(folder / "inside.jsonl", [say("m1", "a", "public")])
    client = create_app(folder, watch=False).test_client()
    response = client.get(path)
    assert response.status_code in (400, 404), (path, response.status_code)
    assert b"PRIVATE-OUTSIDE" not in response.data


# --- the server never writes ---------------------------------------------------------------------

def tree_state(folder):
    state = {}
    for dirpath, _, filenames in os.walk(folder):
        for name in filenames:
            path = os.path.join(dirpath, name)
            st = os.stat(path)
            state[path] = (st.st_mtime_ns, st.st_size, hashlib.sha256(open(path, "rb").read()).hexdigest())
    return state


def test_no_route_writes_moves_or_deletes_files(session_dir):
    secret_session(session_dir)
    app = create_app(session_dir, watch=False)
    methods = {m for rule in app.url_map.iter_rules() if rule.rule != "/mcp" for m in rule.methods}
    assert methods <= {"GET", "HEAD", "OPTIONS"}  # nothing is registered that could take a write
    # MCP's requests are POSTs (its protocol's); every tool it answers is read-only (tests/mcp)
    assert {m for rule in app.url_map.iter_rules() if rule.rule == "/mcp" for m in rule.methods} == {
        "GET", "HEAD", "OPTIONS", "POST"}
    before = tree_state(session_dir)
    client = app.test_client()
    for rule in app.url_map.iter_rules():
        url = rule.rule.replace("<session_id>", "research_team").replace("<path:agent_id>", "agent_writer")
        url = url.replace("<path:message_id>", "msg_113").replace("<path:filename>", "agentview.css")
        for method in ("GET", "POST", "PUT", "DELETE", "PATCH"):
            assert client.open(url, method=method).status_code < 500, (method, url)
    assert tree_state(session_dir) == before
