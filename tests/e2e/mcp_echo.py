"""A stdio MCP server with one tool, `echo_text`, for the real-agent suites (offline, no dependency).

Each call is appended to `calls.log` in the folder given as the first argument, so that a test can tell
whether the tool ran. Newline-delimited JSON-RPC 2.0, as MCP's stdio transport is.
"""

import json
import os
import sys

LOG = os.path.join(sys.argv[1], "calls.log")

TOOLS = [
    {
        "name": "echo_text",
        "description": "Echoes the text it is given.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    }
]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    if not line.strip():
        continue
    message = json.loads(line)
    method, ident = message.get("method"), message.get("id")
    if ident is None:
        continue  # a notification: nothing to answer
    params = message.get("params") or {}
    if method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "echo", "version": "1.0.0"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        text = (params.get("arguments") or {}).get("text", "")
        with open(LOG, "a") as log:
            log.write(json.dumps(params) + "\n")
        result = {"content": [{"type": "text", "text": "ECHO:" + text}]}
    elif method == "ping":
        result = {}
    else:
        send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "no " + str(method)}})
        continue
    send({"jsonrpc": "2.0", "id": ident, "result": result})
