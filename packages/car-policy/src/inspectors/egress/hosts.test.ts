import { describe, expect, it } from "vitest";
import { canonicalHost, curlHost, isAllowlisted, isLoopback, UNKNOWN_HOST, urlHosts } from "./hosts.ts";

describe("hosts", () => {
  it("finds the host curl would contact", () => {
    expect(curlHost("https://GitHub.com/a")).toBe("github.com");
    expect(curlHost("https://user:pw@example.org:8443/x")).toBe("example.org");
    expect(curlHost("https://evil.com?@github.com/x.sh")).toBe("evil.com");
    expect(curlHost("https://evil.com#@github.com/x.sh")).toBe("evil.com");
    expect(curlHost("https://github.com\\@evil.com/x.sh")).toBe("evil.com");
    expect(curlHost("example.org/path")).toBe("example.org");
    expect(curlHost("http://[::1]:3000/")).toBe("::1");
    expect(curlHost("https://github.com./x")).toBe("github.com");
    expect(curlHost("mailto:a@b.c")).toBeUndefined();
  });

  it("returns every reading where parsers disagree", () => {
    expect(urlHosts("https://github.com\\@evil.com/x.sh").sort()).toEqual(["evil.com", "github.com"]);
    expect(urlHosts("https://docs.rs/x")).toEqual(["docs.rs"]);
  });

  it("matches an allowlist exactly or by subdomain, never by containment", () => {
    const list = ["github.com", "sh.rustup.rs"];
    expect(isAllowlisted("github.com", list)).toBe(true);
    expect(isAllowlisted("api.github.com", list)).toBe(true);
    expect(isAllowlisted("evilgithub.com", list)).toBe(false);
    expect(isAllowlisted("github.com.evil.example", list)).toBe(false);
    expect(isAllowlisted("xsh.rustup.rs", list)).toBe(false);
    expect(isAllowlisted("rustup.rs", list)).toBe(false);
  });

  it("knows loopback", () => {
    for (const h of ["localhost", "app.localhost", "127.0.0.1", "127.1.2.3", "::1"]) expect(isLoopback(h), h).toBe(true);
    for (const h of ["localhost.evil.com", "128.0.0.1", "10.0.0.1"]) expect(isLoopback(h), h).toBe(false);
  });
});

describe("hosts that cannot be determined, and spellings of one host", () => {
  it("reads one-slash and backslash URLs as curl does, and an undeterminable host as unknown", () => {
    expect(urlHosts("https:/evil.example.com/x.sh")).toEqual(["evil.example.com"]);
    expect(urlHosts("https:\\\\evil.example.com/x.sh")).toContain("evil.example.com");
    expect(urlHosts("https:///evil.example.com/x")).toContain("evil.example.com");
    expect(urlHosts("mailto:nobody")).toEqual([UNKNOWN_HOST]);
    expect(urlHosts("https://github.com/x?@evil.example.com")).toContain("evil.example.com");
    expect(urlHosts("file:///etc/hosts")).toEqual([]);
    expect(isAllowlisted(UNKNOWN_HOST, ["github.com"])).toBe(false);
    expect(isLoopback(UNKNOWN_HOST)).toBe(false);
  });

  it("writes every spelling of one destination the same way", () => {
    for (const spelling of [
      "2130706433",
      "0x7f000001",
      "0177.0.0.1",
      "0x7f.0.0.1",
      "127.1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "0:0:0:0:0:ffff:7f00:1",
      "[::ffff:7f00:1]",
    ]) {
      expect(canonicalHost(spelling), spelling).toBe("127.0.0.1");
    }
    expect(canonicalHost("EVIL.Example.COM.")).toBe("evil.example.com");
    expect(curlHost("https://user:pw@EVIL.example.com.:8443/x")).toBe("evil.example.com");
    expect(urlHosts("http://0xa9.0xfe.0xa9.0xfe/latest")).toEqual(["169.254.169.254"]);
    expect(canonicalHost("256.1.1.1")).toBe("256.1.1.1");
    expect(canonicalHost("github.com")).toBe("github.com");
  });
});
