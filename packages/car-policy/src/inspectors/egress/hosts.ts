/**
 * Hosts a URL reaches, and whether an allowlist covers them. Parsers disagree
 * on hostile URLs — curl reads `https://github.com\@evil.com` as userinfo
 * `github.com\` at host `evil.com`, a WHATWG parser as host `github.com` — so
 * every reading is returned, and a URL is allowlisted only when all of them
 * are.
 */

/** The hosts `url` may reach: curl's reading, and the WHATWG reading when it differs. */
export function urlHosts(url: string): string[] {
  const hosts = new Set<string>();
  const curl = curlHost(url);
  if (curl !== undefined) hosts.add(curl);
  if (/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(url)) {
    try {
      const host = normaliseHost(new URL(url).hostname);
      if (host !== "") hosts.add(host);
    } catch {
      // Not a URL to a WHATWG parser; curl's reading stands.
    }
  }
  return [...hosts];
}

/**
 * The host as curl finds it: the authority runs from after `scheme://` to the
 * first `/`, `?` or `#`; userinfo ends at its last `@`; a port follows `:`.
 * A URL without a scheme is a host, as curl assumes.
 */
export function curlHost(url: string): string | undefined {
  let rest = url.trim();
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(rest);
  if (scheme) rest = rest.slice(scheme[0].length);
  else if (/^[a-zA-Z][a-zA-Z0-9+.-]*:(?!\d)/.test(rest)) return undefined; // mailto:, data:, …
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
  host = normaliseHost(host);
  return host === "" ? undefined : host;
}

function normaliseHost(host: string): string {
  return host.replace(/^\[|\]$/g, "").toLowerCase().replace(/\.+$/, "");
}

/** Loopback never leaves the machine, so it is not egress. */
export function isLoopback(host: string): boolean {
  return (
    host === "localhost" ||
    host.endsWith(".localhost") ||
    host === "::1" ||
    host === "0:0:0:0:0:0:0:1" ||
    /^127(\.\d{1,3}){3}$/.test(host)
  );
}

/** `host` is an allowlisted name or a subdomain of one — never a name that merely contains it. */
export function isAllowlisted(host: string, allowlist: readonly string[]): boolean {
  return allowlist.some((allowed) => host === allowed || host.endsWith(`.${allowed}`));
}
