/**
 * Whether a bind address only accepts connections from this machine. Turning
 * auth off is allowed only there: on any routable interface the token is the
 * only thing between the network and the tool callbacks.
 */
import { isIP } from "node:net";

export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, "");
  if (h === "localhost") return true;
  if (isIP(h) === 4) return h.startsWith("127.");
  if (isIP(h) === 6) return h === "::1" || h === "0:0:0:0:0:0:0:1" || /^::ffff:127\./.test(h);
  return false;
}
