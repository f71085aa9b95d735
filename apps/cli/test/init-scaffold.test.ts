/**
 * `car init` on real files in a temporary directory: what it writes (the
 * part of cookbook 10's `.car/` layout this runtime reads — the policy
 * directory), that the rules it writes load, and that it never overwrites
 * or writes through anything already there: an edited file, a directory,
 * a symlink planted where a file would go.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCar } from "./run-car.ts";

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "car-init-scaffold-"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const env = () => ({ CAR_HOME: join(root, "home") });

describe("car init", () => {
  it("writes .car/policies/defaults.toml and example.toml, which load, and nothing of cookbook 10 this runtime does not read", async () => {
    const dir = join(root, "fresh");
    const r = await runCar(["init", "--dir", dir, "--no-hooks"], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`created ${join(dir, ".car", "policies", "defaults.toml")}`);
    expect(readdirSync(join(dir, ".car"))).toEqual(["policies"]);
    expect(readdirSync(join(dir, ".car", "policies")).sort()).toEqual(["defaults.toml", "example.toml"]);
    expect(existsSync(join(dir, ".claude"))).toBe(false);
    const lint = await runCar(["policy", "lint", join(dir, ".car", "policies")], { env: env() });
    expect(lint.code, lint.stderr).toBe(0);
    // The defaults are enforced at once.
    const check = await runCar(["policy", "check", "--tool", "Bash", "--params", '{"command":"git push --force origin main"}', "--cwd", dir], { env: env() });
    expect(JSON.parse(check.stdout).decision).toBe("deny");
  });

  it("leaves an edited file as it is, says so, and still exits 0", async () => {
    const dir = join(root, "edited");
    mkdirSync(join(dir, ".car", "policies"), { recursive: true });
    writeFileSync(join(dir, ".car", "policies", "defaults.toml"), 'deny_tool = ["Mine"]\n');
    const r = await runCar(["init", "--dir", dir, "--no-hooks"], { env: env() });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${join(dir, ".car", "policies", "defaults.toml")} already exists; left as it is`);
    expect(readFileSync(join(dir, ".car", "policies", "defaults.toml"), "utf8")).toBe('deny_tool = ["Mine"]\n');
    expect(existsSync(join(dir, ".car", "policies", "example.toml"))).toBe(true);
  });

  it("never writes through a symlink planted where a file would go, dangling or not", async () => {
    const dir = join(root, "planted");
    mkdirSync(join(dir, ".car", "policies"), { recursive: true });
    const target = join(root, "outside.toml");
    symlinkSync(target, join(dir, ".car", "policies", "defaults.toml"));
    mkdirSync(join(dir, ".car", "policies", "example.toml"));
    const r = await runCar(["init", "--dir", dir, "--no-hooks"], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("defaults.toml already exists; left as it is");
    expect(r.stdout).toContain("example.toml already exists; left as it is");
    expect(existsSync(target)).toBe(false);
  });

  it("is a usage error (exit 2) for an argument it does not take", async () => {
    const r = await runCar(["init", "somewhere"], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unexpected argument 'somewhere'");
  });
});
