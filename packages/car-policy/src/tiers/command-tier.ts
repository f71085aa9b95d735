/**
 * The tier a command line needs, read the way the gate reads it (issue 36
 * §4): the shell reader finds every program the line runs (wrappers such as
 * `sudo`/`env`/`timeout`/`xargs` peeled, `bash -c` and `$( )` read as
 * scripts), `commandShape` finds the subcommand after global options and
 * the flags as a set, and the egress reader's findings count as network or
 * execution signals. So `git -C . push --force`, `rm -r -f /` and
 * `kubectl -n prod delete …` need what `git push`, `rm -rf /` and
 * `kubectl delete` need. What the reader cannot read (a program decided at
 * run time, a line that does not parse or is too long) is `full_access`:
 * it cannot be proved to need less.
 */
import { type Invocation, pipelinesOf, scriptSource } from "../inspectors/egress/command-position.ts";
import { type CommandShape, commandShape, hasFlags } from "../inspectors/egress/command-shape.ts";
import { EgressInspector, MAX_COMMAND_LENGTH, networkSignal } from "../inspectors/egress/egress-inspector.ts";
import { DOWNLOADERS, NETWORK_TOOLS, RAW_NETWORK_CLIENTS, RAW_NETWORK_SUBCOMMANDS, SHELLS, SOURCE_BUILTINS } from "../inspectors/egress/program-tables.ts";
import type { PermissionTier } from "./permission-tier.ts";

/**
 * What one command line needs: each signal that raises the tier (`unreadable`
 * when the line itself could not be read), and whether it only reads.
 */
export interface CommandReading {
  signals: { tier: PermissionTier; why: string; unreadable?: true }[];
  /** Every program it runs only reads, and nothing is redirected into a file. */
  onlyReads: boolean;
}

/** A program (and optionally subcommand, flags, operands) that reaches outside the sandbox or destroys beyond undo. */
interface CommandRule {
  programs: readonly string[];
  /** Any of these as the subcommand (any reading of it). */
  subcommands?: readonly string[];
  /** Every entry must be present; an entry lists alternatives. */
  flags?: readonly (readonly string[])[];
  /** Any of these among the operands (absolute paths normalised). */
  operands?: readonly string[];
  /** Any operand starting with one of these (`of=` of `dd`). */
  operandPrefixes?: readonly string[];
}

const RECURSIVE = ["-r", "-R", "--recursive"];
const KUBE_WRITES = [
  "apply",
  "delete",
  "create",
  "replace",
  "patch",
  "edit",
  "scale",
  "autoscale",
  "rollout",
  "set",
  "label",
  "annotate",
  "taint",
  "drain",
  "cordon",
  "uncordon",
  "run",
  "expose",
  "cp",
  "exec",
  "attach",
  "port-forward",
  "proxy",
  "debug",
  "certificate",
];

