"""waitress, with each request counted as under way (see foreground) from when its headers arrive until its
answer is written, not only while the app makes it.

A request waits for the GIL several times outside the app: the server's loop reads and parses it, a request
thread wakes for it, and writes the answer. Behind a long C-level step of the ingest thread each of these
waits out that step; counted only inside the app, the ingest thread went on with its work through them (an
empty poll, 1 ms of work, took 7 ms p95 while a big file was read). Counted here, the ingest thread gives way
at its next step from the moment the request is read.

A request is counted once its headers are in (for a GET: the read that brings it), not from its first byte:
a client sending half a request, slowly, would otherwise keep reading at half speed for as long as it likes.
"""

from __future__ import annotations

from waitress import create_server
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser
from waitress.server import BaseWSGIServer

from .. import foreground


class CountedRequest(HTTPRequestParser):
    """A request that counts itself under way from when its headers are read until it is closed (waitress closes
    a request once its answer is written, or when its connection ends)."""

    counted = False

    def received(self, data):
        used = super().received(data)
        if not self.counted and (self.headers_finished or self.completed) and not self.empty:
            self.counted = True
            foreground.enter()
        return used

    def close(self):
        try:
            super().close()
        finally:
            self.uncount()

    def uncount(self) -> None:
        if self.counted:
            self.counted = False
            foreground.leave()


class CountedChannel(HTTPChannel):
    parser_class = CountedRequest

    def handle_close(self):
        # A request read in part (its body cut off by the client) is never served, so never closed by waitress.
        partial = self.request
        try:
            super().handle_close()
        finally:
            if isinstance(partial, CountedRequest) and partial not in self.requests:
                partial.uncount()


def counted_server(app, **options):
    """waitress's create_server whose connections count their requests (same options)."""
    channels: dict = {}
    server = create_server(app, map=channels, **options)
    for dispatcher in list(channels.values()):  # one listener per address the host name has
        if isinstance(dispatcher, BaseWSGIServer):
            dispatcher.channel_class = CountedChannel
    return server
