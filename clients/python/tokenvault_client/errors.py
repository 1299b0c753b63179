"""The errors a Client raises.

Every error answer of the API (any status outside 2xx) raises an APIError
carrying the problem details of its application/problem+json body (RFC 7807),
as a subclass per status the API uses: catch NotFoundError for a 404,
InvalidRequestError for a 400 with its field errors, RateLimitedError for a
429 that retries did not get past. A request that got no answer raises
NetworkError (RequestTimeoutError when the call's timeout passed).

A call that the tenant's approval policy holds (a 202 with a pending change)
raises ApprovalRequired: not an APIError, since nothing failed, and never
retried.

No error's message, repr or attributes hold an API key, a proxy key or a
request body: they carry what the server answered (its problem details are
written to be shown) and the operation, method and path of the request.
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = [
    "TokenVaultError",
    "NetworkError",
    "RequestTimeoutError",
    "InvalidResponseError",
    "ApprovalRequired",
    "APIError",
    "InvalidRequestError",
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "MethodNotAllowedError",
    "ConflictError",
    "PayloadTooLargeError",
    "UnsupportedMediaTypeError",
    "UnprocessableError",
    "RateLimitedError",
    "InternalServerError",
    "BadGatewayError",
    "ServiceUnavailableError",
    "InsufficientStorageError",
    "error_class",
]


class TokenVaultError(Exception):
    """The base of every error the client raises."""


class NetworkError(TokenVaultError):
    """The request got no (whole) answer: the server could not be reached, the
    connection broke, or TLS failed. The cause is the exception's __cause__.
    Nothing tells whether the server acted on the request: retrying a POST with
    the same idempotency_key is safe, and idempotency_key holds the one the
    client sent (its own or one it made up), or None."""

    def __init__(self, message: str, *, operation_id: str = "", idempotency_key: str | None = None) -> None:
        super().__init__(message)
        self.operation_id = operation_id
        self.idempotency_key = idempotency_key


class RequestTimeoutError(NetworkError):
    """The call's timeout passed before the answer came."""


class InvalidResponseError(TokenVaultError):
    """A success answer that is not what the API documents (not JSON where JSON
    was due): a proxy or server in between answered instead of the vault."""

    def __init__(self, message: str, *, operation_id: str = "", status: int = 0) -> None:
        super().__init__(message)
        self.operation_id = operation_id
        self.status = status


class ApprovalRequired(TokenVaultError):
    """The tenant's approval policy held the call (its 202): the operation did not
    take effect and waits as a pending change until the policy's approvers
    approve it (approve_change). Not an APIError: nothing failed, and the client
    never retries it (a retry would request another change).

    Attributes:
        change: the pending change (types.PendingChange): its id, for
            approve_change, get_approval and approval_id=; its operation,
            before, after, required and expires_at.
        key: for the creation of an application or a new key, the key it will
            have once the change is applied, shown only here; else None. The
            message and repr never hold it.
        status: 202.
        operation_id: the operation held.
    """

    status = 202

    def __init__(self, change: Mapping[str, Any], *, key: str | None = None, operation_id: str = "") -> None:
        self.change: dict[str, Any] = dict(change)
        self.key = key
        self.operation_id = operation_id
        what = f"{operation_id}: " if operation_id else ""
        required = self.change.get("required")
        super().__init__(
            f"{what}held for approval as pending change {_str(self.change.get('id'))} "
            f"({_str(self.change.get('operation'))}, {required} approval{'' if required == 1 else 's'} required, "
            f"expires {_str(self.change.get('expires_at'))})"
        )

    def __repr__(self) -> str:  # never the key
        return f"ApprovalRequired(change_id={_str(self.change.get('id'))!r}, operation_id={self.operation_id!r})"


