"""Error answers become typed errors carrying the problem details, and no error shows a key or a body."""

from __future__ import annotations

import json
import socket
import traceback
import unittest

from tokenvault_client import (
    APIError,
    BadGatewayError,
    Client,
    HTTPRequest,
    HTTPResponse,
    InvalidRequestError,
    InvalidResponseError,
    NetworkError,
    NotFoundError,
)
from tokenvault_client import errors

SECRET_KEY = "key_private-secret-0123456789abcdef"
CARD_NUMBER = "4242424242424242"
PROBLEM_JSON = {"content-type": "application/problem+json"}


def answering(status: int, body: bytes, headers: dict[str, str] | None = None) -> Client:
    def transport(req: HTTPRequest) -> HTTPResponse:
        return HTTPResponse(status, headers if headers is not None else dict(PROBLEM_JSON), body)

    return Client("http://vault.test", api_key=SECRET_KEY, transport=transport, max_retries=0)


class ErrorTest(unittest.TestCase):
    def test_a_class_per_status(self) -> None:
        table = {
            400: errors.InvalidRequestError,
            401: errors.AuthenticationError,
            403: errors.PermissionDeniedError,
            404: errors.NotFoundError,
            405: errors.MethodNotAllowedError,
            409: errors.ConflictError,
            413: errors.PayloadTooLargeError,
            415: errors.UnsupportedMediaTypeError,
            422: errors.UnprocessableError,
            429: errors.RateLimitedError,
            500: errors.InternalServerError,
            502: errors.BadGatewayError,
            503: errors.ServiceUnavailableError,
            507: errors.InsufficientStorageError,
            418: errors.APIError,
        }
        kinds = set()
        for status, cls in table.items():
            with self.subTest(status=status):
                client = answering(status, json.dumps({"type": "about:blank", "title": "T", "status": status}).encode())
                with self.assertRaises(APIError) as cm:
                    client.get_token("t")
                self.assertIs(type(cm.exception), cls)
                self.assertEqual(cm.exception.status, status)
                kinds.add(cls.kind)
        self.assertEqual(len(kinds), len(table), "each class has its own kind")

    def test_problem_details_and_field_errors(self) -> None:
        body = {
            "type": "https://tokenvault.dev/problems/invalid",
            "title": "Bad Request",
            "status": 400,
            "detail": "the request is invalid",
            "instance": "/tokens",
            "errors": {"data.number": ["must be 13 to 19 digits"]},
        }
        client = answering(400, json.dumps(body).encode())
        with self.assertRaises(InvalidRequestError) as cm:
            client.create_token({"type": "card", "data": {"number": CARD_NUMBER + "0000"}})
        e = cm.exception
        self.assertEqual((e.type, e.title, e.detail, e.instance), (body["type"], "Bad Request", "the request is invalid", "/tokens"))
        self.assertEqual(e.errors, {"data.number": ["must be 13 to 19 digits"]})
        self.assertEqual(e.problem, body)
        self.assertEqual((e.operation_id, e.method, e.path), ("createToken", "POST", "/tokens"))
        self.assertIn("data.number: must be 13 to 19 digits", str(e))

    def test_no_key_nor_body_in_errors(self) -> None:
        cases = [
            answering(400, json.dumps({"type": "t", "title": "Bad Request", "status": 400}).encode()),
            answering(502, b"<html>bad gateway</html>", {"content-type": "text/html"}),
        ]
        for client in cases:
            with self.assertRaises(APIError) as cm:
                client.tokenize({"card": {"type": "card", "data": {"number": CARD_NUMBER}}})
            self.assertClean(cm.exception)

        def refused(req: HTTPRequest) -> HTTPResponse:
            raise ConnectionRefusedError(111, "Connection refused")

        client = Client("http://vault.test", api_key=SECRET_KEY, transport=refused)
        with self.assertRaises(NetworkError) as net:
            client.tokenize({"number": CARD_NUMBER})
        self.assertClean(net.exception)
        self.assertIn("connection refused", str(net.exception))
        self.assertTrue(net.exception.idempotency_key, "the key to retry with is given")

    def assertClean(self, e: BaseException) -> None:
        texts = [str(e), repr(e), "".join(traceback.format_exception(e)), repr(vars(e))]
        for text in texts:
            self.assertNotIn(SECRET_KEY, text)
            self.assertNotIn(CARD_NUMBER, text)

    def test_network_error_from_a_closed_port(self) -> None:
        with socket.socket() as s:  # bound, not listening: connections are refused
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
            client = Client(f"http://127.0.0.1:{port}", api_key=SECRET_KEY, timeout=30)
            with self.assertRaises(NetworkError) as cm:
                client.get_token("t")
        self.assertEqual(cm.exception.operation_id, "getToken")
        self.assertIsInstance(cm.exception.__cause__, OSError)

    def test_proxy_error(self) -> None:
        body = {"proxy_error": {"type": "t", "title": "Bad Gateway", "status": 502, "detail": "the destination cannot be reached"}}
        client = answering(502, json.dumps(body).encode(), {"content-type": "application/json"})
        with self.assertRaises(BadGatewayError) as cm:
            client.invoke_proxy_get(proxy_key="pk")
        self.assertEqual(cm.exception.detail, "the destination cannot be reached")

    def test_error_without_problem(self) -> None:
        client = answering(404, b"not here", {"content-type": "text/plain"})
        with self.assertRaises(NotFoundError) as cm:
            client.get_token("t")
        self.assertEqual((cm.exception.title, cm.exception.problem, cm.exception.body), ("Not Found", {}, b"not here"))

    def test_success_that_is_not_json(self) -> None:
        client = answering(200, b"<html>", {"content-type": "text/html"})
        with self.assertRaises(InvalidResponseError) as cm:
            client.get_token("t")
        self.assertEqual(cm.exception.status, 200)


if __name__ == "__main__":
    unittest.main()
