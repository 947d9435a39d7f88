"""A connection that hangs live hooks on the daemon, answers its calls with plain Python callables, and
takes the hooks down again (docs/live-hooks.md).

One thread reads the connection; each call runs its callable in a thread of its own, so a slow callable
never holds up another call, nor the answers to `attach` and `detach`. Everything a callable does wrong
(raises, returns what is not an answer, blocks past its timeout) is that hook failing: logged here,
answered as an `error` (or not answered in time), and failed on the daemon's side, where the hook's
`on_failure` decides: with "ignore" it has said nothing, with "refuse" it refuses.
"""

from __future__ import annotations

import heapq
import itertools
import json
import logging
import os
import socket
import struct
import sys
import threading
import time
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

from ._answers import Answer
from ._places import HookdError, open_socket

log = logging.getLogger("hookd")

#: What a callable is given: the agent's hook input as the daemon passes it on (`hook_event_name`,
#: `session_id`, `tool_name`, `tool_input`, ...).
Event = Dict[str, Any]

#: What a callable may return: an [`Answer`] (`hookd.refuse(...)`, ...), a dict of a worker hook's JSON
#: answer members (Claude Code's fields work), text to add to the agent's context, or None (nothing).
AnswerLike = Union[Answer, Mapping[str, Any], str, None]

HookFunction = Callable[[Event], AnswerLike]

#: The longest line read from the daemon: an event may be 64 MiB, and the call around it a little more.
MAX_LINE = 66 * 1024 * 1024

#: Seconds a hook's callable may run when the hook names no timeout: the daemon's default
#: (`[defaults] timeout`, 60). The daemon fails the call at the hook's own timeout in any case.
DEFAULT_TIMEOUT = 60.0

#: Callables running at once on one connection, those past their timeout included (a Python thread
#: cannot be stopped): a call beyond it is answered as failed at once rather than queued behind them.
MAX_RUNNING = 64

#: Seconds a write to the daemon may wait for room before the connection is taken as broken.
SEND_TIMEOUT = 30.0

#: How `run_forever` ended when it returned rather than raised.
STOPPED = "stopped"


class HookRefused(HookdError):
    """The daemon refused to hang a hook: it could never run there (a moment the named agents never
    fire, an unknown moment, a matcher on a moment without a tool, a session that has ended), or the
    hook is not valid."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__("hook %r was refused: %s" % (name, reason))
        self.name = name
        self.reason = reason


class ConnectionLost(HookdError):
    """The daemon closed the connection, or it broke: every hook it held is down."""


class LiveHook:
    """A hook hung on the daemon by this connection. Calling it calls its function; `detach()` takes it
    down; used as a context manager, it is taken down when the block ends."""

    def __init__(
        self,
        connection: "Connection",
        name: str,
        moment: str,
        function: HookFunction,
        timeout: Optional[float],
        on_failure: Optional[str],
    ) -> None:
        self.name = name
        self.moment = moment
        self.function = function
        self.timeout = timeout
        #: "ignore" or "refuse" as given; `None`: the settings' `[defaults] on_failure`, which the daemon
        #: applies (a failure is always the daemon's to decide, so both read it alike).
        self.on_failure = on_failure
        #: Calls answered so far (the callable returned in time, whatever it said).
        self.calls = 0
        #: Why the hook is down, once it is (`detach()`, the daemon's `detached`, a closed connection).
        self.detached_reason: Optional[str] = None
        self._connection = connection
        self.__doc__ = function.__doc__
        self.__wrapped__ = function

    @property
    def attached(self) -> bool:
        """Whether the hook is hung on the daemon now."""
        return self.detached_reason is None

    def detach(self) -> None:
        """Takes the hook down (nothing when it already is)."""
        if self.attached:
            self._connection.detach(self)

    def __call__(self, event: Event) -> AnswerLike:
        return self.function(event)

    def __enter__(self) -> "LiveHook":
        return self

    def __exit__(self, *exc: object) -> None:
        if self._connection.open:
            self.detach()

    def __repr__(self) -> str:
        state = "attached" if self.attached else "detached: %s" % self.detached_reason
        return "<LiveHook %s on %s, %s>" % (self.name, self.moment, state)


class _Waiter:
    """One request's response, waited for by the thread that sent it."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.response: Optional[Dict[str, Any]] = None


