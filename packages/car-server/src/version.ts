/** The server's version, from its package.json (inlined by the build), reported by `server.handshake`. */
import pkg from "../package.json" with { type: "json" };

export const VERSION: string = pkg.version;
