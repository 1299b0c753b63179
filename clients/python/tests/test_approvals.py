"""Approvals: a call the tenant's approval policy holds raises ApprovalRequired (its
202's pending change), and a held detokenization is made once with approval_id=.

ApprovalUnitTest scripts the answers through a recording transport; ApprovalLiveTest
runs against a real server (TOKENVAULT_URL, set by python_test.go), each test in a
tenant of its own, so that its policy holds no other test's calls.
"""

from __future__ import annotations

import json
import os
import unittest
import uuid
from typing import Any

from tokenvault_client import (
    OPERATIONS,
    APIError,
    ApprovalRequired,
    AuthenticationError,
    Client,
    ConflictError,
    HTTPRequest,
    HTTPResponse,
    InvalidResponseError,
    PermissionDeniedError,
    TokenVaultError,
)
from tokenvault_client.types import ApprovalPolicyRequest

KEY = "key_secret-of-the-suite-0123456789"
HELD_KEY = "key_the-key-once-approved-0123456789"


def pending(operation: str) -> dict[str, Any]:
    return {
        "id": "chg_1", "tenant_id": "t", "operation": operation, "target": "app_1", "before": None,
        "after": {"name": "ops"}, "status": "pending", "required": 1, "approvals": [],
        "requested_by": "app_0", "requested_by_type": "application",
        "requested_at": "2026-01-01T00:00:00Z", "expires_at": "2026-01-02T00:00:00Z",
    }


class Script:
    """A transport answering the scripted answers in turn (the last repeats)."""

    def __init__(self, *answers: HTTPResponse) -> None:
        self.answers = list(answers)
        self.sent: list[HTTPRequest] = []

    def __call__(self, req: HTTPRequest) -> HTTPResponse:
        self.sent.append(req)
        return self.answers[min(len(self.sent), len(self.answers)) - 1]


def answer(status: int, value: Any) -> HTTPResponse:
    return HTTPResponse(status, {"content-type": "application/json"}, json.dumps(value).encode())


class ApprovalUnitTest(unittest.TestCase):
    def test_the_table_marks_held_operations_and_those_taking_an_approval_id(self) -> None:
        held = sorted(op_id for op_id, op in OPERATIONS.items() if op.approval)
        self.assertEqual(held, ["createApplication", "deleteOwnTenant", "detokenize", "exportTokens",
                                "regenerateApplicationKey", "setApprovalPolicy", "updateApplication"])
        with_id = sorted(op_id for op_id, op in OPERATIONS.items() if op.approval_id)
        self.assertEqual(with_id, ["deleteOwnTenant", "detokenize", "exportTokens"])
        # invokeReactor's 202 is its own (accepted, answered later), no pending change.
        self.assertFalse(OPERATIONS["invokeReactor"].approval)

    def test_a_held_call_raises_approval_required_once(self) -> None:
        script = Script(answer(202, {**pending("application.create_management"), "key": HELD_KEY}))
        c = Client("http://vault.test", api_key=KEY, transport=script, max_retries=3, sleep=lambda s: None)
        with self.assertRaises(ApprovalRequired) as cm:
            c.create_application({"name": "ops", "type": "management"})
        e = cm.exception
        self.assertIsInstance(e, TokenVaultError)
        self.assertNotIsInstance(e, APIError, "a held call is no failure")
        self.assertEqual(e.status, 202)
        self.assertEqual(e.operation_id, "createApplication")
        self.assertEqual(e.change["id"], "chg_1")
        self.assertEqual(e.change["operation"], "application.create_management")
        self.assertNotIn("key", e.change, "the key is the exception's, not the change's")
        self.assertEqual(e.key, HELD_KEY)
        self.assertEqual(len(script.sent), 1, "never retried")
        shown = f"{e} {e!r} {e.args} {e.change}"
        self.assertNotIn(HELD_KEY, shown)
        self.assertNotIn(KEY, shown)
        self.assertIn("chg_1", str(e))

    def test_a_held_detokenization_has_no_key_and_a_202_must_be_a_change(self) -> None:
        script = Script(answer(202, pending("token.detokenize_bulk")),
                        HTTPResponse(202, {"content-type": "text/plain"}, b"accepted"))
        c = Client("http://vault.test", api_key=KEY, transport=script)
        with self.assertRaises(ApprovalRequired) as cm:
            c.detokenize({"a": "{{ tok_1 }}"})
        self.assertIsNone(cm.exception.key)
        with self.assertRaises(InvalidResponseError):
            c.detokenize({"a": "{{ tok_1 }}"})

    def test_invoke_reactor_answers_its_own_202(self) -> None:
        c = Client("http://vault.test", api_key=KEY, transport=Script(answer(202, {"id": "react_1"})))
        self.assertEqual(c.invoke_reactor("r1", {"args": {}}), {"id": "react_1"})

    def test_approval_id_is_sent_by_the_operations_that_take_it(self) -> None:
        script = Script(answer(200, {"a": "one"}), HTTPResponse(204, {}, b""), answer(200, {"a": "one"}))
        c = Client("http://vault.test", api_key=KEY, transport=script)
        self.assertEqual(c.detokenize({"a": "{{ tok_1 }}"}, approval_id="chg_1"), {"a": "one"})
        self.assertEqual(script.sent[0].headers["SVC-APPROVAL-ID"], "chg_1")
        c.delete_own_tenant(approval_id="chg_2")
        self.assertEqual((script.sent[1].method, script.sent[1].headers["SVC-APPROVAL-ID"]), ("DELETE", "chg_2"))
        with self.assertRaises(ValueError):
            c.detokenize({}, approval_id="")
        with self.assertRaises(ValueError):  # through the transport's entry: no such header on createToken
            c._call("createToken", {}, {}, None, api_key=None, idempotency_key=None, timeout=None, approval_id="chg_1")
        c.detokenize({"a": "{{ tok_1 }}"})
        self.assertEqual(len(script.sent), 3, "a refused approval_id sends nothing")
        self.assertNotIn("SVC-APPROVAL-ID", script.sent[2].headers)


