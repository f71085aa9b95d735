/**
 * What an `agent_started` event records of the call's task. A task built
 * from earlier answers (a reducer's, a synthesiser's) can carry tens of MiB;
 * written whole, the event would put that text into the log in one
 * synchronous write. Like `compensation_planned`, which records references
 * rather than resolved values, a long task is recorded by its head, its
 * UTF-8 length and its SHA-256 digest — enough to tell which task ran and to
 * check a copy of it — and the digest is taken a slice per turn of the loop.
 */
import { createHash } from "node:crypto";
import type { JsonObject } from "@car/ir";

/** A task up to this many characters is recorded whole; a longer one by its first this many. */
export const TASK_HEAD_CHARS = 4_096;

/** Characters hashed per turn of the loop (a few ms of work). */
const DIGEST_SLICE_CHARS = 1 << 20;

/** The `agent_started` fields that describe `task`: `{ task }`, or its head with `task_bytes` and `task_sha256`. */
export async function taskRecord(task: string, sliceChars = DIGEST_SLICE_CHARS): Promise<JsonObject> {
  if (task.length <= TASK_HEAD_CHARS) return { task };
  const hash = createHash("sha256");
  let bytes = 0;
  for (let start = 0; start < task.length; ) {
    if (start > 0) await nextTurn();
    const end = sliceEnd(task, start, start + sliceChars);
    const slice = task.slice(start, end);
    hash.update(slice, "utf8");
    bytes += Buffer.byteLength(slice, "utf8");
    start = end;
  }
  return { task: task.slice(0, sliceEnd(task, 0, TASK_HEAD_CHARS)), task_bytes: bytes, task_sha256: hash.digest("hex") };
}

/** True when a task is long enough to be recorded by `taskRecord`'s bounded form. */
export function isLongTask(task: string): boolean {
  return task.length > TASK_HEAD_CHARS;
}

/** Resolves in a later turn of the loop, after pending I/O has been polled. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * The end of the slice from `start`: `end`, moved so a surrogate pair is never split (its halves would
 * each encode as U+FFFD) — back one, or on one when the slice would otherwise be empty.
 */
function sliceEnd(text: string, start: number, end: number): number {
  if (end >= text.length) return text.length;
  const unit = text.charCodeAt(end - 1);
  if (unit < 0xd800 || unit > 0xdbff) return end;
  return end - 1 > start ? end - 1 : end + 1;
}
