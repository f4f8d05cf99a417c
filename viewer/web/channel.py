"""waitress, with each request counted as under way (see foreground) from when its headers arrive until its
answer is written, not only while the app makes it, and the connection of an answer without a body (a 204 poll)
kept open.

A request also waits for the GIL outside the app (parsed, handed to a thread, written); counted only inside it,
the ingest thread went on through those waits. A half-sent request is not counted. These subclasses rely on
waitress's internals: pyproject.toml pins waitress to the minor version they were tested against.
"""

from __future__ import annotations

from waitress import create_server
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser
from waitress.server import BaseWSGIServer
from waitress.task import WSGITask

from viewer.core.foreground import Foreground


class CountedRequest(HTTPRequestParser):
    """A request that counts itself under way in `foreground` (its server's app's) from when its headers are read
    until it is closed (waitress closes a request once its answer is written, or when its connection ends)."""

    counted = False
    foreground: Foreground  # set on the subclass each server makes (counted_server)

    def received(self, data):
        used = super().received(data)
        if not self.counted and (self.headers_finished or self.completed) and not self.empty:
            self.counted = True
            self.foreground.enter()
        return used

    def close(self):
        try:
            super().close()
        finally:
            self.uncount()

    def uncount(self) -> None:
        if self.counted:
            self.counted = False
            self.foreground.leave()


class KeptAliveTask(WSGITask):
    """waitress's task, except that an answer without a body by definition (204, 304: RFC 9112, 6.3) keeps its
    HTTP/1.1 connection open.

    waitress closes any connection whose answer has no Content-Length, and such answers must not have one (RFC
    9110, 8.6), so every empty poll (204) cost its client a new connection, and the server an accept, a
    dispatcher and a close: a fifth of an empty poll's CPU in the server (0.49 -> 0.38 ms kept open)."""

    _bodiless = False  # while the answer's head is built: an answer without a body, on a connection kept open

    def build_response_header(self):
        self._bodiless = (not self.has_body and self.version == "1.1" and not self.close_on_finish
                          and self.request.headers.get("CONNECTION", "").lower() != "close")
        try:
            return super().build_response_header()
        finally:
            self._bodiless = False

    def set_close_on_finish(self) -> None:
        if not self._bodiless:  # for a lack of Content-Length, which such an answer must lack
            super().set_close_on_finish()


class CountedChannel(HTTPChannel):
    parser_class = CountedRequest
    task_class = KeptAliveTask

    def handle_close(self):
        # A request read in part (its body cut off by the client) is never served, so never closed by waitress.
        partial = self.request
        try:
            super().handle_close()
        finally:
            if isinstance(partial, CountedRequest) and partial not in self.requests:
                partial.uncount()


def counted_server(app, foreground: Foreground, **options):
    """waitress's create_server whose connections count their requests in `foreground` (same options)."""
    counted = type("CountedRequest", (CountedRequest,), {"foreground": foreground})
    channel = type("CountedChannel", (CountedChannel,), {"parser_class": counted})
    channels: dict = {}
    server = create_server(app, map=channels, **options)
    for dispatcher in list(channels.values()):  # one listener per address the host name has
        if isinstance(dispatcher, BaseWSGIServer):
            dispatcher.channel_class = channel
    return server
