"""OTLP/HTTP: POSTing encoded ExportTraceServiceRequests to a trace store, as the OTLP specification says.

Protobuf bodies, gzip unless the store is on loopback; 429/502/503/504 and failed connections retried with backoff
(honouring `Retry-After`) within the timeout; kept-alive connections; a 200 reply's partial success counted
(otlp_reply). BackgroundSender sends on two threads, so the next request is built meanwhile.
"""

from __future__ import annotations

import gzip
import http.client
import ipaddress
import queue
import threading
import time
from urllib.parse import urlsplit

from .otlp_reply import partial_success

RETRIED = frozenset((429, 502, 503, 504))  # statuses the OTLP specification says to retry
FIRST_BACKOFF = 0.25  # seconds before the first retry; doubled each time
MAX_BACKOFF = 5.0
KEPT_MESSAGES = 3  # distinct messages of a store's partial successes kept for the report


class PushError(Exception):
    """The spans could not be sent: the message says why, for a person."""


class HttpStore:
    """One OTLP/HTTP traces endpoint (the full URL, e.g. http://host:4318/v1/traces)."""

    def __init__(self, endpoint: str, headers: dict[str, str] | None = None, timeout: float = 10.0,
                 compression: str | None = "auto"):
        parts = urlsplit(endpoint)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise PushError(f"{endpoint!r} is not an http:// or https:// URL")
        self.endpoint = endpoint
        self.timeout = timeout
        if compression == "auto":  # a store on this machine would only spend CPU inflating what we spent deflating
            compression = None if _is_loopback(parts.hostname) else "gzip"
        self.compression = compression
        self._connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        self._host, self._port = parts.hostname, parts.port
        self._path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self._headers = {**(headers or {}), "Content-Type": "application/x-protobuf"}
        if compression == "gzip":
            self._headers["Content-Encoding"] = "gzip"
        self._idle: list[http.client.HTTPConnection] = []  # kept-alive connections no send is using
        self._lock = threading.Lock()
        self.requests_sent = 0
        self.bytes_sent = 0
        # partial successes: spans the store took the request of but rejected, and what it said (distinct, the
        # first few); `warnings`: messages of replies that rejected nothing (the spec lets a store warn so)
        self.rejected_spans = 0
        self.rejections: list[str] = []
        self.warnings: list[str] = []

    def send(self, body: bytes) -> None:
        """POST one request; retried as the specification says; raises PushError when it cannot be sent.
        Several threads may send at once, each on a connection of its own."""
        if self.compression == "gzip":
            body = gzip.compress(body, compresslevel=1, mtime=0)  # level 1: most of the gain, a fifth of the time
        deadline = time.monotonic() + self.timeout
        backoff = FIRST_BACKOFF
        connection = self._take()
        try:
            while True:
                left = deadline - time.monotonic()
                reused = connection is not None
                if connection is None:
                    connection = self._connection_class(self._host, self._port, timeout=max(left, 0.1))
                try:
                    status, reason, said, retry_after, partial = self._post(connection, body, max(left, 0.1))
                except (OSError, http.client.HTTPException) as error:
                    connection.close()
                    connection = None
                    if reused and not isinstance(error, TimeoutError):
                        continue  # the store closed a kept-alive connection: a new one, at once
                    failure, wait = self._unreachable(error), backoff
                else:
                    if 200 <= status < 300:
                        with self._lock:
                            self.requests_sent += 1
                            self.bytes_sent += len(body)
                            self._note(*partial)
                        return
                    failure = f"{self.endpoint} answered {status} {reason}".rstrip() + (f": {said}" if said else "")
                    if status not in RETRIED:
                        raise PushError(failure)
                    failure += " (still, after retries)"
                    wait = min(retry_after, MAX_BACKOFF) if retry_after is not None else backoff
                if time.monotonic() + wait > deadline:
                    raise PushError(failure)
                time.sleep(wait)
                backoff = min(backoff * 2, MAX_BACKOFF)
        finally:
            if connection is not None:
                with self._lock:
                    self._idle.append(connection)

    def _note(self, rejected: int, message: str) -> None:
        """Count a partial success (under the lock)."""
        self.rejected_spans += rejected
        kept = self.rejections if rejected else self.warnings
        if message and message not in kept and len(kept) < KEPT_MESSAGES:
            kept.append(message)

    def _take(self) -> http.client.HTTPConnection | None:
        with self._lock:
            return self._idle.pop() if self._idle else None

    def _post(self, connection: http.client.HTTPConnection, body: bytes,
              timeout: float) -> tuple[int, str, str, float | None, tuple[int, str]]:
        """The store's answer: status, reason, what it said (a short line), the Retry-After it asked, and the
        partial success of a 2xx reply (spans rejected, its message)."""
        connection.timeout = timeout
        if connection.sock is not None:
            connection.sock.settimeout(timeout)
        connection.request("POST", self._path, body=body, headers=self._headers)
        answer = connection.getresponse()
        text = answer.read()
        if answer.will_close:
            connection.close()  # the next request on it connects again
        said = " ".join(text.decode("utf-8", "replace").split())[:200] if text and answer.status >= 300 else ""
        said = "".join(c for c in said if c.isprintable())  # a protobuf Status is bytes, not all of it text
        partial = partial_success(text, answer.getheader("Content-Type")) if 200 <= answer.status < 300 else (0, "")
        return answer.status, answer.reason or "", said, _seconds(answer.getheader("Retry-After")), partial

    def _unreachable(self, error: BaseException) -> str:
        if isinstance(error, TimeoutError):
            return f"{self.endpoint} did not answer in time"
        why = getattr(error, "strerror", None) or str(error) or type(error).__name__
        return f"cannot reach {self.endpoint}: {why} (is the store running, and is this its OTLP/HTTP URL?)"

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _seconds(value: str | None) -> float | None:
    """A Retry-After of seconds (an HTTP date is not worth parsing here: the backoff is used instead)."""
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


