/**
 * Building the addon from this package's Rust sources: `napi build` from
 * @napi-rs/cli when it is installed (the workspace has it), else cargo
 * directly with the file named the way `napi build --platform` names it.
 * The crate has no dependencies, so neither needs the network.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { PACKAGE_DIR } from "./paths.ts";

/** Whether `cargo` runs on this machine. */
export function cargoAvailable(): boolean {
  return spawnSync("cargo", ["--version"], { stdio: "ignore" }).status === 0;
}

function napiCli(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    return join(require.resolve("@napi-rs/cli/package.json"), "..", "dist", "cli.js");
  } catch {
    return undefined;
  }
}

/** Builds the release binary into the package directory; `ok` false with cargo's output when it fails. */
export function buildNative(): { ok: boolean; output: string } {
  const cli = napiCli();
  const env = { ...process.env, CARGO_NET_OFFLINE: "true" };
  if (cli !== undefined) {
    const r = spawnSync(process.execPath, [cli, "build", "--platform", "--release", "--no-js", "--output-dir", "."], {
      cwd: PACKAGE_DIR,
      env,
      encoding: "utf8",
    });
    return { ok: r.status === 0, output: `${r.stdout ?? ""}${r.stderr ?? ""}` };
  }
  const r = spawnSync("cargo", ["build", "--release", "--offline"], { cwd: PACKAGE_DIR, env, encoding: "utf8" });
  if (r.status !== 0) return { ok: false, output: `${r.stdout ?? ""}${r.stderr ?? ""}` };
  const lib = process.platform === "darwin" ? "libcar_native.dylib" : process.platform === "win32" ? "car_native.dll" : "libcar_native.so";
  const abi = process.platform === "linux" ? "-gnu" : process.platform === "win32" ? "-msvc" : "";
  copyFileSync(join(PACKAGE_DIR, "target", "release", lib), join(PACKAGE_DIR, `car-native.${process.platform}-${process.arch}${abi}.node`));
  return { ok: true, output: r.stderr ?? "" };
}
