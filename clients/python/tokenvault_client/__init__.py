"""A client of the Token Vault REST API, standard library only.

    from tokenvault_client import Client

    vault = Client("http://localhost:8080", api_key=os.environ["TOKENVAULT_API_KEY"])
    token = vault.create_token({"type": "card", "data": {"number": "4242424242424242",
                                                        "expiration_month": 12,
                                                        "expiration_year": 2030}})
    card = vault.get_token(token["id"])

Every operation of the API (httpapi/openapi.json) is a method of Client, named
after its operationId in snake_case; OPERATIONS is the table operationId ->
method. Types are in tokenvault_client.types, errors in tokenvault_client.errors.
"""

from ._client import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT, VERSION, Client
from ._operations import OPERATIONS, Operation
from ._transport import HTTPRequest, HTTPResponse, ProxyResponse, Transport, http_transport
from .errors import (
    APIError,
    ApprovalRequired,
    AuthenticationError,
    BadGatewayError,
    ConflictError,
    GoneError,
    InsufficientStorageError,
    InternalServerError,
    InvalidRequestError,
    InvalidResponseError,
    MethodNotAllowedError,
    NetworkError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    RateLimitedError,
    RequestTimeoutError,
    ServiceUnavailableError,
    TokenVaultError,
    UnprocessableError,
    UnsupportedMediaTypeError,
)
from .pagination import iterate

__version__ = VERSION

__all__ = [
    "Client",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_TIMEOUT",
    "OPERATIONS",
    "Operation",
    "HTTPRequest",
    "HTTPResponse",
    "ProxyResponse",
    "Transport",
    "http_transport",
    "iterate",
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
    "GoneError",
]
