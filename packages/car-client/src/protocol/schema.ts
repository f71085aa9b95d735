/**
 * Small builders for the protocol's JSON Schemas. Each returns a literal
 * schema (its `const` type parameters keep every string), so one
 * declaration is both what the server validates and what the client's
 * TypeScript types are inferred from (declared.ts).
 *
 * Optional fields accept `null` as well as absence: the server has always
 * read a `null` field as an omitted one, and the schemas say so.
 */
import type { JSONSchema } from "json-schema-to-ts";

/** A JSON Schema as a declaration holds it (a literal, readonly object). */
export type Schema = JSONSchema;

/** An object with these properties, the listed ones required; other fields are allowed (the server ignores them). */
export function object<const P extends Readonly<Record<string, Schema>>>(properties: P): { type: "object"; properties: P; required: readonly [] };
export function object<const P extends Readonly<Record<string, Schema>>, const R extends readonly (keyof P & string)[]>(
  properties: P,
  required: R,
): { type: "object"; properties: P; required: R };
export function object(properties: Readonly<Record<string, Schema>>, required: readonly string[] = []): Schema {
  return { type: "object", properties, required };
}

export const string = { type: "string" } as const;
export const number = { type: "number" } as const;
export const integer = { type: "integer" } as const;
export const boolean = { type: "boolean" } as const;
/** Any JSON value: the handler reads it itself (and answers with its own, more precise error). */
export const anyValue = {} as const;
export const anyObject = { type: "object" } as const;
export const stringList = { type: "array", items: { type: "string" } } as const;

/** An optional field of this JSON type: absent, `null`, or the type. */
export function optional<const T extends "string" | "number" | "integer" | "boolean" | "object" | "array">(type: T): { type: readonly [T, "null"] } {
  return { type: [type, "null"] as const };
}

/** An optional field that is one of these strings (or `null`). */
export function oneOf<const V extends readonly string[]>(values: V): { enum: readonly [...V, null] } {
  return { enum: [...values, null] as const };
}

/** An array whose items have this schema. */
export function listOf<const S extends Schema>(items: S): { type: "array"; items: S } {
  return { type: "array", items };
}

/** An optional array whose items have this schema. */
export function optionalListOf<const S extends Schema>(items: S): { type: readonly ["array", "null"]; items: S } {
  return { type: ["array", "null"] as const, items };
}

/**
 * One of the IR's wire shapes (@car/ir's `schemas`, and `server.schema`'s
 * `definitions`). The title names it; the server leaves its checking to the
 * IR's own parser, which answers with a precise, located error.
 */
export function ir<const N extends IrShapeName>(name: N): { title: N } {
  return { title: name };
}

/** The IR shapes a declaration may name, by their TypeScript type name (types.ts maps each to its type). */
export type IrShapeName =
  | "ActionProposalInput"
  | "ActionProposal"
  | "ProposalResult"
  | "VerificationResult"
  | "ToolSchema"
  | "ToolSchemaInput"
  | "ToolPollResult"
  | "ToolHandle"
  | "ToolStreamEvent"
  | "AgentSpec"
  | "AgentOutput"
  | "CostTarget"
  | "CostBudget"
  | "ActionInput"
  | "TraceEvent";