class Connection:
    """One connection to the daemon, holding the hooks it hung. Made by [`connect`]."""

    def __init__(
        self,
        sock: socket.socket,
        client: str,
        timeout: float,
        on_detached: Optional[Callable[[List[str], str], None]] = None,
    ) -> None:
        self.client = client
        #: Seconds to wait for the daemon's answer to `attach` or `detach`.
        self.timeout = timeout
        self.on_detached = on_detached
        self._sock = sock
        # A daemon that stops reading does not hold a writer (and every answer behind it) forever.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", int(SEND_TIMEOUT), 0))
        self._reader = sock.makefile("rb")
        self._write_lock = threading.Lock()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._waiters: Dict[int, _Waiter] = {}
        # Requests sent without waiting for their answers (a detach after an attach went wrong).
        self._unwaited: Set[int] = set()
        self._hooks: Dict[str, LiveHook] = {}
        self._running = 0
        self._closed = threading.Event()
        self._closed_reason = ""
        self._stop_asked = threading.Event()
        # Calls whose callable is still running, by the daemon's call number, with their deadline: the
        # watchdog says when one is past it, and its late answer is dropped.
        self._calls: Dict[Any, Tuple[float, LiveHook]] = {}
        self._deadlines: List[Tuple[float, int, Any]] = []
        self._deadline_seq = itertools.count()
        self._watchdog_wake = threading.Condition(self._lock)
        self._thread = threading.Thread(target=self._read_loop, name="hookd-reader", daemon=True)
        self._thread.start()
        self._watchdog = threading.Thread(target=self._watch, name="hookd-watchdog", daemon=True)
        self._watchdog.start()

    # --- hanging hooks --------------------------------------------------------------------------

    def hook(
        self,
        moment: str,
        *,
        matcher: Optional[str] = None,
        agents: Union[str, Sequence[str], None] = None,
        session: Optional[str] = None,
        timeout: Optional[float] = None,
        on_failure: Optional[str] = None,
        name: Optional[str] = None,
    ) -> Callable[[HookFunction], LiveHook]:
        """A decorator that hangs the function as a hook on `moment`, at once: once it returns, the
        daemon calls it for every fire it fits. Raises [`HookRefused`] when the daemon will not hang it.

        - `matcher`: which tools (or sources, ...) it runs for, as in the settings file (`"Bash"`,
          `"Edit|Write"`); none: every event of the moment.
        - `agents`: the agents it runs for (`["claude-code"]`); none: every agent.
        - `session`: one session (`session_id`) it runs for; it is taken down when that session ends.
        - `timeout`: seconds the daemon waits for its answer; none: the settings' default.
        - `on_failure`: `"ignore"` (a failure says nothing) or `"refuse"` (a failure refuses): what the
          call means when the callable raises, blocks past the timeout, or this client is gone; none:
          the settings' `[defaults] on_failure` ("ignore" unless the file says otherwise). Sent only
          when given; the daemon decides what a failure means, so both read it alike.
        - `name`: the hook's name in answers and the journal; none: the function's name.
        """

        def hang(function: HookFunction) -> LiveHook:
            return self.attach(
                function,
                moment,
                matcher=matcher,
                agents=agents,
                session=session,
                timeout=timeout,
                on_failure=on_failure,
                name=name,
            )

        return hang

    def attach(
        self,
        function: HookFunction,
        moment: str,
        *,
        matcher: Optional[str] = None,
        agents: Union[str, Sequence[str], None] = None,
        session: Optional[str] = None,
        timeout: Optional[float] = None,
        on_failure: Optional[str] = None,
        name: Optional[str] = None,
    ) -> LiveHook:
        """[`hook`] without the decorator: hangs `function` and returns its [`LiveHook`]."""
        hook_name = name if name is not None else getattr(function, "__name__", "")
        if not isinstance(hook_name, str) or not hook_name or hook_name == "<lambda>":
            raise ValueError("a live hook needs a name: pass name=... (a lambda has none)")
        if not isinstance(moment, str) or not moment:
            raise ValueError("the moment must be a non-empty string such as \"PreToolUse\"")
        if on_failure is not None and on_failure not in ("ignore", "refuse"):
            raise ValueError('on_failure must be "ignore" or "refuse", not %r' % (on_failure,))
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0
        ):
            raise ValueError("timeout must be a positive number of seconds, not %r" % (timeout,))
        spec: Dict[str, Any] = {"name": hook_name, "moment": moment}
        if matcher is not None:
            spec["matcher"] = matcher
        if agents is not None:
            # A lone name is a list of one, never a list of its letters.
            spec["agents"] = [agents] if isinstance(agents, str) else list(agents)
        if session is not None:
            spec["session"] = session
        if timeout is not None:
            spec["timeout"] = timeout
        if on_failure is not None:
            spec["on_failure"] = on_failure
        live = LiveHook(self, hook_name, moment, function, timeout, on_failure)
        with self._lock:
            if hook_name in self._hooks:
                raise HookRefused(hook_name, "a hook of that name is already hung on this connection")
            # Known before the answer comes: the daemon may call it the moment it has hung it.
            self._hooks[hook_name] = live
        try:
            response = self._request({"op": "attach", "client": self.client, "hooks": [spec]})
        except BaseException:
            self._forget([hook_name], "not hung: the attach failed")
            # Its answer may yet come, and hang it: a hook this client no longer answers would say
            # nothing to every call, quietly. Taken down, unasked.
            self._detach_unwaited(hook_name)
            raise
        for refused in response.get("refused") or []:
            if isinstance(refused, dict) and refused.get("name") == hook_name:
                reason = str(refused.get("reason") or "refused by the daemon")
                self._forget([hook_name], "refused: %s" % reason)
                raise HookRefused(hook_name, reason)
        if hook_name not in (response.get("attached") or []):
            self._forget([hook_name], "not hung: the daemon did not say it was")
            raise HookdError(
                "the daemon neither hung nor refused hook %r: %s" % (hook_name, response)
            )
        log.debug("hook %s hung on %s", hook_name, moment)
        return live

    def detach(self, *hooks: Union[LiveHook, str]) -> List[str]:
        """Takes down the hooks named (by [`LiveHook`] or name), or, with none named, every hook of this
        connection. Returns the names the daemon took down. From the moment this is called, calls for
        them are answered as ever until the daemon has taken them down."""
        names = [h.name if isinstance(h, LiveHook) else h for h in hooks]
        with self._lock:
            targets = names if names else list(self._hooks)
        request: Dict[str, Any] = {"op": "detach"}
        if names:
            request["hooks"] = names
        # Until the daemon has taken them down it may still call them, and they answer as ever.
        response = self._request(request)
        detached = response.get("detached")
        gone = [str(n) for n in detached] if isinstance(detached, list) else targets
        self._forget(set(gone) | set(targets), "detached by this client")
        return gone

    @property
    def hooks(self) -> List[LiveHook]:
        """The hooks this connection holds hung now."""
        with self._lock:
            return list(self._hooks.values())

    @property
    def open(self) -> bool:
        """Whether the connection is still open."""
        return not self._closed.is_set()

    # --- running ----------------------------------------------------------------------------------

    def run_forever(self) -> str:
        """Answers the daemon's calls until the client is stopped: by [`stop`], by a callable that
        raised KeyboardInterrupt, or by a person's Ctrl-C, which takes this client's hooks down and
        returns [`STOPPED`]. Raises [`ConnectionLost`] when the daemon closes the connection."""
        try:
            log.debug("answering calls until stopped (Ctrl-C)")
            while not self._stop_asked.is_set():
                if self._closed.wait(0.2):
                    if self._stop_asked.is_set():
                        break
                    raise ConnectionLost(self._closed_reason)
        except KeyboardInterrupt:
            log.info("interrupted: taking this client's hooks down")
            self._stop_asked.set()
        self.close()
        return STOPPED

    def stop(self) -> None:
        """Takes this client's hooks down and ends [`run_forever`] (from any thread, a callable too)."""
        self._stop_asked.set()
        self.close()

    def close(self) -> None:
        """Closes the connection: the daemon takes down every hook it hung, and a call still waiting
        for an answer fails at once by its hook's `on_failure`."""
        self._lost("closed by this client")
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)
            if not self._thread.is_alive():
                self._reader.close()

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- requests ---------------------------------------------------------------------------------

    def _request(self, request: Dict[str, Any]) -> Dict[str, Any]:
        """Sends a request and waits for its response; an error response raises HookdError."""
        waiter = _Waiter()
        with self._lock:
            if self._closed.is_set():
                raise ConnectionLost(self._closed_reason)
            request_id = next(self._ids)
            self._waiters[request_id] = waiter
        try:
            self._send(dict(request, id=request_id))
            if not waiter.done.wait(self.timeout):
                raise HookdError(
                    "the daemon did not answer %s within %gs" % (request["op"], self.timeout)
                )
        finally:
            with self._lock:
                self._waiters.pop(request_id, None)
        response = waiter.response
        if response is None:
            raise ConnectionLost(self._closed_reason)
        if response.get("ok") is not True:
            error = response.get("error")
            if isinstance(error, dict):
                raise HookdError(
                    "hookd answered %s: %s" % (error.get("kind"), error.get("message"))
                )
            raise HookdError("hookd answered: %s" % (response,))
        return response

    def _detach_unwaited(self, name: str) -> None:
        with self._lock:
            if self._closed.is_set():
                return
            request_id = next(self._ids)
            self._unwaited.add(request_id)
        try:
            self._send({"op": "detach", "id": request_id, "hooks": [name]})
        except ConnectionLost:
            pass

    def _send(self, message: Mapping[str, Any]) -> None:
        line = json.dumps(message, separators=(",", ":"), allow_nan=False).encode("utf-8") + b"\n"
        with self._write_lock:
            try:
                self._sock.sendall(line)
            except OSError as e:
                self._lost("cannot write to the daemon: %s" % e)
                raise ConnectionLost(self._closed_reason) from None

    # --- what the daemon sends --------------------------------------------------------------------

    def _read_loop(self) -> None:
        reason = "the daemon closed the connection"
        try:
            while True:
                line = self._reader.readline(MAX_LINE)
                if not line:
                    break
                if not line.endswith(b"\n"):
                    reason = "the daemon sent a line longer than %d bytes" % MAX_LINE
                    break
                self._take(line)
        except ConnectionLost as e:
            reason = str(e)
        except (OSError, ValueError) as e:
            if not self._closed.is_set():
                reason = "cannot read from the daemon: %s" % e
        except BaseException as e:
            # Whatever else goes wrong here ends the connection, never the reading alone: a connection
            # nobody reads would hold its hooks up, each call failing only at its timeout.
            log.exception("the client failed reading the daemon")
            reason = "the client failed reading the daemon: %r" % e
        self._lost(reason)

    def _take(self, line: bytes) -> None:
        """One line from the daemon. What cannot be read is logged and passed over: the connection
        goes on, and a call the daemon garbled is failed on its side at its timeout."""
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            # RecursionError: nested deeper than Python's JSON reader goes.
            log.warning("the daemon sent a line that is not JSON, passed over: %r", line[:200])
            return
        if not isinstance(message, dict):
            log.warning("the daemon sent a line that is not an object, passed over: %r", line[:200])
            return
        op = message.get("op")
        if op == "call":
            self._call(message)
        elif op == "detached":
            names = message.get("hooks")
            reason = str(message.get("reason") or "detached by the daemon")
            if isinstance(names, list):
                gone = self._forget([n for n in names if isinstance(n, str)], reason)
                log.info("the daemon took down %s: %s", ", ".join(gone) or "no hook", reason)
                callback = self.on_detached
                if callback is not None and gone:
                    # On a thread of its own: a callback that hangs a hook again waits for an answer
                    # only this thread can read.
                    threading.Thread(
                        target=_told, args=(callback, gone, reason), name="hookd-detached", daemon=True
                    ).start()
        elif op is None and "id" in message:
            request_id = message["id"]
            with self._lock:
                known = isinstance(request_id, int) and not isinstance(request_id, bool)
                waiter = self._waiters.get(request_id) if known else None
                quiet = known and request_id in self._unwaited
                if quiet:
                    self._unwaited.discard(request_id)
            if quiet:
                return
            if waiter is None:
                log.warning("the daemon answered a request this client did not make: %r", line[:200])
                return
            waiter.response = message
            waiter.done.set()
        elif op is None and message.get("ok") is False:
            log.warning("the daemon reported an error: %s", message.get("error"))
        else:
            log.warning("the daemon sent what this client does not know, passed over: %r", line[:200])

    def _call(self, message: Dict[str, Any]) -> None:
        call = message.get("call")
        if call is None or isinstance(call, (dict, list)):
            log.warning("the daemon sent a call without a call number, passed over: %.200s", message)
            return
        name = message.get("hook")
        event = message.get("event")
        with self._lock:
            hook = self._hooks.get(name) if isinstance(name, str) else None
            running = self._running
        if hook is None:
            # A hook this connection never hung, or has just taken down.
            self._answer(call, {"error": "this client holds no hook named %r" % (name,)})
            return
        if not isinstance(event, dict):
            self._answer(call, {"error": "the call carried no event object"})
            return
        if running >= MAX_RUNNING:
            log.warning(
                "hook %s: %d callables of this client are still running; call %s failed at once",
                hook.name, running, call,
            )
            self._answer(call, _failure("%d callables still running" % running))
            return
        timeout = message.get("timeout")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            timeout = hook.timeout if hook.timeout is not None else DEFAULT_TIMEOUT
        deadline = time.monotonic() + float(timeout)
        with self._lock:
            self._running += 1
            self._calls[call] = (deadline, hook)
            heapq.heappush(self._deadlines, (deadline, next(self._deadline_seq), call))
            self._watchdog_wake.notify()
        try:
            threading.Thread(
                target=self._run_call,
                args=(hook, call, event, float(timeout)),
                name="hookd-call-%s" % hook.name,
                daemon=True,
            ).start()
        except RuntimeError as e:
            # No thread to be had (the process is out of them): this call fails, the next may not.
            with self._lock:
                self._running -= 1
                self._calls.pop(call, None)
            log.error("hook %s: cannot start a thread for call %s: %s", hook.name, call, e)
            self._answer(call, _failure("could not be run: %s" % e))

    def _run_call(self, hook: LiveHook, call: Any, event: Event, timeout: float) -> None:
        try:
            members = self._members(hook, call, event)
        except BaseException:
            # KeyboardInterrupt or SystemExit: a person (or the flow) stops this client. Closing the
            # connection fails the call at once on the daemon's side, by its on_failure.
            log.info("hook %s was interrupted: taking this client's hooks down", hook.name)
            with self._lock:
                self._running -= 1
                self._calls.pop(call, None)
            self.stop()
            return
        with self._lock:
            self._running -= 1
            late = call not in self._calls
            self._calls.pop(call, None)
        if late:
            log.warning(
                "hook %s answered call %s after its %gs: the daemon had already taken it as "
                "failed (by its on_failure, %s); the answer is dropped", hook.name, call, timeout,
                _on_failure(hook),
            )
            return
        if members.get("error") is None:
            with self._lock:
                hook.calls += 1
        try:
            self._answer(call, members)
        except ConnectionLost:
            pass

    def _members(self, hook: LiveHook, call: Any, event: Event) -> Dict[str, Any]:
        """What the hook's callable says to `event`, as an answer's members; a failure is logged and
        answered as one."""
        try:
            said = hook.function(event)
        except Exception as e:
            log.exception(
                "hook %s raised on call %s: it failed (by its on_failure, %s)", hook.name, call,
                _on_failure(hook),
            )
            return _failure("raised %s: %s" % (type(e).__name__, e))
        try:
            members = _answer_members(said)
        except TypeError as e:
            log.error("hook %s answered call %s with what is not an answer: %s", hook.name, call, e)
            return _failure(str(e))
        try:
            json.dumps(members, allow_nan=False)
        except (TypeError, ValueError, RecursionError) as e:
            log.error("hook %s answered call %s with what cannot be sent: %s", hook.name, call, e)
            failed = _failure("answered what cannot be sent: %s" % e)
            # As the daemon reads a worker's answer: a refusal or an ask in it stands whatever is wrong
            # with the rest (nothing of the call runs then); an allow or a rewrite beside what cannot be
            # sent does not.
            for word in ("refused", "ask"):
                if word in members and _sendable(members[word]):
                    failed[word] = members[word]
            return failed
        return members

    def _answer(self, call: Any, members: Mapping[str, Any]) -> None:
        answer: Dict[str, Any] = {"op": "answer", "call": call}
        for key, value in members.items():
            if key not in ("op", "call"):
                answer[key] = value
        self._send(answer)

    def _watch(self) -> None:
        """Says when a callable runs past its timeout: the daemon fails the call then, whatever the
        callable answers later, and its answer is dropped (no answer out of step). The thread itself
        cannot be stopped; it counts against MAX_RUNNING until it returns."""
        with self._lock:
            while not self._closed.is_set():
                now = time.monotonic()
                while self._deadlines and self._deadlines[0][0] <= now:
                    _deadline, _seq, call = heapq.heappop(self._deadlines)
                    entry = self._calls.pop(call, None)
                    if entry is not None:
                        log.warning(
                            "hook %s did not answer call %s within its %gs: it failed (by its "
                            "on_failure, %s)", entry[1].name, call,
                            entry[1].timeout or DEFAULT_TIMEOUT, _on_failure(entry[1]),
                        )
                wait = self._deadlines[0][0] - now if self._deadlines else None
                self._watchdog_wake.wait(wait)

    def _forget(self, names: Iterable[str], reason: str) -> List[str]:
        """Marks these hooks down; returns those that were up."""
        gone: List[str] = []
        with self._lock:
            for name in names:
                hook = self._hooks.pop(name, None)
                if hook is not None:
                    hook.detached_reason = reason
                    gone.append(name)
        return gone

    def _lost(self, reason: str) -> None:
        """The connection is over: every hook is down and every waiting request fails."""
        with self._lock:
            if self._closed.is_set():
                return
            self._closed_reason = reason
            self._closed.set()
            waiters = list(self._waiters.values())
            self._watchdog_wake.notify()
        self._forget(list(self._hooks), reason)
        for waiter in waiters:
            waiter.done.set()
        if not self._stop_asked.is_set():
            log.info("connection to hookd over: %s", reason)


