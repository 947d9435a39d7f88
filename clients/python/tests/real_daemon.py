"""The real `hookd serve`, for the tests of the client against the daemon: its own settings, socket,
home and record in a temp folder (never the user's), waited for with a deadline, stopped and reaped.

The binary is `$HOOKD_BIN`, else the repository's `target/debug/hookd` (`cargo build` makes it). Where it
is missing the tests are skipped, except in CI (`HOOKD_TESTS_STRICT` or `CI` set), where they fail."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from typing import Any, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(HERE)
REPO = os.path.dirname(os.path.dirname(PACKAGE))
sys.path.insert(0, PACKAGE)

#: Deadlines (safety nets against a hung test, never measures).
READY = 30.0
RESPONSE = 30.0


def strict() -> bool:
    return any(
        os.environ.get(var, "").strip() not in ("", "0", "false", "FALSE", "False")
        for var in ("HOOKD_TESTS_STRICT", "CI")
    )


def hookd_bin() -> str:
    return os.environ.get("HOOKD_BIN") or os.path.join(REPO, "target", "debug", "hookd")


def require_hookd(test: unittest.TestCase) -> None:
    """Skips the test without the daemon's binary, or fails it in CI."""
    if os.access(hookd_bin(), os.X_OK):
        return
    why = "no hookd binary at %s (run `cargo build`, or set HOOKD_BIN)" % hookd_bin()
    if strict():
        test.fail(why)
    test.skipTest(why)


class RealDaemon:
    """`hookd serve --config C --socket S` with the settings `settings`, everything in a temp folder."""

    def __init__(self, settings: str = "") -> None:
        self.dir = tempfile.TemporaryDirectory(prefix="hookd-live-")
        root = self.dir.name
        self.config = os.path.join(root, "hooks.toml")
        self.socket = os.path.join(root, "run", "hookd.sock")
        self.log = os.path.join(root, "daemon.log")
        with open(self.config, "w") as f:
            f.write(settings)
        self.env = self.places(root)
        self.env.update(HOOKD_SOCKET=self.socket, HOOKD_CONFIG=self.config, HOOKD_LOG="debug")
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                # A managed layer no machine has (every folder on the way root's): never the machine's
                # own /etc/hookd, whose team hooks would run on the tests' events.
                [
                    hookd_bin(), "serve", "--config", self.config, "--socket", self.socket,
                    "--managed", "/nonexistent/hookd-tests-have-no-managed-layer",
                ],
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        self.wait_ready()

    @staticmethod
    def places(root: str) -> Dict[str, str]:
        """The environment with every place hookd finds through it in `root`, the agents' own removed."""
        env = dict(os.environ)
        for name, stand_in in [
            ("HOME", "home"),
            ("XDG_RUNTIME_DIR", "runtime"),
            ("XDG_STATE_HOME", "state"),
            ("XDG_CONFIG_HOME", "config"),
            ("XDG_CACHE_HOME", "cache"),
        ]:
            env[name] = os.path.join(root, stand_in)
        for name in ["CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "QWEN_HOME", "COPILOT_HOME",
                     "NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "JOURNAL_STREAM"]:
            env.pop(name, None)
        return env

    def wait_ready(self) -> None:
        deadline = time.monotonic() + READY
        while True:
            if self.process.poll() is not None:
                raise AssertionError("hookd serve exited before it was ready:\n" + self.log_text())
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(self.socket)
                return
            except OSError:
                pass
            finally:
                probe.close()
            if time.monotonic() > deadline:
                raise AssertionError("hookd serve did not accept within %ss" % READY)
            time.sleep(0.01)

    def log_text(self) -> str:
        with open(self.log, errors="replace") as f:
            return f.read()

    def request(self, request: Dict[str, Any]) -> Dict[str, Any]:
        """One request on a fresh connection; its response."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(RESPONSE)
            sock.connect(self.socket)
            sock.sendall(json.dumps(request).encode() + b"\n")
            reader = sock.makefile("rb")
            line = reader.readline()
            assert line.endswith(b"\n"), "no response to %r" % request
            response: Dict[str, Any] = json.loads(line)
            return response

    def fire(self, moment: str, event: Dict[str, Any], agent: str = "claude-code") -> Dict[str, Any]:
        response = self.request({"op": "fire", "id": 1, "moment": moment, "agent": agent, "event": event})
        assert response.get("ok") is True, response
        return response

    def journal(self) -> List[Dict[str, Any]]:
        path = os.path.join(self.env["XDG_STATE_HOME"], "hookd", "journal.jsonl")
        try:
            with open(path) as f:
                return [json.loads(line) for line in f if line.strip()]
        except FileNotFoundError:
            return []

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.dir.cleanup()


def outcome(verdict: Dict[str, Any], hook: str) -> Optional[str]:
    """What the fire's report says hook `hook` did, or None when it was not selected."""
    for report in verdict.get("hooks", []):
        if report.get("name") == hook:
            value = report.get("outcome")
            return str(value) if value is not None else None
    return None
