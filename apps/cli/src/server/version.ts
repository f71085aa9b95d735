/** The server's release version, reported by `server.handshake`: the CLI package's own version. */
import manifest from "../../package.json" with { type: "json" };

export const SERVER_VERSION: string = manifest.version;
