#!/usr/bin/env python3
"""Approve an agent's tool calls live, from a terminal: a hook hung on the running daemon for as long as
this program runs, and taken down when it ends (docs/live-hooks.md).

    python3 examples/approve_live.py [--socket PATH] [--agent claude-code] [--session ID]
                                     [--tools 'Bash|Edit|Write'] [--timeout SECONDS]

Each call of the tools named (PreToolUse) is decided in this order:

- a shell command that only reads (`ls`, `cat`, `git status`, `grep`, ...) is allowed by rule, with no
  question: the agent runs it without its own prompt;
- anything else is put to the person at this terminal: `y` allows it, `n` (or anything else) refuses it
  with a reason the agent is told; `a` leaves it to the agent's own prompt;
- no answer within the hook's time, or this program gone (Ctrl-C, killed): refused, since the hook is
  hung with `on_failure = "refuse"` while it is up. Once it is down, the agent goes on as before.

Its allows stand only where the settings say `[protect] live_hooks_allow = true` (docs/security.md):
any process of the user may hang a live hook, the agent's own tool calls included, so a live hook's
allow is read as nothing unless the user lets it stand. Without it, `y` and the read-only rule leave the
call to the agent's own prompt; refusals hold either way.

The questions come one at a time, in the order the calls came. Answers are read from standard input, a
line each; prompts and what was decided go to standard error, and one line `hung` to standard output
once the hook is up.

Standard library and the hookd client (clients/python) only.
"""

from __future__ import annotations

import argparse
import os
import re
import select
import sys
import threading
import time
from typing import Any, Dict, Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients", "python"))

import hookd  # noqa: E402  (found beside this file, in the repository)

# Shell commands that only read: allowed without asking. A command with anything that could chain
# another, redirect or substitute (`;`, `&`, `|`, `>`, `<`, `` ` ``, `$(`) is never taken by this rule.
READ_ONLY = re.compile(
    r"^\s*(ls|cat|head|tail|wc|pwd|echo|grep|rg|find|stat|file|du|df|"
    r"git\s+(status|log|diff|show|branch|remote\s+-v))(\s[^;&|<>`$]*)?\s*$"
)

# One question on the terminal at a time.
terminal = threading.Lock()


def summary(event: Dict[str, Any]) -> str:
    """The call in one line, for the question."""
    tool = event.get("tool_name", "?")
    tool_input = event.get("tool_input") or {}
    if isinstance(tool_input, dict):
        detail = tool_input.get("command") or tool_input.get("file_path") or tool_input
    else:
        detail = tool_input
    return "%s: %s" % (tool, " ".join(str(detail).split())[:300])


def read_answer(deadline: float) -> Optional[str]:
    """A line from standard input before `deadline`, or None (no answer, or input closed)."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([sys.stdin], [], [], left)
        if ready:
            line = sys.stdin.readline()
            return line.strip().lower() if line else None


def approver(timeout: float) -> hookd.HookFunction:
    def approve(event: hookd.Event) -> hookd.AnswerLike:
        # Leave a second for the answer to reach the daemon before the hook's time is up.
        deadline = time.monotonic() + timeout - 1
        command = (event.get("tool_input") or {}).get("command")
        if event.get("tool_name") == "Bash" and isinstance(command, str) and READ_ONLY.match(command):
            return hookd.allow("read-only, allowed by rule")
        with terminal:
            if time.monotonic() >= deadline:
                # Its time ran out waiting for the questions before it: the daemon has refused it.
                return None
            print(
                "\n%s\n  allow? [y]es / [n]o / [a]gent's own prompt: " % summary(event),
                end="",
                file=sys.stderr,
                flush=True,
            )
            answer = read_answer(deadline)
            if answer is not None and time.monotonic() >= deadline + 1:
                # Answered after the daemon stopped waiting: it has refused the call already.
                print("  too late: the call was already refused", file=sys.stderr, flush=True)
                return None
        if answer in ("y", "yes"):
            print("  allowed", file=sys.stderr, flush=True)
            return hookd.allow("approved at the terminal")
        if answer in ("a", "ask"):
            print("  left to the agent", file=sys.stderr, flush=True)
            return hookd.ask("the person at the terminal left this to you")
        print("  refused", file=sys.stderr, flush=True)
        why = "no answer in time" if answer is None else "refused"
        return hookd.refuse("the person approving tool calls said no (%s)" % why)

    return approve


def main() -> int:
    parser = argparse.ArgumentParser(description="Approve an agent's tool calls live, at this terminal.")
    parser.add_argument("--socket", help="the daemon's socket [default: where hookd's clients look]")
    parser.add_argument("--agent", action="append", help="only this agent's calls (repeatable)")
    parser.add_argument("--session", help="only this session's calls")
    parser.add_argument("--tools", default="Bash|Edit|Write", help="the matcher [default: %(default)s]")
    parser.add_argument("--timeout", type=float, default=90.0,
                        help="seconds a call waits for an answer [default: %(default)s]")
    args = parser.parse_args()
    try:
        with hookd.connect(args.socket, client="approve-live") as agent:
            agent.attach(
                approver(args.timeout),
                "PreToolUse",
                matcher=args.tools,
                agents=args.agent,
                session=args.session,
                timeout=args.timeout,
                on_failure="refuse",
                name="approve-live",
            )
            print("hung", flush=True)
            print("approving %s calls live; Ctrl-C to stop" % args.tools, file=sys.stderr, flush=True)
            agent.run_forever()
    except hookd.HookRefused as e:
        print("approve_live: %s" % e, file=sys.stderr)
        return 2
    except hookd.HookdError as e:
        print("approve_live: %s" % e, file=sys.stderr)
        return 1
    print("\nstopped: the hook is down", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
