/**
 * Where the gate reads policy rules from, in merge order: the operator's
 * `<CAR_HOME>/policies`, then every project `.car/policies` from the
 * repository root down to the working directory.
 *
 * Walked, because a hook's working directory follows the agent: read from
 * the working directory alone, one `cd` into a subdirectory would disarm every
 * repository-root rule. Every `.car` on the way is read, not only the nearest
 * — rules only add denials, so reading more can never allow what fewer would
 * deny. The walk stops at the outermost work tree's root (the highest
 * directory holding `.git`; a nested `.git` does not stop it, §18); a linked
 * work tree (`git worktree add`) also reads its main work tree's `.car`;
 * outside a repository only the working directory's own `.car` counts. A
 * `.car` that is a state root (`~/.car` when the cwd is `$HOME`) is the
 * operator's, not a project's, and is never read twice. The working
 * directory's own `.car/policies` is always listed, existing or not, so a
 * response shows where a project rule would have to go.
 */
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { isDangling } from "../files/load-policy-dir.ts";

export const PROJECT_DIR = ".car";

export interface CarHomeOptions {
  /** The state root; defaults to `$CAR_HOME`, else `~/.car`. */
  carHome?: string;
  /** Directories that are state roots, never project directories; defaults to the state root and `~/.car`. */
  stateRoots?: readonly string[];
}

/** The operator's state root: `carHome`, else an absolute `$CAR_HOME`, else `~/.car`. */
export function carHomeRoot(carHome?: string): string {
  if (carHome !== undefined) return carHome;
  const env = process.env["CAR_HOME"];
  if (env !== undefined && env !== "" && isAbsolute(env)) return env;
  return join(homedir(), PROJECT_DIR);
}

export function policyDirs(cwd: string, options: CarHomeOptions = {}): string[] {
  const operator = carHomeRoot(options.carHome);
  const roots = options.stateRoots ?? [operator, join(homedir(), PROJECT_DIR)];
  return policyDirsExcluding(cwd, operator, roots);
}

/** `policyDirs` with the operator root and the state roots given explicitly (tests never touch the real ones). */
export function policyDirsExcluding(cwd: string, operatorRoot: string, stateRoots: readonly string[]): string[] {
  // The operator root is excluded from the walk even when it is not listed among the state roots.
  const excluded = [...stateRoots, operatorRoot];
  const own = join(cwd, PROJECT_DIR);
  const dirs = [join(operatorRoot, "policies")];
  for (const dir of repoProjectDirs(cwd, excluded).reverse()) {
    if (!samePath(dir, own)) dirs.push(join(dir, "policies"));
  }
  if (!isStateRoot(own, excluded)) dirs.push(join(own, "policies"));
  return dirs;
}

/**
 * Existing project `.car` directories from `cwd` up to the outermost
 * enclosing work tree's root, nearest first, state roots skipped. A `.git`
 * inside another work tree (a submodule, a clone, a marker an agent made
 * with `touch sub/.git`) does not end the walk (DECISIONS §18). Outside a
 * repository: `cwd`'s own only. A `.car` that is a dangling symlink is
 * listed, so loading it fails closed instead of reading as "no rules".
 */
export function repoProjectDirs(cwd: string, excluded: readonly string[]): string[] {
  const found: { dir: string; level: number }[] = [];
  let outermost = -1;
  let root = "";
  let dir = resolve(cwd);
  for (let level = 0; ; level++) {
    const candidate = join(dir, PROJECT_DIR);
    if ((isDirectory(candidate) || isDangling(candidate)) && !isStateRoot(candidate, excluded)) found.push({ dir: candidate, level });
    if (existsSync(join(dir, ".git"))) {
      outermost = level;
      root = dir;
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  if (outermost !== -1) {
    const dirs = found.filter((f) => f.level <= outermost).map((f) => f.dir);
    // A linked work tree (`git worktree add`) also answers to the main work tree's policies, read first.
    const main = mainWorkTree(root);
    const mainCar = main === undefined ? undefined : join(main, PROJECT_DIR);
    if (mainCar !== undefined && (isDirectory(mainCar) || isDangling(mainCar)) && !isStateRoot(mainCar, excluded) && !dirs.some((d) => samePath(d, mainCar))) {
      dirs.push(mainCar);
    }
    return dirs;
  }
  const own = join(resolve(cwd), PROJECT_DIR);
  return (isDirectory(own) || isDangling(own)) && !isStateRoot(own, excluded) ? [own] : [];
}

/**
 * The main work tree of a linked work tree: its `.git` is a file naming
 * `<main>/.git/worktrees/<name>`, whose `commondir` leads back to
 * `<main>/.git`. `undefined` for a main work tree, a submodule (no
 * `commondir`), a bare repository, or anything unreadable.
 */
export function mainWorkTree(root: string): string | undefined {
  const gitFile = join(root, ".git");
  try {
    if (!statSync(gitFile).isFile()) return undefined;
    const pointer = /^gitdir:\s*(.+)$/m.exec(readSmallFile(gitFile))?.[1]?.trim();
    if (pointer === undefined) return undefined;
    const gitDir = resolve(root, pointer);
    const common = resolve(gitDir, readSmallFile(join(gitDir, "commondir")).trim());
    return basename(common) === ".git" ? dirname(common) : undefined;
  } catch {
    return undefined;
  }
}

/** A small regular file's text (a `.git` pointer, a `commondir`); anything else is refused. */
function readSmallFile(path: string): string {
  if (!statSync(path).isFile() || statSync(path).size > 4096) throw new Error(`${path} is not a small regular file`);
  return readFileSync(path, "utf8");
}

export function isStateRoot(dir: string, roots: readonly string[]): boolean {
  return roots.some((root) => samePath(dir, root));
}

/** Equal as written (normalised) or as the same real directory. */
function samePath(a: string, b: string): boolean {
  if (resolve(a) === resolve(b)) return true;
  const ra = real(a);
  return ra !== undefined && ra === real(b);
}

function real(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}
