/**
 * Hosts a URL reaches, and whether an allowlist covers them. Parsers disagree
 * on hostile URLs — curl reads `https://github.com\@evil.com` as userinfo
 * `github.com\` at host `evil.com`, a WHATWG parser as host `github.com` — so
 * every reading is returned, and a URL is allowlisted only when all of them
 * are. A URL-shaped string whose host no reading can determine
 * (`https:/evil.example.com` to a reader that wants two slashes) reaches
 * `UNKNOWN_HOST`, which no allowlist covers. Hosts are compared in one
 * canonical spelling: lower case, no trailing dot, IPv4 in dotted decimal
 * however it was written (`0x7f.1`, `2130706433`, `0177.0.0.1`,
 * `::ffff:7f00:1`).
 */

/** The destination of a URL whose host cannot be determined: never loopback, never allowlisted. */
export const UNKNOWN_HOST = "an undeterminable host";

/** Schemes with no network destination. */
const LOCAL_SCHEMES = new Set(["file", "data", "about", "blob"]);

const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):/;

/** The hosts `url` may reach: curl's reading, the WHATWG reading when it differs, or `UNKNOWN_HOST`. */
export function urlHosts(url: string): string[] {
  const hosts = new Set<string>();
  const trimmed = url.trim();
  const curl = curlHost(trimmed);
  if (curl !== undefined) hosts.add(curl);
  const scheme = SCHEME.exec(trimmed)?.[1]?.toLowerCase();
  if (scheme !== undefined && LOCAL_SCHEMES.has(scheme)) return [...hosts];
  if (scheme !== undefined) {
    try {
      const host = canonicalHost(new URL(trimmed).hostname);
      if (host !== "") hosts.add(host);
    } catch {
      // Not a URL to a WHATWG parser; curl's reading stands.
    }
  }
  // A reader that takes userinfo up to the last `@` anywhere (`https://github.com/x?@evil.com`).
  const at = trimmed.lastIndexOf("@");
  if (scheme !== undefined && at !== -1) {
    const naive = canonicalHost((/^[^/?#:\\]*/.exec(trimmed.slice(at + 1)) as RegExpExecArray)[0]);
    if (naive !== "") hosts.add(naive);
  }
  if (hosts.size === 0) hosts.add(UNKNOWN_HOST);
  return [...hosts];
}

/**
 * The host as curl finds it: after `scheme:` and any run of slashes (curl
 * accepts one to three, and a backslash for a slash), the authority runs to
 * the first `/`, `\`, `?` or `#`; userinfo ends at its last `@`; a port
 * follows `:`. A URL without a scheme is a host, as curl assumes.
 */
export function curlHost(url: string): string | undefined {
  let rest = url.trim();
  const scheme = SCHEME.exec(rest);
  if (scheme && /^[a-zA-Z][a-zA-Z0-9+.-]*:[/\\]/.test(rest)) {
    if (LOCAL_SCHEMES.has((scheme[1] as string).toLowerCase())) return undefined;
    rest = rest.slice(scheme[0].length).replace(/^[/\\]+/, "");
  } else if (scheme && !/^[a-zA-Z][a-zA-Z0-9+.-]*:\d/.test(rest)) return undefined; // mailto:, data:, …
  const end = rest.search(/[/?#]/);
  let authority = end === -1 ? rest : rest.slice(0, end);
  const at = authority.lastIndexOf("@");
  if (at !== -1) authority = authority.slice(at + 1);
  let host: string;
  if (authority.startsWith("[")) {
    const close = authority.indexOf("]");
    host = close === -1 ? authority.slice(1) : authority.slice(1, close);
  } else {
    const colon = authority.indexOf(":");
    host = colon === -1 ? authority : authority.slice(0, colon);
  }
  host = canonicalHost(host);
  return host === "" ? undefined : host;
}

/**
 * One spelling per destination: brackets, case and trailing dots dropped,
 * an IPv4 address in any form `inet_aton` accepts written as dotted decimal,
 * and an IPv4-mapped IPv6 address as the IPv4 address it maps.
 */
export function canonicalHost(host: string): string {
  let h = host
    .trim()
    .replace(/^\[|\]$/g, "")
    .toLowerCase()
    .replace(/\.+$/, "");
  try {
    if (/%[0-9a-f]{2}/i.test(h)) h = decodeURIComponent(h);
  } catch {
    // A malformed escape stays as written.
  }
  const v4 = ipv4(h);
  if (v4 !== undefined) return v4;
  const mapped = /^(?:(?:0{1,4}:){5}|::(?:0{1,4}:)?)ffff:(.+)$/.exec(h);
  if (mapped) {
    const tail = mapped[1] as string;
    const dotted = ipv4(tail);
    if (dotted !== undefined) return dotted;
    const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(tail);
    if (hex) {
      const hi = Number.parseInt(hex[1] as string, 16);
      const lo = Number.parseInt(hex[2] as string, 16);
      return [hi >> 8, hi & 255, lo >> 8, lo & 255].join(".");
    }
  }
  return h;
}

/** `inet_aton`'s reading of `text` (1–4 parts, each decimal, `0x` hex or `0` octal), or `undefined`. */
function ipv4(text: string): string | undefined {
  const parts = text.split(".");
  if (parts.length < 1 || parts.length > 4) return undefined;
  const nums: number[] = [];
  for (const p of parts) {
    let n: number;
    if (/^0x[0-9a-f]*$/.test(p)) n = p.length === 2 ? 0 : Number.parseInt(p.slice(2), 16);
    else if (/^0[0-7]+$/.test(p)) n = Number.parseInt(p.slice(1), 8);
    else if (/^(0|[1-9][0-9]*)$/.test(p)) n = Number(p);
    else return undefined;
    if (!Number.isSafeInteger(n)) return undefined;
    nums.push(n);
  }
  const last = nums.pop() as number;
  if (nums.some((n) => n > 255) || last >= 256 ** (4 - nums.length)) return undefined;
  let value = last;
  nums.forEach((n, i) => {
    value += n * 256 ** (3 - i);
  });
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join(".");
}

/** Loopback never leaves the machine, so it is not egress. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host.endsWith(".localhost") || host === "::1" || host === "0:0:0:0:0:0:0:1" || /^127(\.\d{1,3}){3}$/.test(host);
}

/** `host` is an allowlisted name or a subdomain of one — never a name that merely contains it. */
export function isAllowlisted(host: string, allowlist: readonly string[]): boolean {
  return allowlist.some((allowed) => host === allowed || host.endsWith(`.${allowed}`));
}
