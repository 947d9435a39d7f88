#!/usr/bin/env python3
"""Ask hookd whether a shell command may run: the client an agent built on an SDK would embed.

An agent with hook settings of its own (Claude Code, Codex, Gemini CLI) reaches hookd through
`hookd relay`. An agent you build yourself talks to the daemon directly, over its Unix socket,
with the line protocol of the contract (section 9): one JSON object per line each way, every
response carrying the `id` of its request.

This file is both a reusable class, `HookdClient`, and a small command line that uses it:

    python3 examples/sdk_client.py [--socket PATH] [--session ID] [--timeout SECONDS] -- 'rm -rf /'

It says hello as "my-sdk-agent" (declaring the moments this agent fires), fires a PreToolUse for the
Bash tool with the command given, and prints one line:

    refused: rm -rf is not allowed            (exit 2: the agent must not run the command)
    allowed                                   (exit 0)
    allowed; hooks add: branch: main          (exit 0; the adds are context for the model)
    rewritten: mv x .trash/                   (exit 0: run this command instead of the one asked)
    asks for approval: ...                    (exit 2: a person must approve; this agent has none)

On any error (the daemon is down, it answered with an error, it did not answer in time, a bad
command line) it prints one line on stderr and exits 1. What the agent does then is its own policy:
this example fails closed.

Standard library only, Python 3.8 or later.
"""

import argparse
import json
import os
import socket
import sys

# Who this agent is, for hooks that name agents (`agents = ["my-sdk-agent"]`) and for the daemon's
# logs.
AGENT = "my-sdk-agent"

# The moments this agent fires. The daemon answers hello with the hooks that apply to this agent on
# other moments: policies that would quietly never run for it, worth a warning.
MOMENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"]

# A response line longer than this is not hookd talking (the daemon caps what it sends far below).
MAX_RESPONSE = 16 * 1024 * 1024

# Exit statuses of the command line, as `hookd fire` uses them.
EXIT_ALLOWED, EXIT_ERROR, EXIT_REFUSED = 0, 1, 2


class HookdError(Exception):
    """The daemon could not give an answer: not running, an error response, no answer in time."""


def default_socket_path():
    """The socket hookd listens on by default (contract section 2): $HOOKD_SOCKET, else
    $XDG_RUNTIME_DIR/hookd/hookd.sock, else /tmp/hookd-$UID/hookd.sock."""
    if os.environ.get("HOOKD_SOCKET"):
        return os.environ["HOOKD_SOCKET"]
    if os.environ.get("XDG_RUNTIME_DIR"):
        return os.path.join(os.environ["XDG_RUNTIME_DIR"], "hookd", "hookd.sock")
    return "/tmp/hookd-%d/hookd.sock" % os.getuid()


class HookdClient:
    """One connection to the daemon.

    Use it as a context manager, or call `connect()` and `close()`:

        with HookdClient(path, timeout=70) as hookd:
            hookd.hello("my-sdk-agent", ["PreToolUse", "Stop"])
            verdict = hookd.fire("PreToolUse", {"session_id": "s1", "tool_name": "Bash",
                                                "tool_input": {"command": "ls"}})
            if verdict["refused"]:
                ...  # do not run the tool; tell the model verdict["reason"]

    Each request gets a fresh id. The daemon may answer requests out of order when several are in
    flight, so responses that belong to another id are kept until asked for.
    """

    def __init__(self, path=None, timeout=70.0):
        # Where the daemon listens.
        self.path = path or default_socket_path()
        # Seconds to wait for any one response. Hooks may take their time (60 s by default), so keep
        # this above the longest hook timeout in the settings.
        self.timeout = timeout
        # The connection and a buffered reader over it (one response per line).
        self._sock = None
        self._reader = None
        # The id of the last request sent.
        self._last_id = 0
        # Responses that arrived while waiting for another id, by id.
        self._early = {}

    def connect(self):
        """Opens the connection. Raises HookdError when nobody listens on the socket."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.path)
        except (FileNotFoundError, ConnectionRefusedError):
            sock.close()
            raise HookdError(
                "hookd is not running on %s (start it with `hookd serve`)" % self.path
            ) from None
        except OSError as e:
            sock.close()
            raise HookdError("cannot connect to hookd on %s: %s" % (self.path, e)) from None
        self._sock = sock
        self._reader = sock.makefile("rb")
        return self

    def close(self):
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self):
        return self.connect()

    def __exit__(self, *exc):
        self.close()

    def hello(self, agent, moments=None):
        """Says who this agent is and which moments it fires. Later fires on this connection that do
        not name an agent are this agent's. Returns the response; its `unreachable` lists the hooks
        that apply to this agent on moments it does not fire."""
        request = {"op": "hello", "agent": agent}
        if moments is not None:
            request["moments"] = list(moments)
        return self.request(request)

    def fire(self, moment, event, agent=None):
        """Fires `moment` with `event` (a dict, fields as Claude Code names them) and returns the
        verdict: {"ok": true, "refused": bool, "permission": "allow" or "ask" (when a hook gave one),
        "reason": str (when refused), "adds": [str], "input": {...} (the tool input to run instead,
        when hooks rewrote it), "output": ... (at PostToolUse, what the model is to see instead),
        "hooks": [...]}.
        """
        request = {"op": "fire", "moment": moment, "event": event}
        if agent is not None:
            request["agent"] = agent
        return self.request(request)

    def request(self, request):
        """Sends one request (a dict; an `id` is added) and returns its parsed response. An error
        response (`"ok": false`) raises HookdError with the daemon's message."""
        response = self.wait(self.send(request))
        if response.get("ok") is not True:
            error = response.get("error") or {}
            raise HookdError(
                "hookd answered %s: %s"
                % (error.get("kind", "an error"), error.get("message", response))
            )
        return response

    def send(self, request):
        """Sends a request without waiting for its response; returns its id (for `wait`)."""
        if self._sock is None:
            raise HookdError("not connected (call connect() first)")
        self._last_id += 1
        request = dict(request, id=self._last_id)
        line = json.dumps(request, separators=(",", ":")).encode("utf-8") + b"\n"
        try:
            self._sock.sendall(line)
        except OSError as e:
            raise HookdError("cannot send to hookd on %s: %s" % (self.path, e)) from None
        return self._last_id

    def wait(self, request_id):
        """Reads until the response to `request_id` comes, keeping any other for later."""
        while request_id not in self._early:
            response = self._read_one()
            if response.get("id") is None:
                # Only an answer to a line the daemon could not read has no id (a line too long).
                error = response.get("error") or {}
                raise HookdError("hookd answered: %s" % error.get("message", response))
            self._early[response["id"]] = response
        return self._early.pop(request_id)

    def _read_one(self):
        try:
            line = self._reader.readline(MAX_RESPONSE)
        except socket.timeout:
            raise HookdError(
                "hookd on %s did not answer within %gs" % (self.path, self.timeout)
            ) from None
        except OSError as e:
            raise HookdError("cannot read from hookd on %s: %s" % (self.path, e)) from None
        if not line:
            raise HookdError("hookd on %s closed the connection without answering" % self.path)
        if not line.endswith(b"\n"):
            raise HookdError("hookd sent a response line that is too long or cut short")
        try:
            return json.loads(line)
        except ValueError as e:
            raise HookdError(
                "hookd sent an unreadable response (%s): %r" % (e, line[:200])
            ) from None


