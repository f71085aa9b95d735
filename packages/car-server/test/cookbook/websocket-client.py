# The flow of the original's cookbook 06 ("WebSocket client", Python): one
# raw websockets connection that initialises a session with a tool and a
# policy, makes two memory calls, submits a proposal and answers the
# server's tools.execute requests in the same receive loop.
#
# Changed from the original: only the connection step. The server URL and
# token come from the environment, and session.auth is the first frame
# (car serve requires it unless started with --no-auth).
import asyncio
import json
import os

import websockets

URL = os.environ.get("CAR_URL", "ws://127.0.0.1:9100")
TOKEN = os.environ.get("CAR_AUTH_TOKEN", "")


def frame(method, params, rid):
    return json.dumps({"jsonrpc": "2.0", "method": method, "params": params, "id": rid})


async def main():
    async with websockets.connect(URL) as ws:
        # The changed connection step: authenticate first.
        await ws.send(frame("session.auth", {"token": TOKEN}, 0))
        print(await ws.recv())

        # A session with one tool and one policy.
        await ws.send(frame("session.init", {
            "tools": [{"name": "shell", "description": "run a shell command"}],
            "policies": [{"name": "no_rm", "rule": "deny_tool_param",
                          "target": "shell", "key": "command", "pattern": "rm -rf"}],
        }, 1))
        print(await ws.recv())

        # Memory calls (the original's memory namespace).
        await ws.send(frame("memory.add_fact", {"subject": "lang", "body": "Python", "kind": "pattern"}, 2))
        print(await ws.recv())
        await ws.send(frame("memory.build_context", {"query": "what language is this?"}, 3))
        print(await ws.recv())

        # A proposal whose tool call comes back to this client.
        await ws.send(frame("proposal.submit", {"proposal": {"actions": [{
            "id": "a1", "type": "tool_call", "tool": "shell",
            "parameters": {"command": "echo hi"},
        }]}}, 4))

        while True:
            msg = json.loads(await ws.recv())
            if msg.get("method") == "tools.execute":
                tool = msg["params"]["tool"]
                args = msg["params"]["params"]
                if tool == "shell":
                    result = {"stdout": "hi\n", "stderr": "", "code": 0, "ran": args["command"]}
                else:
                    result = {"error": "unknown tool: " + tool}
                await ws.send(json.dumps({"jsonrpc": "2.0", "result": result, "id": msg["id"]}))
            elif msg.get("id") == 4:
                print("proposal result:", json.dumps(msg))
                break


asyncio.run(main())
