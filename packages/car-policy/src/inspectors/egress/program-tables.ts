/**
 * What the egress guard knows about programs, kept as data so a missing
 * name is a one-line fix (the package README lists every table). Names are
 * compared after `programFamily`: lower case (macOS file systems fold case),
 * without `.exe` or a Debian variant suffix (`nc.openbsd`), and without the
 * version of a versioned interpreter (`python3.12` → `python`).
 */

/** Raw network clients: running one as a command is denied outright. */
export const RAW_NETWORK_CLIENTS: ReadonlySet<string> = new Set([
  "nc",
  "netcat",
  "ncat",
  "socat",
  "telnet",
  "cryptcat",
  "pwncat",
  "sbd",
  "gnutls-cli",
  "tcpclient",
  "nping",
]);

/** `program subcommand` pairs that are raw network clients (`openssl s_client`). */
export const RAW_NETWORK_SUBCOMMANDS: Readonly<Record<string, readonly string[]>> = {
  openssl: ["s_client", "s_server", "s_time"],
};

/** Downloaders whose URLs and uploads the guard reads option by option (see `network-clients.ts`). */
export const DOWNLOADERS: ReadonlySet<string> = new Set([
  "curl",
  "wget",
  "wget2",
  "curlie",
  "http",
  "https",
  "xh",
  "xhs",
  "aria2c",
  "fetch",
  "lwp-request",
  "lwp-download",
]);

/** Other programs that reach the network: their presence is a network signal, nothing more. */
export const NETWORK_TOOLS: ReadonlySet<string> = new Set([
  "ssh",
  "scp",
  "sftp",
  "rsync",
  "ftp",
  "tftp",
  "lftp",
  "ncftp",
  "dig",
  "nslookup",
  "host",
  "ping",
  "traceroute",
  "nmap",
  "masscan",
  "websocat",
  "wscat",
  "grpcurl",
  "mosquitto_pub",
  "mosquitto_sub",
  "redis-cli",
  "psql",
  "mysql",
  "mongo",
  "mongosh",
  "smbclient",
  "rclone",
  "gsutil",
  "aws",
]);

/** Shells: they run a script given with `-c`, read from a file operand, or from standard input. */
export const SHELLS: ReadonlySet<string> = new Set([
  "sh",
  "bash",
  "zsh",
  "dash",
  "ksh",
  "mksh",
  "ash",
  "fish",
  "csh",
  "tcsh",
  "yash",
  "busybox-sh",
  "rbash",
  "pdksh",
  "oksh",
  "elvish",
  "nu",
  "xonsh",
  "pwsh",
  "powershell",
]);

/** Builtins that run a file as a script in the current shell. */
export const SOURCE_BUILTINS: ReadonlySet<string> = new Set(["source", "."]);

/**
 * Interpreters besides the shells, with the options that take the program as
 * a string (`python -c`, `perl -e`). With neither that option nor a script
 * operand they read the program from standard input.
 */
export const INTERPRETERS: Readonly<Record<string, { inline: string; valued?: string }>> = {
  python: { inline: "c", valued: "mWX" },
  pypy: { inline: "c", valued: "mWX" },
  perl: { inline: "eE", valued: "IMmx" },
  ruby: { inline: "e", valued: "IrCEF" },
  node: { inline: "ep", valued: "r" },
  deno: { inline: "" },
  php: { inline: "rRBE", valued: "cdfz" },
  lua: { inline: "e", valued: "l" },
  luajit: { inline: "e", valued: "lj" },
  tclsh: { inline: "" },
  wish: { inline: "" },
  osascript: { inline: "e", valued: "l" },
  jshell: { inline: "" },
  irb: { inline: "" },
  awk: { inline: "" },
  expect: { inline: "c" },
};

/** Families whose names carry a version (`python3.12`, `perl5.36`, `node20`). */
const VERSIONED = new Set(["python", "pypy", "perl", "ruby", "node", "php", "lua", "luajit", "tclsh", "wish", "bash", "zsh", "ksh", "pwsh", "jshell"]);

/** Other spellings of one family. */
const ALIASES: Readonly<Record<string, string>> = { nodejs: "node", gawk: "awk", mawk: "awk", nawk: "awk", "busybox.nosuid": "busybox" };

/**
 * Decoders: with their decode switch (`base64 -d`) the output is a payload
 * the reader never saw. `always` decoders decode without a switch.
 */