const FULL_ACCESS_COMMANDS: readonly CommandRule[] = [
  { programs: ["git"], subcommands: ["push", "reset", "send-email", "credential", "filter-branch", "filter-repo", "request-pull", "daemon"] },
  { programs: ["terraform", "tofu"], subcommands: ["apply", "destroy", "import", "force-unlock", "taint", "untaint"] },
  { programs: ["terraform", "tofu"], subcommands: ["state"], operands: ["rm", "mv", "push", "replace-provider"] },
  { programs: ["pulumi"], subcommands: ["up", "update", "destroy", "import", "refresh", "cancel"] },
  { programs: ["kubectl", "oc"], subcommands: KUBE_WRITES },
  { programs: ["helm"], subcommands: ["install", "upgrade", "uninstall", "delete", "del", "rollback", "push", "registry"] },
  { programs: ["aws", "gcloud", "gsutil", "az", "doctl", "flyctl", "fly", "heroku", "vercel", "netlify", "eksctl", "firebase", "wrangler"] },
  { programs: ["docker", "podman", "nerdctl"], subcommands: ["push", "login"] },
  { programs: ["npm", "pnpm", "yarn", "bun"], subcommands: ["publish", "unpublish", "deprecate", "login", "adduser", "owner", "dist-tag", "token"] },
  { programs: ["cargo"], subcommands: ["publish", "yank", "login", "owner"] },
  { programs: ["gem"], subcommands: ["push", "yank", "owner", "publish"] },
  { programs: ["twine"], subcommands: ["upload"] },
  { programs: ["poetry", "flit", "hatch", "uv"], subcommands: ["publish"] },
  { programs: ["gh"], subcommands: ["release", "api", "secret", "variable"] },
  { programs: ["gh"], subcommands: ["pr"], operands: ["merge"] },
  { programs: ["gh"], subcommands: ["repo"], operands: ["delete", "create", "edit", "rename", "archive", "fork"] },
  { programs: ["gh"], subcommands: ["auth"], operands: ["token", "login", "refresh"] },
  { programs: ["gh"], subcommands: ["workflow", "run"], operands: ["run", "rerun", "enable", "disable"] },
  { programs: ["gh"], subcommands: ["gist"], operands: ["create", "edit"] },
  // `rm -rf` is on the always-dangerous list; in any spelling of its flags, and `rm -r` of a root.
  { programs: ["rm"], flags: [RECURSIVE, ["-f", "--force"]] },
  { programs: ["rm"], flags: [RECURSIVE], operands: ["/", "~", "~/", "$HOME", "${HOME}", "/home", "/etc", "/usr", "/var", "/boot", "/root"] },
  { programs: ["dd"], operandPrefixes: ["if=", "of="] },
  { programs: ["wipefs", "shred", "fdisk", "sfdisk", "parted", "shutdown", "reboot", "poweroff", "halt"] },
  { programs: ["crontab"], flags: [["-r", "-e"]] },
  { programs: ["rsync"], operandPrefixes: ["rsync://"] },
];

/** Programs and wrappers that run as another user. */
const ESCALATORS = new Set(["sudo", "sudoedit", "su", "doas", "pkexec", "runuser", "sg", "nsenter", "chroot", "machinectl"]);
/** Wrappers that run their command somewhere else (a cluster's container). */
const REMOTE_RUNNERS = new Set(["kubectl", "oc"]);
/** Network programs that are only local in some uses, judged by their own rule above. */
const NETWORK_BY_RULE = new Set(["rsync"]);
/** Variables that make the program they are set for run other text (a pager, an SSH command, a preloaded library). */
const EXECUTING_ENV = new Set([
  "LD_PRELOAD",
  "LD_AUDIT",
  "DYLD_INSERT_LIBRARIES",
  "BASH_ENV",
  "ENV",
  "PROMPT_COMMAND",
  "PAGER",
  "GIT_PAGER",
  "EDITOR",
  "VISUAL",
  "GIT_EDITOR",
  "GIT_SSH",
  "GIT_SSH_COMMAND",
  "GIT_PROXY_COMMAND",
  "GIT_EXTERNAL_DIFF",
  "GIT_ASKPASS",
  "SSH_ASKPASS",
  "GIT_CONFIG_PARAMETERS",
  "GIT_CONFIG_COUNT",
  "GIT_EXEC_PATH",
  "DOCKER_HOST",
  "CONTAINER_HOST",
]);
/** `git -c` settings that define commands git will run (aliases, pagers, SSH commands, hooks, filters). */
const GIT_EXECUTING_SETTING =
  /^(alias\.|core\.(sshcommand|pager|editor|hookspath|fsmonitor|gitproxy|askpass)\b|.*\.(command|cmd|textconv|program|helper|process|clean|smudge)\b)/i;
/** Docker/Podman global options that send the command to another daemon. */
const REMOTE_DAEMON = new Set(["-H", "--host", "--context", "--connection", "--url", "--address", "-c"]);

