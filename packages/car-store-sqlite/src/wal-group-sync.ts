/**
 * Group commit for a WAL-mode database: the store's proposal transactions
 * (begin records with dispatch intents, and commits) are written without a
 * sync of their own, and each then waits for one `fdatasync` of the `-wal`
 * file that started after its write. While a sync is on disk, every write
 * that asks meanwhile waits for the next one, so N concurrent proposals pay
 * about two syncs instead of N — and the sync runs on libuv's thread pool,
 * so the event loop serves other connections while the disk works.
 *
 * Why this is as durable as `synchronous = FULL`: a WAL transaction is on
 * disk once its frames, commit frame included, are; `fdatasync` of the file
 * flushes every frame written before it was called, whichever connection
 * wrote it. Nothing waiting on a request is released before that. A failed
 * sync leaves the durability of everything since the last good one unknown,
 * so the store stops taking writes (PostgreSQL's lesson: never retry an
 * fsync and assume).
 */
import { closeSync, fdatasync, fstatSync, fsyncSync, openSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { CarError } from "@car/ir";

interface Waiters {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: Error) => void;
}

function waiters(): Waiters {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** How a descriptor is synced: `fs.fdatasync` (a test passes one it controls, to check what waits for what). */
export type SyncFile = (fd: number, done: (error: NodeJS.ErrnoException | null) => void) => void;

export class WalGroupSync {
  readonly #walPath: string;
  readonly #syncFile: SyncFile;
  #fd: number | undefined;
  #ino = 0;
  /** The sync on disk now, and the requests it answers. */
  #current: Waiters | undefined;
  /** Requests made while `#current` was on disk: answered by the sync after it. */
  #next: Waiters | undefined;
  #failure: CarError | undefined;
  /** Syncs started, for tests and the bench: requests ÷ syncs is the grouping. */
  syncs = 0;

  constructor(databasePath: string, syncFile: SyncFile = fdatasync) {
    this.#walPath = `${databasePath}-wal`;
    this.#syncFile = syncFile;
  }

  /** The reason writes stop, once a sync failed. */
  get failure(): CarError | undefined {
    return this.#failure;
  }

  /** Settles after an `fdatasync` of the WAL that started after this call; rejects (and keeps rejecting) once one failed. */
  request(): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    if (this.#current === undefined) {
      const group = waiters();
      this.#current = group;
      this.#start(group);
      return group.promise;
    }
    this.#next ??= waiters();
    return this.#next.promise;
  }

  /** Settles when every sync requested so far is done (never rejects). */
  async drained(): Promise<void> {
    await (this.#next ?? this.#current)?.promise.catch(() => undefined);
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }

  #start(group: Waiters): void {
    let fd: number | undefined;
    try {
      fd = this.#walFd();
    } catch (error) {
      this.#fail(error as Error);
      return;
    }
    if (fd === undefined) {
      // No WAL file: a checkpoint moved every frame into the database file, and syncs it as it does.
      queueMicrotask(() => this.#settled(group));
      return;
    }
    this.syncs++;
    this.#syncFile(fd, (error) => {
      if (error !== null) this.#fail(error);
      else this.#settled(group);
    });
  }

  #settled(group: Waiters): void {
    group.resolve();
    this.#current = this.#next;
    this.#next = undefined;
    if (this.#current !== undefined) this.#start(this.#current);
  }

  /** The WAL file's descriptor, reopened when SQLite replaced the file (a new inode after every connection closed it). */
  #walFd(): number | undefined {
    const ino = statSync(this.#walPath, { throwIfNoEntry: false })?.ino;
    if (ino === undefined) return undefined;
    if (this.#fd !== undefined && ino === this.#ino) return this.#fd;
    this.close();
    this.#fd = openSync(this.#walPath, "r+");
    this.#ino = fstatSync(this.#fd).ino;
    // A new WAL file is a new directory entry: sync the directory once so the file itself survives power loss.
    const dir = openSync(dirname(this.#walPath), "r");
    try {
      fdatasyncDirectory(dir);
    } finally {
      closeSync(dir);
    }
    return this.#fd;
  }

  #fail(error: Error): void {
    this.#failure = new CarError(
      "storage_error",
      `syncing '${this.#walPath}' to disk failed (${error.message}); what was written since the last sync may not be durable, so the store takes no more writes`,
      {},
      { cause: error },
    );
    for (const group of [this.#current, this.#next]) group?.reject(this.#failure);
    this.#current = undefined;
    this.#next = undefined;
  }
}

function fdatasyncDirectory(fd: number): void {
  try {
    // fsync on a directory descriptor is what makes a created entry durable on Linux; some systems refuse it (EINVAL), harmlessly.
    fsyncSync(fd);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EINVAL" && (error as NodeJS.ErrnoException).code !== "EISDIR") throw error;
  }
}
