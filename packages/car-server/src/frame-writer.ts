/**
 * Writes a connection's outbound frames. A frame of up to `FRAGMENT_OVER`
 * characters of JSON is serialised and sent at once, as it always was (one
 * `JSON.stringify` of a few MiB is a few ms). A larger one (a reducer's
 * `multi.run_agent` request, a `multi.*` result carrying every answer, a
 * proposal's result with several large outputs) is sent as one WebSocket message in fragments (RFC 6455 §5.4),
 * one piece of its JSON per turn of the event loop: other connections are
 * served between the pieces instead of waiting for tens of MiB to be
 * serialised and written in one step. The client receives the same message.
 *
 * Fragments of one message may not interleave with another message's, so
 * while one is being written, later frames on the same connection wait
 * their turn, in order. Control frames (ping, close) may interleave and are
 * not queued here.
 */
import type { WebSocket } from "ws";
import { exceeds, jsonPieces, PIECE_CHARS } from "./json-pieces.ts";

type Frame = object;

/** A frame whose JSON may be longer than this is sent in fragments. */
export const FRAGMENT_OVER = 4 * PIECE_CHARS;

/** Resolves in a later turn of the loop, after pending I/O has been polled. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class FrameWriter {
  /** Frames waiting behind a fragmented message, in order. */
  readonly #queue: { frame: Frame; sent: () => void; failed: (error: unknown) => void }[] = [];
  #streaming = false;
  /** Why a queued frame failed; the socket takes nothing after that (its owner closes it). */
  #broken: unknown;

  constructor(
    private readonly socket: WebSocket,
    private readonly pieceChars = PIECE_CHARS,
    private readonly fragmentOver = FRAGMENT_OVER,
  ) {}

  /**
   * Sends `frame` (dropped when the socket is no longer open). Resolves once
   * it has been handed to the socket whole: at once for a small frame with
   * nothing queued before it. A frame that cannot be serialised throws (a
   * small one at once, as `JSON.stringify` does) or rejects (a queued one).
   */
  write(frame: Frame): Promise<void> {
    if (this.#broken !== undefined) return Promise.reject(this.#broken);
    if (!this.#streaming && !exceeds(frame, this.fragmentOver)) {
      if (this.#open()) this.socket.send(JSON.stringify(frame));
      return Promise.resolve();
    }
    return new Promise((sent, failed) => {
      this.#queue.push({ frame, sent, failed });
      if (!this.#streaming) void this.#drain();
    });
  }

  #open(): boolean {
    return this.socket.readyState === this.socket.OPEN;
  }

  async #drain(): Promise<void> {
    this.#streaming = true;
    try {
      for (let next = this.#queue.shift(); next !== undefined; next = this.#queue.shift()) {
        try {
          if (exceeds(next.frame, this.fragmentOver)) await this.#fragmented(next.frame);
          else if (this.#open()) this.socket.send(JSON.stringify(next.frame));
          next.sent();
        } catch (error) {
          // A message may be cut off mid-fragment: nothing more can follow it on this socket.
          this.#broken = error;
          for (const waiting of [next, ...this.#queue.splice(0)]) waiting.failed(error);
        }
      }
    } finally {
      this.#streaming = false;
    }
  }

  /** One message, a fragment of about `pieceChars` per turn; abandoned if the socket closes meanwhile. */
  async #fragmented(frame: Frame): Promise<void> {
    let buffered: string[] = [];
    let length = 0;
    let first = true;
    for (const piece of jsonPieces(frame, this.pieceChars)) {
      buffered.push(piece);
      length += piece.length;
      if (length < this.pieceChars) continue;
      if (!first) await nextTurn();
      if (!this.#open()) return;
      this.socket.send(buffered.join(""), { fin: false });
      first = false;
      buffered = [];
      length = 0;
    }
    if (!first) await nextTurn();
    if (!this.#open()) return;
    this.socket.send(buffered.join(""), { fin: true });
  }
}
