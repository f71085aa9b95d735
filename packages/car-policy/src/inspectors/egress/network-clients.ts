/**
 * What downloader invocations do with the network: the URLs they contact,
 * whether they upload, and whether an option reroutes the request so the
 * URL's host is not where the bytes go. `curl` and `wget` are parsed option
 * by option with their values, so a header, an output file or a `-d @file`
 * is never mistaken for a URL; the other downloaders (`DOWNLOADERS`) are read
 * by their operands.
 */
import type { Invocation } from "./command-position.ts";

export { DOWNLOADERS } from "./program-tables.ts";

export interface NetworkUse {
  urls: string[];
  /** How the call uploads, as the guard names it (`curl -X POST`, `wget --post`), when it does. */
  upload?: string;
  /** The option or variable that reroutes the request (`--connect-to`, `-x`, `https_proxy`), when one does. */
  routed?: string;
}

/** curl options that send the request somewhere other than the URL's host, or read URLs from elsewhere. */
const CURL_ROUTING = new Set([
  "--connect-to",
  "--resolve",
  "--proxy",
  "--preproxy",
  "--config",
  "--socks4",
  "--socks4a",
  "--socks5",
  "--socks5-hostname",
  "--proxy1.0",
  "--doh-url",
  "--dns-servers",
  "--unix-socket",
  "--abstract-unix-socket",
  "--haproxy-clientip",
  "--variable",
  "--expand-url",
]);
const CURL_ROUTING_SHORT: Record<string, string> = { x: "-x", K: "-K" };
const WGET_ROUTING = new Set(["--input-file", "--execute", "--config", "--base", "--bind-address", "--bind-dns-address", "--dns-servers"]);
const WGET_ROUTING_SHORT: Record<string, string> = { i: "-i", e: "-e", B: "-B" };
/** Variables that send a downloader through a proxy or another configuration. */
const ROUTING_ENV = /^(https?_proxy|all_proxy|ftp_proxy|socks_proxy|curl_home|wgetrc|curl_ca_bundle_dummy)$/i;

const CURL_VALUED_SHORT = "AbcCdDeEFHKmoPQrtTuUwxXyYz";
// Every routing option takes a value too.
const CURL_VALUED_LONG = new Set([
  ...CURL_ROUTING,
  "--data",
  "--data-raw",
  "--data-binary",
  "--data-urlencode",
  "--data-ascii",
  "--json",
  "--form",
  "--form-string",
  "--upload-file",
  "--request",
  "--header",
  "--output",
  "--user",
  "--user-agent",
  "--referer",
  "--cookie",
  "--cookie-jar",
  "--write-out",
  "--max-time",
  "--connect-timeout",
  "--retry",
  "--retry-delay",
  "--range",
  "--cert",
  "--key",
  "--cacert",
  "--capath",
  "--url",
  "--output-dir",
  "--limit-rate",
  "--max-filesize",
  "--interface",
  "--dump-header",
  "--oauth2-bearer",
  "--proto",
  "--proto-redir",
  "--aws-sigv4",
  "--proxy-user",
  "--trace",
  "--trace-ascii",
  "--stderr",
  "--ciphers",
  "--continue-at",
  "--create-file-mode",
  "--pinnedpubkey",
  "--netrc-file",
  "--request-target",
  "--local-port",
  "--form-escape",
]);
const CURL_UPLOAD_SHORT: Record<string, string> = { d: "curl -d", F: "curl -F", T: "curl -T" };
const CURL_UPLOAD_LONG: Record<string, string> = {
  "--data": "curl --data",
  "--data-raw": "curl --data",
  "--data-binary": "curl --data",
  "--data-urlencode": "curl --data",
  "--data-ascii": "curl --data",
  "--json": "curl --json",
  "--form": "curl -F",
  "--form-string": "curl -F",
  "--upload-file": "curl -T",
};
const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

const WGET_VALUED_SHORT = "OoaPUeiBtTwQlARDIX";
// Every routing option takes a value too.
const WGET_VALUED_LONG = new Set([
  ...WGET_ROUTING,
  "--header",
  "--user",
  "--password",
  "--output-document",
  "--directory-prefix",
  "--user-agent",
  "--output-file",
  "--input-file",
  "--tries",
  "--timeout",
  "--wait",
  "--referer",
  "--post-data",
  "--post-file",
  "--body-data",
  "--body-file",
  "--method",
]);

export function networkUse(inv: Invocation): NetworkUse {
  const use = inv.program === "curl" ? curlUse(inv) : inv.program === "wget" || inv.program === "wget2" ? wgetUse(inv) : operandUse(inv);
  const variable = inv.env.find((name) => ROUTING_ENV.test(name));
  if (variable !== undefined) use.routed ??= variable;
  return use;
}

