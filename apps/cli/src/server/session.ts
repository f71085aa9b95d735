/**
 * The CAR side of one connection: its own runtime (tools, policies, state,
 * event log), the peer used to call back into the client, and the ids it
 * hands out. Nothing here is shared with any other connection.
 */
import { randomIds, shortId } from "@car/ir";
import type { RpcPeer } from "./peer.ts";

export interface SessionOptions {
  /** Callback wait for actions that declare no `timeout_ms`. */
  toolTimeoutMs: number;
}

export class Session {
  /** The execution session id stamped on every `tools.execute` this connection receives. */
  readonly id: string = `sess-${shortId(randomIds)}`;
  /** Set by a successful `server.handshake`. */
  negotiatedProtocol: number | undefined;
  private callbackSeq = 0;

  constructor(
    readonly peer: RpcPeer,
    /** Fires when the connection closes or a shutdown cancels in-flight work. */
    readonly signal: AbortSignal,
    readonly options: SessionOptions,
  ) {}

  /** A fresh id for a server→client request on this connection. */
  nextCallbackId(prefix: string): string {
    this.callbackSeq += 1;
    return `${prefix}-${this.callbackSeq}`;
  }

  close(reason: Error): void {
    this.peer.close(reason);
  }
}
