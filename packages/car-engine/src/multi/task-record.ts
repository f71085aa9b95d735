/**
 * What an `agent_started` event records of the call's task, and an
 * `agent_finished` event of the agent's answer. A task built from earlier
 * answers (a reducer's, a synthesiser's) can carry tens of MiB, and one
 * answer up to a frame's size; written whole, the event would put that text
 * into the log (canonicalised, hashed and stored) in one synchronous step.
 * Like `compensation_planned`, which records references rather than
 * resolved values, a long text is recorded by its head, its UTF-8 length
 * and its SHA-256 digest — enough to tell which text it was and to check a
 * copy of it (the caller has the whole answer in the run's result) — and
 * the digest is taken a slice per turn of the loop.
 */
import { createHash } from "node:crypto";
import type { JsonObject } from "@car/ir";

/** A text up to this many characters is recorded whole; a longer one by its first this many. */
export const TASK_HEAD_CHARS = 4_096;

/** Characters hashed per turn of the loop (a few ms of work). */
const DIGEST_SLICE_CHARS = 1 << 20;

/** The `agent_started` fields that describe `task`: `{ task }`, or its head with `task_bytes` and `task_sha256`. */
export function taskRecord(task: string, sliceChars = DIGEST_SLICE_CHARS): Promise<JsonObject> {
  return textRecord("task", task, sliceChars);
}

/** The `agent_finished` fields that describe `answer`: `{ answer }`, or its head with `answer_bytes` and `answer_sha256`. */
export function answerRecord(answer: string, sliceChars = DIGEST_SLICE_CHARS): Promise<JsonObject> {
  return textRecord("answer", answer, sliceChars);
}

/** `{ [field]: text }`, or for a long text its head, with `<field>_bytes` and `<field>_sha256`. */
async function textRecord(field: string, text: string, sliceChars: number): Promise<JsonObject> {
  if (!isLongTask(text)) return { [field]: text };
  const hash = createHash("sha256");
  let bytes = 0;
  for (let start = 0; start < text.length; ) {
    if (start > 0) await nextTurn();
    const end = sliceEnd(text, start, start + sliceChars);
    const slice = text.slice(start, end);
    hash.update(slice, "utf8");
    bytes += Buffer.byteLength(slice, "utf8");
    start = end;
  }
  return { [field]: text.slice(0, sliceEnd(text, 0, TASK_HEAD_CHARS)), [`${field}_bytes`]: bytes, [`${field}_sha256`]: hash.digest("hex") };
}

/** True when a text (a task, an answer) is long enough to be recorded by its bounded form. */
export function isLongTask(text: string): boolean {
  return text.length > TASK_HEAD_CHARS;
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
