/**
 * A JSON value's text in pieces of bounded size, for a frame too large to
 * serialise in one step. `JSON.stringify` of a frame carrying tens of MiB
 * (a reducer's `multi.run_agent` request, a `multi.map_reduce` result) runs
 * for hundreds of ms of uninterrupted event loop, and every other client
 * waits for it. Walked as pieces, the same text is built a slice at a time,
 * and the writer can give the loop back between slices.
 *
 * The text is what `JSON.stringify` gives (the frames are plain JSON
 * values): a subtree small enough is serialised by `JSON.stringify` itself,
 * and a long string is cut into slices that never split a surrogate pair.
 */

/** Characters a piece carries, about. */
export const PIECE_CHARS = 1 << 20;

/**
 * True when `value`'s JSON text may be longer than `limit` characters. The
 * estimate counts strings and keys and a few characters per other value, and
 * stops walking as soon as it passes `limit`, so a large value costs no more
 * than a small one to classify.
 */
export function exceeds(value: unknown, limit: number): boolean {
  let budget = limit;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "string") budget -= v.length + 2;
    else if (Array.isArray(v)) {
      budget -= v.length + 2;
      for (const item of v) stack.push(item);
    } else if (v !== null && typeof v === "object") {
      for (const key of Object.keys(v)) {
        budget -= key.length + 4;
        stack.push((v as Record<string, unknown>)[key]);
      }
    } else budget -= 8;
    if (budget < 0) return true;
  }
  return false;
}

/**
 * The pieces of `value`'s JSON text, in order; joined they are
 * `JSON.stringify(value)`. Each is at most about `pieceChars` characters,
 * bar the syntax between them; a subtree of up to `pieceChars` is one piece,
 * serialised by `JSON.stringify` (no per-node walk for the many small rows
 * of a large array).
 */
export function* jsonPieces(value: unknown, pieceChars = PIECE_CHARS): Generator<string> {
  const v = toJsonValue(value);
  if (typeof v === "string") yield* stringPieces(v, pieceChars);
  else if (v === null || typeof v !== "object" || !exceeds(v, pieceChars)) yield JSON.stringify(v) ?? "null";
  else if (Array.isArray(v)) {
    yield "[";
    for (let i = 0; i < v.length; i++) {
      if (i > 0) yield ",";
      // As JSON.stringify writes them: what has no JSON form is null in an array.
      yield* childPieces(toJsonValue(v[i]) ?? null, pieceChars);
    }
    yield "]";
  } else {
    yield "{";
    let first = true;
    for (const key of Object.keys(v)) {
      const item = toJsonValue((v as Record<string, unknown>)[key]);
      // ...and is left out of an object.
      if (!hasJsonForm(item)) continue;
      yield `${first ? "" : ","}${JSON.stringify(key)}:`;
      first = false;
      yield* childPieces(item, pieceChars);
    }
    yield "}";
  }
}

/** A container's element: a small one stringified here (no generator of its own), a large one in pieces. */
function* childPieces(item: unknown, pieceChars: number): Generator<string> {
  if (!hasJsonForm(item)) yield "null";
  else if (typeof item === "string" ? item.length > pieceChars : item !== null && typeof item === "object" && exceeds(item, pieceChars)) {
    yield* jsonPieces(item, pieceChars);
  } else yield JSON.stringify(item);
}

function hasJsonForm(value: unknown): boolean {
  return value !== undefined && typeof value !== "function" && typeof value !== "symbol";
}

/** `value.toJSON()` where it has one (as JSON.stringify calls it), else `value`. */
function toJsonValue(value: unknown): unknown {
  if (value !== null && typeof value === "object" && typeof (value as { toJSON?: unknown }).toJSON === "function") {
    return (value as { toJSON(): unknown }).toJSON();
  }
  return value;
}

/** A string's JSON text: the quotes, and between them its escaped slices. */
function* stringPieces(text: string, pieceChars: number): Generator<string> {
  if (text.length <= pieceChars) {
    yield JSON.stringify(text);
    return;
  }
  yield '"';
  for (let start = 0; start < text.length; ) {
    const end = sliceEnd(text, start, start + pieceChars);
    yield JSON.stringify(text.slice(start, end)).slice(1, -1);
    start = end;
  }
  yield '"';
}

/** `end`, moved back one when it would split a surrogate pair (a lone half would be escaped as `\udxxx`). */
function sliceEnd(text: string, start: number, end: number): number {
  if (end >= text.length) return text.length;
  const unit = text.charCodeAt(end - 1);
  if (unit < 0xd800 || unit > 0xdbff) return end;
  return end - 1 > start ? end - 1 : end + 1;
}
