"""Every operation of the OpenAPI document has a method, and every method an operation.

The document is read at $TOKENVAULT_OPENAPI (set by go test), else at
httpapi/openapi.json of this repository.
"""

from __future__ import annotations

import inspect
import json
import os
import unittest
from typing import Any

from tokenvault_client import OPERATIONS, Client, HTTPRequest, HTTPResponse

HERE = os.path.dirname(os.path.abspath(__file__))
DOCUMENT = os.environ.get("TOKENVAULT_OPENAPI") or os.path.join(HERE, "..", "..", "..", "httpapi", "openapi.json")
HTTP_METHODS = ("get", "put", "post", "patch", "delete", "head", "options", "trace")


def document_operations() -> dict[str, tuple[str, str]]:
    with open(DOCUMENT, encoding="utf-8") as f:
        doc = json.load(f)
    ops = {}
    for path, item in doc["paths"].items():
        for method in HTTP_METHODS:
            if method in item:
                ops[item[method]["operationId"]] = (method.upper(), path)
    return ops


def public_methods() -> set[str]:
    return {name for name, member in inspect.getmembers(Client, callable) if not name.startswith("_")}


class OperationsTest(unittest.TestCase):
    def test_every_operation_has_a_method(self) -> None:
        doc = document_operations()
        missing = sorted(set(doc) - set(OPERATIONS))
        self.assertEqual(missing, [], "operations of the document with no entry in OPERATIONS")
        for op_id, (method, path) in doc.items():
            op = OPERATIONS[op_id]
            self.assertEqual((op.http_method, op.path), (method, path), op_id)
            self.assertTrue(callable(getattr(Client, op.method_name, None)), f"{op_id}: Client has no method {op.method_name}")

    def test_every_method_has_an_operation(self) -> None:
        doc = document_operations()
        stale = sorted(set(OPERATIONS) - set(doc))
        self.assertEqual(stale, [], "entries of OPERATIONS the document does not have")
        by_method = {op.method_name: op_id for op_id, op in OPERATIONS.items()}
        extra = sorted(public_methods() - set(by_method))
        self.assertEqual(extra, [], "public methods of Client that are no operation")

    def test_each_method_calls_its_own_operation(self) -> None:
        """Each method sends the method and path its table entry names (so no method
        calls another operation's entry), with path parameters first."""
        sent: list[HTTPRequest] = []

        def transport(req: HTTPRequest) -> HTTPResponse:
            sent.append(req)
            return HTTPResponse(200, {"content-type": "application/json"}, b"{}")

        client = Client("http://vault.test/prefix", api_key="key", transport=transport, max_retries=0)
        for op_id, op in OPERATIONS.items():
            sent.clear()
            method = getattr(client, op.method_name)
            params = list(inspect.signature(method).parameters.values())
            positional = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
            self.assertEqual(positional[: len(op.path_params)], list(op.path_params), op_id)
            args: list[Any] = [f"p-{name}" for name in op.path_params]
            if op.body is not None:
                args.append({})
            kwargs: dict[str, Any] = {"proxy_key": "pk"} if op.auth == "proxy" else {}
            method(*args, **kwargs)
            self.assertEqual(len(sent), 1, op_id)
            want = "http://vault.test/prefix" + op.path
            for name in op.path_params:
                want = want.replace("{" + name + "}", f"p-{name}")
            self.assertEqual((sent[0].method, sent[0].url), (op.http_method, want), op_id)


if __name__ == "__main__":
    unittest.main()
