/** The WebSocket JSON-RPC server behind `car serve`, usable in-process. */
export { startServer, DEFAULT_HOST, DEFAULT_PORT, type CloseOptions, type RunningServer, type ServerOptions } from "./server.ts";
export { runServe, type ServeIo } from "./serve-command.ts";
export { PROTOCOL_VERSION } from "./methods/handshake.ts";
export { tokenPath } from "./auth.ts";
export { openServeStore, type ServeStore } from "./serve-store.ts";
