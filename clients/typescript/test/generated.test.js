// src/generated.ts is generated from the OpenAPI document; this fails
// when it is stale: run `node scripts/generate.mjs`.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { generate } from "../scripts/generate.mjs";

const docPath = process.env.TOKENVAULT_OPENAPI ?? new URL("../../../httpapi/openapi.json", import.meta.url);

test("src/generated.ts is what scripts/generate.mjs makes of the OpenAPI document", () => {
  const doc = JSON.parse(readFileSync(docPath, "utf8"));
  const committed = readFileSync(new URL("../src/generated.ts", import.meta.url), "utf8");
  const fresh = generate(doc);
  if (committed !== fresh) {
    const a = committed.split("\n");
    const b = fresh.split("\n");
    let i = 0;
    while (i < a.length && a[i] === b[i]) i++;
    assert.fail(`src/generated.ts is stale (first difference at line ${i + 1}: ${JSON.stringify(a[i])} vs ${JSON.stringify(b[i])}): run node scripts/generate.mjs in clients/typescript`);
  }
});
