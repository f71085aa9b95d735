/**
 * `operationFingerprint` keys stored approvals, so its values must never
 * drift: they are pinned to fixed hex digests, computed outside this code
 * (sha256sum over the hand-written RFC 8785 form), and cross-checked here
 * with node:crypto over the same hand-written text.
 */
import { createHash } from "node:crypto";
import { parseAction } from "@car/ir";
import { describe, expect, it } from "vitest";
import { operationFingerprint } from "./operation-fingerprint.ts";

const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

const PINNED = [
  {
    action: { id: "ship", type: "tool_call", tool: "deploy", parameters: { env: "prod", artifact: "web.tar.gz" } },
    canonical: '{"parameters":{"artifact":"web.tar.gz","env":"prod"},"tool":"deploy","type":"tool_call"}',
    hex: "0fa63ea98e78c2fa682174dfc8006217f34e265c01a00a9a925e6a7ff0cc497b",
  },
  {
    action: { id: "w", type: "state_write", parameters: { value: 1.5, key: "k" } },
    canonical: '{"parameters":{"key":"k","value":1.5},"tool":null,"type":"state_write"}',
    hex: "fe81fa1b2ecad9eb4a65fe451e15428dfd9a118351f1957b2a5ebba61f24fa2a",
  },
  {
    action: { id: "n", type: "tool_call", tool: "t", parameters: { b: [1, { z: true, a: null }], a: "é" } },
    canonical: '{"parameters":{"a":"é","b":[1,{"a":null,"z":true}]},"tool":"t","type":"tool_call"}',
    hex: "a6fb24047b6aa5dd8c63681eda506e03b85e849e8e6b12e4d498b7ba978672f3",
  },
];

describe("operationFingerprint", () => {
  it("is the SHA-256 of the canonical {type, tool, parameters}, pinned to fixed values", () => {
    for (const { action, canonical, hex } of PINNED) {
      expect(sha256(canonical)).toBe(hex);
      expect(operationFingerprint(parseAction(action))).toBe(hex);
    }
  });

  it("ignores the action id and everything but type, tool and parameters", () => {
    const other = parseAction({ ...PINNED[0]!.action, id: "another", failure_behavior: "retry", metadata: { note: "x" }, timeout_ms: 5 });
    expect(operationFingerprint(other)).toBe(PINNED[0]!.hex);
  });
});
