"""The OpenAI Chat Completions API (`POST /v1/chat/completions`), as Qwen Code reads it.

A turn is answered as the OpenAI SDK reads it: streamed (`"stream": true` in the request) as
`chat.completion.chunk` server-sent events without `event:` lines, the last chunk carrying the
`finish_reason` and the usage; or, for a request that does not ask for a stream, one `chat.completion`.
A `{"tool": CMD}` entry is a call of the agent's shell tool, `run_shell_command` (Qwen Code's, as Gemini
CLI's), with `{"command": CMD}`; the agent answers it in its next request with a `role: "tool"` message
carrying the same `tool_call_id`.

Only a request that offers the model tools is a turn: the agent's side calls (a session title, a check
of who speaks next, a summary: no tools) get a short text without using up a turn, so that the script
counts the conversation's steps alone. `GET .../models` lists one model.
"""

import itertools
import json

from model_server import Response

_ids = itertools.count(1)

_USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def _chunk(cid, delta, finish=None, usage=None):
    chunk = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "local-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage is not None:
        chunk["usage"] = usage
    return (None, chunk)


def _answer(request, message, finish):
    """`message` (an assistant message: `content`, maybe `tool_calls`) as the request asked for it."""
    n = next(_ids)
    cid = f"chatcmpl-{n}"
    body = request.body if isinstance(request.body, dict) else {}
    if not body.get("stream"):
        return Response(
            json_body={
                "id": cid,
                "object": "chat.completion",
                "created": 0,
                "model": "local-model",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": _USAGE,
            }
        )
    events = [_chunk(cid, {"role": "assistant", "content": ""})]
    if message.get("content"):
        events.append(_chunk(cid, {"content": message["content"]}))
    for i, call in enumerate(message.get("tool_calls", [])):
        events.append(_chunk(cid, {"tool_calls": [dict(call, index=i)]}))
    events.append(_chunk(cid, {}, finish, _USAGE))
    return Response(events=events)


def _tool_call(request, cmd):
    n = next(_ids)
    call = {
        "id": f"call_{n}",
        "type": "function",
        "function": {"name": "run_shell_command", "arguments": json.dumps({"command": cmd})},
    }
    return _answer(request, {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls")


def _text(request, text):
    return _answer(request, {"role": "assistant", "content": text}, "stop")


def respond(request, next_turn):
    path = request.path.split("?", 1)[0]
    if request.method == "POST" and path.endswith("/chat/completions"):
        body = request.body if isinstance(request.body, dict) else {}
        if not body.get("tools"):
            return _text(request, "OK")
        entry = next_turn()
        if "tool" in entry:
            return _tool_call(request, entry["tool"])
        return _text(request, entry.get("text", "Done."))
    if request.method == "GET" and path.endswith("/models"):
        return Response(json_body={"object": "list", "data": [{"id": "local-model", "object": "model"}]})
    return Response(404, {"error": {"message": f"model_server: no such endpoint {path}"}})
