"""What a live hook may answer: the answers a worker hook gives (docs/settings.md, "How a hook's answer
is read"), made by small functions so that a flow says `return hookd.refuse("why")` rather than spelling
the daemon's members."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

# `output` may be rewritten to any JSON value, `null` included, so "not rewritten" needs a value of its
# own.
_UNSET: Any = object()


@dataclass(frozen=True)
class Answer:
    """One hook's answer to one call. Every part is optional; `Answer()` says nothing.

    - `refused`: the call must not run, with this reason (`True`: no reason of its own; the daemon then
      says `hook NAME refused`). A refusal wins over an ask and an allow.
    - `ask`: a person must approve the call (with this reason, or `True`).
    - `allow`: the call may run without the agent's own permission prompt (with this reason, or `True`).
    - `adds`: text for the agent's context, one entry per piece.
    - `input`: fields of the tool input to replace (a field set to None is removed), at PreToolUse and
      PermissionRequest.
    - `output`: what the model sees of the tool's output instead, at PostToolUse.
    """

    refused: Union[str, bool, None] = None
    ask: Union[str, bool, None] = None
    allow: Union[str, bool, None] = None
    adds: Tuple[str, ...] = ()
    input: Optional[Mapping[str, Any]] = None
    output: Any = field(default=_UNSET)

    def members(self) -> Dict[str, Any]:
        """The answer as the members of an `answer` line (a worker hook's JSON answer)."""
        members: Dict[str, Any] = {}
        for name, value in (("refused", self.refused), ("ask", self.ask), ("allow", self.allow)):
            if value is not None and value is not False:
                members[name] = value
        if self.adds:
            members["adds"] = "\n".join(self.adds)
        if self.input is not None:
            members["input"] = dict(self.input)
        if self.output is not _UNSET:
            members["output"] = self.output
        return members


def _texts(adds: Union[str, Sequence[str], None]) -> Tuple[str, ...]:
    if adds is None:
        return ()
    if isinstance(adds, str):
        return (adds,)
    return tuple(adds)


def nothing() -> Answer:
    """Says nothing: the same as returning None."""
    return Answer()


def refuse(
    reason: Optional[str] = None,
    *,
    adds: Union[str, Sequence[str], None] = None,
    output: Any = _UNSET,
) -> Answer:
    """Refuses the call, telling the agent `reason`. At PostToolUse the tool has already run: a
    refusal tells the model, and `output` may still redact what it sees."""
    return Answer(
        refused=reason if reason else True, adds=_texts(adds), output=output
    )


def ask(
    reason: Optional[str] = None,
    *,
    adds: Union[str, Sequence[str], None] = None,
    input: Optional[Mapping[str, Any]] = None,
) -> Answer:
    """Holds the call for a person to approve; an agent that cannot ask holds it back."""
    return Answer(ask=reason if reason else True, adds=_texts(adds), input=input)


def allow(
    reason: Optional[str] = None,
    *,
    adds: Union[str, Sequence[str], None] = None,
    input: Optional[Mapping[str, Any]] = None,
) -> Answer:
    """Lets the call run without the agent's own permission prompt (unless another hook refuses or
    asks). With `input`, the allow stands for the call as rewritten."""
    return Answer(allow=reason if reason else True, adds=_texts(adds), input=input)


def adds(text: str, *more: str) -> Answer:
    """Adds text to the agent's context."""
    return Answer(adds=(text,) + more)


def rewrite_input(
    fields: Mapping[str, Any], *, adds: Union[str, Sequence[str], None] = None
) -> Answer:
    """Runs the call with these fields of its input replaced (None removes one), at PreToolUse and
    PermissionRequest."""
    return Answer(input=fields, adds=_texts(adds))


def rewrite_output(value: Any, *, adds: Union[str, Sequence[str], None] = None) -> Answer:
    """Shows the model `value` instead of the tool's output, at PostToolUse (fields of an object output
    replaced when `value` is an object too; text is put back in the tool's own shape)."""
    return Answer(output=value, adds=_texts(adds))
