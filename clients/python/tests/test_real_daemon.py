"""The client against the real daemon: hooks hung live refuse what they say, only where they are hung,
and are down once detached, disconnected or their client is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import unittest
from typing import Any, Dict, List

from real_daemon import PACKAGE, RESPONSE, RealDaemon, outcome, require_hookd

import hookd


def bash(command: str, session: str) -> Dict[str, Any]:
    return {"session_id": session, "cwd": "/", "tool_name": "Bash", "tool_input": {"command": command}}


class RealDaemonTest(unittest.TestCase):
    def setUp(self) -> None:
        require_hookd(self)
        self.daemon = RealDaemon()
        self.addCleanup(self.daemon.stop)
        # On a failure, the daemon's log (cleanups run last first: this one before the daemon stops).
        failures = self.failures()
        self.addCleanup(
            lambda: print(self.daemon.log_text(), file=sys.stderr) if self.failures() > failures else None
        )

    def failures(self) -> int:
        result = getattr(getattr(self, "_outcome", None), "result", None)
        return len(getattr(result, "failures", [])) + len(getattr(result, "errors", []))

    def connect(self) -> hookd.Connection:
        agent = hookd.connect(self.daemon.socket, client="tests")
        self.addCleanup(agent.close)
        return agent

    def test_a_hook_hung_for_session_s1_refuses_its_calls_and_never_sees_s2(self) -> None:
        agent = self.connect()
        seen: List[str] = []

        @agent.hook("PreToolUse", matcher="Bash", session="S1", agents=["claude-code"])
        def no_push(event: hookd.Event) -> hookd.AnswerLike:
            seen.append(event["session_id"])
            if "git push" in event["tool_input"]["command"]:
                return hookd.refuse("pushes wait for review")
            return None

        verdict = self.daemon.fire("PreToolUse", bash("git push origin main", "S1"))
        self.assertTrue(verdict["refused"], verdict)
        self.assertEqual(verdict["reason"], "pushes wait for review")
        self.assertEqual(outcome(verdict, "no_push"), "refused")
        other = self.daemon.fire("PreToolUse", bash("git push origin main", "S2"))
        self.assertFalse(other["refused"], other)
        self.assertIsNone(outcome(other, "no_push"), other)
        self.assertEqual(seen, ["S1"])

    def test_each_answer_is_folded_as_a_worker_hooks(self) -> None:
        agent = self.connect()
        agent.attach(lambda e: hookd.allow("read-only", input={"command": "ls -la"}), "PreToolUse",
                     name="approve")
        agent.attach(lambda e: "branch: main", "PreToolUse", name="context")
        verdict = self.daemon.fire("PreToolUse", bash("ls", "S1"))
        self.assertFalse(verdict["refused"], verdict)
        # A live hook's allow stands only where the settings say so: read as nothing else here, its
        # rewrite kept.
        self.assertIsNone(verdict.get("permission"), verdict)
        self.assertEqual(verdict["input"]["command"], "ls -la")
        self.assertEqual(verdict["adds"], ["branch: main"])

        daemon = RealDaemon("[protect]\nlive_hooks_allow = true\n")
        self.addCleanup(daemon.stop)
        trusted = hookd.connect(daemon.socket, client="tests")
        self.addCleanup(trusted.close)
        trusted.attach(lambda e: hookd.allow("read-only", input={"command": "ls -la"}), "PreToolUse",
                       name="approve")
        verdict = daemon.fire("PreToolUse", bash("ls", "S1"))
        self.assertEqual(verdict.get("permission"), "allow", verdict)
        self.assertEqual(verdict["input"]["command"], "ls -la")

    def test_a_moment_codex_never_fires_is_refused_where_it_is_hung(self) -> None:
        agent = self.connect()
        with self.assertRaises(hookd.HookRefused) as raised:

            @agent.hook("Notification", agents=["codex"])
            def never(event: hookd.Event) -> hookd.AnswerLike:
                return None

        self.assertIn("codex", raised.exception.reason)
        self.assertEqual(agent.hooks, [])
        # The connection goes on: a hook that can run is hung after it.
        agent.attach(lambda e: None, "PreToolUse", agents=["codex"], name="fine")
        with self.assertRaises(hookd.HookRefused) as raised:
            agent.attach(lambda e: None, "PreToolUs", name="typo")
        self.assertIn("PreToolUse", raised.exception.reason)

    def test_a_callable_that_raises_fails_by_its_on_failure(self) -> None:
        agent = self.connect()

        def broken(event: hookd.Event) -> hookd.AnswerLike:
            raise RuntimeError("policy file missing")

        agent.attach(broken, "PreToolUse", name="lenient")
        verdict = self.daemon.fire("PreToolUse", bash("ls", "S1"))
        self.assertFalse(verdict["refused"], verdict)
        # It failed, and said nothing to the verdict (on_failure "ignore"); the error is logged by the
        # client, and is the hook's error in the daemon's answer and journal.
        self.assertEqual(outcome(verdict, "lenient"), "failed")
        errors = [h.get("error") for h in verdict["hooks"] if h.get("name") == "lenient"]
        self.assertIn("policy file missing", str(errors))
        agent.detach()
        agent.attach(broken, "PreToolUse", name="strict", on_failure="refuse")
        verdict = self.daemon.fire("PreToolUse", bash("ls", "S1"))
        self.assertTrue(verdict["refused"], verdict)
        self.assertIn("policy file missing", verdict["reason"])

    def test_a_hook_without_on_failure_takes_the_settings_default(self) -> None:
        daemon = RealDaemon('[defaults]\non_failure = "refuse"\n')
        self.addCleanup(daemon.stop)
        agent = hookd.connect(daemon.socket, client="tests")
        self.addCleanup(agent.close)

        def broken(event: hookd.Event) -> hookd.AnswerLike:
            raise RuntimeError("policy file missing")

        hook = agent.attach(broken, "PreToolUse", name="bare")
        self.assertIsNone(hook.on_failure)
        verdict = daemon.fire("PreToolUse", bash("ls", "S1"))
        self.assertTrue(verdict["refused"], verdict)
        self.assertIn("policy file missing", verdict["reason"])

    def test_detach_and_disconnect_take_hooks_down(self) -> None:
        agent = self.connect()
        calls: List[str] = []

        def deny(event: hookd.Event) -> hookd.AnswerLike:
            calls.append(event["tool_input"]["command"])
            return hookd.refuse("not now")

        hook = agent.attach(deny, "PreToolUse", name="deny")
        self.assertTrue(self.daemon.fire("PreToolUse", bash("one", "S1"))["refused"])
        hook.detach()
        self.assertFalse(hook.attached)
        verdict = self.daemon.fire("PreToolUse", bash("two", "S1"))
        self.assertFalse(verdict["refused"], verdict)
        self.assertIsNone(outcome(verdict, "deny"))

        agent.attach(deny, "PreToolUse", name="deny")
        self.assertTrue(self.daemon.fire("PreToolUse", bash("three", "S1"))["refused"])
        agent.close()
        verdict = self.daemon.fire("PreToolUse", bash("four", "S1"))
        self.assertFalse(verdict["refused"], verdict)
        self.assertIsNone(outcome(verdict, "deny"))
        self.assertEqual(calls, ["one", "three"])

    def test_the_sessions_end_takes_its_hook_down_and_the_client_is_told(self) -> None:
        told = threading.Event()
        agent = hookd.connect(self.daemon.socket, on_detached=lambda names, reason: told.set())
        self.addCleanup(agent.close)
        hook = agent.attach(lambda e: hookd.refuse("no"), "PreToolUse", session="S1", name="s1")
        self.daemon.fire("SessionEnd", {"session_id": "S1", "reason": "exit"})
        self.assertTrue(told.wait(RESPONSE))
        self.assertFalse(hook.attached)
        self.assertFalse(self.daemon.fire("PreToolUse", bash("ls", "S1"))["refused"])

    def test_a_silent_client_is_cut_at_its_timeout_while_other_clients_fires_go_on(self) -> None:
        silent = self.connect()
        release = threading.Event()
        self.addCleanup(release.set)
        returned = threading.Event()

        @silent.hook("PreToolUse", timeout=1)
        def stuck(event: hookd.Event) -> hookd.AnswerLike:
            if event["tool_input"]["command"] == "block":
                release.wait(RESPONSE)
                returned.set()
                return hookd.refuse("too late to count")
            return hookd.refuse("in time")

        other = self.connect()
        other.attach(lambda e: hookd.adds("other client"), "PostToolUse", name="other")
        blocked: Dict[str, Any] = {}
        fired = threading.Thread(
            target=lambda: blocked.update(self.daemon.fire("PreToolUse", bash("block", "S1")))
        )
        fired.start()
        # Another client's fire is answered while the silent one's call waits.
        post = self.daemon.fire("PostToolUse", dict(bash("ls", "S1"), tool_response={"stdout": ""}))
        self.assertEqual(post["adds"], ["other client"], post)
        fired.join(RESPONSE)
        self.assertFalse(fired.is_alive())
        self.assertFalse(blocked["refused"], blocked)
        self.assertEqual(outcome(blocked, "stuck"), "failed")
        # The callable returns after its time: its answer is dropped by the client, and the connection
        # is not out of step — the next call is answered as ever.
        release.set()
        self.assertTrue(returned.wait(RESPONSE))
        verdict = self.daemon.fire("PreToolUse", bash("ls", "S1"))
        self.assertEqual((verdict["refused"], verdict.get("reason")), (True, "in time"), verdict)

    KILLED = """
