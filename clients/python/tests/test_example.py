"""examples/approve_live.py against the real daemon: read-only commands allowed by rule, anything else
put to the person at the terminal, and the agent back to itself once the example stops."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import unittest
from typing import Any, Dict

from real_daemon import REPO, RESPONSE, RealDaemon, outcome, require_hookd

EXAMPLE = os.path.join(REPO, "examples", "approve_live.py")


def bash(command: str) -> Dict[str, Any]:
    return {"session_id": "S1", "cwd": "/", "tool_name": "Bash", "tool_input": {"command": command}}


class Example(unittest.TestCase):
    """The example running against a daemon of its own (no tests of its own)."""

    #: Seconds a call waits for the person.
    TIMEOUT = "30"

    def setUp(self) -> None:
        require_hookd(self)
        # The example's allows stand only where the settings let a live hook allow.
        self.daemon = RealDaemon("[protect]\nlive_hooks_allow = true\n")
        self.addCleanup(self.daemon.stop)
        self.stderr_path = os.path.join(self.daemon.dir.name, "example.err")
        self.stderr = open(self.stderr_path, "w")
        self.addCleanup(self.stderr.close)
        self.example = subprocess.Popen(
            [sys.executable, EXAMPLE, "--socket", self.daemon.socket, "--agent", "claude-code",
             "--timeout", self.TIMEOUT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
        )
        assert self.example.stdout is not None and self.example.stdin is not None
        self.addCleanup(self.example.stdout.close)
        self.addCleanup(self.example.stdin.close)
        self.addCleanup(self.example.wait)
        self.addCleanup(self.example.kill)
        self.assertEqual(self.example.stdout.readline(), "hung\n", self.err())

    def err(self) -> str:
        with open(self.stderr_path) as f:
            return f.read()

    def wait_for_question(self, text: str) -> None:
        deadline = time.monotonic() + RESPONSE
        while text not in self.err():
            self.assertLess(time.monotonic(), deadline, "no question about %r: %s" % (text, self.err()))
            time.sleep(0.01)

    def answered_at_the_terminal(self, command: str, answer: str) -> Dict[str, Any]:
        verdict: Dict[str, Any] = {}
        fired = threading.Thread(target=lambda: verdict.update(self.daemon.fire("PreToolUse", bash(command))))
        fired.start()
        self.wait_for_question(command)
        assert self.example.stdin is not None
        self.example.stdin.write(answer + "\n")
        self.example.stdin.flush()
        fired.join(RESPONSE)
        self.assertFalse(fired.is_alive())
        return verdict



class ApproveLiveTest(Example):
    def test_rules_then_the_person_then_nothing_once_stopped(self) -> None:
        read_only = self.daemon.fire("PreToolUse", bash("git status"))
        self.assertEqual((read_only["refused"], read_only.get("permission")), (False, "allow"), read_only)
        self.assertEqual(read_only["reason"], "read-only, allowed by rule")
        # Not read-only: a redirect.
        refused = self.answered_at_the_terminal("ls > listing", "n")
        self.assertTrue(refused["refused"], refused)
        self.assertIn("said no", refused["reason"])
        allowed = self.answered_at_the_terminal("touch made", "y")
        self.assertEqual((allowed["refused"], allowed.get("permission")), (False, "allow"), allowed)
        asked = self.answered_at_the_terminal("make", "a")
        self.assertEqual(asked.get("permission"), "ask", asked)

        self.example.send_signal(signal.SIGINT)
        self.assertEqual(self.example.wait(RESPONSE), 0, self.err())
        self.assertIn("stopped: the hook is down", self.err())
        after = self.daemon.fire("PreToolUse", bash("ls > listing"))
        self.assertFalse(after["refused"], after)
        self.assertIsNone(outcome(after, "approve-live"))



class ApproveLiveUnansweredTest(Example):
    TIMEOUT = "1.5"

    def test_a_question_nobody_answers_refuses_the_call(self) -> None:
        verdict = self.daemon.fire("PreToolUse", bash("rm -r build"))
        self.assertTrue(verdict["refused"], verdict)
        self.assertIn("no answer in time", verdict["reason"])
        self.assertIn("rm -r build", self.err())


if __name__ == "__main__":
    unittest.main()
