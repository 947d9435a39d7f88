#!/usr/bin/env python3
"""A scripted model server on 127.0.0.1 for the real-agent tests (tests/it/e2e_*.rs).

The agent under test is pointed at this server instead of its vendor's API. Each model call that asks
for the next step of the conversation (a *turn*) is answered with the next entry of the script:

    {"turns": [{"tool": "echo hi > ran.txt"}, {"text": "All done."}],
     "then": {"text": "Nothing more to do."}}

`{"tool": CMD}` is a call of the agent's shell tool with the command CMD; `{"text": T}` is a final answer.
An entry may also hold `"wait_for": PATH`: the server holds its answer until that file exists (at most
60 s), so that a test can change something (edit the hookd settings) between two turns of one session.
When the turns run out, every further turn gets `then` (by default a short final text), so an agent that
keeps asking (a Stop hook that refuses forever) is answered forever, and the test counts the calls.

Every request is appended to the record file as one JSON line:

    {"n": 0, "method": "POST", "path": "/v1/messages?beta=true", "headers": {...}, "body": {...},
     "turn": 0}

where `turn` is the index of the script entry given (null for calls that are not turns, such as Gemini
CLI's routing call, and beyond the script's end it counts on). The test reads this file to see what
reached the model: refusal reasons, added context, how many times the agent asked again.

What each agent's API looks like on the wire lives in one module per dialect (dialect_*.py), each with
`respond(request, turns) -> Response`.

Usage: model_server.py --dialect {anthropic,openai,openai-chat,gemini} --script FILE --record FILE --port-file FILE
                       [--bring-up-loopback]
The tests start it in a network namespace of its own (`unshare --net`), where the only interface is the
loopback, down until `--bring-up-loopback` sets it up; the agent then joins that namespace, so it can
reach this server and nothing else. The port file is written (atomically, by rename) once the server listens, with the port number.
"""

import argparse
import importlib
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

DIALECTS = {
    "anthropic": "dialect_anthropic",
    "openai": "dialect_openai",
    "gemini": "dialect_gemini",
    "openai-chat": "dialect_openai_chat",
    "copilot-chat": "dialect_copilot_chat",
}


class Request:
    """One request as received: method, path (with query), lower-cased headers, body (parsed JSON when
    it is JSON, else the text)."""

    def __init__(self, method, path, headers, raw):
        self.method = method
        self.path = path
        self.headers = headers
        try:
            self.body = json.loads(raw) if raw else None
        except ValueError:
            self.body = raw.decode("utf-8", "replace")


class Response:
    """What a dialect answers: a JSON body, or a list of server-sent events, each `(event, data)` where
    `event` may be None (no `event:` line) and `data` is a JSON-serializable value."""

    def __init__(self, status=200, json_body=None, events=None):
        self.status = status
        self.json_body = json_body
        self.events = events


class Turns:
    """The script, handed out one entry per turn, thread-safe (agents may call in parallel)."""

    def __init__(self, script):
        self.turns = script.get("turns", [])
        self.then = script.get("then", {"text": "Nothing more to do."})
        self.given = 0
        self.lock = threading.Lock()

    def next(self):
        """(index, entry) of the next turn."""
        with self.lock:
            index = self.given
            self.given += 1
        entry = self.turns[index] if index < len(self.turns) else self.then
        gate = entry.get("wait_for")
        if gate:
            deadline = time.monotonic() + 60
            while not os.path.exists(gate) and time.monotonic() < deadline:
                time.sleep(0.01)
        return index, entry


class Recorder:
    def __init__(self, path):
        self.path = path
        self.count = 0
        self.lock = threading.Lock()

    def record(self, request, turn):
        with self.lock:
            line = {
                "n": self.count,
                "method": request.method,
                "path": request.path,
                "headers": request.headers,
                "body": request.body,
                "turn": turn,
            }
            self.count += 1
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(json.dumps(line) + "\n")


def make_handler(dialect, turns, recorder):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # quiet: the record file is the log
            pass

        def handle_any(self):
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            request = Request(
                self.command,
                self.path,
                {k.lower(): v for k, v in self.headers.items()},
                raw,
            )
            given = {}

            def next_turn():
                index, entry = turns.next()
                given["turn"] = index
                return entry

            try:
                response = dialect.respond(request, next_turn)
            except Exception as e:  # a bug in the script or dialect: answer 500, say why
                response = Response(500, {"error": {"message": f"model_server: {e!r}"}})
            recorder.record(request, given.get("turn"))
            self.send(response)

        do_POST = handle_any
        do_GET = handle_any

        def send(self, response):
            if response.events is None:
                body = json.dumps(response.json_body if response.json_body is not None else {})
                data = body.encode()
                self.send_response(response.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            chunks = []
            for event, data in response.events:
                text = ""
                if event is not None:
                    text += f"event: {event}\n"
                # A string is sent as is (Chat Completions ends its stream with `data: [DONE]`).
                text += f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n"
                chunks.append(text)
            data = "".join(chunks).encode()
            self.send_response(response.status)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def bring_up_loopback():
    """Sets `lo` up (SIOCGIFFLAGS, then SIOCSIFFLAGS with IFF_UP): a new network namespace has it down."""
    import fcntl
    import socket
    import struct

    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket() as s:
        request = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(s, siocgifflags, request))[1]
        fcntl.ioctl(s, siocsifflags, struct.pack("16sH14s", b"lo", flags | iff_up, b""))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dialect", required=True, choices=sorted(DIALECTS))
    parser.add_argument("--script", required=True)
    parser.add_argument("--record", required=True)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--bring-up-loopback", action="store_true")
    args = parser.parse_args()
    if args.bring_up_loopback:
        bring_up_loopback()
    with open(args.script, encoding="utf-8") as f:
        script = json.load(f)
    dialect = importlib.import_module(DIALECTS[args.dialect])
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), make_handler(dialect, Turns(script), Recorder(args.record))
    )
    server.daemon_threads = True
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"{server.server_address[1]}\n")
    os.rename(tmp, args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
