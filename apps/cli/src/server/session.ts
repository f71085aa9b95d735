/**
 * The CAR side of one connection: its own runtime (tools, policies, detached
 * tools, standing tier), the peer used to call back into the client, and the
 * ids it hands out. One client's tools and rules never reach another's. With
 * a server database, state, the event log, the approval ledger and postures
 * are the database's, shared by every session (README: "What sessions
 * share"); without one the session's runtime keeps its own in memory.
 */
import { join } from "node:path";
import { type JsonValue, randomIds, shortId } from "@car/ir";
import { borrowedStore, postureLookup, Runtime, type ToolCaller } from "@car/engine";
import { ApprovalGate } from "@car/policy";
import { callClientTool } from "./client-tool.ts";
import type { RpcPeer } from "./peer.ts";
import type { ServeStore } from "./serve-store.ts";

export interface SessionOptions {
  /** Callback wait for actions that declare no `timeout_ms`. */
  toolTimeoutMs: number;
  /** The state directory; the operator's rules in `<carHome>/policies` apply to every session. */
  carHome: string;
  /** The server's database, shared by every session; undefined keeps each session in memory (`--db :memory:`). */
  store?: ServeStore | undefined;
  /** The agent this connection acts for (`?agent_id=` on the URL): its proposals pass the approval gate with its posture. */
  agentId?: string | undefined;
}

export class Session {
  /** Stamped as `session_id` on every `tools.execute` this connection receives. */
  readonly id: string = `sess-${shortId(randomIds)}`;
  readonly runtime: Runtime;
  /** The approval gate an agent's session runs under; undefined for an ungoverned session. */
  readonly gate: ApprovalGate | undefined;
  /** Human descriptions of policies registered over the wire, by name (for `policy.list`). */
  readonly policyDescriptions = new Map<string, string>();
  /** Set by a successful `server.handshake`. */
  negotiatedProtocol: number | undefined;
  /** Where every proposal on this connection sends its tool calls: tools execute on the client. */
  readonly toolCaller: ToolCaller = (call, signal) => callClientTool(this, call, signal);
  private callbackSeq = 0;
  private streaming = false;

  constructor(
    readonly peer: RpcPeer,
    /** Fires when the connection closes or a shutdown cancels in-flight work. */
    readonly signal: AbortSignal,
    readonly options: SessionOptions,
  ) {
    const store = options.store;
    this.gate =
      store !== undefined && options.agentId !== undefined
        ? new ApprovalGate({ ledger: store.approvals, sessionId: this.id, posture: postureLookup(store.postures, options.agentId) })
        : undefined;
    this.runtime = new Runtime({
      ...(store !== undefined ? { store: borrowedStore(store) } : {}),
      ...(this.gate !== undefined ? { approvalGate: this.gate } : {}),
    });
    // A malformed operator policy file throws `policy_load_failed` here: the connection is refused.
    this.runtime.loadPolicies(join(options.carHome, "policies"));
  }

  /** A fresh id for a server→client request on this connection. */
  nextCallbackId(prefix: string): string {
    this.callbackSeq += 1;
    return `${prefix}-${this.callbackSeq}`;
  }

  /**
   * Forwards every chunk of every detached tool on this runtime as a
   * `tools.stream.event` notification, until the connection ends. Idempotent:
   * returns false when already forwarding.
   */
  streamToolEvents(): boolean {
    if (this.streaming) return false;
    this.streaming = true;
    const feed = this.runtime.toolSubscribe(undefined, this.signal);
    void (async () => {
      for await (const event of feed) this.peer.notify("tools.stream.event", event as unknown as JsonValue);
    })();
    return true;
  }

  close(reason: Error): void {
    this.peer.close(reason);
    void this.runtime.close();
  }
}