URL = os.environ.get("TOKENVAULT_URL", "")


@unittest.skipUnless(URL, "TOKENVAULT_URL is not set (go test ./clients/python runs this suite against a server)")
class ApprovalLiveTest(unittest.TestCase):
    def tenant(self, operations: list[str], detokenize_over: int = 0) -> tuple[Client, Client, str]:
        """A tenant of its own (made with the operator key), a second management
        application as its one approver, and a policy: the clients of the requester
        (the tenant's first management key) and the approver, and the tenant's name."""
        name = "python approvals " + uuid.uuid4().hex[:8]
        operator = Client(URL, api_key=os.environ["TOKENVAULT_OPERATOR_KEY"], timeout=30)
        boot = operator.operator_create_tenant({"name": name})
        requester = Client(URL, api_key=boot["application"]["key"], timeout=30)
        app = requester.create_application({"name": "approver", "type": "management", "permissions": ["tenant:read"]})
        approver = Client(URL, api_key=app["key"], timeout=30)
        policy: ApprovalPolicyRequest = {"required": 1, "approvers": [app["id"]], "operations": operations, "ttl_seconds": 3600}
        if detokenize_over:
            policy["detokenize_over"] = detokenize_over
        self.assertEqual(requester.set_approval_policy(policy)["required"], 1)
        return requester, approver, name

    def test_a_held_management_application_is_approved_then_its_key_works(self) -> None:
        requester, approver, name = self.tenant(["application.create_management"])
        requester.create_application({"name": "not held", "type": "private", "permissions": ["token:read"]})

        with self.assertRaises(ApprovalRequired) as cm:
            requester.create_application({"name": "ops", "type": "management", "permissions": ["tenant:read"]})
        e = cm.exception
        self.assertEqual(e.change["status"], "pending")
        self.assertEqual(e.change["operation"], "application.create_management")
        self.assertIsInstance(e.key, str)
        assert e.key is not None
        self.assertNotIn(e.key, f"{e} {e!r} {e.change}")
        held = Client(URL, api_key=e.key, timeout=30)
        with self.assertRaises(AuthenticationError, msg="the key works only once the change is applied"):
            held.get_tenant()

        ids = [c["id"] for c in approver.list_approvals({"status": "pending"})["data"]]
        self.assertEqual(ids, [e.change["id"]])
        with self.assertRaises(PermissionDeniedError, msg="the requester cannot approve its own"):
            requester.approve_change(e.change["id"])
        self.assertEqual(approver.approve_change(e.change["id"])["status"], "applied")

        self.assertEqual(held.get_tenant()["name"], name)
        apps = requester.list_applications()["data"]
        self.assertTrue(any(a["name"] == "ops" and a["type"] == "management" for a in apps), [a["name"] for a in apps])

    def test_a_held_detokenization_is_made_once_with_its_approval_id(self) -> None:
        requester, approver, _ = self.tenant(["token.detokenize_bulk"], detokenize_over=1)
        app = requester.create_application({
            "name": "reader", "type": "private", "permissions": ["token:create", "token:read"],
            "rules": [{"priority": 1, "container": "/", "transform": "reveal", "permissions": ["token:read"]}],
        })
        reader = Client(URL, api_key=app["key"], timeout=30)
        a = reader.create_token({"type": "token", "data": "first"})
        b = reader.create_token({"type": "token", "data": "second"})
        self.assertEqual(reader.detokenize({"a": "{{ %s }}" % a["id"]}), {"a": "first"}, "one token is not held")

        body = {"a": "{{ %s }}" % a["id"], "b": "{{ %s }}" % b["id"]}
        with self.assertRaises(ApprovalRequired) as cm:
            reader.detokenize(body)
        change = cm.exception.change
        self.assertEqual(change["operation"], "token.detokenize_bulk")
        self.assertIsNone(cm.exception.key)
        self.assertNotIn("first", json.dumps(change), "the change holds no data")
        with self.assertRaises(APIError, msg="not before its approval"):
            reader.detokenize(body, approval_id=change["id"])

        self.assertEqual(approver.approve_change(change["id"])["status"], "applied")
        other = {"a": "{{ %s }}" % a["id"], "b": "{{ %s }}" % a["id"], "c": "{{ %s }}" % b["id"]}
        with self.assertRaises(APIError, msg="another body is refused"):
            reader.detokenize(other, approval_id=change["id"])
        self.assertEqual(reader.detokenize(body, approval_id=change["id"]), {"a": "first", "b": "second"})
        with self.assertRaises(ConflictError, msg="once"):
            reader.detokenize(body, approval_id=change["id"])
        self.assertIsInstance(approver.get_approval(change["id"]).get("used_at"), str)


if __name__ == "__main__":
    unittest.main()
