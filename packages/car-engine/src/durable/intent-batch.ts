/**
 * When a durable log writes the dispatch intents it was asked to persist: once
 * the engine has gone quiet, so that every call started together — a whole
 * scheduling level — shares one write (one transaction, one sync to disk).
 *
 * The calls of one level reach dispatch over a run of microtasks (each
 * finished predecessor's continuation starts its successors), never across
 * an event-loop turn, so the batch waits microtasks, not a macrotask: it is
 * written after `QUIET_HOPS` consecutive microtask hops that brought no new
 * request. Waiting for `setImmediate` instead would yield to the operating
 * system before every write, which on a loaded machine costs far more than
 * the write. The grouping only saves writes; every request is answered by
 * a write that happened after it was made.
 *
 * Proposals of other connections reach dispatch in other event-loop turns
 * (their messages are read in one poll phase, each in its own callback).
 * When `othersOpen` says other proposals are running, the quiet batch
 * waits one `setImmediate` more, after the messages of that poll phase, so
 * a server with many connections writes their intents together — one sync
 * for all — instead of one sync per proposal. A lone proposal never waits.
 */

/** Microtask hops without a new request before the batch is written. */
const QUIET_HOPS = 16;

export class IntentBatch {
  readonly #write: () => void | Promise<void>;
  readonly #othersOpen: () => boolean;
  #requests = 0;
  #pending: Promise<void> | undefined;

  /** `write` makes everything requested so far durable; `othersOpen` says whether other proposals may ask soon. */
  constructor(write: () => void | Promise<void>, othersOpen: () => boolean = () => false) {
    this.#write = write;
    this.#othersOpen = othersOpen;
  }

  /** Settles once a write that started after this call finished; rejects when it failed. */
  request(): Promise<void> {
    this.#requests++;
    this.#pending ??= new Promise<void>((resolve, reject) => {
      let seen = this.#requests;
      let quiet = 0;
      let waitedTurn = false;
      const hop = (): void => {
        if (this.#requests !== seen) {
          seen = this.#requests;
          quiet = 0;
        } else if (++quiet >= QUIET_HOPS) {
          if (!waitedTurn && this.#othersOpen()) {
            waitedTurn = true;
            quiet = 0;
            setImmediate(hop);
            return;
          }
          this.#pending = undefined;
          try {
            Promise.resolve(this.#write()).then(resolve, reject);
          } catch (error) {
            reject(error);
          }
          return;
        }
        queueMicrotask(hop);
      };
      queueMicrotask(hop);
    });
    return this.#pending;
  }
}