export const DECODERS: Readonly<Record<string, { flags?: RegExp; subcommands?: readonly string[]; always?: true }>> = {
  base64: { flags: /^(--decode|-[a-zA-Z]*[dD][a-zA-Z]*)$/ },
  base32: { flags: /^(--decode|-[a-zA-Z]*d[a-zA-Z]*)$/ },
  basenc: { flags: /^(--decode|-[a-zA-Z]*d[a-zA-Z]*)$/ },
  base58: { flags: /^(--decode|-[a-zA-Z]*d[a-zA-Z]*)$/ },
  xxd: { flags: /^(-r|-revert|-[a-zA-Z]*r[a-zA-Z]*)$/ },
  openssl: { subcommands: ["base64", "enc", "aes-256-cbc", "des3", "smime", "cms"], flags: /^-d$/ },
  uudecode: { always: true },
  gpg: { flags: /^(-d|--decrypt)$/ },
  zcat: { always: true },
  gunzip: { always: true },
  bunzip2: { always: true },
  xz: { flags: /^(-d|--decompress|-[a-zA-Z]*d[a-zA-Z]*)$/ },
  gzip: { flags: /^(-d|--decompress|-[a-zA-Z]*d[a-zA-Z]*)$/ },
  rev: { always: true },
  tr: { always: true },
};

/**
 * Wrappers that run their operand as a command, with their option grammar:
 * `valued` short options and `long` options that take a value (so the value
 * is not taken for the program), `positional` operands before the command,
 * `script` options whose value is a shell script (`su -c`), `joins` for
 * wrappers that run their operands joined as one shell command line
 * (`watch`, `tmux new`), `subcommands` the wrapper needs first (`tmux new`),
 * and `scriptOnly` when only the script option runs anything (`script`).
 */
export interface WrapperGrammar {
  valued: string;
  long?: readonly string[];
  positional?: number;
  script?: string;
  scriptLong?: readonly string[];
  joins?: true;
  subcommands?: readonly string[];
  scriptOnly?: true;
  /** Operands from this word on are not part of the command (`parallel … ::: args`). */
  stopAt?: readonly string[];
}

export const WRAPPERS: Readonly<Record<string, WrapperGrammar>> = {
  sudo: { valued: "ughpCDrtUT", long: ["--user", "--group", "--host", "--prompt", "--chdir", "--role", "--type", "--other-user", "--close-from"] },
  doas: { valued: "uC" },
  pkexec: { valued: "", long: ["--user"] },
  env: { valued: "uCS", long: ["--unset", "--chdir", "--split-string"], script: "S", scriptLong: ["--split-string"] },
  nohup: { valued: "" },
  exec: { valued: "a" },
  nice: { valued: "n", long: ["--adjustment"] },
  ionice: { valued: "cnp", long: ["--class", "--classdata", "--pid"] },
  chrt: { valued: "", positional: 1 },
  taskset: { valued: "", positional: 1 },
  timeout: { valued: "sk", long: ["--signal", "--kill-after"], positional: 1 },
  time: { valued: "fo", long: ["--format", "--output"] },
  stdbuf: { valued: "ioe", long: ["--input", "--output", "--error"] },
  setsid: { valued: "" },
  chroot: { valued: "", long: ["--userspec", "--groups"], positional: 1 },
  builtin: { valued: "" },
  command: { valued: "" },
  caffeinate: { valued: "tw" },
  unbuffer: { valued: "" },
  rlwrap: { valued: "aAbCDfHlOopPSsw" },
  xargs: { valued: "IiLlnPsdEa", long: ["--max-args", "--max-procs", "--delimiter", "--arg-file", "--replace", "--max-lines", "--eof"] },
  torsocks: { valued: "aPu", long: ["--address", "--port", "--user", "--pass"] },
  proxychains: { valued: "f" },
  proxychains4: { valued: "f" },
  busybox: { valued: "" },
  toybox: { valued: "" },
  strace: { valued: "abeEIoOpPsSuUX", long: ["--output", "--trace", "--signal", "--attach", "--user", "--env"] },
  ltrace: { valued: "aAeEnoOpsSuXLl", long: ["--output"] },
  valgrind: { valued: "" },
  catchsegv: { valued: "" },
  fakeroot: { valued: "", long: ["-l", "--lib", "--faked", "-s", "-i"] },
  faketime: { valued: "", positional: 1 },
  flock: { valued: "wEo", long: ["--timeout", "--conflict-exit-code"], positional: 1, script: "c", scriptLong: ["--command"] },
  su: {
    valued: "gGsw",
    positional: 1,
    long: ["--group", "--supp-group", "--shell", "--whitelist-environment"],
    script: "c",
    scriptLong: ["--command", "--session-command"],
    scriptOnly: true,
  },
  runuser: { valued: "gGsuw", long: ["--group", "--supp-group", "--shell", "--user"], script: "c", scriptLong: ["--command", "--session-command"] },
  sg: { valued: "", positional: 1, script: "c" },
  script: {
    valued: "EIOBTm",
    long: ["--log-in", "--log-out", "--log-io", "--log-timing", "--echo", "--logging-format"],
    script: "c",
    scriptLong: ["--command"],
    scriptOnly: true,
  },
  watch: { valued: "nq", long: ["--interval", "--chgexit-lines"], joins: true },
  tmux: {
    valued: "cefnstxyFLSlTw",
    subcommands: ["new", "new-session", "new-window", "neww", "split-window", "splitw", "respawn-pane", "respawnp", "run-shell", "run"],
    joins: true,
  },
  screen: { valued: "cehLpRSTX" },
  parallel: {
    valued: "jPIdEL",
    long: ["--jobs", "--joblog", "--delimiter", "--results", "--sshlogin", "-S"],
    joins: true,
    stopAt: [":::", "::::", ":::+", "::::+"],
  },
  unshare: { valued: "S", long: ["--setuid", "--setgid", "--root", "--wd"] },
  nsenter: { valued: "tSGw", long: ["--target", "--setuid", "--setgid", "--wd"] },
  firejail: { valued: "" },
  bwrap: { valued: "" },
  "systemd-run": {
    valued: "pEuM",
    long: ["--unit", "--property", "--setenv", "--uid", "--gid", "--working-directory", "--description", "--slice", "--machine"],
  },
  "dbus-run-session": { valued: "" },
  sshpass: { valued: "pfdP" },
  eatmydata: { valued: "" },
};

