"""/mcp on the viewer's own port: the MCP server over Streamable HTTP, behind the app's token, Host and Origin checks.

The viewer is WSGI (Flask under waitress), the SDK's transport ASGI: the SDK's session manager runs in its
stateless JSON-response mode (one POST, one JSON-RPC exchange, nothing held open) on a thread with its own event
loop, and this view hands it each request as one ASGI call. The SDK, slow to import, loads on the first request.
"""

from __future__ import annotations

import threading

from flask import Blueprint, Response, abort, current_app, request

from viewer.web import security, state

bp = Blueprint("mcp", __name__)
KEY = "agentview_mcp"  # app.extensions[KEY]: the app's Bridge, made on the first request
MAX_BODY = 4 * 1024 * 1024  # the SDK's own limit of a request's body
_making = threading.Lock()


def _bridge():
    """The app's Bridge (bridge.py), made on the first request: the SDK and asyncio load then, not at every start."""
    from .bridge import Bridge

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
