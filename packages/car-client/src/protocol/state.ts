/** `state.*`: the session's state; an optional `tenant_id` scopes a call to that tenant's keys. */
import { method } from "./declaration.ts";
import { anyObject, anyValue, boolean, listOf, object, optional, string } from "./schema.ts";

const tenant_id = optional("string");

export const stateMethods = {
  "state.get": method({
    role: "agent",
    summary: "A key's value, or null.",
    params: object({ key: string, tenant_id }, ["key"]),
    result: anyValue,
  }),
  "state.set": method({
    role: "agent",
    summary: 'Stores a value (a missing value stores null); answers "ok".',
    params: object({ key: string, value: anyValue, tenant_id }, ["key"]),
    result: { const: "ok" },
  }),
  "state.exists": method({
    role: "agent",
    summary: "Whether a key is set.",
    params: object({ key: string, tenant_id }, ["key"]),
    result: boolean,
  }),
  "state.keys": method({
    role: "agent",
    summary: "The keys the caller's scope sees.",
    params: object({ tenant_id }),
    result: listOf(string),
  }),
  "state.snapshot": method({
    role: "agent",
    summary: "Every key and value the caller's scope sees.",
    params: object({ tenant_id }),
    result: anyObject,
  }),
} as const;