/** Programs that only read. A command line made only of these is `read_only`. */
const READ_ONLY_PROGRAMS = new Set([
  "ls",
  "cat",
  "head",
  "tail",
  "less",
  "more",
  "grep",
  "rg",
  "ag",
  "find",
  "fd",
  "pwd",
  "echo",
  "printf",
  "wc",
  "stat",
  "file",
  "which",
  "whereis",
  "whoami",
  "id",
  "date",
  "uname",
  "env",
  "printenv",
  "tree",
  "du",
  "df",
  "ps",
  "diff",
  "sort",
  "uniq",
  "cut",
  "tr",
  "jq",
  "true",
  "false",
  "test",
  "basename",
  "dirname",
  "realpath",
  "readlink",
  "sha256sum",
  "md5sum",
  "shasum",
]);
/** Flags that make a read-only program write (`find -delete`, `sort -o out`). */
const WRITING_FLAGS: Readonly<Record<string, readonly string[]>> = {
  find: ["-delete", "-fprint", "-fprint0", "-fprintf", "-fls"],
  sort: ["-o", "--output"],
  tree: ["-o"],
  date: ["-s", "--set"],
};
const READ_ONLY_GIT = new Set(["status", "diff", "log", "show", "rev-parse", "ls-files", "blame", "describe", "shortlog", "grep", "cat-file", "ls-tree"]);
const GIT_LISTING_FLAGS = new Set([
  "--no-pager",
  "-P",
  "-p",
  "--paginate",
  "-a",
  "-r",
  "-v",
  "--all",
  "--remotes",
  "--list",
  "-l",
  "--show-current",
  "--verbose",
  "--no-color",
  "--color",
]);

const EGRESS = new EgressInspector();

/** Reads one command line. */
export function readCommand(command: string): CommandReading {
  const signals: CommandReading["signals"] = [];
  if (command.trim() === "") return { signals, onlyReads: true };
  const full = (why: string) => signals.push({ tier: "full_access", why });
  const unreadable = (why: string) => signals.push({ tier: "full_access", why, unreadable: true });
  if (command.length > MAX_COMMAND_LENGTH) {
    unreadable(`the command is ${command.length} characters long, over the ${MAX_COMMAND_LENGTH} the reader reads`);
    return { signals, onlyReads: false };
  }
  const parsed = pipelinesOf(command);
  if (parsed.truncated) unreadable("the command nests too deeply to read");
  if (parsed.incomplete !== undefined) unreadable(`the command does not parse (${parsed.incomplete})`);
  const egress = EGRESS.parsedCommandFindings(command, parsed)[0];
  if (egress !== undefined) full(`egress: ${egress.reason}`);
  const all = parsed.pipelines.flat(2);
  let onlyReads = parsed.incomplete === undefined;
  for (const inv of all) {
    const shape = commandShape(inv);
    const why = fullAccessReason(inv, shape, command, all);
    if (why !== undefined) full(why);
    if (!readsOnly(inv, shape)) onlyReads = false;
  }
  if (!onlyReads) signals.push({ tier: "sandbox_edit", why: "the command runs programs that can change files" });
  return { signals, onlyReads };
}

