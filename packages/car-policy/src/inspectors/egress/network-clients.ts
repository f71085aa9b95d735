/**
 * What `curl` and `wget` invocations do with the network: the URLs they
 * contact and whether they upload. Options are parsed with their values so a
 * header, an output file or a `-d @file` is never mistaken for a URL.
 */
import type { Invocation } from "./command-position.ts";

export const DOWNLOADERS = new Set(["curl", "wget"]);

export interface NetworkUse {
  urls: string[];
  /** How the call uploads, as the guard names it (`curl -X POST`, `wget --post`), when it does. */
  upload?: string;
}

const CURL_VALUED_SHORT = "AbcCdDeEFHKmoPQrtTuUwxXyYz";
const CURL_VALUED_LONG = new Set([
  "--data", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii", "--json", "--form", "--form-string",
  "--upload-file", "--request", "--header", "--output", "--user", "--user-agent", "--referer", "--cookie", "--cookie-jar",
  "--write-out", "--max-time", "--connect-timeout", "--retry", "--retry-delay", "--proxy", "--range", "--config",
  "--cert", "--key", "--cacert", "--capath", "--resolve", "--connect-to", "--url", "--output-dir", "--limit-rate",
  "--max-filesize", "--interface", "--dump-header", "--oauth2-bearer", "--proto", "--proto-redir", "--variable",
  "--expand-url", "--unix-socket", "--abstract-unix-socket", "--aws-sigv4", "--preproxy", "--proxy-user", "--trace",
  "--trace-ascii", "--stderr", "--ciphers", "--continue-at", "--create-file-mode", "--pinnedpubkey", "--netrc-file",
]);
const CURL_UPLOAD_SHORT: Record<string, string> = { d: "curl -d", F: "curl -F", T: "curl -T" };
const CURL_UPLOAD_LONG: Record<string, string> = {
  "--data": "curl --data", "--data-raw": "curl --data", "--data-binary": "curl --data", "--data-urlencode": "curl --data",
  "--data-ascii": "curl --data", "--json": "curl --json", "--form": "curl -F", "--form-string": "curl -F",
  "--upload-file": "curl -T",
};
const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

const WGET_VALUED_SHORT = "OoaPUeiBtTwQlARDIX";
const WGET_VALUED_LONG = new Set(["--header", "--user", "--password", "--output-document", "--directory-prefix", "--user-agent", "--output-file", "--input-file", "--tries", "--timeout", "--wait", "--referer", "--post-data", "--post-file", "--body-data", "--body-file", "--method"]);

export function networkUse(inv: Invocation): NetworkUse {
  return inv.program === "curl" ? curlUse(inv) : wgetUse(inv);
}

function curlUse(inv: Invocation): NetworkUse {
  const urls: string[] = [];
  let upload: string | undefined;
  let method: string | undefined;
  const args = inv.args.map((w) => w.text);
  for (let i = 0; i < args.length; i++) {
    const t = args[i] as string;
    if (t.startsWith("--")) {
      const { name, value, last } = longOption(args, i, CURL_VALUED_LONG);
      i = last;
      if (name === "--url" && value !== undefined) urls.push(value);
      if (name === "--request" && value !== undefined) method = value.toUpperCase();
      upload ??= CURL_UPLOAD_LONG[name];
    } else if (t.startsWith("-") && t.length > 1) {
      for (let k = 1; k < t.length; k++) {
        const letter = t[k] as string;
        if (!CURL_VALUED_SHORT.includes(letter)) continue;
        const value = k + 1 < t.length ? t.slice(k + 1) : args[++i];
        if (letter === "X" && value !== undefined) method = value.toUpperCase();
        upload ??= CURL_UPLOAD_SHORT[letter];
        break;
      }
    } else urls.push(t);
  }
  // A write method names the upload (`curl -X POST`); data flags alone name themselves.
  if (method !== undefined && WRITE_METHODS.has(method)) upload = `curl -X ${method}`;
  return upload === undefined ? { urls } : { urls, upload };
}

function wgetUse(inv: Invocation): NetworkUse {
  const urls: string[] = [];
  let upload: string | undefined;
  const args = inv.args.map((w) => w.text);
  for (let i = 0; i < args.length; i++) {
    const t = args[i] as string;
    if (t.startsWith("--")) {
      const { name, value, last } = longOption(args, i, WGET_VALUED_LONG);
      i = last;
      if (name === "--post-data" || name === "--post-file") upload ??= "wget --post";
      if (name === "--body-data" || name === "--body-file") upload ??= "wget --body";
      if (name === "--method" && value !== undefined && WRITE_METHODS.has(value.toUpperCase())) upload ??= "wget --method";
    } else if (t.startsWith("-") && t.length > 1) {
      const last = t[t.length - 1] as string;
      if (WGET_VALUED_SHORT.includes(last)) i++;
    } else urls.push(t);
  }
  return upload === undefined ? { urls } : { urls, upload };
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
