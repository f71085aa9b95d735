import { describe, expect, it } from "vitest";
import { curlHost, isAllowlisted, isLoopback, urlHosts } from "./hosts.ts";

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