def one_line(text):
    """Text on one line, for a one-line summary (adds may span several lines)."""
    return " ".join(text.split())


class Parser(argparse.ArgumentParser):
    """argparse, with a bad command line exiting 1 (argparse's own 2 means "refused" here)."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(EXIT_ERROR, "%s: error: %s\n" % (self.prog, message))


def positive(text):
    """A number of seconds above zero (zero would make the socket non-blocking)."""
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


def main(argv=None):
    parser = Parser(
        description="Ask hookd whether a Bash command may run (PreToolUse), as an SDK agent would."
    )
    parser.add_argument(
        "--socket",
        help="the daemon's socket [default: $HOOKD_SOCKET, else $XDG_RUNTIME_DIR/hookd/hookd.sock, "
        "else /tmp/hookd-$UID/hookd.sock]",
    )
    parser.add_argument("--session", default="sdk-example", help="the session id to report")
    parser.add_argument(
        "--timeout",
        type=positive,
        default=70.0,
        help="seconds to wait for the verdict [default: 70]",
    )
    parser.add_argument("command", nargs="+", help="the shell command the agent wants to run")
    args = parser.parse_args(argv)
    command = " ".join(args.command)

    # The event, with the fields Claude Code sends at PreToolUse: matchers written for Claude Code
    # (`matcher = "Bash"`) then fit this agent's tool calls too.
    event = {
        "session_id": args.session,
        "cwd": os.getcwd(),
        "tool_name": "Bash",
        "tool_input": {"command": command},
    }
    try:
        with HookdClient(args.socket, timeout=args.timeout) as hookd:
            hello = hookd.hello(AGENT, MOMENTS)
            for hook in hello.get("unreachable", []):
                print(
                    "warning: hook %r on %s never runs for %s"
                    % (hook.get("hook"), hook.get("moment"), AGENT),
                    file=sys.stderr,
                )
            verdict = hookd.fire("PreToolUse", event)
    except HookdError as e:
        print("sdk_client: %s" % e, file=sys.stderr)
        return EXIT_ERROR

    adds = [one_line(a) for a in verdict.get("adds", []) if a.strip()]
    if verdict.get("refused"):
        # A refusal, or an ask (`permission: "ask"`): this agent has nobody to ask, so it holds back.
        word = "asks for approval" if verdict.get("permission") == "ask" else "refused"
        print("%s: %s" % (word, one_line(verdict.get("reason") or "refused by hookd")))
        return EXIT_REFUSED
    # (This example fires PreToolUse only. At PostToolUse an agent shows its model `output`, when the
    # verdict has one, instead of the tool's own output.)
    rewritten = verdict.get("input")
    if rewritten is not None:
        # Hooks rewrote the call: the agent runs this input instead of its own. An agent that cannot
        # must hold back, never run the call it made (a hook may have rewritten it away from it).
        command = rewritten.get("command") if isinstance(rewritten, dict) else None
        if not isinstance(command, str):
            print("refused: hooks rewrote the call into one this agent cannot run: %s" % rewritten)
            return EXIT_REFUSED
        print("rewritten: %s" % one_line(command) + ("; hooks add: " + " | ".join(adds) if adds else ""))
        return EXIT_ALLOWED
    print("allowed" + ("; hooks add: " + " | ".join(adds) if adds else ""))
    return EXIT_ALLOWED


if __name__ == "__main__":
    sys.exit(main())
