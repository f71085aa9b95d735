/**
 * The floor of the server bench: a minimal JSON-RPC-over-WebSocket server on
 * `ws`, in its own Node process like `car serve`, doing the same message
 * dance with no runtime work. For each `proposal.submit` it sends one
 * `tools.execute` request per action, waits for every answer on the same
 * socket, and responds with a result of the same shape `car serve` sends.
 * Anything else is answered `{ ok: true }`.
 *
 * Run: `node bench/floor-server.mjs` — prints `listening on ws://…` like `car serve`.
 */
import { WebSocketServer } from "ws";

const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
server.on("listening", () => console.log(`floor listening on ws://127.0.0.1:${server.address().port}/`));
let proposals = 0;
server.on("connection", (socket) => {
  let next = 0;
  const pending = new Map();
  socket.on("message", (data) => {
    const frame = JSON.parse(data.toString());
    if (frame.method === undefined) {
      const resolve = pending.get(frame.id);
      pending.delete(frame.id);
      resolve?.(frame.result);
      return;
    }
    if (frame.method !== "proposal.submit") {
      socket.send(JSON.stringify({ jsonrpc: "2.0", id: frame.id, result: { ok: true } }));
      return;
    }
    const actions = frame.params.proposal.actions;
    const proposalId = `p${++proposals}`;
    Promise.all(
      actions.map(
        (action) =>
          new Promise((resolve) => {
            const id = `t${++next}`;
            pending.set(id, (output) => resolve({ action_id: action.id, status: "succeeded", output, error: null, duration_ms: 0 }));
            socket.send(
              JSON.stringify({
                jsonrpc: "2.0",
                id,
                method: "tools.execute",
                params: { tool: action.tool, params: action.parameters ?? {}, action_id: action.id, proposal_id: proposalId },
              }),
            );
          }),
      ),
    ).then((results) =>
      socket.send(JSON.stringify({ jsonrpc: "2.0", id: frame.id, result: { proposal_id: proposalId, results, cost: { tool_calls: results.length } } })),
    );
  });
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
