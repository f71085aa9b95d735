/**
 * Where a report goes, piece by piece: stdout or a file. Pieces are buffered
 * into 64 KB writes, so a report about a million actions streams out without
 * ever being one string (V8 cannot build a string past ~512 MB, and holding
 * one costs as much memory as the report).
 */
import { closeSync, openSync, writeSync } from "node:fs";

export interface Sink {
  write(text: string): void;
  /** Flushes what is buffered and closes a file. */
  close(): void;
}

const FLUSH_AT = 64 * 1024;

/** A sink to `path`, or to stdout when `path` is undefined. */
export function openSink(path?: string): Sink {
  const fd = path === undefined ? undefined : openSync(path, "w");
  let parts: string[] = [];
  let size = 0;
  const flush = () => {
    if (size === 0) return;
    const chunk = parts.join("");
    parts = [];
    size = 0;
    if (fd === undefined) process.stdout.write(chunk);
    else writeSync(fd, chunk);
  };
  return {
    write(text) {
      parts.push(text);
      size += text.length;
      if (size >= FLUSH_AT) flush();
    },
    close() {
      flush();
      if (fd !== undefined) closeSync(fd);
    },
  };
}

/** Writes each line of `lines` followed by a newline. */
export function writeLines(sink: Sink, lines: Iterable<string>): void {
  for (const line of lines) sink.write(`${line}\n`);
}
