"""The OpenAI Chat Completions API (`POST /v1/chat/completions`, streamed as server-sent events), as GitHub
Copilot CLI reads it (its shell tool `bash`; `dialect_openai_chat.py` is the same API as Qwen Code reads
it) when pointed at an OpenAI-compatible provider (`COPILOT_PROVIDER_BASE_URL`).

A turn is answered with `chat.completion.chunk` events, data-only (no `event:` line), then `data: [DONE]`:
a first chunk with the assistant role, the content or one tool call, and a last chunk with its
`finish_reason` and the usage (Copilot asks for `stream_options.include_usage`). A `{"tool": CMD}` entry is a
call of Copilot's shell tool `bash` with the arguments `{"command": CMD, "description": "run"}`; Copilot
answers it in the next request with a `tool` message carrying the same `tool_call_id`.

Any other request (a model list) gets a harmless answer without consuming a turn.
"""

import itertools
import json

from model_server import Response

_ids = itertools.count(1)


def _chunk(cid, delta, finish=None, usage=None):
    data = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "local-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage is not None:
        data["usage"] = usage
    return (None, data)


def _stream(delta, finish):
    cid = f"chatcmpl-{next(_ids)}"
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    events = [
        _chunk(cid, {"role": "assistant", "content": ""}),
        _chunk(cid, delta),
        _chunk(cid, {}, finish, usage),
        (None, "[DONE]"),
    ]
    return Response(events=events)


def _tool_call(cmd):
    call = {
        "index": 0,
        "id": f"call_{next(_ids)}",
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": cmd, "description": "run"})},
    }
    return _stream({"tool_calls": [call]}, "tool_calls")


def _text(text):
    return _stream({"content": text}, "stop")


def respond(request, next_turn):
    path = request.path.split("?", 1)[0]
    if request.method == "POST" and path.endswith("/chat/completions"):
        entry = next_turn()
        if "tool" in entry:
            return _tool_call(entry["tool"])
        return _text(entry.get("text", "Done."))
    if request.method == "GET" and path.endswith("/models"):
        return Response(json_body={"object": "list", "data": [{"id": "local-model", "object": "model"}]})
    return Response(404, {"error": {"message": f"model_server: no such endpoint {path}"}})
