"""What the client sends: URL, query, headers and bodies, through a recording transport."""

from __future__ import annotations

import json
import unittest
from typing import Any

from tokenvault_client import Client, HTTPRequest, HTTPResponse, iterate

KEY = "key_default-0123456789"


class Recorder:
    def __init__(self, *answers: HTTPResponse) -> None:
        self.answers = list(answers)
        self.sent: list[HTTPRequest] = []

    def __call__(self, req: HTTPRequest) -> HTTPResponse:
        self.sent.append(req)
        if self.answers:
            return self.answers.pop(0)
        return HTTPResponse(200, {"content-type": "application/json"}, b"{}")


def json_answer(value: Any, status: int = 200) -> HTTPResponse:
    return HTTPResponse(status, {"content-type": "application/json"}, json.dumps(value).encode())


class RequestTest(unittest.TestCase):
    def test_path_parameters_are_escaped(self) -> None:
        rec = Recorder()
        Client("http://vault.test/", api_key=KEY, transport=rec).get_token("4242 4242/x?y")
        self.assertEqual(rec.sent[0].url, "http://vault.test/tokens/4242%204242%2Fx%3Fy")

    def test_query(self) -> None:
        rec = Recorder()
        Client("http://vault.test", api_key=KEY, transport=rec).list_tokens({"id": ["a", "b c"], "size": 2})
        self.assertEqual(rec.sent[0].url, "http://vault.test/tokens?id=a&id=b%20c&size=2")

    def test_keys(self) -> None:
        rec = Recorder()
        c = Client("http://vault.test", api_key=KEY, transport=rec)
        c.get_token("t")
        c.get_token("t", api_key="key_other")
        c.get_root()
        c.invoke_proxy_path_get("a/b", {"q": "1"}, proxy_key="pk")
        self.assertEqual(rec.sent[0].headers["SVC-API-KEY"], KEY)
        self.assertEqual(rec.sent[1].headers["SVC-API-KEY"], "key_other")
        self.assertNotIn("SVC-API-KEY", rec.sent[2].headers, "the root takes no key")
        proxied = rec.sent[3]
        self.assertEqual(proxied.url, "http://vault.test/proxy/a/b?q=1")
        self.assertEqual(proxied.headers["SVC-PROXY-KEY"], "pk")
        self.assertNotIn("SVC-API-KEY", proxied.headers, "the client's key does not go to a proxy unless named")
        for req in rec.sent:
            self.assertNotIn(KEY, repr(req))

    def test_purpose(self) -> None:
        rec = Recorder()
        c = Client("http://vault.test", api_key=KEY, transport=rec)
        c.get_token("t")
        Client("http://vault.test", api_key=KEY, transport=rec, purpose="fraud-review").get_token("t")
        Client("http://vault.test", api_key=KEY, transport=rec, purpose="support").detokenize({"a": "{{ t }}"})
        self.assertNotIn("SVC-PURPOSE", rec.sent[0].headers)
        self.assertEqual(rec.sent[1].headers["SVC-PURPOSE"], "fraud-review")
        self.assertEqual(rec.sent[2].headers["SVC-PURPOSE"], "support")

    def test_bodies(self) -> None:
        rec = Recorder()
        c = Client("http://vault.test", api_key=KEY, transport=rec)
        c.update_token("t", {"metadata": {"k": "é"}})
        c.delete_token("t")
        c.invoke_proxy_post(b"\x00\x01", proxy_key="pk")
        c.invoke_proxy_post("a=1", proxy_key="pk", content_type="application/x-www-form-urlencoded")
        patch, delete, raw, form = rec.sent
        self.assertEqual(patch.headers["Content-Type"], "application/merge-patch+json")
        self.assertEqual(json.loads(patch.body or b""), {"metadata": {"k": "é"}})
        self.assertIsNone(delete.body)
        self.assertNotIn("Content-Type", delete.headers)
        self.assertEqual((raw.body, raw.headers["Content-Type"]), (b"\x00\x01", "application/octet-stream"))
        self.assertEqual(form.headers["Content-Type"], "application/x-www-form-urlencoded")

    def test_proxy_headers(self) -> None:
        rec = Recorder()
        c = Client("http://vault.test", api_key=KEY, transport=rec)
        c.invoke_proxy_post("<a/>", proxy_key="pk", headers={"content-type": "application/xml", "accept": "application/xml", "X-Trace": "1"})
        sent = rec.sent[0].headers
        self.assertEqual({k.lower() for k in sent if k.lower() in ("content-type", "accept")}, {"content-type", "accept"})
        self.assertEqual(sent["Content-Type"], "application/xml")
        self.assertEqual(sent["accept"], "application/xml")
        self.assertEqual(sent["X-Trace"], "1")
        for name in ("SVC-API-KEY", "svc-proxy-key"):
            with self.assertRaises(ValueError, msg=name):
                c.invoke_proxy_get(proxy_key="pk", headers={name: "k"})
        with self.assertRaises(ValueError):
            c.invoke_proxy_get(proxy_key="")

    def test_results(self) -> None:
        rec = Recorder(
            HTTPResponse(204, {}, b""),
            HTTPResponse(200, {"content-type": "application/octet-stream"}, b"\x00backup"),
            HTTPResponse(201, {"content-type": "text/plain", "x-a": "1"}, b"made"),
        )
        c = Client("http://vault.test", api_key=KEY, transport=rec)
        c.delete_token("t")  # a 204: nothing to answer
        self.assertEqual(c.operator_backup(), b"\x00backup")
        proxied = c.invoke_proxy_put("x", proxy_key="pk")
        self.assertEqual((proxied.status, proxied.text(), proxied.headers["x-a"]), (201, "made", "1"))

    def test_iterate_walks_by_cursor(self) -> None:
        rec = Recorder(
            json_answer({"pagination": {"after": "c1"}, "data": [{"id": "1"}, {"id": "2"}]}),
            json_answer({"pagination": {"after": "c2"}, "data": [{"id": "3"}]}),
            json_answer({"pagination": {}, "data": []}),
        )
        c = Client("http://vault.test", api_key=KEY, transport=rec)
        ids = [t["id"] for t in iterate(c.list_tokens, {"size": 2, "page": 5}, api_key="key_x")]
        self.assertEqual(ids, ["1", "2", "3"])
        self.assertEqual(
            [r.url for r in rec.sent],
            ["http://vault.test/tokens?size=2", "http://vault.test/tokens?size=2&start=c1", "http://vault.test/tokens?size=2&start=c2"],
        )
        self.assertEqual({r.headers["SVC-API-KEY"] for r in rec.sent}, {"key_x"})

    def test_bad_arguments(self) -> None:
        for url in ("ftp://vault.test", "vault.test", "http://vault.test/?a=1"):
            with self.assertRaises(ValueError, msg=url):
                Client(url)
        c = Client("http://vault.test", api_key=KEY, transport=Recorder())
        with self.assertRaises(ValueError):
            c.get_token("")
        with self.assertRaises(ValueError):
            c.get_token("t", timeout=0)
        with self.assertRaises(ValueError, msg="NaN is no JSON"):
            c.tokenize({"x": float("nan")})
        with self.assertRaises(TypeError):
            c.tokenize({"x": object()})
        self.assertNotIn(KEY, repr(c))


if __name__ == "__main__":
    unittest.main()
