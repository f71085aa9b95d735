/**
 * One dedicated connection that `LISTEN`s on a channel, for as long as the
 * process wants it: a lost connection (a restart of the database, a
 * network cut, `pg_terminate_backend`) is replaced, with a growing pause
 * between attempts, and `reconnected` is called once listening again —
 * whatever was sent meanwhile was missed, so the owner re-reads its state.
 * The connection also holds a session advisory lock, so others can tell
 * this listener is alive (its lock is free once its connection is gone).
 */
import pg from "pg";

export interface ChannelHandlers {
  /** A notification's payload (unverified: anyone who can connect can send one). */
  message(payload: string): void;
  /** Listening again after a loss: notifications may have been missed. */
  reconnected(): void;
}

/** What `pg_stat_activity` shows for a listener, so an operator can tell it from a pooled connection. */
export const LISTENER_APPLICATION_NAME = "car-oversight-listener";

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5000;

export class NotificationChannel {
  #client: pg.Client | undefined;
  #closed = false;
  #retryMs = FIRST_RETRY_MS;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly url: string,
    private readonly channel: string,
    /** The advisory lock (class, key) held while listening. */
    private readonly lock: readonly [number, number],
    private readonly handlers: ChannelHandlers,
  ) {}

  /** Connects and listens; rejects when the first connection fails. */
  async start(): Promise<void> {
    await this.#connect();
  }

  get listening(): boolean {
    return this.#client !== undefined;
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, keepAlive: true, application_name: LISTENER_APPLICATION_NAME });
    let lost = false;
    const onLost = (): void => {
      if (lost) return;
      lost = true;
      this.#lost(client);
    };
    client.on("error", onLost);
    client.on("end", onLost);
    client.on("notification", (n) => {
      if (n.channel === this.channel && n.payload !== undefined) this.handlers.message(n.payload);
    });
    try {
      await client.connect();
      const { rows } = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1, $2) AS ok", [...this.lock]);
      // The previous connection's session still holds it (the server has not noticed it is gone yet): try again later.
      if (!rows[0]!.ok) throw new Error("the listener's liveness lock is still held by its previous connection");
      await client.query(`LISTEN ${pg.escapeIdentifier(this.channel)}`);
    } catch (error) {
      lost = true;
      await client.end().catch(() => {});
      throw error;
    }
    if (this.#closed) {
      await client.end().catch(() => {});
      return;
    }
    this.#client = client;
    this.#retryMs = FIRST_RETRY_MS;
  }

  #lost(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    void client.end().catch(() => {});
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#closed) return;
    const wait = this.#retryMs;
    this.#retryMs = Math.min(this.#retryMs * 2, MAX_RETRY_MS);
    this.#timer = setTimeout(() => {
      this.#connect().then(
        () => {
          if (!this.#closed) this.handlers.reconnected();
        },
        () => this.#scheduleReconnect(),
      );
    }, wait);
    this.#timer.unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => {});
  }
}
