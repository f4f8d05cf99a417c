"""The bridge between a WSGI request and the MCP SDK's ASGI transport: the SDK's session manager in a thread of its own,
with its own event loop (see http.py). Imported with the SDK on the first request to /mcp: asyncio and the SDK
are no part of what a server imports to list and search sessions."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading

ANSWER_SECONDS = 300  # a call that takes longer is answered 504 (the tool goes on in its thread)


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