class BackgroundSender:
    """Sends requests through a store on threads of their own (`senders` at once, each on its own connection: a
    store that takes its time with each request, as Phoenix does before it answers the next one on a
    connection, gets them side by side), at most `depth` waiting; the first failure is raised by the next call.

    Two requests sent side by side may reach the store in either order. That is harmless when every span goes
    once (a one-off push), but not when a later request must follow an earlier one (push --follow re-sends an
    agent's span with a later end: the store must get the copies in the order they were made). `ordered` then
    gives each key (a session) one thread, chosen by the key, which sends a request only once the store has
    answered the one before: the store sees a key's requests in the order they were submitted, while requests
    of different keys still go side by side."""

    def __init__(self, store, senders: int = 2, depth: int = 2, ordered: bool = False):
        self.store = store
        self.ordered = ordered
        shared = queue.Queue(depth)
        self._queues = [queue.Queue(depth) for _ in range(senders)] if ordered else [shared] * senders
        self._error: BaseException | None = None
        self._threads = [threading.Thread(target=self._run, args=(q,), name=f"otlp-sender-{n}", daemon=True)
                         for n, q in enumerate(self._queues)]
        for thread in self._threads:
            thread.start()

    def _run(self, work: queue.Queue) -> None:
        while True:
            item = work.get()
            try:
                if item is None:
                    return
                if self._error is None:  # after a failure, the rest is dropped: the push stops
                    self.store.send(item)
            except BaseException as error:  # handed to the pushing thread
                if self._error is None:
                    self._error = error
            finally:
                work.task_done()

    def submit(self, body: bytes, key: str = "") -> None:
        """Queue a request; with `ordered`, after every request of the same key submitted before it."""
        self._raise()
        self._queues[hash(key) % len(self._queues)].put(body)

    def wait(self) -> None:
        """Until everything submitted is sent; raises what failed."""
        for work in set(self._queues):
            work.join()
        self._raise()

    def _raise(self) -> None:
        if self._error is not None:
            raise self._error

    def close(self) -> None:
        for work in self._queues:  # one stop for each thread (a shared queue gets as many as there are threads)
            work.put(None)
        for thread in self._threads:
            thread.join()
