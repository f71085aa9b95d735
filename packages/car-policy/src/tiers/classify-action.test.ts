import type { Action } from "@car/ir";
import { describe, expect, it } from "vitest";
import { toolAction } from "../test-helpers.ts";
import { classifyAction, classifyProposal } from "./classify-action.ts";

const tier = (tool: string, params: object = {}) => classifyAction(toolAction(tool, params as never)).tier;

describe("classifyAction", () => {
  it("reads the tool name by whole segments", () => {
    expect(tier("read_file", { path: "src/a.ts" })).toBe("read_only");
    expect(tier("listDir")).toBe("read_only");
    expect(tier("write_file", { path: "a.txt" })).toBe("sandbox_edit");
    expect(tier("send_email", { to: "a@b.c" })).toBe("full_access");
    expect(tier("readSecret")).toBe("full_access");
    expect(tier("deploy_service")).toBe("full_access");
    // Segments, not substrings: neither `format` nor `tokenize` is a credential or a send.
    expect(tier("format_date")).toBe("sandbox_edit");
    expect(tier("search_tokenizer")).toBe("read_only");
  });

  it("reads the command line with the shell reader, not values elsewhere", () => {
    expect(tier("shell", { command: "ls -la && git status" })).toBe("read_only");
    expect(tier("shell", { command: "cargo build" })).toBe("sandbox_edit");
    expect(tier("shell", { command: "echo hi > out.txt" })).toBe("sandbox_edit");
    expect(tier("shell", { command: "git push origin main" })).toBe("full_access");
    expect(tier("shell", { command: "terraform apply -auto-approve" })).toBe("full_access");
    expect(tier("shell", { command: "sudo curl https://x" })).toBe("full_access");
    expect(tier("shell", { command: 'git commit -m "curl and aws notes"' })).toBe("sandbox_edit");
    // A URL or a message body is not a command.
    expect(tier("search_docs", { url: "https://example.org/curl", query: "release notes send" })).toBe("read_only");
  });

  it("reads parameter keys and declared paths", () => {
    expect(tier("get_weather", { api_key: "x" })).toBe("full_access");
    expect(tier("get_weather", { auth: { token: "x" } })).toBe("full_access");
    expect(tier("read_file", { path: "~/.ssh/id_rsa" })).toBe("full_access");
    expect(tier("read_file", { path: "/home/u/.aws/credentials" })).toBe("full_access");
    expect(tier("read_file", { notes: "~/.ssh/id_rsa" })).toBe("read_only");
  });

  it("flags always-dangerous phrases anywhere, and says which signal fired", () => {
    const c = classifyAction(toolAction("query_db", { sql: "DROP TABLE users" }));
    expect(c.tier).toBe("full_access");
    expect(c.reasons.join("\n")).toContain("drop table");
  });

  it("separates the declared rollback contract from the inferred one", () => {
    const declared: Action = { ...toolAction("db_insert", { row: 1 }), reversibility: "compensable" };
    const c = classifyAction(declared);
    expect(c).toMatchObject({ tier: "sandbox_edit", reversibility: "compensable", declared_rollback_contract: "compensable", missing_compensation: true });
    expect(classifyAction(toolAction("read_secret")).reversibility).toBe("reversible");
    expect(classifyAction(toolAction("mystery")).reversibility).toBe("irreversible");
    expect(classifyAction(toolAction("mystery")).declared_rollback_contract).toBe("irreversible");
  });

  it("state actions", () => {
    const read: Action = { ...toolAction("x"), type: "state_read", parameters: {} };
    const write: Action = { ...toolAction("x"), type: "state_write", parameters: {} };
    expect(classifyAction(read).tier).toBe("read_only");
    expect(classifyAction(write).tier).toBe("sandbox_edit");
  });

  it("a schema's path-typed properties join the path signal", () => {
    const schema = {
      name: "upload",
      source: "user_defined" as const,
      description: "",
      parameters: { type: "object", properties: { src: { type: "string", format: "path" } } },
      idempotent: false,
    };
    expect(classifyAction(toolAction("sync_blob", { src: "~/.ssh/id_ed25519" }), schema).tier).toBe("full_access");
    expect(classifyAction(toolAction("sync_blob", { src: "~/.ssh/id_ed25519" })).tier).toBe("sandbox_edit");
  });

  it("classifyProposal has permission.classify's shape", () => {
    const a: Action = { ...toolAction("read_file", {}, "a1"), reversibility: "reversible" };
    const b: Action = { ...toolAction("send_email", {}, "a2"), reversibility: "compensable" };
    expect(classifyProposal({ actions: [a, b] })).toEqual({
      classifications: [
        { action_id: "a1", tool: "read_file", required_tier: "read_only", reversibility: "reversible", missing_compensation: false },
        { action_id: "a2", tool: "send_email", required_tier: "full_access", reversibility: "irreversible", missing_compensation: true },
      ],
      declared_rollback_contract: "compensable",
    });
    expect(classifyProposal({ actions: [] }).declared_rollback_contract).toBe("reversible");
  });
});
