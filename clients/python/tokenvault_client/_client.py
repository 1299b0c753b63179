"""Client: the methods of every operation (Operations) over one call path.

_call is the single way a request leaves the client: it builds the URL, the
headers and the body from the operation's entry in OPERATIONS, sends it
through the transport, retries 429 and 503 within the call's timeout, and
turns an error answer into the APIError subclass of its status.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.parse
import uuid
from typing import Any, Callable, Mapping

from . import _retry
from ._operations import OPERATIONS, Operation, Operations
from ._transport import HTTPRequest, HTTPResponse, ProxyResponse, Transport, http_transport
from .errors import APIError, ApprovalRequired, InvalidResponseError, NetworkError, RequestTimeoutError, error_class

__all__ = ["Client", "DEFAULT_TIMEOUT", "DEFAULT_MAX_RETRIES", "VERSION"]

VERSION = "0.1.0"

# DEFAULT_TIMEOUT bounds one call, retries and their waits included: longer
# than the server's own bound on writing an answer (2 minutes, room for a
# proxy call whose destination takes up to 60 s and its transforms), so that
# every answer the server gives arrives.
DEFAULT_TIMEOUT = 180.0

# DEFAULT_MAX_RETRIES is how many times a 429 or 503 is retried.
DEFAULT_MAX_RETRIES = 2

_JSON_TYPES = ("application/json", "application/problem+json")

# Operations whose 429 or 503 may come from what they ran rather than from the
# vault: a reactor's code answers any status it chooses (a
# CustomHttpResponseError), perhaps after fetching, and the vault keeps no 429
# or 5xx for Idempotency-Key replays. They are not retried, nor are proxy
# invocations (the destination's answer comes as it came).
_RUNS_CALLERS_CODE = frozenset({"invokeReactor"})


class Client(Operations):
    """A client of one Token Vault server.

    Every operation of the API is a method (see OPERATIONS for the table
    operationId -> method): path parameters first, then the body, then the
    query, and keyword-only options: api_key (else the client's), timeout
    (seconds for the whole call, retries included; else the client's) and,
    for operations that create something, idempotency_key.

    Answers are plain dicts and lists typed by tokenvault_client.types. An
    error answer raises the APIError subclass of its status
    (tokenvault_client.errors); no answer raises NetworkError. A call the
    tenant's approval policy holds raises ApprovalRequired (the 202's pending
    change, never retried); approval_id= (detokenize, delete_own_tenant) sends
    the id of the applied change that approved a call as SVC-APPROVAL-ID. A
    body that is not JSON (NaN, an object json cannot encode) raises
    ValueError or TypeError before anything is sent.

    A Client is safe for concurrent use from several threads; its default
    transport keeps connections alive between calls (http_transport).
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        transport: Transport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        user_agent: str | None = None,
        purpose: str | None = None,
    ) -> None:
        """base_url: where the API is served ("https://vault.example.com", or
        with the prefix it is mounted under). api_key: the SVC-API-KEY sent when
        a call names none. timeout: seconds a call may take, retries included.
        max_retries: retries of a 429 or 503 (0: none). transport: sends one
        request (default: http_transport(), http.client with keep-alive, no
        proxy).
        sleep: waits between retries (a test hook). Raises ValueError for a
        base_url that is not http(s)://host[/prefix], a timeout not above 0 or
        max_retries below 0. purpose: the purpose of access sent as SVC-PURPOSE
        with every call (one of the tenant's purposes): a client per purpose."""
        u = urllib.parse.urlsplit(base_url)
        if u.scheme not in ("http", "https") or not u.hostname or u.query or u.fragment:
            raise ValueError("base_url must be http(s)://host[:port][/prefix], without query")
        if not timeout > 0:
            raise ValueError("timeout must be above 0 seconds")
        if max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        self._base = base_url.rstrip("/")
        self._where = f"{u.scheme}://{u.hostname}" + (f":{u.port}" if u.port else "")
        self._api_key = api_key
        self._purpose = purpose
        self._timeout = float(timeout)
        self._max_retries = max_retries
        self._transport = transport or http_transport()
        self._sleep = sleep
        self._user_agent = user_agent or f"tokenvault-python/{VERSION}"

    def __repr__(self) -> str:  # never the key
        return f"Client({self._base!r})"

    def _call(
        self,
        operation_id: str,
        path: Mapping[str, str],
        body: Any,
        query: Mapping[str, Any] | None,
        *,
        api_key: str | None,
        idempotency_key: str | None,
        timeout: float | None,
        proxy_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        content_type: str | None = None,
        approval_id: str | None = None,
    ) -> Any:
        op = OPERATIONS[operation_id]
        url_path = _render_path(op, path)
        url = self._base + url_path + _encode_query(op, query)
        hdrs, data = self._request_headers(op, body, api_key, proxy_key, headers, content_type)
        if approval_id is not None:
            if not op.approval_id:
                raise ValueError(f"{op.method_name} takes no approval_id (only operations with an SVC-APPROVAL-ID header do)")
            if not isinstance(approval_id, str) or not approval_id:
                raise ValueError(f"{op.method_name}: approval_id must be a non-empty string")
            hdrs["SVC-APPROVAL-ID"] = approval_id
        if op.idempotent:
            if idempotency_key is None and self._max_retries > 0:
                idempotency_key = str(uuid.uuid4())
            if idempotency_key is not None:
                hdrs["Idempotency-Key"] = idempotency_key
        retries = 0 if op.auth == "proxy" or op.id in _RUNS_CALLERS_CODE else self._max_retries
        limit = self._timeout if timeout is None else timeout
        if not limit > 0:
            raise ValueError("timeout must be above 0 seconds")
        deadline = time.monotonic() + limit
        attempt = 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._timed_out(op, url_path, idempotency_key)
            try:
                resp = self._transport(HTTPRequest(op.http_method, url, dict(hdrs), data, left))
            except (OSError, http.client.HTTPException) as e:
                if isinstance(e, TimeoutError):
                    raise self._timed_out(op, url_path, idempotency_key) from e
                raise NetworkError(
                    f"{op.id}: {op.http_method} {self._where}{url_path}: no answer ({_reason(e)})",
                    operation_id=op.id,
                    idempotency_key=idempotency_key,
                ) from e
            if op.approval and resp.status == 202:
                raise _approval_required(op, resp)
            if 200 <= resp.status < 300:
                return _decode(op, resp)
            error = _error(op, url_path, resp)
            if resp.status in _retry.RETRY_STATUSES and attempt < retries:
                wait = error.retry_after if error.retry_after is not None else _retry.backoff(attempt)
                if time.monotonic() + wait < deadline:
                    self._sleep(wait)
                    attempt += 1
                    continue
            raise error

    def _request_headers(
        self,
        op: Operation,
        body: Any,
        api_key: str | None,
        proxy_key: str | None,
        extra: Mapping[str, str] | None,
        content_type: str | None,
    ) -> tuple[dict[str, str], bytes | None]:
        hdrs: dict[str, str] = {"User-Agent": self._user_agent}
        if self._purpose:
            hdrs["SVC-PURPOSE"] = self._purpose
        data: bytes | None = None
        if op.auth == "proxy":
            hdrs["Accept"] = "*/*"
            for name, value in (extra or {}).items():
                lower = name.lower()
                if lower in ("svc-api-key", "svc-proxy-key"):
                    raise ValueError(f"{op.method_name}: pass keys as api_key= and proxy_key=, not in headers")
                if lower == "content-type":
                    content_type = content_type or value
                    continue
                if lower in ("accept", "user-agent"):
                    hdrs = {k: v for k, v in hdrs.items() if k.lower() != lower}
                hdrs[name] = value
            if not proxy_key:
                raise ValueError(f"{op.method_name} needs proxy_key")
            hdrs["SVC-PROXY-KEY"] = proxy_key
            # A proxy's destination is not the vault: the client's own key is
            # sent only when the call names one (a proxy that requires it).
            if api_key:
                hdrs["SVC-API-KEY"] = api_key
            if body is not None:
                data, ctype = _raw_body(body)
                hdrs["Content-Type"] = content_type or ctype
            return hdrs, data
        hdrs["Accept"] = "application/octet-stream, application/problem+json" if op.result == "binary" else "application/json, application/problem+json"
        key = api_key or self._api_key
        if op.auth != "none" and key:
            hdrs["SVC-API-KEY"] = key
        if op.body == "ndjson":
            # An NDJSON body (import_tokens) is its lines, sent as they are.
            data = body.encode("utf-8") if isinstance(body, str) else bytes(body)
            hdrs["Content-Type"] = "application/x-ndjson"
        elif op.body is not None:
            data = json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
            hdrs["Content-Type"] = "application/merge-patch+json" if op.body == "merge-patch" else "application/json"
        return hdrs, data

    def _timed_out(self, op: Operation, url_path: str, idempotency_key: str | None) -> RequestTimeoutError:
        return RequestTimeoutError(
            f"{op.id}: {op.http_method} {self._where}{url_path}: no answer within the call's timeout",
            operation_id=op.id,
            idempotency_key=idempotency_key,
        )