/** Why one invocation needs `full_access`, if it does. */
function fullAccessReason(inv: Invocation, shape: CommandShape, command: string, all: readonly Invocation[]): string | undefined {
  const program = inv.program;
  if (inv.opaque !== undefined) return `the command runs ${inv.opaque}, which cannot be read statically`;
  const escalator = ESCALATORS.has(program) ? program : inv.wrappers?.find((w) => ESCALATORS.has(w));
  if (escalator !== undefined) return `the command runs as another user through '${escalator}'`;
  const remote = inv.wrappers?.find((w) => REMOTE_RUNNERS.has(w));
  if (remote !== undefined) return `the command runs '${program}' inside a cluster through '${remote} exec'`;
  const rule = FULL_ACCESS_COMMANDS.find((r) => matches(r, program, shape));
  if (rule !== undefined) return `the command runs '${[program, ...shape.readings.slice(0, 1)].join(" ")}'`;
  if ((RAW_NETWORK_CLIENTS.has(program) || DOWNLOADERS.has(program) || NETWORK_TOOLS.has(program)) && !NETWORK_BY_RULE.has(program)) {
    return `the command runs the network program '${program}'`;
  }
  if (RAW_NETWORK_SUBCOMMANDS[program]?.includes(shape.subcommand ?? "")) return `the command runs '${program} ${shape.subcommand}'`;
  if (program === "rsync" && shape.operands.some((o) => /^[^/]*:/.test(o))) return "the command runs 'rsync' to a remote host";
  if (/^mkfs(\.|$)/.test(program)) return `the command runs '${program}'`;
  const env = inv.env.find((name) => EXECUTING_ENV.has(name));
  if (env !== undefined) return `the command sets '${env}', which makes '${program}' run other text`;
  if (program === "git") {
    const setting = shape.globals.find(
      (g) => (g.name === "-c" && GIT_EXECUTING_SETTING.test(g.value)) || g.name === "--config-env" || g.name === "--exec-path",
    );
    if (setting !== undefined) return `the command sets '${setting.name} ${setting.value}', which makes git run other text`;
  }
  if ((program === "docker" || program === "podman" || program === "nerdctl") && shape.globals.some((g) => REMOTE_DAEMON.has(g.name))) {
    return `the command sends '${program}' to another daemon`;
  }
  const source = scriptSource(inv);
  if (source?.kind === "inline") {
    const shellText = SHELLS.has(program) || program === "eval" || SOURCE_BUILTINS.has(program);
    if (shellText && source.word.opaque !== undefined) return `the command hands '${program}' a script built at run time`;
    // Code in another language is not read: with a network or execution signal beside it, it is not proved to stay inside.
    const signal = shellText ? undefined : networkSignal(command, all);
    if (signal !== undefined) return `the command runs inline '${program}' code, and ${signal}`;
  }
  return undefined;
}

function matches(rule: CommandRule, program: string, shape: CommandShape): boolean {
  if (!rule.programs.includes(program)) return false;
  if (rule.subcommands !== undefined && !shape.readings.some((r) => rule.subcommands?.includes(r))) return false;
  if (rule.flags !== undefined && !hasFlags(shape, rule.flags)) return false;
  // With a subcommand, the operands asked about are those after it (`merge` of `gh pr merge`).
  const operands = rule.subcommands === undefined ? shape.operands : shape.operands.slice(1);
  if (rule.operands !== undefined && !operands.some((o) => rule.operands?.includes(o))) return false;
  if (rule.operandPrefixes !== undefined && !shape.operands.some((o) => rule.operandPrefixes?.some((p) => o.startsWith(p)))) return false;
  return true;
}

function readsOnly(inv: Invocation, shape: CommandShape): boolean {
  if (inv.redirects.some((r) => r.op.includes(">") && r.target.text !== "/dev/null" && !/^\d$/.test(r.target.text))) return false;
  if (WRITING_FLAGS[inv.program]?.some((f) => shape.flags.has(f))) return false;
  if (READ_ONLY_PROGRAMS.has(inv.program)) return true;
  if (inv.program !== "git" || shape.readings.length === 0 || shape.flags.has("--output")) return false;
  if (shape.readings.every((r) => READ_ONLY_GIT.has(r))) return true;
  const listing = [...shape.flags].every((f) => GIT_LISTING_FLAGS.has(f) || shape.globals.some((g) => g.name === f));
  if (shape.subcommand === "branch") return shape.operands.length === 1 && listing;
  if (shape.subcommand === "remote") return shape.operands.length === 1 || (shape.operands.length === 2 && shape.operands[1] === "show");
  return false;
}
