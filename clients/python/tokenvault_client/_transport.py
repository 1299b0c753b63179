"""The transport: one HTTP exchange, replaceable for tests.

A transport is any callable taking an HTTPRequest and returning an
HTTPResponse, raising OSError (or http.client.HTTPException) when no answer
came. The default, http_transport, opens one connection per request with
http.client: no state is shared between calls, so a Client is safe to use
from several threads.
"""

from __future__ import annotations

import http.client
import json
import ssl
import urllib.parse
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


def http_transport(ssl_context: ssl.SSLContext | None = None) -> Transport:
    """A transport over http.client: one connection per request, TLS for https
    URLs (verified with ssl_context, or the system's trust store), no redirects
    followed, no proxy from the environment (pass a transport of your own to
    go through one)."""

    def send(req: HTTPRequest) -> HTTPResponse:
        u = urllib.parse.urlsplit(req.url)
        target = u.path or "/"
        if u.query:
            target += "?" + u.query
        conn: http.client.HTTPConnection
        if u.scheme == "https":
            ctx = ssl_context or ssl.create_default_context()
            conn = http.client.HTTPSConnection(u.hostname or "", u.port, timeout=req.timeout, context=ctx)
        elif u.scheme == "http":
            conn = http.client.HTTPConnection(u.hostname or "", u.port, timeout=req.timeout)
        else:
            raise ValueError(f"unsupported URL scheme {u.scheme!r} (http or https)")
        try:
            conn.request(req.method, target, body=req.body, headers=req.headers)
            resp = conn.getresponse()
            body = resp.read()
            headers: dict[str, str] = {}
            for k, v in resp.getheaders():
                k = k.lower()
                headers[k] = headers[k] + ", " + v if k in headers else v
            return HTTPResponse(resp.status, headers, body, resp.reason)
        finally:
            conn.close()

    return send


def _without_query(url: str) -> str:
    return url.split("?", 1)[0]