class APIError(TokenVaultError):
    """An error answer of the API, with its problem details.

    Attributes:
        status: the HTTP status.
        kind: a word for the status class ("invalid", "not_found", ...).
        type, title, detail, instance: the problem's members ("" when absent).
        errors: the field errors of a 400, by JSON path of the field
            ("data.number": ["must be 13 to 19 digits"]); empty when none.
        problem: the whole problem object as answered ({} when the body was
            no problem, such as a proxy destination's own error).
        body: the raw answer body (the server's, never the request's).
        headers: the answer's headers, names in lower case.
        retry_after: seconds the server asked to wait (429, 503, 507), or None.
        operation_id, method, path: the request that failed (path without query).
    """

    kind = "error"

    def __init__(
        self,
        *,
        status: int,
        problem: Mapping[str, Any] | None = None,
        body: bytes = b"",
        headers: Mapping[str, str] | None = None,
        operation_id: str = "",
        method: str = "",
        path: str = "",
        retry_after: float | None = None,
        reason: str = "",
    ) -> None:
        self.status = status
        self.problem: dict[str, Any] = dict(problem or {})
        self.body = body
        self.headers: dict[str, str] = dict(headers or {})
        self.operation_id = operation_id
        self.method = method
        self.path = path
        self.retry_after = retry_after
        p = self.problem
        self.type: str = _str(p.get("type"))
        self.title: str = _str(p.get("title")) or reason
        self.detail: str = _str(p.get("detail"))
        self.instance: str = _str(p.get("instance"))
        errs = p.get("errors")
        self.errors: dict[str, list[str]] = {}
        if isinstance(errs, dict):
            for k, v in errs.items():
                self.errors[str(k)] = [str(x) for x in v] if isinstance(v, list) else [str(v)]
        super().__init__(self._message())

    def _message(self) -> str:
        what = f"{self.operation_id}: " if self.operation_id else ""
        msg = f"{what}{self.status} {self.title}" if self.title else f"{what}{self.status}"
        if self.detail:
            msg += f": {self.detail}"
        if self.errors:
            msg += " (" + "; ".join(f"{k}: {', '.join(v)}" for k, v in self.errors.items()) + ")"
        return msg

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status}, title={self.title!r}, operation_id={self.operation_id!r})"


class InvalidRequestError(APIError):
    """400: the request is invalid; errors names each offending field."""

    kind = "invalid"


class AuthenticationError(APIError):
    """401: the key is missing, unknown or expired."""

    kind = "unauthenticated"


class PermissionDeniedError(APIError):
    """403: the key lacks the permission the operation needs."""

    kind = "permission_denied"


class NotFoundError(APIError):
    """404: no such resource (another tenant's resources are not found too)."""

    kind = "not_found"


class MethodNotAllowedError(APIError):
    """405: the path does not take this method."""

    kind = "method_not_allowed"


class ConflictError(APIError):
    """409: a conflict, such as a request with this Idempotency-Key still running."""

    kind = "conflict"


class PayloadTooLargeError(APIError):
    """413: the body, or what tenant code gave back, is too large."""

    kind = "too_large"


class UnsupportedMediaTypeError(APIError):
    """415: the body is not JSON, or not in UTF-8."""

    kind = "unsupported_media_type"


class UnprocessableError(APIError):
    """422: the request cannot be processed (an Idempotency-Key reused with another
    request, code that exports no function)."""

    kind = "unprocessable"


class RateLimitedError(APIError):
    """429: over a rate limit; retry_after says when to try again."""

    kind = "rate_limited"


class InternalServerError(APIError):
    """500: the server failed (answered generically)."""

    kind = "internal"


class BadGatewayError(APIError):
    """502: a proxy's destination failed."""

    kind = "bad_gateway"


class ServiceUnavailableError(APIError):
    """503: a service the request needs failed, and nothing was saved."""

    kind = "unavailable"


class InsufficientStorageError(APIError):
    """507: the server's storage is full and nothing was saved; retry_after says
    when to try again."""

    kind = "storage_full"


class GoneError(APIError):
    """410: the resource was destroyed for good: a token of a data subject
    whose key an erasure destroyed."""

    kind = "gone"


_BY_STATUS: dict[int, type[APIError]] = {
    400: InvalidRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    405: MethodNotAllowedError,
    409: ConflictError,
    413: PayloadTooLargeError,
    415: UnsupportedMediaTypeError,
    422: UnprocessableError,
    429: RateLimitedError,
    500: InternalServerError,
    502: BadGatewayError,
    503: ServiceUnavailableError,
    507: InsufficientStorageError,
    410: GoneError,
}


def error_class(status: int) -> type[APIError]:
    """The APIError subclass raised for an answer of this status (APIError
    itself for a status the API does not use)."""
    return _BY_STATUS.get(status, APIError)


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""
