/**
 * A throwaway PostgreSQL cluster for tests and benchmarks: `initdb` into a
 * temporary directory, start on a free loopback port, drop everything on
 * `stop()`. Uses Debian's `postgresql` package (installed by `.ci/run`).
 * When running as root the server runs as the `postgres` user, because
 * PostgreSQL refuses to run as root.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface PostgresCluster {
  /** A `postgres://` URL for the cluster's `postgres` database. */
  url: string;
  port: number;
  /** Creates a fresh database and returns its URL. */
  createDatabase(name: string): string;
  stop(): void;
}

/** The directory holding Debian's PostgreSQL server binaries, or undefined when none is installed. */
export function postgresBinDir(): string | undefined {
  const base = "/usr/lib/postgresql";
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(base, versions[0]!, "bin") : undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

const isRoot = process.getuid?.() === 0;

function run(bin: string, args: string[]): void {
  const [cmd, argv] = isRoot ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
  const r = spawnSync(cmd, argv, { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${bin} ${args.join(" ")} failed: ${r.stderr || r.stdout}`);
}

/** Starts a new cluster; throws when PostgreSQL is not installed. */
export async function startPostgresCluster(): Promise<PostgresCluster> {
  const bin = postgresBinDir();
  if (bin === undefined) throw new Error("PostgreSQL is not installed (apt-get install postgresql)");
  const dir = mkdtempSync(join(tmpdir(), "car-pg-"));
  const data = join(dir, "data");
  if (isRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    chownSync(dir, uid, gid);
  }
  run(join(bin, "initdb"), ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
  const port = await freePort();
  const options = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c max_connections=200`;
  run(join(bin, "pg_ctl"), ["-D", data, "-o", options, "-l", join(dir, "log"), "-w", "start"]);
  const url = (db: string) => `postgres://postgres@127.0.0.1:${port}/${db}`;
  let stopped = false;
  return {
    url: url("postgres"),
    port,
    createDatabase(name: string) {
      run(join(bin, "createdb"), ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", name]);
      return url(name);
    },
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run(join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
