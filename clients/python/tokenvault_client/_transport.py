"""The transport: one HTTP exchange, replaceable for tests.

A transport is any callable taking an HTTPRequest and returning an
HTTPResponse, raising OSError (or http.client.HTTPException) when no answer
came. The default, http_transport, sends with http.client over keep-alive
connections it keeps in a pool of its own, safe to use from several threads.
"""

from __future__ import annotations

import http.client
import json
import select
import ssl
import threading
import time
import urllib.parse
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["HTTPRequest", "HTTPResponse", "ProxyResponse", "Transport", "http_transport"]


@dataclass(frozen=True)
class HTTPRequest:
    """One request as sent: the URL carries the query, headers their final values."""

    method: str
    url: str
    headers: dict[str, str]
    body: bytes | None
    timeout: float  # seconds left for this exchange

    def __repr__(self) -> str:  # never the headers (keys) nor the body (data)
        return f"HTTPRequest({self.method} {_without_query(self.url)})"


@dataclass(frozen=True)
class HTTPResponse:
    """One answer: headers are keyed by lower-case name."""

    status: int
    headers: dict[str, str]
    body: bytes
    reason: str = ""


@dataclass(frozen=True)
class ProxyResponse:
    """What a proxy's destination answered, as it came (a 2xx: other statuses
    raise APIError, with this body in APIError.body)."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    def json(self) -> Any:
        """The body decoded as JSON (ValueError if it is not JSON)."""
        return json.loads(self.body.decode("utf-8"))

    def text(self) -> str:
        """The body decoded as UTF-8."""
        return self.body.decode("utf-8")


Transport = Callable[[HTTPRequest], HTTPResponse]


# Idle connections are kept this long at most, well under the idle timeouts
# of servers and load balancers (the vault's own: 2 minutes), so that a kept
# connection is rarely one the other side is closing.
IDLE_SECONDS = 30.0
# At most this many idle connections are kept per host.
MAX_IDLE = 8

_Key = tuple[str, str, "int | None"]


class _Pool:
    """Idle keep-alive connections by (scheme, host, port), safe across threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: dict[_Key, list[tuple[http.client.HTTPConnection, float]]] = {}

    def take(self, key: _Key) -> http.client.HTTPConnection | None:
        """An idle connection still open, or None."""
        now = time.monotonic()
        while True:
            with self._lock:
                conns = self._idle.get(key)
                if not conns:
                    return None
                conn, since = conns.pop()
            if now - since < IDLE_SECONDS and _still_open(conn):
                return conn
            conn.close()

    def give(self, key: _Key, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            conns = self._idle.setdefault(key, [])
            if len(conns) < MAX_IDLE:
                conns.append((conn, time.monotonic()))
                return
        conn.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, {}
        for conns in idle.values():
            for conn, _ in conns:
                conn.close()


def _still_open(conn: http.client.HTTPConnection) -> bool:
    """Whether an idle connection can carry a request: a socket with something
    to read while idle has been closed by the server (or holds garbage)."""
    sock = conn.sock
    if sock is None:
        return False
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return False
    return not readable


# Requests sent again on a new connection when a kept one fails before an
# answer (the server closed it meanwhile): those that a repeat cannot harm,
# as Go's net/http decides.
_REPLAYABLE = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


def http_transport(ssl_context: ssl.SSLContext | None = None) -> Transport:
    """A transport over http.client: keep-alive connections reused across calls
    (at most MAX_IDLE idle per host, for IDLE_SECONDS), TLS for https URLs
    (verified with ssl_context, or the system's trust store), no redirects
    followed, no proxy from the environment (pass a transport of your own to go
    through one). Safe for concurrent use: a connection serves one request at a
    time. A request that fails on a kept connection before any answer is sent
    again on a new one when repeating it cannot harm (GET, HEAD, or a request
    with an Idempotency-Key); otherwise the error is raised."""
    pool = _Pool()

    def connect(u: urllib.parse.SplitResult, timeout: float) -> http.client.HTTPConnection:
        if u.scheme == "https":
            ctx = ssl_context or ssl.create_default_context()
            return http.client.HTTPSConnection(u.hostname or "", u.port, timeout=timeout, context=ctx)
        if u.scheme == "http":
            return http.client.HTTPConnection(u.hostname or "", u.port, timeout=timeout)
        raise ValueError(f"unsupported URL scheme {u.scheme!r} (http or https)")

    def exchange(conn: http.client.HTTPConnection, req: HTTPRequest, target: str) -> tuple[HTTPResponse, bool]:
        conn.timeout = req.timeout
        if conn.sock is not None:
            conn.sock.settimeout(req.timeout)
        conn.request(req.method, target, body=req.body, headers=req.headers)
        resp = conn.getresponse()
        body = resp.read()
        headers: dict[str, str] = {}
        for k, v in resp.getheaders():
            k = k.lower()
            headers[k] = headers[k] + ", " + v if k in headers else v
        return HTTPResponse(resp.status, headers, body, resp.reason), bool(resp.will_close)

    def send(req: HTTPRequest) -> HTTPResponse:
        u = urllib.parse.urlsplit(req.url)
        target = u.path or "/"
        if u.query:
            target += "?" + u.query
        key: _Key = (u.scheme, u.hostname or "", u.port)
        replayable = req.method in _REPLAYABLE or any(k.lower() == "idempotency-key" for k in req.headers)
        kept = pool.take(key)
        conn = kept or connect(u, req.timeout)
        try:
            try:
                resp, closing = exchange(conn, req, target)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                if kept is None or not replayable:
                    raise
                conn.close()
                conn = connect(u, req.timeout)
                resp, closing = exchange(conn, req, target)
        except BaseException:
            conn.close()
            raise
        if closing:
            conn.close()
        else:
            pool.give(key, conn)
        return resp

    weakref.finalize(send, pool.close)
    return send


def _without_query(url: str) -> str:
    return url.split("?", 1)[0]
