/**
 * The `sandbox` key of a policy file: the policy's egress rules, enforced by
 * an OS sandbox around the commands that run rather than by reading them.
 *
 *   sandbox = true          # run commands in the sandbox where it can start
 *   sandbox = "required"    # ... and refuse to run them where it cannot
 *
 *   [sandbox]               # the same, with the hosts commands may reach
 *   required = true
 *   allowed_hosts = ["registry.npmjs.org", "127.0.0.1:8080"]
 *
 * `sandbox = false` asks for nothing (the same as leaving the key out): a
 * file cannot switch off a sandbox another file asks for.
 */
export interface SandboxSpec {
  required: boolean;
  /** The hosts this file lets commands reach; absent, the egress guard's default allowlist applies. */
  allowed_hosts?: string[];
}

type Fail = (problem: string) => never;

/**
 * A host as the sandbox's proxy matches it: a name, `*.` and a name, an IPv4
 * address or a bracketed IPv6 one, then an optional `:port`. No scheme, path
 * or whitespace: `https://x.com/` in an allowlist is a mistake to report, not
 * a host to guess at.
 */
const HOST = /^(?:(?:\*\.)?[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::([1-9][0-9]{0,4}))?$/i;

/** The spec one file's `sandbox` value asks for, `undefined` when it asks for none. */
export function sandboxSpecFrom(value: unknown, fail: Fail): SandboxSpec | undefined {
  if (value === false) return undefined;
  if (value === true) return { required: false };
  if (value === "required") return { required: true };
  if (typeof value !== "object" || value === null || Array.isArray(value) || value instanceof Date) {
    return fail(`sandbox must be true, false, "required" or a [sandbox] table`);
  }
  const table = value as Record<string, unknown>;
  for (const key of Object.keys(table)) {
    if (key !== "required" && key !== "allowed_hosts") fail(`unknown key '${key}' in sandbox`);
  }
  const required = table["required"] ?? false;
  if (typeof required !== "boolean") fail("sandbox.required must be a boolean");
  const spec: SandboxSpec = { required: required as boolean };
  const hosts = table["allowed_hosts"];
  if (hosts !== undefined) {
    if (!Array.isArray(hosts) || hosts.some((h) => typeof h !== "string")) fail("sandbox.allowed_hosts must be an array of strings");
    for (const host of hosts as string[]) {
      const match = HOST.exec(host);
      if (match === null || Number(match[1] ?? 0) > 65_535) {
        fail(`sandbox.allowed_hosts: '${host}' is not a host ('example.com', '*.example.com', '127.0.0.1:8080'), without scheme or path`);
      }
    }
    spec.allowed_hosts = (hosts as string[]).map((h) => h.toLowerCase());
  }
  return spec;
}

/** How `car policy lint` names one file's sandbox request: `sandbox:on`, `sandbox:required allowed_hosts=[...]`. */
export function describeSandboxSpec(spec: SandboxSpec): string {
  const hosts = spec.allowed_hosts === undefined ? "" : ` allowed_hosts=${JSON.stringify(spec.allowed_hosts)}`;
  return `sandbox:${spec.required ? "required" : "on"}${hosts}`;
}
