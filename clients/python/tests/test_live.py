"""The client against a real server (internal/clienttest, through python_test.go).

Skipped when TOKENVAULT_URL is not set: `go test ./clients/python` sets it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import time
import unittest
import uuid
from typing import Any

from tokenvault_client import (
    AuthenticationError,
    Client,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    iterate,
)
from tokenvault_client.types import Condition
from tokenvault_client.webhooks import WebhookVerificationError, verify

from tests.fakeserver import Answer, FakeServer

URL = os.environ.get("TOKENVAULT_URL", "")
CARD = {"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2035}


@unittest.skipUnless(URL, "TOKENVAULT_URL is not set (go test ./clients/python runs this suite against a server)")
class LiveTest(unittest.TestCase):
    mgmt: Client
    private: Client
    private_app: dict[str, Any]

    @classmethod
    def setUpClass(cls) -> None:
        cls.mgmt = Client(URL, api_key=os.environ["TOKENVAULT_MANAGEMENT_KEY"], timeout=30)
        cls.private_app = dict(
            cls.mgmt.create_application(
                {
                    "name": "python-private",
                    "type": "private",
                    "permissions": ["token:create", "token:read", "token:update", "token:delete", "token:search"],
                    "rules": [
                        {"priority": 1, "container": "/", "transform": "reveal", "permissions": ["token:read"]},
                    ],
                }
            )
        )
        cls.private = Client(URL, api_key=cls.private_app["key"], timeout=30)

    def test_tokenize_and_read_back(self) -> None:
        out = self.private.tokenize({"ssn": "078-05-1120", "card": {"type": "card", "data": CARD}})
        self.assertIsInstance(out["ssn"], str)
        self.assertNotEqual(out["ssn"], "078-05-1120")
        ssn = self.private.get_token(out["ssn"])
        self.assertEqual(ssn["data"], "078-05-1120")
        card = self.private.get_token(out["card"]["id"])
        self.assertEqual(card["type"], "card")
        self.assertEqual(card["data"]["number"], CARD["number"])

        clear = self.private.detokenize({"ssn": "{{ %s }}" % out["ssn"], "n": "{{ %s | json: '$.number' }}" % out["card"]["id"]})
        self.assertEqual(clear, {"ssn": "078-05-1120", "n": CARD["number"]})

    def test_token_lifecycle(self) -> None:
        t = self.private.create_token({"type": "token", "data": "alice@example.com", "metadata": {"customer": "42"}})
        self.assertEqual(t["type"], "token")
        got = self.private.get_token(t["id"])
        self.assertEqual(got["data"], "alice@example.com")
        updated = self.private.update_token(t["id"], {"metadata": {"customer": "43"}})
        self.assertEqual(updated["metadata"], {"customer": "43"})
        self.private.delete_token(t["id"])
        with self.assertRaises(NotFoundError) as cm:
            self.private.get_token(t["id"])
        self.assertEqual(cm.exception.status, 404)
        self.assertEqual(cm.exception.operation_id, "getToken")

    def test_list_and_search_with_pagination(self) -> None:
        container = "/python/" + uuid.uuid4().hex[:8] + "/"
        made = []
        for i in range(5):
            tok = self.private.create_token(
                {"type": "token", "data": f"value-{i}", "containers": [container], "search_indexes": ["{{ data }}"]}
            )
            made.append(tok["id"])

        first = self.private.list_tokens({"container": container, "size": 2})
        self.assertEqual(first["pagination"]["total_items"], 5)
        self.assertEqual(first["pagination"]["total_pages"], 3)
        self.assertEqual(len(first["data"]), 2)
        third = self.private.list_tokens({"container": container, "size": 2, "page": 3})
        self.assertEqual(len(third["data"]), 1)

        walked = [t["id"] for t in iterate(self.private.list_tokens, {"container": container, "size": 2})]
        self.assertEqual(sorted(walked), sorted(made))

        found = self.private.search_tokens({"query": f"container:{container} AND data:value-3", "size": 10})
        self.assertEqual([t["id"] for t in found["data"]], [made[3]])
        page = self.private.search_tokens({"query": f"container:{container}", "size": 2})
        self.assertEqual(page["pagination"]["total_items"], 5)
        self.assertEqual(len(page["data"]), 2)
        searched = [t["id"] for t in iterate(self.private.search_tokens, {"query": f"container:{container}", "size": 2})]
        self.assertEqual(sorted(searched), sorted(made))

    def test_applications(self) -> None:
        app = self.mgmt.create_application({"name": "python-app", "type": "private", "permissions": ["token:read"]})
        self.assertEqual(self.mgmt.get_application(app["id"])["name"], "python-app")
        renamed = self.mgmt.update_application(app["id"], {"name": "python-app-2", "permissions": ["token:read"]})
        self.assertEqual(renamed["name"], "python-app-2")
        listed = self.mgmt.list_applications({"id": [app["id"], self.private_app["id"]]})
        self.assertEqual(sorted(a["id"] for a in listed["data"]), sorted([app["id"], self.private_app["id"]]))
        self.assertEqual(self.mgmt.get_application_by_key()["type"], "management")
        self.mgmt.delete_application(app["id"])
        with self.assertRaises(NotFoundError):
            self.mgmt.get_application(app["id"])

    def test_typed_errors(self) -> None:
        with self.assertRaises(InvalidRequestError) as cm:
            self.private.create_token({"type": "card", "data": {"number": "12", "expiration_month": 12, "expiration_year": 2035}})
        e = cm.exception
        self.assertEqual(e.status, 400)
        self.assertEqual(e.kind, "invalid")
        self.assertTrue(e.errors, e)
        self.assertTrue(any(k.startswith("data") for k in e.errors), e.errors)
        self.assertEqual(e.problem["status"], 400)
        self.assertTrue(e.title)

        with self.assertRaises(AuthenticationError):
            self.private.get_token("x", api_key="key_unknown-0123456789")
        with self.assertRaises(PermissionDeniedError):
            self.private.create_application({"name": "nope", "type": "private"})
        key = self.private_app["key"]
        for text in (str(e), repr(e)):
            self.assertNotIn(key, text)

    def test_intent_public_then_private(self) -> None:
        public_app = self.mgmt.create_application({"name": "python-public", "type": "public", "permissions": ["token:create"]})
        public = Client(URL, api_key=public_app["key"], timeout=30)
        intent = public.create_token_intent({"type": "card", "data": CARD})
        self.assertEqual(intent["card"]["last4"], "4242")
        self.assertNotIn("number", str(intent))
        token = self.private.create_token({"token_intent_id": intent["id"]})
        self.assertEqual(self.private.get_token(token["id"])["data"]["number"], CARD["number"])
        with self.assertRaises(PermissionDeniedError):
            public.get_token(token["id"])  # a public key only writes

    def test_proxy_detokenizes_on_the_way(self) -> None:
        proxy_app = self.mgmt.create_application(
            {
                "name": "python-proxy",
                "type": "private",
                "permissions": ["token:use"],
                "rules": [{"priority": 1, "container": "/", "transform": "reveal", "permissions": ["token:use"]}],
            }
        )
        proxy = self.mgmt.create_proxy(
            {"name": "echo", "destination_url": os.environ["TOKENVAULT_ECHO_URL"], "application": {"id": proxy_app["id"]}, "require_auth": False}
        )
        tok = self.private.create_token({"type": "token", "data": "secret-value"})
        answer = self.mgmt.invoke_proxy_path_post("charges", {"value": "{{ %s }}" % tok["id"]}, proxy_key=proxy["key"])
        self.assertEqual(answer.status, 200)
        self.assertEqual(answer.json(), {"value": "secret-value"})
        self.assertEqual(self.mgmt.get_proxy(proxy["id"])["name"], "echo")
        self.mgmt.delete_proxy(proxy["id"])

    def test_webhooks(self) -> None:
        types = self.mgmt.list_webhook_event_types()
        self.assertIn("token.created", types)
        hook = self.mgmt.create_webhook({"name": "py", "url": os.environ["TOKENVAULT_ECHO_URL"] + "/hook", "events": ["token.created"]})
        self.assertTrue(hook["secret"])
        self.assertEqual([w["id"] for w in self.mgmt.list_webhooks()["data"]], [hook["id"]])
        self.mgmt.delete_webhook(hook["id"])

    def test_a_webhook_delivery_verifies(self) -> None:
        receiver = FakeServer(self, [Answer(204, b"")])
        hook = self.mgmt.create_webhook({"name": "py-verify", "url": receiver.url + "/hook", "events": ["token.created"]})
        self.addCleanup(self.mgmt.delete_webhook, hook["id"])
        self.mgmt.test_webhook(hook["id"])
        deadline = time.monotonic() + 60
        while not receiver.seen and time.monotonic() < deadline:
            time.sleep(0.05)
        deliveries = self.mgmt.list_webhook_deliveries(hook["id"])["data"]
        self.assertTrue(receiver.seen, f"no delivery arrived: {deliveries}")
        got = receiver.seen[0]
        verify(hook["secret"], got.headers, got.body)
        self.assertEqual(json.loads(got.body)["event"]["type"], "webhook.test")
        with self.assertRaises(WebhookVerificationError):
            verify(hook["secret"], got.headers, got.body + b" ")

    def test_unauthenticated_and_operator_routes(self) -> None:
        root = Client(URL).get_root()
        self.assertEqual(root["name"], "Token Vault")
        doc = Client(URL).get_open_api_document()
        self.assertIn("paths", doc)
        operator = Client(URL, api_key=os.environ["TOKENVAULT_OPERATOR_KEY"], timeout=30)
        tenants = operator.operator_list_tenants({"size": 10})
        self.assertGreaterEqual(tenants["pagination"]["total_items"], 1)

    def test_reads_of_the_tenant(self) -> None:
        """Read operations answer what their types say (each request and answer is held
        to the OpenAPI document by the server's wrapper)."""
        m = self.mgmt
        self.assertTrue(any(p["type"] == "token:read" for p in m.list_permissions({"application_type": "private"})))
        self.assertTrue(m.list_log_entity_types())
        self.assertIn("data", m.list_logs({"size": 5}))
        self.assertEqual(m.get_tenant()["name"], "Acme")
        self.assertGreaterEqual(m.list_members()["pagination"]["total_items"], 1)
        self.assertIn("data", m.list_invitations())
        self.assertIn("data", m.list_formulas())
        self.assertIn("data", m.list_reactors({"name": "*"}))
        self.assertIn("data", m.list_proxies())
        self.assertIn("keys", Client(URL).list_audit_keys())
        self.assertTrue(m.get_webhook_secret()["secret"])
        tok = self.private.create_token({"type": "token", "data": "x", "metadata": {"subject": "py-" + uuid.uuid4().hex}})
        self.private.get_token(tok["id"])
        self.assertGreaterEqual(m.token_access(tok["id"], {"size": 10})["pagination"]["total_items"], 1)
        self.assertIn("data", m.subject_access({"metadata": tok["metadata"]}))

    def test_export_answers_the_age_file(self) -> None:
        # An age public key whose private key nobody kept.
        recipient = "age169saay7hadce9xfcydjn3l4h3ap6p5a69nc2zjera73vmv9n7fpsxty04l"
        body = self.mgmt.export_tokens({"recipient": recipient})
        self.assertIsInstance(body, bytes)
        self.assertTrue(body.startswith(b"age-encryption.org/v1\n"))
        with self.assertRaises(InvalidRequestError):
            self.mgmt.export_tokens({"recipient": "age1nope"})

    def test_session_authorized_by_a_private_key(self) -> None:
        public_app = self.mgmt.create_application({"name": "python-sessions", "type": "public", "permissions": ["token:create"]})
        session = Client(URL, api_key=public_app["key"], timeout=30).create_session()
        tok = self.private.create_token({"type": "token", "data": "seen-by-session"})
        other = self.private.create_token({"type": "token", "data": "not-for-the-session"})
        one_token: Condition = {"attribute": "id", "operator": "equals", "value": tok["id"]}
        self.private.authorize_session(
            {
                "nonce": session["nonce"],
                "permissions": ["token:read"],
                "rules": [{"priority": 1, "conditions": [one_token], "transform": "reveal", "permissions": ["token:read"]}],
            }
        )
        as_session = Client(URL, api_key=session["session_key"], timeout=30)
        self.assertEqual(as_session.get_token(tok["id"])["data"], "seen-by-session")
        self.assertNotEqual(as_session.get_token(other["id"]).get("data"), "not-for-the-session", "the rule reveals one token only")

    def test_readme_examples_run(self) -> None:
        """The README's Python blocks run as written, in order, against the server."""
        readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")
        with open(readme, encoding="utf-8") as f:
            blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
        self.assertGreaterEqual(len(blocks), 3)
        namespace: dict[str, Any] = {"__name__": "readme"}
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            for block in blocks:
                code = block.replace('"http://localhost:8080"', repr(URL))
                code = code.replace('os.environ["TOKENVAULT_API_KEY"]', repr(self.private_app["key"]))
                exec(compile(code, "README.md", "exec"), namespace)
        printed = out.getvalue().splitlines()
        self.assertEqual(printed[0], CARD["number"])
        self.assertIn("data.number", printed[-1])


if __name__ == "__main__":
    unittest.main()