/**
 * Options a program takes before its subcommand that carry a value, so the
 * subcommand after them is found (`git -C dir push`, `kubectl -n prod
 * delete`, `terraform -chdir=x destroy`). Shared by `deny_command`, the
 * container and cluster wrappers and the tier classifier.
 */
export const GLOBAL_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  git: ["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--exec-path", "--list-cmds", "--attr-source"],
  docker: ["-H", "--host", "--context", "-c", "--config", "-l", "--log-level", "--tlscacert", "--tlscert", "--tlskey"],
  podman: ["--connection", "-c", "--url", "--identity", "--root", "--runroot", "--storage-driver", "--log-level", "--module", "--cgroup-manager"],
  nerdctl: ["-H", "--host", "--address", "-a", "-n", "--namespace", "--snapshotter", "--cni-path", "--data-root"],
  kubectl: [
    "-n",
    "--namespace",
    "--context",
    "--cluster",
    "--kubeconfig",
    "-s",
    "--server",
    "--user",
    "--token",
    "--as",
    "--as-group",
    "--as-uid",
    "--certificate-authority",
    "--client-certificate",
    "--client-key",
    "--request-timeout",
    "--cache-dir",
    "--tls-server-name",
    "-v",
    "--v",
    "--log-file",
    "--profile",
    "--profile-output",
  ],
  oc: ["-n", "--namespace", "--context", "--cluster", "--kubeconfig", "-s", "--server", "--user", "--token", "--as", "--request-timeout", "-v", "--loglevel"],
  helm: [
    "-n",
    "--namespace",
    "--kube-context",
    "--kubeconfig",
    "--kube-apiserver",
    "--kube-token",
    "--kube-as-user",
    "--kube-as-group",
    "--kube-ca-file",
    "--registry-config",
    "--repository-cache",
    "--repository-config",
    "--burst-limit",
    "--qps",
  ],
  terraform: ["-chdir"],
  tofu: ["-chdir"],
  npm: ["--prefix", "-w", "--workspace", "--userconfig", "--registry", "--cache"],
  pnpm: ["-C", "--dir", "--filter", "-F", "--workspace-dir", "--config"],
  yarn: ["--cwd"],
  cargo: ["-C", "--config", "-Z", "--color"],
  gem: ["--config-file"],
  gh: ["-R", "--repo", "--hostname"],
};

/**
 * Options before the subcommand known to take no value: with these, the word
 * after them is certainly the subcommand (see `CommandShape.readings`).
 */
export const GLOBAL_SWITCHES: Readonly<Record<string, readonly string[]>> = {
  git: [
    "-p",
    "-P",
    "--paginate",
    "--no-pager",
    "--bare",
    "--no-replace-objects",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--no-optional-locks",
    "--no-advice",
    "--no-lazy-fetch",
  ],
};

/** A program name as the tables know it: see the file comment. */
export function programFamily(name: string): string {
  let n = name.toLowerCase().replace(/\.exe$/, "");
  n = n.replace(/[.-](openbsd|traditional|bsd|gnu|nmap|static)$/, "");
  n = ALIASES[n] ?? n;
  const versioned = /^([a-z]+?)-?[0-9][0-9.]*[a-z]?$/.exec(n);
  if (versioned && VERSIONED.has(versioned[1] as string)) return versioned[1] as string;
  return n;
}
