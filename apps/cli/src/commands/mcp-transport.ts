/**
 * The stdio transport `car mcp` serves on: newline-delimited JSON-RPC, like
 * the SDK's `StdioServerTransport`, except that bad input never ends the
 * session. The SDK's transport closes (and the process exits 0, silently)
 * when a line grows past its 10 MiB buffer; here such a line is skipped up
 * to its newline, without being kept, and answered with a JSON-RPC error,
 * as is a line that is not JSON or not a JSON-RPC message.
 */
import type { Readable, Writable } from "node:stream";
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** The longest line accepted, in bytes (the SDK's own bound). */
export const MAX_LINE_BYTES = 10 * 1024 * 1024;
const NEWLINE = 0x0a;
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** The current line's bytes so far (never more than `maxLineBytes`). */
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** True while skipping the rest of an over-long line. */
  #skipping = false;
  #closed = false;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly maxLineBytes = MAX_LINE_BYTES,
  ) {}

  async start(): Promise<void> {
    this.input.on("data", this.#onData);
    this.input.on("error", this.#onError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(serializeMessage(message))) resolve();
      else this.output.once("drain", resolve);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.input.off("data", this.#onData);
    this.input.off("error", this.#onError);
    this.#pending = [];
    this.onclose?.();
  }

  readonly #onError = (error: Error): void => this.onerror?.(error);

  readonly #onData = (chunk: Buffer | string): void => {
    let data = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    while (data.length > 0) {
      const newline = data.indexOf(NEWLINE);
      const part = newline === -1 ? data : data.subarray(0, newline);
      if (!this.#skipping) {
        if (this.#pendingBytes + part.length > this.maxLineBytes) {
          this.#skipping = true;
          this.#pending = [];
          this.#pendingBytes = 0;
        } else if (part.length > 0) {
          this.#pending.push(part);
          this.#pendingBytes += part.length;
        }
      }
      if (newline === -1) return;
      this.#endLine();
      data = data.subarray(newline + 1);
    }
  };

  #endLine(): void {
    if (this.#skipping) {
      this.#skipping = false;
      this.#reject(INVALID_REQUEST, `request too large: a line over ${this.maxLineBytes} bytes was skipped`);
      return;
    }
    const line = Buffer.concat(this.#pending, this.#pendingBytes).toString("utf8").replace(/\r$/, "");
    this.#pending = [];
    this.#pendingBytes = 0;
    if (line.trim() === "") return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch (error) {
      const notJson = error instanceof SyntaxError;
      this.#reject(
        notJson ? PARSE_ERROR : INVALID_REQUEST,
        notJson ? "parse error: the line is not valid JSON" : "invalid request: not a JSON-RPC 2.0 message",
      );
      return;
    }
    this.onmessage?.(message);
  }

  /** Answers input that never became a message; its id is unknown, so it is null (JSON-RPC 2.0 §5). */
  #reject(code: number, message: string): void {
    void this.send({ jsonrpc: "2.0", id: null, error: { code, message } } as unknown as JSONRPCMessage);
  }
}
