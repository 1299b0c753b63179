"""The generated modules are what generate.py makes of the OpenAPI document now."""

from __future__ import annotations

import os
import unittest

import generate


class GeneratedTest(unittest.TestCase):
    def test_generated_modules_are_fresh(self) -> None:
        document = os.environ.get("TOKENVAULT_OPENAPI") or generate.DEFAULT_DOCUMENT
        for path, want in generate.generate(document).items():
            with open(path, encoding="utf-8") as f:
                got = f.read()
            self.assertTrue(got == want, f"{os.path.relpath(path)} is stale: run python3 generate.py in clients/python")

    def test_snake_case_names(self) -> None:
        for op_id, want in [
            ("getToken", "get_token"),
            ("tokenize", "tokenize"),
            ("rotateFPEKey", "rotate_fpe_key"),
            ("fpeEncode", "fpe_encode"),
            ("getOpenAPIDocument", "get_open_api_document"),
            ("invokeProxyPathGet", "invoke_proxy_path_get"),
        ]:
            self.assertEqual(generate.snake(op_id), want, op_id)
