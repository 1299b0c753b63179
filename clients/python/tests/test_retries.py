"""Retries of 429 and 503, with Retry-After, backoff and the call's timeout, against a local server."""

from __future__ import annotations

import email.utils
import time
import unittest

from tests.fakeserver import Answer, FakeServer, problem
from tokenvault_client import Client, RateLimitedError, RequestTimeoutError, ServiceUnavailableError
from tokenvault_client import _retry

OK_TOKEN = Answer(201, b'{"ssn": "tok_1"}')


def rate_limited(retry_after: str | None) -> Answer:
    headers = {"Content-Type": "application/problem+json"}
    if retry_after is not None:
        headers["Retry-After"] = retry_after
    return Answer(429, problem(429, "Too Many Requests", detail="rate limited per key"), headers)


UNAVAILABLE = Answer(503, problem(503, "Service Unavailable", detail="the mailer failed"), {"Content-Type": "application/problem+json"})


class RetryTest(unittest.TestCase):
    def client(self, server: FakeServer, **options: object) -> tuple[Client, list[float]]:
        slept: list[float] = []
        options.setdefault("sleep", slept.append)
        return Client(server.url, api_key="key_test", **options), slept  # type: ignore[arg-type]

    def test_429_with_retry_after_then_200(self) -> None:
        server = FakeServer(self, [rate_limited("1"), OK_TOKEN])
        client, slept = self.client(server)
        self.assertEqual(client.tokenize({"ssn": "078-05-1120"}), {"ssn": "tok_1"})
        self.assertEqual(slept, [1.0])
        self.assertEqual(len(server.seen), 2)
        first, second = (s.headers.get("idempotency-key") for s in server.seen)
        self.assertTrue(first, "a retried POST carries an Idempotency-Key")
        self.assertEqual(first, second, "every attempt carries the same Idempotency-Key")
        self.assertEqual(server.seen[0].body, server.seen[1].body)

    def test_retry_after_waits_for_real(self) -> None:
        server = FakeServer(self, [rate_limited("1"), OK_TOKEN])
        client = Client(server.url, api_key="key_test")
        began = time.monotonic()
        client.tokenize({"ssn": "078-05-1120"})
        self.assertGreaterEqual(time.monotonic() - began, 1.0, "Retry-After: 1 waits a second")

    def test_retry_after_as_http_date(self) -> None:
        past = email.utils.formatdate(time.time() - 3600, usegmt=True)
        server = FakeServer(self, [rate_limited(past), OK_TOKEN])
        client, slept = self.client(server)
        client.tokenize({"a": "b"})
        self.assertEqual(slept, [0.0])

    def test_503_twice_then_200_with_backoff(self) -> None:
        server = FakeServer(self, [UNAVAILABLE, UNAVAILABLE, Answer(200, b'{"x": "y"}')])
        client, slept = self.client(server)
        self.assertEqual(client.detokenize({"x": "{{ tok }}"}), {"x": "y"})
        self.assertEqual(len(server.seen), 3)
        self.assertEqual(len(slept), 2)
        for attempt, wait in enumerate(slept):
            full = min(_retry.BACKOFF_CAP, _retry.BACKOFF_BASE * 2**attempt)
            self.assertTrue(full / 2 <= wait <= full, f"backoff {attempt} = {wait}, want in [{full / 2}, {full}]")

    def test_max_retries_exhausted_raises_the_typed_error(self) -> None:
        server = FakeServer(self, [rate_limited("2")] * 3)
        client, slept = self.client(server)
        with self.assertRaises(RateLimitedError) as cm:
            client.get_token("tok_1")
        self.assertEqual(len(server.seen), 3, "the call and max_retries (2) retries")
        self.assertEqual(slept, [2.0, 2.0])
        e = cm.exception
        self.assertEqual((e.status, e.retry_after, e.detail), (429, 2.0, "rate limited per key"))

    def test_no_retries(self) -> None:
        server = FakeServer(self, [UNAVAILABLE])
        client, slept = self.client(server, max_retries=0)
        with self.assertRaises(ServiceUnavailableError):
            client.create_token({"type": "token", "data": "x"})
        self.assertEqual((len(server.seen), slept), (1, []))
        self.assertNotIn("idempotency-key", server.seen[0].headers, "no retry, no made-up key")

    def test_caller_idempotency_key(self) -> None:
        server = FakeServer(self, [UNAVAILABLE, OK_TOKEN])
        client, _ = self.client(server)
        client.tokenize({"ssn": "x"}, idempotency_key="order-42")
        self.assertEqual([s.headers.get("idempotency-key") for s in server.seen], ["order-42", "order-42"])

    def test_get_carries_no_idempotency_key(self) -> None:
        server = FakeServer(self, [Answer(200, b'{"id": "t"}')])
        client, _ = self.client(server)
        client.get_token("t")
        self.assertNotIn("idempotency-key", server.seen[0].headers)

    def test_never_waits_past_the_timeout(self) -> None:
        server = FakeServer(self, [rate_limited("60"), OK_TOKEN])
        client, slept = self.client(server, timeout=30)
        with self.assertRaises(RateLimitedError) as cm:
            client.tokenize({"a": "b"})
        self.assertEqual(slept, [], "a Retry-After past the deadline is not waited")
        self.assertEqual(cm.exception.retry_after, 60.0)
        self.assertEqual(len(server.seen), 1)

    def test_timeout_of_a_hanging_server(self) -> None:
        server = FakeServer(self, [Answer(200, hang=True)])
        client, _ = self.client(server, timeout=0.5)
        with self.assertRaises(RequestTimeoutError) as cm:
            client.get_token("t")
        self.assertEqual(cm.exception.operation_id, "getToken")

    def test_reactor_invocations_are_not_retried(self) -> None:
        server = FakeServer(self, [UNAVAILABLE])
        client, slept = self.client(server)
        with self.assertRaises(ServiceUnavailableError):
            client.invoke_reactor("r1", {"args": {}})
        self.assertEqual((len(server.seen), slept), (1, []), "the reactor's code may have run and chosen the 503")

    def test_proxy_invocations_are_not_retried(self) -> None:
        server = FakeServer(self, [UNAVAILABLE])
        client, slept = self.client(server)
        with self.assertRaises(ServiceUnavailableError):
            client.invoke_proxy_post({"a": 1}, proxy_key="pk")
        self.assertEqual((len(server.seen), slept), (1, []))


class RetryAfterTest(unittest.TestCase):
    def test_parse(self) -> None:
        now = 1_800_000_000.0
        for value, want in [
            ("3", 3.0),
            ("0", 0.0),
            (email.utils.formatdate(now + 30, usegmt=True), 30.0),
            (email.utils.formatdate(now - 30, usegmt=True), 0.0),
            ("soon", None),
            ("-1", None),
            ("", None),
        ]:
            headers = {"retry-after": value} if value else {}
            got = _retry.retry_after(headers, now)
            self.assertEqual(got, want, f"retry_after({value!r})")

    def test_backoff_grows_and_is_capped(self) -> None:
        self.assertEqual(_retry.backoff(0, lambda: 1.0), 0.5)
        self.assertEqual(_retry.backoff(1, lambda: 0.0), 0.5)
        self.assertEqual(_retry.backoff(10, lambda: 1.0), _retry.BACKOFF_CAP)


if __name__ == "__main__":
    unittest.main()
