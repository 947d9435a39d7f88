"""hookd's live hooks in Python: a program hangs hooks on the running daemon, answers them with plain
callables, and takes them down while it runs (docs/live-hooks.md).

    import hookd

    with hookd.connect() as agent:
        @agent.hook("PreToolUse", matcher="Bash")
        def no_push(event):
            if "git push" in event["tool_input"]["command"]:
                return hookd.refuse("pushes wait for review")
        agent.run_forever()

Standard library only.
"""

from ._answers import (
    Answer,
    adds,
    allow,
    ask,
    nothing,
    refuse,
    rewrite_input,
    rewrite_output,
)
from ._client import (
    DEFAULT_TIMEOUT,
    MAX_RUNNING,
    STOPPED,
    AnswerLike,
    Connection,
    ConnectionLost,
    Event,
    HookFunction,
    HookRefused,
    LiveHook,
    connect,
)
from ._places import HookdError, socket_places

__all__ = [
    "Answer",
    "AnswerLike",
    "Connection",
    "ConnectionLost",
    "DEFAULT_TIMEOUT",
    "Event",
    "HookFunction",
    "HookRefused",
    "HookdError",
    "LiveHook",
    "MAX_RUNNING",
    "STOPPED",
    "adds",
    "allow",
    "ask",
    "connect",
    "nothing",
    "refuse",
    "rewrite_input",
    "rewrite_output",
    "socket_places",
]
