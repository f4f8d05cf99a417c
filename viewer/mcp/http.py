"""/mcp on the viewer's own port: the MCP server over Streamable HTTP, behind the app's token, Host and Origin checks.

The viewer is WSGI (Flask under waitress), the SDK's transport ASGI: the SDK's session manager runs in its
stateless JSON-response mode (one POST, one JSON-RPC exchange, nothing held open) on a thread with its own event
loop, and this view hands it each request as one ASGI call. The SDK, slow to import, loads on the first request.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading

from flask import Blueprint, Response, abort, current_app, request

from viewer.web import security, state

bp = Blueprint("mcp", __name__)
KEY = "agentview_mcp"  # app.extensions[KEY]: the app's Bridge, made on the first request
MAX_BODY = 4 * 1024 * 1024  # the SDK's own limit of a request's body
ANSWER_SECONDS = 300  # a call that takes longer is answered 504 (the tool goes on in its thread)
_making = threading.Lock()


class Bridge:
    """The SDK's session manager running in a thread of its own; `answer` hands it one HTTP request."""

    def __init__(self, app):
        from mcp.server.transport_security import TransportSecuritySettings

        from .context import Viewer
        from .server import build

        logging.getLogger("mcp").setLevel(logging.WARNING)  # not a line a request in the viewer's log (its INFO)
        server = build(Viewer(app))
        # Host and Origin are checked by the app, with its own allowlist (the SDK's would know only loopback)
        server.streamable_http_app(stateless_http=True, json_response=True,
                                   transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
        self.manager = server.session_manager
        self.loop = asyncio.new_event_loop()
        self._stop: asyncio.Event | None = None  # set by `close`: the session manager stops, then the thread ends
        started = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(started,), name="agentview-mcp", daemon=True)
        self.thread.start()
        if not started.wait(30):
            raise RuntimeError("the MCP session manager did not start")

    def _run(self, started: threading.Event) -> None:
        async def serve():
            self._stop = asyncio.Event()
            async with self.manager.run():
                started.set()
                await self._stop.wait()  # until the app's runtime closes (see `close`)

        try:
            self.loop.run_until_complete(serve())
        finally:
            self.loop.close()

    def close(self) -> None:
        """Stop the session manager and end its thread (the app's runtime closes)."""
        if self.thread.is_alive() and self._stop is not None:
            self.loop.call_soon_threadsafe(self._stop.set)
        self.thread.join(30)

    def answer(self, scope: dict, body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        # Handed over from an empty context: the call must not inherit this request's Flask context (its tools
        # run in a request context of their own, see Viewer.run) nor its masking.
        handed = contextvars.Context().run(asyncio.run_coroutine_threadsafe, self._call(scope, body), self.loop)
        return handed.result(ANSWER_SECONDS)

    async def _call(self, scope: dict, body: bytes):
        given = False
        answered = {"status": 500, "headers": [], "body": []}

        async def receive():
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.Event().wait()  # the client stays connected until the answer is sent

        async def send(message):
            if message["type"] == "http.response.start":
                answered["status"], answered["headers"] = message["status"], message.get("headers", [])
            elif message["type"] == "http.response.body":
                answered["body"].append(message.get("body", b""))

        await self.manager.handle_request(scope, receive, send)
        return answered["status"], answered["headers"], b"".join(answered["body"])


def _bridge() -> Bridge:
    app = current_app._get_current_object()
    runtime = app.extensions[state.KEY].runtime
    bridge = app.extensions.get(KEY)
    if bridge is None and not runtime.closed:
        with _making:
            bridge = app.extensions.get(KEY)
            if bridge is None and not runtime.closed:
                bridge = app.extensions[KEY] = Bridge(app)
                runtime.on_close(bridge.close)  # its thread ends with the app's
    if runtime.closed:
        abort(503, "This viewer is shutting down.")
    return bridge


def _scope() -> dict:
    environ = request.environ
    headers = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in request.headers.items()]
    port = int(environ.get("SERVER_PORT") or 0)
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": request.method,
            "scheme": request.scheme, "path": request.path, "raw_path": request.path.encode("latin-1"),
            "query_string": request.query_string, "root_path": "", "headers": headers,
            "client": (request.remote_addr or "", 0), "server": (environ.get("SERVER_NAME", ""), port)}


_DROPPED = {b"content-length", b"transfer-encoding", b"connection"}  # the WSGI server writes its own


@bp.route("/mcp", methods=["GET", "POST"])  # GET: the SDK says no stream is offered (stateless)
def mcp():
    if not security.origin_allowed(request.headers.get("Origin"), current_app.config["ALLOWED_HOSTS"], request.host):
        abort(403, f"This viewer does not answer pages of {request.headers['Origin']!r}.")
    if (request.content_length or 0) > MAX_BODY:
        abort(413, f"A request to /mcp holds at most {MAX_BODY:,} bytes.")
    body = request.stream.read(MAX_BODY + 1)
    if len(body) > MAX_BODY:
        abort(413, f"A request to /mcp holds at most {MAX_BODY:,} bytes.")
    try:
        status, headers, answer = _bridge().answer(_scope(), body)
    except TimeoutError:
        abort(504, "The MCP call took too long.")
    return Response(answer, status=status, headers=[(name.decode("latin-1"), value.decode("latin-1"))
                                                    for name, value in headers if name.lower() not in _DROPPED])
