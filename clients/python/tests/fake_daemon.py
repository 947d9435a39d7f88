"""A stand-in for the daemon's side of live hooks, on a real Unix socket in a temp folder: it answers
`attach` and `detach` as the protocol says, and lets a test send calls, notices and garbage, and read
what the client answered."""

from __future__ import annotations

import json
import os
import queue
import socket
import sys
import tempfile
import threading
from typing import Any, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

#: Seconds a test waits for what it expects (a safety net, never a measure).
WAIT = 10.0


class FakeDaemon:
    def __init__(self) -> None:
        self.dir = tempfile.TemporaryDirectory(prefix="hookd-fake-")
        self.path = os.path.join(self.dir.name, "hookd.sock")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        self.listener.listen(4)
        #: Hooks the next attach refuses, by name, with the reason.
        self.refuse: Dict[str, str] = {}
        #: Every line the client wrote but the attaches and detaches answered here, parsed.
        self.received: "queue.Queue[Dict[str, Any]]" = queue.Queue()
        #: Every attach and detach request, parsed.
        self.requests: List[Dict[str, Any]] = []
        #: Attaches left unanswered, put with the rest in `received` for the test to answer.
        self.silent_attach = False
        self.conn: Optional[socket.socket] = None
        self.accepted = threading.Event()
        self.eof = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        self.conn = conn
        self.accepted.set()
        reader = conn.makefile("rb")
        for line in reader:
            message = json.loads(line)
            op = message.get("op")
            if op == "attach" and self.silent_attach:
                self.received.put(message)
            elif op == "attach":
                self.requests.append(message)
                names = [h["name"] for h in message["hooks"]]
                self.send(
                    {
                        "id": message["id"],
                        "ok": True,
                        "attached": [n for n in names if n not in self.refuse],
                        "refused": [
                            {"name": n, "reason": self.refuse[n]} for n in names if n in self.refuse
                        ],
                    }
                )
            elif op == "detach":
                self.requests.append(message)
                self.send({"id": message["id"], "ok": True, "detached": message.get("hooks", [])})
            else:
                self.received.put(message)
        self.eof.set()

    def send(self, message: Dict[str, Any]) -> None:
        self.send_raw(json.dumps(message).encode() + b"\n")

    def send_raw(self, data: bytes) -> None:
        assert self.accepted.wait(WAIT), "the client never connected"
        assert self.conn is not None
        self.conn.sendall(data)

    def call(self, number: Any, hook: str, event: Dict[str, Any], **extra: Any) -> None:
        message = {"op": "call", "call": number, "hook": hook, "moment": "PreToolUse", "event": event}
        message.update(extra)
        self.send(message)

    def next(self, timeout: float = WAIT) -> Dict[str, Any]:
        return self.received.get(timeout=timeout)

    def nothing_within(self, seconds: float) -> bool:
        try:
            self.received.get(timeout=seconds)
        except queue.Empty:
            return True
        return False

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.conn.close()
        self.listener.close()
        self.dir.cleanup()


def bash(command: str, session: str = "S1") -> Dict[str, Any]:
    """A PreToolUse event for Bash, as Claude Code sends it."""
    return {
        "session_id": session,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
    }
