"""The Anthropic Messages API as Claude Code 2.1.332 calls it (`POST /v1/messages?beta=true`).

A real conversation turn is a request that offers tools (Claude Code always offers its tool list,
`Bash` among them, when it asks for the next step); it is answered from the script, streamed as
server-sent events when the request asks for a stream:

    message_start, content_block_start, content_block_delta (text_delta, or input_json_delta for a
    tool_use block), content_block_stop, message_delta (stop_reason end_turn / tool_use, usage),
    message_stop

`{"tool": CMD}` becomes a `tool_use` block calling `Bash` with `{"command": CMD, "description": ...}`
(its id is fresh and unique; the agent sends it back in the next request as the `tool_use_id` of a
`tool_result` block); `{"call": {"name": N, "input": {...}}}` a `tool_use` block calling any tool N
(`Read`, `Write`, `Edit`, ...) with that input; `{"text": T}` a text block and `end_turn`.

Side calls that are not turns (no tools offered: a title or summary request, a one-token probe,
`count_tokens`) are answered with a short text and do not consume a turn. Claude Code 2.1.332 in `-p`
mode with CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 was not seen to send any: every request recorded
was a streaming turn with its 12 tools, `max_tokens` 128000.
"""

import itertools
import json

from model_server import Response

MODEL = "claude-e2e"
_ids = itertools.count(1)


def _usage(output_tokens=1):
    return {
        "input_tokens": 10,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _message(model, content, stop_reason):
    return {
        "id": f"msg_e2e_{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": _usage(5),
    }


def _events(model, content, stop_reason):
    """The SSE stream for a message whose blocks are `content`."""
    start = _message(model, [], None)
    start["usage"] = _usage(1)
    events = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(content):
        if block["type"] == "text":
            events.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
            )
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            events.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {
                            "type": "tool_use",
                            "id": block["id"],
                            "name": block["name"],
                            "input": {},
                        },
                    },
                )
            )
            delta = {
                "type": "input_json_delta",
                "partial_json": json.dumps(block["input"]),
            }
        events.append(
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        )
        events.append(
            ("content_block_stop", {"type": "content_block_stop", "index": index})
        )
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _answer(body, content, stop_reason):
    model = body.get("model") or MODEL
    if body.get("stream"):
        return Response(events=_events(model, content, stop_reason))
    return Response(json_body=_message(model, content, stop_reason))


def is_turn(request):
    """A real step of the conversation: a Messages request that offers tools."""
    body = request.body if isinstance(request.body, dict) else {}
    if "count_tokens" in request.path or not request.path.startswith("/v1/messages"):
        return False
    return bool(body.get("tools")) and (body.get("max_tokens") or 0) > 1


def respond(request, next_turn):
    body = request.body if isinstance(request.body, dict) else {}
    if "count_tokens" in request.path:
        return Response(json_body={"input_tokens": 10})
    if not request.path.startswith("/v1/messages"):
        return Response(404, {"type": "error", "error": {"type": "not_found_error", "message": request.path}})
    if not is_turn(request):
        return _answer(body, [{"type": "text", "text": "E2E side answer."}], "end_turn")
    entry = next_turn()
    if "tool" in entry:
        block = {
            "type": "tool_use",
            "id": f"toolu_e2e_{next(_ids):06d}",
            "name": "Bash",
            "input": {"command": entry["tool"], "description": "Run the e2e test command"},
        }
        return _answer(body, [block], "tool_use")
    if "call" in entry:
        block = {
            "type": "tool_use",
            "id": f"toolu_e2e_{next(_ids):06d}",
            "name": entry["call"]["name"],
            "input": entry["call"]["input"],
        }
        return _answer(body, [block], "tool_use")
    return _answer(body, [{"type": "text", "text": entry.get("text", "")}], "end_turn")