/** Other downloaders: operands shaped like URLs or hosts, and a write method named as an operand (`http POST …`). */
function operandUse(inv: Invocation): NetworkUse {
  const urls: string[] = [];
  let upload: string | undefined;
  for (const w of inv.args) {
    const t = w.text;
    if (t.startsWith("-")) {
      if (/^--(proxy|all-proxy)/.test(t)) return { urls, routed: t.split("=")[0] as string };
      continue;
    }
    if (WRITE_METHODS.has(t)) upload = `${inv.program} ${t}`;
    else if (/^[a-zA-Z][a-zA-Z0-9+.-]*:|^[^\s=@:]+\.[^\s=@:]+/.test(t) && urls.length === 0) urls.push(t);
    else if (/^[^=:@]+(==|=|:=|@)/.test(t)) upload ??= `${inv.program} ${t.includes("@") ? "@file" : "data"}`;
  }
  return upload === undefined ? { urls } : { urls, upload };
}

function curlUse(inv: Invocation): NetworkUse {
  const urls: string[] = [];
  let upload: string | undefined;
  let method: string | undefined;
  let routed: string | undefined;
  const args = inv.args.map((w) => w.text);
  for (let i = 0; i < args.length; i++) {
    const t = args[i] as string;
    if (t.startsWith("--")) {
      const { name, value, last } = longOption(args, i, CURL_VALUED_LONG);
      i = last;
      if (name === "--url" && value !== undefined) urls.push(value);
      if (name === "--request" && value !== undefined) method = value.toUpperCase();
      if (CURL_ROUTING.has(name)) routed ??= name;
      upload ??= CURL_UPLOAD_LONG[name];
    } else if (t.startsWith("-") && t.length > 1) {
      for (let k = 1; k < t.length; k++) {
        const letter = t[k] as string;
        if (!CURL_VALUED_SHORT.includes(letter)) continue;
        const value = k + 1 < t.length ? t.slice(k + 1) : args[++i];
        if (letter === "X" && value !== undefined) method = value.toUpperCase();
        routed ??= CURL_ROUTING_SHORT[letter];
        upload ??= CURL_UPLOAD_SHORT[letter];
        break;
      }
    } else urls.push(t);
  }
  // A write method names the upload (`curl -X POST`); data flags alone name themselves.
  if (method !== undefined && WRITE_METHODS.has(method)) upload = `curl -X ${method}`;
  return withOptional({ urls }, upload, routed);
}

function withOptional(use: NetworkUse, upload: string | undefined, routed: string | undefined): NetworkUse {
  if (upload !== undefined) use.upload = upload;
  if (routed !== undefined) use.routed = routed;
  return use;
}

function wgetUse(inv: Invocation): NetworkUse {
  const urls: string[] = [];
  let upload: string | undefined;
  let routed: string | undefined;
  const args = inv.args.map((w) => w.text);
  for (let i = 0; i < args.length; i++) {
    const t = args[i] as string;
    if (t.startsWith("--")) {
      const { name, value, last } = longOption(args, i, WGET_VALUED_LONG);
      i = last;
      if (name === "--post-data" || name === "--post-file") upload ??= "wget --post";
      if (name === "--body-data" || name === "--body-file") upload ??= "wget --body";
      if (name === "--method" && value !== undefined && WRITE_METHODS.has(value.toUpperCase())) upload ??= "wget --method";
      if (WGET_ROUTING.has(name) || /^--(https?-)?proxy/.test(name)) routed ??= name;
    } else if (t.startsWith("-") && t.length > 1) {
      const last = t[t.length - 1] as string;
      for (const letter of t.slice(1)) routed ??= WGET_ROUTING_SHORT[letter];
      if (WGET_VALUED_SHORT.includes(last)) i++;
    } else urls.push(t);
  }
  return withOptional({ urls }, upload, routed);
}

/**
 * The long option at `args[i]`: `--name=value`, or `--name value` when
 * `valued` says the option takes one. `last` is the index of the last word read.
 */
function longOption(args: readonly string[], i: number, valued: ReadonlySet<string>): { name: string; value: string | undefined; last: number } {
  const t = args[i] as string;
  const eq = t.indexOf("=");
  if (eq !== -1) return { name: t.slice(0, eq), value: t.slice(eq + 1), last: i };
  return valued.has(t) ? { name: t, value: args[i + 1], last: i + 1 } : { name: t, value: undefined, last: i };
}
