/**
 * `car serve`: the JSON-RPC 2.0 WebSocket server. It lives in `@car/server`;
 * this file only loads it on demand, so no other command pays for `ws`.
 */
export const usage = "Usage: car serve [--host 127.0.0.1] [--port 9100] [options]";

/** The server prints its own help, with every flag it takes. */
export const handlesHelp = true;

export async function main(args: string[]): Promise<number> {
  const { runServe } = await import("@car/server");
  return runServe(args);
}
