/**
 * `JSON.stringify(value, null, 2)`, written piece by piece: the top levels of
 * objects and arrays are walked here, everything deeper is stringified one
 * element at a time. The output is byte-for-byte what `JSON.stringify` gives,
 * without the whole document ever being one string.
 */
import type { Sink } from "./sink.ts";

/** How many levels are walked here rather than stringified whole. */
const STREAMED_DEPTH = 2;

function indented(value: unknown, pad: string): string {
  return JSON.stringify(value, null, 2).replace(/\n/g, `\n${pad}`);
}

export function writeJson(sink: Sink, value: unknown, pad = "", depth = 0): void {
  if (depth >= STREAMED_DEPTH || value === null || typeof value !== "object") {
    sink.write(indented(value, pad));
    return;
  }
  const inner = `${pad}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) {
      sink.write("[]");
      return;
    }
    sink.write("[");
    for (let i = 0; i < value.length; i++) {
      sink.write(i === 0 ? `\n${inner}` : `,\n${inner}`);
      // As JSON.stringify does, a value with no JSON form is null inside an array.
      const item: unknown = value[i];
      writeJson(sink, item === undefined || typeof item === "function" ? null : item, inner, depth + 1);
    }
    sink.write(`\n${pad}]`);
    return;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).filter((k) => record[k] !== undefined && typeof record[k] !== "function");
  if (keys.length === 0) {
    sink.write("{}");
    return;
  }
  sink.write("{");
  keys.forEach((key, i) => {
    sink.write(`${i === 0 ? "" : ","}\n${inner}${JSON.stringify(key)}: `);
    writeJson(sink, record[key], inner, depth + 1);
  });
  sink.write(`\n${pad}}`);
}
