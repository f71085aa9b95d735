/**
 * The programs the gate can prove a command safe with, kept as data (the
 * package README explains the tables). A program in command position that
 * is not here — and is not a script named by a path — leaves the command
 * unproven, so the gate asks. A program that is here is known not to run
 * text it is given, except through the options and subcommands its row
 * lists: those are what `unproven.ts` asks about.
 *
 * Names are compared in their family spelling (`programFamily`: `python`
 * for `python3.12`, `nc` for `nc.openbsd`).
 */

export interface KnownProgram {
  /**
   * Options that run their value (or the words after them) as a command:
   * `--to-command`, `-I`. A long option matches as written or with
   * `=value`; a short one as written, with its value attached, or inside a
   * cluster of short options.
   */
  runs?: readonly string[];
  /** Subcommands (the first operand, and the second when given) that run text: `bisect run`, `submodule foreach`. */
  runsSubcommands?: readonly string[];
  /** Options that run text only under one subcommand: `rebase -x`. */
  subcommandRuns?: Readonly<Record<string, readonly string[]>>;
  /**
   * Runs another program named by its operands (`npx eslint`, `uv run
   * pytest`), after the listed subcommand when there is one (`""` for none):
   * that program is proven in turn.
   */
  runsOperands?: readonly string[];
  /** Talks to the network: a command substitution or file content in any of its words is a request the gate cannot read. */
  network?: true;
}

/** Programs that neither run given text nor send anything. */
const PLAIN = `
  ls cat head tail wc sort uniq cut paste column comm join nl fold fmt expand unexpand tr rev tac diff cmp
  grep egrep fgrep ag ack fd fdfind tree stat file du df free uptime uname hostname whoami id groups date cal
  pwd cd pushd popd dirs basename dirname realpath readlink mkdir rmdir rm cp mv ln touch chmod chown chgrp
  install mktemp truncate split csplit shred sync echo printf true false test [ : sleep wait seq yes expr
  factor numfmt md5sum sha1sum sha256sum sha512sum b2sum cksum sum base32 jq yq gron xxd hexdump od strings
  ps pgrep pkill kill killall top htop lsof pidof nproc lscpu lsblk mount findmnt vmstat iostat
  which type whereis hash help history clear reset tput stty tty set unset shift read getopts let return
  exit break continue exec export readonly declare typeset local umask ulimit times jobs fg bg disown alias unalias
  printenv logname users who w last dmesg journalctl systemctl service tee less more most bat
  gzip gunzip zcat bzip2 bunzip2 xz unxz zip unzip 7z file env iconv shuf tsort
  tmux screen nohup convert magick ffmpeg ffprobe identify pngcrush optipng
  code open xdg-open pbcopy pbpaste wl-copy xclip
  shellcheck shfmt hadolint actionlint yamllint markdownlint
  base64 openssl ssh-keygen ssh-add ssh-agent gpg ping dig nslookup host traceroute mtr whois
`;

/** Build tools, compilers, test runners and package managers: they run the project's own code, never text given to them here. */
const BUILD = `
  cargo rustc rustup rustfmt clippy-driver go gofmt golangci-lint gopls dotnet msbuild mvn gradle gradlew ant sbt
  cmake ninja meson bazel bazelisk buck gcc g++ cc c++ clang clang++ ld as ar nm objdump strip zig swift swiftc
  javac java kotlin kotlinc scalac tsc tsx ts-node vite next nuxt webpack rollup esbuild swc babel parcel turbo nx lerna
  jest vitest mocha ava playwright cypress eslint prettier biome oxlint stylelint tslint
  pytest tox nox ruff mypy pyright black isort flake8 pylint coverage pip pip3 pipx poetry pdm hatch conda mamba
  bundle bundler rake rails rspec gem mix elixir erlc rebar3 ghc cabal stack dune opam
  npm pnpm yarn bun deno corepack nvm fnm volta uv rye composer
  terraform tofu pulumi helm kustomize kubectl oc minikube kind k3d docker podman nerdctl buildah skopeo
  gh glab hub aws gcloud az doctl flyctl vercel netlify heroku wrangler firebase
  brew apt apt-get apt-cache dpkg yum dnf apk pacman zypper port nix snap flatpak
  psql mysql redis-cli mongosh sqlite3 createdb dropdb pg_dump pg_restore
  direnv pyenv rbenv asdf mise sdkmanager
  git tar make gmake sed awk find xargs ssh scp rsync sort rg curl wget
  python node perl ruby php lua
`;

function names(list: string): string[] {
  return list.split(/\s+/).filter((n) => n !== "");
}

