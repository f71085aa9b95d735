/**
 * `server.schema` (reference websocket-core.md § A.6): this server's wire
 * schema — every method it serves with its role, params and result schema
 * (from `@car/client/protocol`, the same declarations the dispatcher
 * validates against), the messages it sends the client, and the IR's wire
 * shapes the declarations name — with the SHA-256 digest of the document's
 * canonical text, so a client can pin a schema it has accepted.
 */
import { createHash } from "node:crypto";
import { PROTOCOL_VERSION, serverNotifications, serverRequests } from "@car/client/protocol";
import { canonicalJson, type JsonObject, type JsonValue, schemas } from "@car/ir";
import type { MethodHandler, MethodTable } from "../method.ts";
import { declarationOf } from "../params-schema.ts";
import { VERSION } from "../version.ts";

/** Methods the connection answers itself, before the table (session.auth is the auth gate). */
export const CONNECTION_METHODS: readonly string[] = ["session.auth"];

export interface WireSchema {
  schema: JsonObject;
  /** The document as it is digested: canonical JSON and a final newline. */
  text: string;
  digest: string;
}

/** The IR's shapes by their type name (`proposalResult` → `ProposalResult`), as the declarations' titles name them. */
function definitions(): JsonObject {
  const out: JsonObject = {};
  for (const [key, schema] of Object.entries(schemas)) out[key[0]!.toUpperCase() + key.slice(1)] = schema as unknown as JsonValue;
  return out;
}

/** The schema document for `table` (plus the connection's own methods); a served method without a declaration is listed as uncovered. */
export function wireSchema(table: MethodTable): WireSchema {
  const names = [...new Set([...CONNECTION_METHODS, ...Object.keys(table)])].sort();
  const methods: JsonObject = {};
  const covered: string[] = [];
  const uncovered: string[] = [];
  for (const name of names) {
    const declaration = declarationOf(name);
    if (declaration === undefined) {
      uncovered.push(name);
      continue;
    }
    covered.push(name);
    methods[name] = declaration as unknown as JsonValue;
  }
  const schema: JsonObject = {
    protocol_version: PROTOCOL_VERSION,
    methods,
    server_requests: serverRequests as unknown as JsonValue,
    server_notifications: serverNotifications as unknown as JsonValue,
    definitions: definitions(),
    coverage: { complete: uncovered.length === 0, rpc_results: { covered, uncovered } },
  };
  const text = `${canonicalJson(schema)}\n`;
  return { schema, text, digest: createHash("sha256").update(text, "utf8").digest("hex") };
}

/** The `server.schema` handler over `table`, given lazily because the table includes this method; built once. */
export function serverSchema(table: () => MethodTable): MethodHandler {
  let built: WireSchema | undefined;
  return () => {
    built ??= wireSchema(table());
    return { schema: built.schema, digest: built.digest, digest_algorithm: "sha256", car_version: VERSION };
  };
}
