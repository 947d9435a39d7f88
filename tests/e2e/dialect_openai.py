"""The OpenAI Responses API (`POST /v1/responses`, streamed as server-sent events), as Codex CLI reads it.

A turn is answered with the events Codex waits for, each with an `event:` line naming its `type`:
`response.created`, then per output item `response.output_item.added` (and, for text,
`response.output_text.delta`), `response.output_item.done`, and last `response.completed` (without it
Codex treats the stream as broken and retries). A `{"tool": CMD}` entry is a `function_call` of Codex's
shell tool `exec_command` whose `arguments` is a JSON string `{"cmd": CMD}`; Codex answers it in the next
request with a `function_call_output` item carrying the same `call_id`. `{"tool": CMD, "args": {...}}` adds
those arguments to the call (`sandbox_permissions`, `justification`: a call that asks for approval).
`{"patch": TEXT}` is a call of Codex's file-editing tool `apply_patch` with the patch TEXT, in the form
the request's tool list declares it: a freeform `custom` tool (a `custom_tool_call` whose `input` is the
patch) or a function (`arguments` `{"input": TEXT}`).

Any other request (Codex asks nothing else of a custom provider in `codex exec`, but a model list or
similar side call must not use up a turn) gets a harmless answer without consuming a turn.
"""

import itertools
import json

from model_server import Response

_ids = itertools.count(1)


def _usage():
    return {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }


def _response(rid, status, output):
    return {
        "id": rid,
        "object": "response",
        "created_at": 0,
        "status": status,
        "model": "local-model",
        "output": output,
        "usage": _usage() if status == "completed" else None,
    }


def _ev(kind, **fields):
    data = {"type": kind}
    data.update(fields)
    return (kind, data)


def _stream(item, text=None):
    """The events of one response holding one output item (`item` as complete, `text` streamed first)."""
    n = next(_ids)
    rid = f"resp_{n}"
    events = [_ev("response.created", response=_response(rid, "in_progress", []))]
    started = dict(item)
    started["status"] = "in_progress"
    if item["type"] == "message":
        started["content"] = []
    elif item["type"] == "function_call":
        started["arguments"] = ""
    elif item["type"] == "custom_tool_call":
        started["input"] = ""
    events.append(_ev("response.output_item.added", output_index=0, item=started))
    if text is not None:
        events.append(
            _ev(
                "response.content_part.added",
                item_id=item["id"],
                output_index=0,
                content_index=0,
                part={"type": "output_text", "text": "", "annotations": []},
            )
        )
        events.append(
            _ev(
                "response.output_text.delta",
                item_id=item["id"],
                output_index=0,
                content_index=0,
                delta=text,
            )
        )
        events.append(
            _ev(
                "response.output_text.done",
                item_id=item["id"],
                output_index=0,
                content_index=0,
                text=text,
            )
        )
    elif item["type"] == "function_call":
        events.append(
            _ev(
                "response.function_call_arguments.delta",
                item_id=item["id"],
                output_index=0,
                delta=item["arguments"],
            )
        )
        events.append(
            _ev(
                "response.function_call_arguments.done",
                item_id=item["id"],
                output_index=0,
                arguments=item["arguments"],
            )
        )
    events.append(_ev("response.output_item.done", output_index=0, item=item))
    events.append(_ev("response.completed", response=_response(rid, "completed", [item])))
    return Response(events=events)


def _tool_call(cmd, extra=None):
    n = next(_ids)
    arguments = {"cmd": cmd}
    arguments.update(extra or {})
    item = {
        "type": "function_call",
        "id": f"fc_{n}",
        "call_id": f"call_{n}",
        "name": "exec_command",
        "arguments": json.dumps(arguments),
        "status": "completed",
    }
    return _stream(item)


def _patch_call(request, patch):
    """A call of `apply_patch` with `patch`, as the request's tool list declares the tool."""
    n = next(_ids)
    body = request.body if isinstance(request.body, dict) else {}
    tools = body.get("tools") or []
    declared = next((t for t in tools if t.get("name") == "apply_patch"), {})
    if declared.get("type") == "function":
        item = {
            "type": "function_call",
            "id": f"fc_{n}",
            "call_id": f"call_{n}",
            "name": "apply_patch",
            "arguments": json.dumps({"input": patch}),
            "status": "completed",
        }
    else:
        item = {
            "type": "custom_tool_call",
            "id": f"ctc_{n}",
            "call_id": f"call_{n}",
            "name": "apply_patch",
            "input": patch,
            "status": "completed",
        }
    return _stream(item)


def _text(text):
    n = next(_ids)
    item = {
        "type": "message",
        "id": f"msg_{n}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    return _stream(item, text)


def respond(request, next_turn):
    path = request.path.split("?", 1)[0]
    if request.method == "POST" and path.endswith("/responses"):
        entry = next_turn()
        if "tool" in entry:
            return _tool_call(entry["tool"], entry.get("args"))
        if "patch" in entry:
            return _patch_call(request, entry["patch"])
        return _text(entry.get("text", "Done."))
    if request.method == "GET" and path.endswith("/models"):
        return Response(json_body={"object": "list", "data": [], "models": []})
    return Response(404, {"error": {"message": f"model_server: no such endpoint {path}"}})
