/**
 * Secrets kept out of stored model turns: the literal values of the server's
 * environment variables whose names say they hold a credential, and common
 * credential shapes (API keys, tokens, bearer headers, private keys). What
 * matches is replaced, not the whole field, so the trace stays readable.
 */
import { isJsonObject, type JsonValue } from "@car/ir";

const REDACTED = "[redacted]";

const CREDENTIAL_SHAPES: readonly RegExp[] = [
  /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\bAIza[0-9A-Za-z_-]{35}\b/g,
  /\bBearer\s+[A-Za-z0-9._~+/-]{16,}=*/g,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
];

const SECRET_NAME = /(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE_KEY|CREDENTIAL)/i;

/** Values shorter than this are not redacted literally: too likely to occur by chance. */
const MIN_LITERAL = 8;

function environmentSecrets(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(env)
    .filter(([name, value]) => SECRET_NAME.test(name) && value !== undefined && value.length >= MIN_LITERAL)
    .map(([, value]) => value as string)
    .sort((a, b) => b.length - a.length);
}

function redactText(text: string, literals: readonly string[]): string {
  let out = text;
  for (const literal of literals) if (out.includes(literal)) out = out.split(literal).join(REDACTED);
  for (const shape of CREDENTIAL_SHAPES) out = out.replace(shape, REDACTED);
  return out;
}

/** `value` with every string's secrets replaced by `[redacted]`, at any depth. */
export function redactSecrets<T extends JsonValue>(value: T, env: NodeJS.ProcessEnv = process.env): T {
  const literals = environmentSecrets(env);
  const walk = (v: JsonValue): JsonValue => {
    if (typeof v === "string") return redactText(v, literals);
    if (Array.isArray(v)) return v.map(walk);
    if (isJsonObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value) as T;
}