def _render_path(op: Operation, values: Mapping[str, str]) -> str:
    path = op.path
    for name in op.path_params:
        v = values[name]
        if not isinstance(v, str) or not v:
            raise ValueError(f"{op.method_name}: {name} must be a non-empty string")
        if name == "rest":  # the proxied path, slashes and the caller's escapes kept
            quoted = urllib.parse.quote(v.lstrip("/"), safe="/%!$&'()*+,;=:@-._~")
        else:
            quoted = urllib.parse.quote(v, safe="")
        path = path.replace("{" + name + "}", quoted)
    return path


def _encode_query(op: Operation, query: Mapping[str, Any] | None) -> str:
    if not query:
        return ""
    pairs: list[tuple[str, str]] = []
    for name, value in query.items():
        if value is None:
            continue
        values = value if isinstance(value, (list, tuple)) else [value]
        for v in values:
            pairs.append((name, _query_value(v)))
    return "?" + urllib.parse.urlencode(pairs, quote_via=urllib.parse.quote) if pairs else ""


def _query_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _raw_body(body: Any) -> tuple[bytes, str]:
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body), "application/octet-stream"
    if isinstance(body, str):
        return body.encode("utf-8"), "text/plain; charset=utf-8"
    return json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8"), "application/json"


def _media_type(headers: Mapping[str, str]) -> str:
    return headers.get("content-type", "").split(";", 1)[0].strip().lower()


