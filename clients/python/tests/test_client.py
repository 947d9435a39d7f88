"""The client against a fake daemon on a real Unix socket: what it sends for each answer, and how it
holds when the callable or the daemon misbehaves."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import threading
import time
import unittest
from typing import Any, Dict, List, Optional, Tuple

from fake_daemon import WAIT, FakeDaemon, bash

import hookd
import hookd._client


class LogLines(logging.Handler):
    """The hookd logger's lines, waited for by a test."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: List[str] = []
        self.cond = threading.Condition()

    def emit(self, record: logging.LogRecord) -> None:
        with self.cond:
            self.lines.append(record.getMessage())
            self.cond.notify_all()

    def wait_for(self, text: str) -> str:
        with self.cond:
            found = self.cond.wait_for(
                lambda: any(text in line for line in self.lines), timeout=WAIT
            )
            assert found, "no log line with %r in %r" % (text, self.lines)
            return next(line for line in self.lines if text in line)


class ClientTest(unittest.TestCase):
    def setUp(self) -> None:
        self.daemon = FakeDaemon()
        self.addCleanup(self.daemon.close)
        self.log = LogLines()
        logger = logging.getLogger("hookd")
        logger.addHandler(self.log)
        logger.setLevel(logging.DEBUG)
        logger.propagate = False
        self.addCleanup(logger.removeHandler, self.log)
        self.agent = hookd.connect(self.daemon.path, client="tests")
        self.addCleanup(self.agent.close)

    def answer_to(self, number: Any, hook: str, event: Dict[str, Any]) -> Dict[str, Any]:
        self.daemon.call(number, hook, event)
        answer = self.daemon.next()
        self.assertEqual(answer.get("call"), number, answer)
        self.assertEqual(answer.get("op"), "answer", answer)
        return answer

    def test_the_issues_example_refuses_a_push_and_says_nothing_otherwise(self) -> None:
        @self.agent.hook("PreToolUse", matcher="Bash")
        def no_push(event: hookd.Event) -> hookd.AnswerLike:
            if "git push" in event["tool_input"]["command"]:
                return hookd.refuse("pushes wait for review")
            return None

        attach = self.daemon.requests[0]
        self.assertEqual(attach["op"], "attach")
        self.assertEqual(attach["client"], "tests")
        # No on_failure given: none sent, and the daemon applies the settings' default.
        self.assertEqual(attach["hooks"], [{"name": "no_push", "moment": "PreToolUse", "matcher": "Bash"}])
        self.assertIsNone(no_push.on_failure)
        self.assertTrue(no_push.attached)
        self.assertEqual(
            self.answer_to(17, "no_push", bash("git push origin main")),
            {"op": "answer", "call": 17, "refused": "pushes wait for review"},
        )
        self.assertEqual(self.answer_to(18, "no_push", bash("ls")), {"op": "answer", "call": 18})
        self.assertEqual(no_push.calls, 2)

    def test_every_option_is_sent_as_the_protocol_names_it(self) -> None:
        @self.agent.hook(
            "PermissionRequest",
            matcher="Edit|Write",
            agents="claude-code",
            session="S1",
            timeout=2.5,
            on_failure="refuse",
            name="approve",
        )
        def _approve(event: hookd.Event) -> hookd.AnswerLike:
            return None

        self.assertEqual(
            self.daemon.requests[0]["hooks"],
            [
                {
                    "name": "approve",
                    "moment": "PermissionRequest",
                    "matcher": "Edit|Write",
                    "agents": ["claude-code"],
                    "session": "S1",
                    "timeout": 2.5,
                    "on_failure": "refuse",
                }
            ],
        )

    def test_a_hook_the_daemon_refuses_raises_where_it_is_hung_with_the_reason(self) -> None:
        self.daemon.refuse["never"] = 'codex never fires "PermissionRequest"'
        with self.assertRaises(hookd.HookRefused) as raised:

            @self.agent.hook("PermissionRequest", agents=["codex"])
            def never(event: hookd.Event) -> hookd.AnswerLike:
                return hookd.refuse("no")

        self.assertEqual(raised.exception.name, "never")
        self.assertIn("codex never fires", raised.exception.reason)
        self.assertEqual(self.agent.hooks, [])
        # A call for it all the same is answered as failed, never by the function.
        answer = self.answer_to(3, "never", bash("ls"))
        self.assertIn("no hook named 'never'", answer["error"])
        self.assertNotIn("refused", answer)

    def test_each_kind_of_answer_reaches_the_daemon_as_its_members(self) -> None:
        answers: Dict[str, hookd.AnswerLike] = {
            "allow": hookd.allow("read-only"),
            "allow_bare": hookd.allow(),
            "ask": hookd.ask("a person decides", adds="branch: main"),
            "adds": hookd.adds("one", "two"),
            "text": "plain text adds",
            "blank": "   ",
            "input": hookd.rewrite_input({"command": "ls -la", "description": None}),
            "allow_input": hookd.allow(input={"command": "ls"}),
            "output": hookd.rewrite_output("[redacted]"),
            "output_null": hookd.rewrite_output(None),
            "refuse_bare": hookd.refuse(),
            "refuse_redact": hookd.refuse("secret", output={"stdout": "[redacted]"}),
            "dict": {"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "x"}},
            "nothing": hookd.nothing(),
        }
        for name, said in answers.items():
            self.agent.attach(lambda event, said=said: said, "PreToolUse", name=name)  # type: ignore[misc]
        expected: Dict[str, Dict[str, Any]] = {
            "allow": {"allow": "read-only"},
            "allow_bare": {"allow": True},
            "ask": {"ask": "a person decides", "adds": "branch: main"},
            "adds": {"adds": "one\ntwo"},
            "text": {"adds": "plain text adds"},
            "blank": {},
            "input": {"input": {"command": "ls -la", "description": None}},
            "allow_input": {"allow": True, "input": {"command": "ls"}},
            "output": {"output": "[redacted]"},
            "output_null": {"output": None},
            "refuse_bare": {"refused": True},
            "refuse_redact": {"refused": "secret", "output": {"stdout": "[redacted]"}},
            "dict": {"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "x"}},
            "nothing": {},
        }
        for number, name in enumerate(answers):
            answer = self.answer_to(number, name, bash("ls"))
            self.assertEqual(answer, dict({"op": "answer", "call": number}, **expected[name]), name)

    def test_a_callable_that_raises_is_logged_and_answered_as_an_error_whatever_its_on_failure(self) -> None:
        @self.agent.hook("PreToolUse")
        def broken(event: hookd.Event) -> hookd.AnswerLike:
            raise RuntimeError("the policy file is missing")

        @self.agent.hook("PreToolUse", on_failure="refuse")
        def strict(event: hookd.Event) -> hookd.AnswerLike:
            raise RuntimeError("the policy file is missing")

        answer = self.answer_to(1, "broken", bash("ls"))
        self.assertEqual(set(answer), {"op", "call", "error"}, answer)
        self.assertIn("RuntimeError: the policy file is missing", answer["error"])
        self.log.wait_for("hook broken raised on call 1")
        # With on_failure = "refuse" the same: the daemon decides what the failure means (it may be the
        # settings' default), so the client says no refusal of its own.
        answer = self.answer_to(2, "strict", bash("ls"))
        self.assertEqual(set(answer), {"op", "call", "error"}, answer)
        self.assertIn("RuntimeError", answer["error"])
        self.assertEqual(broken.calls, 0)

    def test_what_is_not_an_answer_fails_the_call(self) -> None:
        self.agent.attach(lambda event: 42, "PreToolUse", name="number")  # type: ignore[arg-type, return-value]
        self.agent.attach(lambda event: {"allow": float("nan")}, "PreToolUse", name="nan")
        self.agent.attach(lambda event: {"adds": object()}, "PreToolUse", name="object")
        for number, name in enumerate(["number", "nan", "object"]):
            answer = self.answer_to(number, name, bash("ls"))
            self.assertIn("error", answer, name)
            self.assertEqual(set(answer), {"op", "call", "error"}, name)

    def test_a_refusal_beside_what_cannot_be_sent_still_refuses(self) -> None:
        self.agent.attach(lambda e: {"refused": "no", "extra": object()}, "PreToolUse", name="refuses")
        self.agent.attach(lambda e: {"ask": "a person", "x": float("inf")}, "PreToolUse", name="asks")
        self.agent.attach(
            lambda e: hookd.allow(input={"command": object()}), "PreToolUse", name="allows"
        )
        answer = self.answer_to(1, "refuses", bash("ls"))
        self.assertEqual(answer["refused"], "no")
        self.assertIn("cannot be sent", answer["error"])
        self.assertEqual(self.answer_to(2, "asks", bash("ls"))["ask"], "a person")
        # An allow beside a rewrite that cannot be sent is not an allow of the call as it stands.
        answer = self.answer_to(3, "allows", bash("ls"))
        self.assertEqual(set(answer), {"op", "call", "error"}, answer)

    def test_garbage_from_the_daemon_is_passed_over_and_the_connection_goes_on(self) -> None:
        @self.agent.hook("PreToolUse")
        def deny(event: hookd.Event) -> hookd.AnswerLike:
            return hookd.refuse("no")

        for junk in [
            b"not json\n",
            b"[1,2]\n",
            b"\xff\xfe\n",
            b'{"op":"call","hook":"deny","event":{}}\n',  # no call number
            b'{"op":"call","call":[1],"hook":"deny","event":{}}\n',
            b'{"op":"what"}\n',
            b'{"id":999,"ok":true}\n',  # an answer to nothing asked
            b'{"id":true,"ok":true,"attached":["x"]}\n',  # true is no request's id, though 1 == True
            b'{"ok":false,"error":{"kind":"bad_json","message":"x"}}\n',
            b"\n",
            b"[" * 100000 + b"\n",  # deeper than Python's JSON reader goes
            b'{"op":"call","call":9,"hook":"deny","event":' + b"[" * 100000 + b"\n",
        ]:
            self.daemon.send_raw(junk)
        self.daemon.call(5, "deny", "not an object")  # type: ignore[arg-type]
        self.assertEqual(self.daemon.next(), {"op": "answer", "call": 5, "error": "the call carried no event object"})
        self.assertEqual(self.answer_to(6, "deny", bash("ls")), {"op": "answer", "call": 6, "refused": "no"})
        self.log.wait_for("not JSON")
        self.log.wait_for("without a call number")
        self.assertTrue(deny.attached)

    def test_a_callable_that_blocks_past_its_timeout_holds_nothing_up_and_its_late_answer_is_dropped(self) -> None:
        release = threading.Event()

        @self.agent.hook("PreToolUse", timeout=0.2)
        def slow(event: hookd.Event) -> hookd.AnswerLike:
            release.wait(WAIT)
            return hookd.refuse("too late")

        @self.agent.hook("PreToolUse")
        def quick(event: hookd.Event) -> hookd.AnswerLike:
            return hookd.adds("quick")

        self.daemon.call(1, "slow", bash("ls"))
        # Another call is answered while the slow one blocks.
        self.assertEqual(self.answer_to(2, "quick", bash("ls")), {"op": "answer", "call": 2, "adds": "quick"})
        self.log.wait_for("hook slow did not answer call 1 within its 0.2s")
        release.set()
        self.log.wait_for("hook slow answered call 1 after its 0.2s")
        # The late answer never went out: the next line is the answer to the next call.
        self.assertEqual(self.answer_to(3, "quick", bash("ls")), {"op": "answer", "call": 3, "adds": "quick"})

    def test_the_calls_timeout_from_the_daemon_bounds_the_callable(self) -> None:
        release = threading.Event()
        self.addCleanup(release.set)
        def slow(event: hookd.Event) -> hookd.AnswerLike:
            release.wait(WAIT)
            return None

        self.agent.attach(slow, "PreToolUse")
        self.daemon.call(1, "slow", bash("ls"), timeout=0.1)
        self.log.wait_for("hook slow did not answer call 1")

    def test_callables_running_at_once_are_bounded(self) -> None:
        release = threading.Event()
        self.addCleanup(release.set)
        old = hookd._client.MAX_RUNNING
        hookd._client.MAX_RUNNING = 2
        self.addCleanup(setattr, hookd._client, "MAX_RUNNING", old)
        started = threading.Semaphore(0)

        def stuck(event: hookd.Event) -> hookd.AnswerLike:
            started.release()
            release.wait(WAIT)
            return None

        self.agent.attach(stuck, "PreToolUse", timeout=0.05, on_failure="refuse")
        self.daemon.call(1, "stuck", bash("ls"))
        self.daemon.call(2, "stuck", bash("ls"))
        self.assertTrue(started.acquire(timeout=WAIT) and started.acquire(timeout=WAIT))
        answer = self.answer_to(3, "stuck", bash("ls"))
        self.assertIn("2 callables still running", answer["error"])
        self.assertNotIn("refused", answer)

    def test_a_call_with_no_thread_to_run_it_fails_and_the_next_is_answered(self) -> None:
        self.agent.attach(lambda e: hookd.refuse("no"), "PreToolUse", name="h", on_failure="refuse")
        real_start = threading.Thread.start
        starts: List[str] = []

        def start(thread: threading.Thread) -> None:
            if thread.name.startswith("hookd-call-") and not starts:
                starts.append(thread.name)
                raise RuntimeError("can't start new thread")
            real_start(thread)

        threading.Thread.start = start  # type: ignore[method-assign, assignment]
        self.addCleanup(setattr, threading.Thread, "start", real_start)
        answer = self.answer_to(1, "h", bash("ls"))
        self.assertIn("can't start new thread", answer["error"])
        self.assertNotIn("refused", answer)
        self.assertEqual(self.answer_to(2, "h", bash("ls")), {"op": "answer", "call": 2, "refused": "no"})

    def test_detach_takes_down_the_hooks_named_or_all(self) -> None:
        first = self.agent.attach(lambda e: None, "PreToolUse", name="first")
        second = self.agent.attach(lambda e: None, "PostToolUse", name="second")
        third = self.agent.attach(lambda e: None, "Stop", name="third")
        first.detach()
        self.assertEqual(self.daemon.requests[-1]["hooks"], ["first"])
        self.assertFalse(first.attached)
        self.assertEqual([h.name for h in self.agent.hooks], ["second", "third"])
        # A call for it after the daemon took it down is not the function's to answer.
        self.assertIn("error", self.answer_to(1, "first", bash("ls")))
        self.assertEqual(self.agent.detach(), [])
        self.assertNotIn("hooks", self.daemon.requests[-1])
        self.assertFalse(second.attached or third.attached)
        self.assertEqual(self.agent.hooks, [])

    def test_a_hook_used_as_a_context_manager_is_hung_for_the_block(self) -> None:
        with self.agent.attach(lambda e: hookd.refuse("during the flow"), "PreToolUse", name="flow") as hook:
            self.assertEqual(self.answer_to(1, "flow", bash("ls"))["refused"], "during the flow")
        self.assertFalse(hook.attached)
        detach = self.daemon.requests[-1]
        self.assertEqual((detach["op"], detach["hooks"]), ("detach", ["flow"]))

    def test_the_daemons_detached_takes_hooks_down_and_says_why(self) -> None:
        told: List[Tuple[List[str], str]] = []
        done = threading.Event()

        def on_detached(names: List[str], reason: str) -> None:
            told.append((names, reason))
            # A callback may hang a hook again: the connection still reads its answer.
            self.agent.attach(lambda e: None, "PreToolUse", name="again")
            done.set()

        self.agent.on_detached = on_detached
        hook = self.agent.attach(lambda e: None, "PreToolUse", session="S1", name="s1")
        self.daemon.send({"op": "detached", "hooks": ["s1"], "reason": "session S1 ended"})
        self.assertTrue(done.wait(WAIT))
        self.assertEqual(told, [(["s1"], "session S1 ended")])
        self.assertFalse(hook.attached)
        self.assertEqual(hook.detached_reason, "session S1 ended")
        self.assertEqual([h.name for h in self.agent.hooks], ["again"])

    def test_only_the_answer_with_the_requests_own_id_answers_it(self) -> None:
        self.daemon.silent_attach = True
        hung: List[hookd.LiveHook] = []
        attaching = threading.Thread(
            target=lambda: hung.append(self.agent.attach(lambda e: None, "PreToolUse", name="h"))
        )
        attaching.start()
        request = self.daemon.next()
        self.assertEqual(request["id"], 1)
        # true == 1 in Python, but is no request's id; nor is "1".
        self.daemon.send({"id": True, "ok": True, "attached": [], "refused": [{"name": "h", "reason": "fake"}]})
        self.daemon.send({"id": "1", "ok": True, "attached": [], "refused": [{"name": "h", "reason": "fake"}]})
        self.daemon.send({"id": 1, "ok": True, "attached": ["h"], "refused": []})
        attaching.join(WAIT)
        self.assertEqual([h.name for h in hung], ["h"])
        self.assertTrue(hung[0].attached)

    def test_an_attach_not_answered_in_time_is_taken_down_unasked(self) -> None:
        self.daemon.silent_attach = True
        self.agent.timeout = 0.2
        with self.assertRaises(hookd.HookdError) as raised:
            self.agent.attach(lambda e: hookd.refuse("no"), "PreToolUse", name="late")
        self.assertIn("did not answer attach", str(raised.exception))
        self.assertEqual(self.daemon.next()["op"], "attach")
        deadline = time.monotonic() + WAIT
        while not self.daemon.requests:
            self.assertLess(time.monotonic(), deadline, "no detach came")
            time.sleep(0.01)
        detach = self.daemon.requests[0]
        self.assertEqual((detach["op"], detach["hooks"]), ("detach", ["late"]))
        self.assertEqual(self.agent.hooks, [])
        # Its answer, unasked for, is not taken for another request's.
        self.daemon.silent_attach = False
        self.agent.timeout = WAIT
        self.agent.attach(lambda e: None, "PreToolUse", name="after")

    def test_a_name_hung_twice_is_refused_by_the_client(self) -> None:
        self.agent.attach(lambda e: None, "PreToolUse", name="twice")
        with self.assertRaises(hookd.HookRefused):
            self.agent.attach(lambda e: None, "PostToolUse", name="twice")
        with self.assertRaises(ValueError):
            self.agent.attach(lambda e: None, "PreToolUse")  # a lambda has no name
        with self.assertRaises(ValueError):
            self.agent.attach(lambda e: None, "PreToolUse", name="x", on_failure="deny")
        with self.assertRaises(ValueError):
            self.agent.attach(lambda e: None, "PreToolUse", name="x", timeout=0)

    def test_a_line_too_long_ends_the_connection(self) -> None:
        old = hookd._client.MAX_LINE
        hookd._client.MAX_LINE = 1000
        self.addCleanup(setattr, hookd._client, "MAX_LINE", old)
        hook = self.agent.attach(lambda e: None, "PreToolUse", name="h")
        self.daemon.send_raw(b'{"op":"call","call":1,"hook":"h","event":{"x":"' + b"a" * 2000 + b'"}}\n')
        with self.assertRaises(hookd.ConnectionLost) as raised:
            self.agent.run_forever()
        self.assertIn("longer than 1000 bytes", str(raised.exception))
        self.assertFalse(hook.attached)

    def test_run_forever_raises_when_the_daemon_goes_and_every_hook_is_down(self) -> None:
        hook = self.agent.attach(lambda e: None, "PreToolUse", name="h")
        self.assertTrue(self.daemon.accepted.wait(WAIT))
        assert self.daemon.conn is not None
        self.daemon.conn.shutdown(socket.SHUT_RDWR)
        with self.assertRaises(hookd.ConnectionLost):
            self.agent.run_forever()
        self.assertFalse(hook.attached)
        with self.assertRaises(hookd.ConnectionLost):
            self.agent.attach(lambda e: None, "PreToolUse", name="after")



class StopTest(unittest.TestCase):
    """Ctrl-C and a callable that raises KeyboardInterrupt, in a process of their own (a signal lands
    on the main thread)."""

    def run_client(self, script: str, daemon: FakeDaemon) -> "subprocess.Popen[str]":
        env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        return subprocess.Popen(
            [sys.executable, "-c", script, daemon.path],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    SCRIPT = """
import logging, sys, hookd
logging.basicConfig(level=logging.DEBUG, stream=sys.stdout, format="%(message)s")
with hookd.connect(sys.argv[1]) as agent:
    @agent.hook("PreToolUse")
    def h(event):
        if event.get("interrupt"):
            raise KeyboardInterrupt
        return hookd.refuse("no")
    print(agent.run_forever(), flush=True)
print("ended", flush=True)
"""

    def test_ctrl_c_takes_the_hooks_down_and_ends_the_client_as_stopped(self) -> None:
        daemon = FakeDaemon()
        self.addCleanup(daemon.close)
        client = self.run_client(self.SCRIPT, daemon)
        assert client.stdout is not None
        # Ctrl-C once run_forever is answering calls.
        for line in client.stdout:
            if "answering calls" in line:
                break
        client.send_signal(2)
        out, err = client.communicate(timeout=WAIT)
        self.assertEqual(client.returncode, 0, out + err)
        self.assertTrue(out.endswith("stopped\nended\n"), out + err)
        self.assertTrue(daemon.eof.wait(WAIT), "the connection stayed open")

    def test_a_callable_interrupted_stops_the_client(self) -> None:
        daemon = FakeDaemon()
        self.addCleanup(daemon.close)
        client = self.run_client(self.SCRIPT, daemon)
        assert client.stdout is not None
        for line in client.stdout:
            if "answering calls" in line:
                break
        daemon.call(1, "h", {"interrupt": True})
        out, err = client.communicate(timeout=WAIT)
        self.assertEqual(client.returncode, 0, out + err)
        self.assertTrue(out.endswith("stopped\nended\n"), out + err)
        self.assertTrue(daemon.eof.wait(WAIT))
        # No answer went out for the interrupted call: the closed connection fails it.
        self.assertTrue(daemon.received.empty())


class PlacesTest(unittest.TestCase):
    def test_hookd_socket_alone_when_set(self) -> None:
        self.assertEqual(
            hookd.socket_places({"HOOKD_SOCKET": "/s/x.sock", "XDG_RUNTIME_DIR": "/run/user/7"}, 7),
            ["/s/x.sock"],
        )

    def test_the_daemons_places_in_order_each_once(self) -> None:
        self.assertEqual(
            hookd.socket_places({"XDG_RUNTIME_DIR": "/run/user/1000", "HOOKD_SOCKET": ""}, 1000),
            ["/run/user/1000/hookd/hookd.sock", "/tmp/hookd-1000/hookd.sock"],
        )
        self.assertEqual(
            hookd.socket_places({"XDG_RUNTIME_DIR": "/xdg"}, 5),
            ["/xdg/hookd/hookd.sock", "/run/user/5/hookd/hookd.sock", "/tmp/hookd-5/hookd.sock"],
        )
        self.assertEqual(
            hookd.socket_places({}, 5), ["/run/user/5/hookd/hookd.sock", "/tmp/hookd-5/hookd.sock"]
        )

    def test_no_daemon_names_every_place_looked(self) -> None:
        with self.assertRaises(hookd.HookdError) as raised:
            hookd.connect("/nonexistent/hookd.sock")
        self.assertIn("/nonexistent/hookd.sock: no such socket", str(raised.exception))


if __name__ == "__main__":
    unittest.main()