const base: Record<string, KnownProgram> = Object.create(null);
for (const name of [...names(PLAIN), ...names(BUILD)]) base[name] = {};

/** Rows with the options and subcommands that run text. */
const ROWS: Readonly<Record<string, KnownProgram>> = {
  git: {
    runs: ["--exec-path", "--config-env"],
    runsSubcommands: ["bisect run", "submodule foreach", "filter-branch", "send-email", "instaweb", "web--browse", "hook run"],
    subcommandRuns: {
      rebase: ["-x", "--exec"],
      grep: ["-O", "--open-files-in-pager"],
      clone: ["-u", "--upload-pack"],
      fetch: ["--upload-pack"],
      pull: ["--upload-pack"],
      "ls-remote": ["--upload-pack"],
      push: ["--receive-pack", "--exec"],
      archive: ["--exec"],
    },
    network: true,
  },
  tar: {
    runs: [
      "-I",
      "--use-compress-program",
      "--to-command",
      "--checkpoint-action",
      "-F",
      "--info-script",
      "--new-volume-script",
      "--rsh-command",
      "--rmt-command",
    ],
  },
  zip: { runs: ["-TT", "--unzip-command"] },
  sort: { runs: ["--compress-program"] },
  rg: { runs: ["--pre"] },
  less: { runs: ["+!"] },
  more: { runs: ["+!"] },
  man: { runs: ["-P", "--pager", "-H", "--html"] },
  ssh: { runs: ["-F"], network: true },
  scp: { runs: ["-S", "-F"], network: true },
  rsync: { runs: ["-e", "--rsh", "--rsync-path"], network: true },
  make: { runs: ["--eval", "-E"] },
  gmake: { runs: ["--eval", "-E"] },
  npm: {
    runsSubcommands: ["config set", "set"],
    subcommandRuns: { exec: ["-c", "--call"], x: ["-c", "--call"] },
    runs: ["--script-shell", "--node-options"],
    runsOperands: ["exec", "x"],
    network: true,
  },
  npx: { runs: ["-c", "--call", "--node-options"], runsOperands: [""], network: true },
  pnpm: { runs: ["-c", "--shell-mode"], runsOperands: ["exec", "dlx"], network: true },
  pnpx: { runs: ["-c"], runsOperands: [""], network: true },
  yarn: { runsOperands: ["exec", "dlx"], network: true },
  bun: { runsOperands: ["x"], network: true },
  bunx: { runsOperands: [""], network: true },
  uv: { runsOperands: ["run", "tool run"], network: true },
  uvx: { runsOperands: [""], network: true },
  poetry: { runsOperands: ["run"], network: true },
  pipx: { runsOperands: ["run"], network: true },
  bundle: { runsOperands: ["exec"], network: true },
  cargo: { runs: ["--config"], network: true },
  go: { runs: ["-toolexec", "-exec", "--toolexec", "--exec"], network: true },
  kubectl: { runs: ["--exec-command"] },
  "apt-get": { runs: ["-c", "--config-file"] },
  apt: { runs: ["-c", "--config-file"] },
  sqlite3: { runs: ["-init", "-cmd"] },
  psql: { network: true },
  mysql: { network: true },
  gpg: { runs: ["--photo-viewer"] },
  openssl: { runs: ["-engine"] },
  env: { runs: ["-S", "--split-string"] },
  curl: { runs: ["-K", "--config"], network: true },
  wget: { runs: ["-e", "--execute", "-i", "--input-file", "--config", "--use-askpass"], network: true },
  gh: { network: true },
  aws: { network: true },
  gcloud: { network: true },
  helm: { runs: ["--post-renderer"], network: true },
  terraform: { network: true },
  brew: { network: true },
  pip: { network: true },
  pip3: { network: true },
};

export const KNOWN_PROGRAMS: Readonly<Record<string, KnownProgram>> = Object.freeze(Object.assign(base, ROWS));

/** Whether a program is known to the gate, and its row. */
export function knownProgram(name: string): KnownProgram | undefined {
  return Object.hasOwn(KNOWN_PROGRAMS, name) ? KNOWN_PROGRAMS[name] : undefined;
}

/**
 * Variables that make a later program run text (`PROMPT_COMMAND`,
 * `GIT_SSH_COMMAND`, `BASH_ENV`), load code (`LD_PRELOAD`, `NODE_OPTIONS`) or
 * send a request somewhere else (`https_proxy`). Assigning one is unproven.
 */
