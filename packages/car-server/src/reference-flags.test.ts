/**
 * The original server's flags as they map here (reference-flags.ts), on
 * real files: a token file is read and deleted only when it is private to
 * its owner and holds a token; every other file is refused and left where
 * it was. `--journal-dir` names the database, reading `~/.car/` as
 * CAR_HOME. `CAR_NO_APPROVALS` asks for something that is refused.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isCarError } from "@car/ir";
import { journalDirDatabase, noApprovalsRequested, readAuthTokenFile } from "./reference-flags.ts";

let root: string;
let n = 0;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "car-reference-flags-"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function tokenFile(text: string, mode: number): string {
  const path = join(root, `token-${n++}`);
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(isCarError(error) && error.code === "invalid_params").toBe(true);
    return (error as Error).message;
  }
  throw new Error("expected a refusal");
}

const TOKEN = fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/);

describe("--auth-token-file", () => {
  it("reads a private file's token (trimmed) and deletes the file", () => {
    fc.assert(
      fc.property(TOKEN, fc.constantFrom(0o600, 0o400, 0o700), fc.constantFrom("", "\n", "  \r\n"), (token, mode, pad) => {
        const path = tokenFile(`${pad}${token}${pad}`, mode);
        expect(readAuthTokenFile(path, "--auth-token-file")).toBe(token);
        expect(existsSync(path)).toBe(false);
      }),
      { numRuns: 40 },
    );
  });

  it("refuses, and keeps, a file group or others may read or write: it names the mode and chmod 600", () => {
    fc.assert(
      fc.property(TOKEN, fc.integer({ min: 0o001, max: 0o077 }), (token, loose) => {
        const path = tokenFile(token, 0o600 | loose);
        expect(refusal(() => readAuthTokenFile(path, "--auth-token-file"))).toMatch(/mode \d{3} lets others read or change the token; .*chmod 600/);
        expect(existsSync(path)).toBe(true);
      }),
      { numRuns: 40 },
    );
  });

  it("refuses, and keeps, an empty or blank file, a token with spaces, a file over 4 KiB", () => {
    for (const text of ["", "   \n", "two words", "x".repeat(4097)]) {
      const path = tokenFile(text, 0o600);
      expect(refusal(() => readAuthTokenFile(path, "CAR_AUTH_TOKEN_FILE"))).toMatch(/^CAR_AUTH_TOKEN_FILE /);
      expect(existsSync(path)).toBe(true);
    }
  });

  it("refuses a missing path, a directory and a symlink (the file handed over is the path itself)", () => {
    expect(refusal(() => readAuthTokenFile(join(root, "absent"), "--auth-token-file"))).toContain("cannot open it: ENOENT");
    const dir = join(root, `dir-${n++}`);
    mkdirSync(dir, { mode: 0o700 });
    expect(refusal(() => readAuthTokenFile(dir, "--auth-token-file"))).toContain("not a regular file");
    const target = tokenFile("secret", 0o600);
    const link = join(root, `link-${n++}`);
    symlinkSync(target, link);
    expect(refusal(() => readAuthTokenFile(link, "--auth-token-file"))).toContain("cannot open it: ELOOP");
    expect(existsSync(target)).toBe(true);
  });
});

describe("--journal-dir", () => {
  it("is the directory of the database, created if missing; ~/.car/ names CAR_HOME", () => {
    const home = join(root, "home");
    expect(journalDirDatabase(join(root, "j1"), {})).toBe(join(root, "j1", "car.db"));
    expect(existsSync(join(root, "j1"))).toBe(true);
    expect(journalDirDatabase("~/.car/journals", { CAR_HOME: home })).toBe(join(home, "journals", "car.db"));
    expect(journalDirDatabase("~/.car", { CAR_HOME: home })).toBe(join(home, "car.db"));
  });

  it("refuses an empty value, another ~ path, and a relative CAR_HOME behind ~/.car/", () => {
    expect(refusal(() => journalDirDatabase("", {}))).toContain("must not be empty");
    expect(refusal(() => journalDirDatabase("~/journals", {}))).toContain("'~' is not expanded");
    expect(refusal(() => journalDirDatabase("~/.car/j", { CAR_HOME: "rel" }))).toContain("CAR_HOME must be an absolute path");
  });
});

describe("CAR_NO_APPROVALS", () => {
  it("asks for nothing when unset, empty or 0; any other value is named so it can be refused", () => {
    expect(noApprovalsRequested(undefined, {})).toBeUndefined();
    expect(noApprovalsRequested(undefined, { CAR_NO_APPROVALS: "" })).toBeUndefined();
    expect(noApprovalsRequested(undefined, { CAR_NO_APPROVALS: "0" })).toBeUndefined();
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }).filter((v) => v !== "0"),
        (value) => noApprovalsRequested(undefined, { CAR_NO_APPROVALS: value }) === `CAR_NO_APPROVALS=${value}`,
      ),
    );
    expect(noApprovalsRequested(true, {})).toBe("--no-approvals");
  });
});