import sys, time, hookd
with hookd.connect(sys.argv[1]) as agent:
    @agent.hook("PreToolUse", timeout=60, on_failure=sys.argv[2])
    def stuck(event):
        print("called", flush=True)
        time.sleep(3600)
    print("hung", flush=True)
    agent.run_forever()
"""

    def killed_mid_call(self, on_failure: str) -> Dict[str, Any]:
        client = subprocess.Popen(
            [sys.executable, "-c", self.KILLED, self.daemon.socket, on_failure],
            env=dict(os.environ, PYTHONPATH=PACKAGE),
            stdout=subprocess.PIPE,
            text=True,
        )
        assert client.stdout is not None
        self.addCleanup(client.stdout.close)
        self.addCleanup(client.wait)
        self.addCleanup(client.kill)
        self.assertEqual(client.stdout.readline(), "hung\n")
        answer: Dict[str, Any] = {}
        fired = threading.Thread(
            target=lambda: answer.update(self.daemon.fire("PreToolUse", bash("ls", "S1")))
        )
        fired.start()
        self.assertEqual(client.stdout.readline(), "called\n")
        killed = time.monotonic()
        client.send_signal(signal.SIGKILL)
        fired.join(RESPONSE)
        self.assertFalse(fired.is_alive(), "the fire was not answered")
        # Answered by the disconnect, not the hook's 60 s timeout.
        answer["_after_kill_s"] = time.monotonic() - killed
        self.assertLess(answer["_after_kill_s"], 30)
        return answer

    def test_a_client_killed_mid_call_fails_the_call_by_its_on_failure(self) -> None:
        refused = self.killed_mid_call("refuse")
        self.assertTrue(refused["refused"], refused)
        self.assertEqual(outcome(refused, "stuck"), "refused")
        ignored = self.killed_mid_call("ignore")
        self.assertFalse(ignored["refused"], ignored)
        self.assertEqual(outcome(ignored, "stuck"), "failed")
        print(
            "\nkilled mid-call: answered %.1f ms (refuse), %.1f ms (ignore) after SIGKILL"
            % (refused["_after_kill_s"] * 1000, ignored["_after_kill_s"] * 1000),
            file=sys.stderr,
        )


if __name__ == "__main__":
    unittest.main()
