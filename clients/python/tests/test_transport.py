"""The default transport keeps connections alive, and copes with those the server closed."""

from __future__ import annotations

import unittest

from tests.fakeserver import Answer, FakeServer
from tokenvault_client import Client, NetworkError

OK = Answer(200, b'{"id": "t"}', {"Content-Type": "application/json"})
CLOSING = Answer(200, b'{"id": "t"}', {"Content-Type": "application/json", "Connection": "close"})


class TransportTest(unittest.TestCase):
    def test_connections_are_reused(self) -> None:
        server = FakeServer(self, [OK, OK, OK], keep_alive=True)
        client = Client(server.url, api_key="k")
        for _ in range(3):
            client.get_token("t")
        self.assertEqual(len({s.connection for s in server.seen}), 1, "three calls, one connection")

    def test_a_connection_the_server_closes_is_not_kept(self) -> None:
        server = FakeServer(self, [CLOSING, OK], keep_alive=True)
        client = Client(server.url, api_key="k")
        client.detokenize({"a": "{{ t }}"})
        client.detokenize({"a": "{{ t }}"})
        self.assertEqual(len({s.connection for s in server.seen}), 2)

    def test_a_get_is_sent_again_when_a_kept_connection_fails(self) -> None:
        server = FakeServer(self, [OK, Answer(0, drop=True), OK], keep_alive=True)
        client = Client(server.url, api_key="k", max_retries=0)
        client.get_token("t")
        self.assertEqual(client.get_token("t"), {"id": "t"})
        first, dropped, again = (s.connection for s in server.seen)
        self.assertEqual(first, dropped, "the second call went on the kept connection")
        self.assertNotEqual(dropped, again, "and was sent again on a new one")

    def test_a_post_without_idempotency_key_is_not_sent_again(self) -> None:
        server = FakeServer(self, [OK, Answer(0, drop=True), OK], keep_alive=True)
        client = Client(server.url, api_key="k", max_retries=0)
        client.detokenize({"a": "{{ t }}"})
        with self.assertRaises(NetworkError):
            client.detokenize({"a": "{{ t }}"})
        self.assertEqual(len(server.seen), 2, "a POST that may have been done is not repeated")

    def test_a_post_with_idempotency_key_is_sent_again(self) -> None:
        server = FakeServer(self, [Answer(201, b"{}"), Answer(0, drop=True), Answer(201, b'{"a": "tok"}')], keep_alive=True)
        client = Client(server.url, api_key="k", max_retries=0)
        client.tokenize({"a": "x"})
        self.assertEqual(client.tokenize({"a": "x"}, idempotency_key="order-1"), {"a": "tok"})
        self.assertEqual([s.headers.get("idempotency-key") for s in server.seen[1:]], ["order-1", "order-1"])


if __name__ == "__main__":
    unittest.main()
