# The WebSocket sketch of the original's cookbook 01 ("Tool call: register,
# verify, execute", Python): authenticate, submit the proposal, and answer the
# server's tools.execute requests until the submit's answer arrives.
#
# Changed from the original (README "The original's clients"), three lines:
# - the connection step: URL and token from the environment (the sketch reads
#   a token file under the original's config directory);
# - one frame added, `tools.register` for `shell`: the original registered it
#   through the Python binding (`rt.register_tool("shell")`) before the sketch;
# - the tool's arguments are read from `params` (car serve, as the seeds'
#   callback and the reference's newer wire (websocket-core.md A.3) name them),
#   where the sketch reads `parameters`.
import asyncio
import json
import os

import websockets

URL = os.environ.get("CAR_URL", "ws://127.0.0.1:9100")
TOKEN = os.environ.get("CAR_AUTH_TOKEN", "")

proposal = json.dumps({
    "actions": [
        {
            "id": "a1",
            "type": "tool_call",
            "tool": "shell",
            "parameters": {"command": "echo hello"},
            "idempotent": True,
            "timeout_ms": 5000,
        }
    ]
})


async def main():
    async with websockets.connect(URL) as ws:
        # 1. Auth (changed: the token from the environment).
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1,
            "method": "session.auth",
            "params": {"token": TOKEN}}))
        print(await ws.recv())

        # Added: register the tool in this session (the binding did it in the original).
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": 9,
            "method": "tools.register", "params": [{"name": "shell"}]}))
        await ws.recv()

        # 2. Submit the proposal.
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": 2,
            "method": "proposal.submit",
            "params": {"proposal": json.loads(proposal)}}))

        # 3. Drain frames. `tools.execute` arrives as a server-initiated
        #    JSON-RPC request — respond with the tool's result.
        while True:
            frame = json.loads(await ws.recv())
            if frame.get("method") == "tools.execute":
                # Changed: `params`, where the sketch reads `parameters`.
                tool, params = frame["params"]["tool"], frame["params"]["params"]
                # Dispatch to your real tool here.
                result = {"stdout": "hello\n", "stderr": "", "code": 0}
                await ws.send(json.dumps({"jsonrpc": "2.0",
                    "id": frame["id"], "result": result}))
            elif frame.get("id") == 2:
                print(frame.get("result"))
                break

asyncio.run(main())