export const EXECUTING_VARIABLES =
  /^(PROMPT_COMMAND|PS[0-4]|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|BASH_FUNC_.*|BASH_LOADABLES_PATH|EXECIGNORE|GIT_SSH|GIT_SSH_COMMAND|GIT_EXTERNAL_DIFF|GIT_PAGER|GIT_EDITOR|GIT_SEQUENCE_EDITOR|GIT_ASKPASS|SSH_ASKPASS|GIT_PROXY_COMMAND|GIT_EXEC_PATH|GIT_TEMPLATE_DIR|GIT_CONFIG_PARAMETERS|GIT_CONFIG_COUNT|GIT_CONFIG_KEY_\d+|GIT_CONFIG_VALUE_\d+|GIT_CONFIG|GIT_CONFIG_GLOBAL|GIT_CONFIG_SYSTEM|EDITOR|VISUAL|PAGER|MANPAGER|LESSOPEN|LESSCLOSE|LD_PRELOAD|LD_LIBRARY_PATH|LD_AUDIT|DYLD_[A-Z_]+|PERL5OPT|PERL5LIB|PERLLIB|PYTHONSTARTUP|PYTHONHOME|NODE_OPTIONS|RUBYOPT|RUBYLIB|TAR_OPTIONS|RSYNC_RSH|CVS_RSH|npm_config_[a-z_]+|NPM_CONFIG_[A-Z_]+|https?_proxy|HTTPS?_PROXY|all_proxy|ALL_PROXY|CURL_HOME|WGETRC|PSQLRC|ZDOTDIR)$/;

/**
 * `git -c KEY=…` keys known not to run anything. Any other key may name a
 * command (`core.sshCommand`, `alias.x`, `core.fsmonitor`, `*.textconv`,
 * `filter.*.smudge`, `credential.helper`, …), so it is unproven.
 */
export const SAFE_GIT_CONFIG_KEYS =
  /^(user\.(name|email)|author\.(name|email)|committer\.(name|email)|color\.[\w.-]+|core\.(quotepath|autocrlf|safecrlf|filemode|ignorecase|eol|abbrev)|init\.defaultbranch|advice\.[\w-]+|commit\.gpgsign|tag\.gpgsign|safe\.directory|pull\.(rebase|ff)|log\.[\w-]+|column\.ui|status\.[\w-]+|merge\.conflictstyle|rebase\.(autosquash|autostash)|fetch\.prune|diff\.(noprefix|renames|algorithm|colormoved|mnemonicprefix)|gc\.auto|maintenance\.auto|i18n\.[\w-]+|protocol\.version|http\.sslverify|feature\.manyfiles|index\.[\w-]+)$/i;

/** Python modules whose `-m` run decodes its input (`python3 -m base64 -d`). */
export const DECODING_MODULES: ReadonlySet<string> = new Set([
  "base64",
  "binascii",
  "uu",
  "quopri",
  "codecs",
  "zlib",
  "gzip",
  "bz2",
  "lzma",
  "zipfile",
  "tarfile",
]);

/** Decompressors and converters: what they print is a payload the reader never saw. */
export const DECODING_PROGRAMS: Readonly<Record<string, RegExp | true>> = {
  xzcat: true,
  bzcat: true,
  zcat: true,
  lzcat: true,
  zstdcat: true,
  lz4cat: true,
  uudecode: true,
  iconv: true,
  gunzip: /^(-c|--stdout|-[a-zA-Z]*c[a-zA-Z]*)$/,
  bunzip2: /^(-c|--stdout|-[a-zA-Z]*c[a-zA-Z]*)$/,
  unxz: /^(-c|--stdout|-[a-zA-Z]*c[a-zA-Z]*)$/,
  gzip: /^(-d|--decompress|-[a-zA-Z]*d[a-zA-Z]*)$/,
  bzip2: /^(-d|--decompress|-[a-zA-Z]*d[a-zA-Z]*)$/,
  xz: /^(-d|--decompress|-[a-zA-Z]*d[a-zA-Z]*)$/,
  zstd: /^(-d|--decompress|-[a-zA-Z]*d[a-zA-Z]*)$/,
  lz4: /^(-d|--decompress|-[a-zA-Z]*d[a-zA-Z]*)$/,
  brotli: /^(-d|--decompress|-[a-zA-Z]*d[a-zA-Z]*)$/,
  base64: /^(--decode|-[a-zA-Z]*[dD][a-zA-Z]*)$/,
  base32: /^(--decode|-[a-zA-Z]*d[a-zA-Z]*)$/,
  basenc: /^(--decode|-[a-zA-Z]*d[a-zA-Z]*)$/,
  xxd: /^(-r|-revert|-[a-zA-Z]*r[a-zA-Z]*)$/,
  openssl: /^-d$/,
  gpg: /^(-d|--decrypt)$/,
};