def _failure(what: str) -> Dict[str, Any]:
    """A failed call, answered as one: an `error`, which the daemon takes as the hook's failure and
    decides by its on_failure (the settings' default when the hook set none): with "ignore" it has said
    nothing, with "refuse" it refuses, naming the error. The client says no refusal of its own: it may
    not know the on_failure the daemon applies."""
    return {"error": "the client's callable %s" % what}


def _on_failure(hook: LiveHook) -> str:
    """The hook's on_failure as a log line says it."""
    return hook.on_failure or "the settings' default"


def _sendable(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


def _told(callback: Callable[[List[str], str], None], names: List[str], reason: str) -> None:
    try:
        callback(names, reason)
    except Exception:
        log.exception("on_detached raised")


def _answer_members(said: AnswerLike) -> Dict[str, Any]:
    if said is None:
        return {}
    if isinstance(said, Answer):
        return said.members()
    if isinstance(said, str):
        # As a command hook's plain stdout: text for the agent's context.
        return {"adds": said} if said.strip() else {}
    if isinstance(said, Mapping):
        return {str(k): v for k, v in said.items()}
    raise TypeError(
        "a hook returns an answer (hookd.refuse(...), hookd.allow(...), ...), a dict, a str or None, "
        "not %s" % type(said).__name__
    )


def connect(
    path: Optional[str] = None,
    *,
    client: Optional[str] = None,
    timeout: float = 10.0,
    on_detached: Optional[Callable[[List[str], str], None]] = None,
) -> Connection:
    """Connects to the user's daemon: at `path`, else where hookd's clients look (`$HOOKD_SOCKET`
    alone when set; else `$XDG_RUNTIME_DIR/hookd/hookd.sock`, `/run/user/$UID/hookd/hookd.sock`,
    `/tmp/hookd-$UID/hookd.sock`).

    - `client`: this program's name, in `status` and the journal; none: the script's name.
    - `timeout`: seconds to wait for the daemon's answer to an attach or a detach.
    - `on_detached(names, reason)`: called (on a thread of its own) when the daemon takes hooks down
      itself, as when a hook's session ends.

    Use it as a context manager: leaving the block closes the connection, and the daemon takes every
    hook it hung down."""
    if not timeout > 0:
        raise ValueError("timeout must be a positive number of seconds")
    name = client or os.path.basename(sys.argv[0] if sys.argv and sys.argv[0] else "") or "python"
    return Connection(open_socket(path), name, timeout, on_detached)