def _decode(op: Operation, resp: HTTPResponse) -> Any:
    if op.result == "proxy":
        return ProxyResponse(resp.status, resp.headers, resp.body)
    # An operation whose answer is a stream of bytes or, held to approval,
    # a pending change (export_tokens) is told apart by the answer's type.
    if op.result == "binary" or _media_type(resp.headers) == "application/octet-stream":
        return resp.body
    if op.result == "none" or not resp.body:
        return None
    try:
        return json.loads(resp.body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise InvalidResponseError(
            f"{op.id}: the answer ({resp.status}, {_media_type(resp.headers) or 'no content type'}) is not JSON",
            operation_id=op.id,
            status=resp.status,
        ) from None


def _approval_required(op: Operation, resp: HTTPResponse) -> ApprovalRequired | InvalidResponseError:
    """The ApprovalRequired of a 202 an approval policy answered; the key it may
    carry goes to the exception's key alone."""
    try:
        parsed = json.loads(resp.body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        parsed = None
    if not isinstance(parsed, dict) or not isinstance(parsed.get("id"), str):
        return InvalidResponseError(f"{op.id}: the answer (202) is no pending change", operation_id=op.id, status=resp.status)
    key = parsed.pop("key", None)
    return ApprovalRequired(parsed, key=key if isinstance(key, str) and key else None, operation_id=op.id)


def _error(op: Operation, url_path: str, resp: HTTPResponse) -> APIError:
    problem: dict[str, Any] = {}
    if _media_type(resp.headers) in _JSON_TYPES:
        try:
            parsed = json.loads(resp.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            parsed = None
        if isinstance(parsed, dict):
            if isinstance(parsed.get("proxy_error"), dict):
                problem = parsed["proxy_error"]
            elif "title" in parsed or "status" in parsed or "type" in parsed:
                problem = parsed
    cls = error_class(resp.status)
    return cls(
        status=resp.status,
        problem=problem,
        body=resp.body,
        headers=resp.headers,
        operation_id=op.id,
        method=op.http_method,
        path=url_path,
        retry_after=_retry.retry_after(resp.headers, time.time()),
        reason=resp.reason or http.client.responses.get(resp.status, ""),
    )


def _reason(e: BaseException) -> str:
    if isinstance(e, ConnectionRefusedError):
        return "connection refused: no server listens at that address and port"
    if isinstance(e, ConnectionResetError):
        return "the connection was reset"
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__

