/**
 * Reading the inputs every command shares: a JSON document from a file or
 * from stdin (`-`). Anything unreadable is an `invalid_params` error (exit 2)
 * that says which input and why, never a stack trace.
 */
import { readFileSync } from "node:fs";
import { CarError } from "@car/ir";

/** All of stdin as text. */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** `text` without a leading UTF-8 byte-order mark, which editors on Windows write and `JSON.parse` refuses. */
export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** The text of `path`, or of stdin when `path` is `-`, without a byte-order mark. */
export async function readText(path: string, what: string): Promise<string> {
  if (path === "-") return stripBom(await readStdin());
  try {
    return stripBom(readFileSync(path, "utf8"));
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (err as Error).message;
    throw new CarError("invalid_params", `cannot read ${what} '${path}': ${reason}`);
  }
}

/** Parses JSON text, naming the input in the error. */
export function parseJson(text: string, what: string, path: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const source = path === "-" ? "stdin" : `'${path}'`;
    throw new CarError("invalid_params", `${what} ${source} is not valid JSON: ${(err as Error).message}`);
  }
}

export async function readJson(path: string, what: string): Promise<unknown> {
  return parseJson(await readText(path, what), what, path);
}

/** Writes text to stdout followed by a newline. */
export function println(text = ""): void {
  process.stdout.write(`${text}\n`);
}

/** Writes text to stderr followed by a newline. */
export function eprintln(text = ""): void {
  process.stderr.write(`${text}\n`);
}
