"""Gemini CLI's model API (the Gemini API, v1beta), as Gemini CLI 0.61.0 calls it.

- `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` asks for the next step of the conversation:
  a turn. The answer is server-sent events, each a `data:` line holding a GenerateContentResponse chunk.
  A tool call is one chunk with a `functionCall` part naming `run_shell_command` (a turn `{"tool": CMD}`),
  or any tool (a turn `{"call": {"name": N, "args": {...}}}`); a final answer is a
  chunk with a `text` part; the last chunk carries `finishReason: "STOP"` and `usageMetadata`.
- `POST /v1beta/models/<model>:generateContent` (not streamed) is a side call: the model router asks
  how complex the request is (a JSON object with `complexity_reasoning` and `complexity_score`), and
  other helpers (next-speaker check, loop detection) ask for small JSON objects too. These are answered
  from the JSON schema they send, and never consume a turn.
- `:countTokens` and anything else are answered harmlessly, without a turn.
"""

import json

from model_server import Response

USAGE = {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110}

# Answers for the side calls' fields by name; any other field gets a neutral value of its type.
KNOWN_FIELDS = {
    "complexity_reasoning": "A simple, scripted request.",
    "complexity_score": 10,
    "next_speaker": "user",
    "reasoning": "The model has finished its turn.",
}


def _model(path):
    """The model name in `/v1beta/models/<model>:<method>`."""
    rest = path.split("/models/", 1)[-1]
    return rest.split(":", 1)[0]


def _fill(schema, name=None):
    """A value that fits a JSON schema (as much of one as the side calls use)."""
    if not isinstance(schema, dict):
        return None
    if name in KNOWN_FIELDS:
        return KNOWN_FIELDS[name]
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    kind = (kind or "").lower()
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        return {key: _fill(sub, key) for key, sub in props.items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    return ""


def _side_answer(request):
    """The JSON-object text a non-streamed generateContent call asked for."""
    body = request.body if isinstance(request.body, dict) else {}
    config = body.get("generationConfig") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    if schema:
        value = _fill(schema)
    else:
        value = {k: v for k, v in KNOWN_FIELDS.items() if k.startswith("complexity")}
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": json.dumps(value)}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": USAGE,
        "modelVersion": _model(request.path),
    }


def _chunk(request, parts, last):
    candidate = {"content": {"role": "model", "parts": parts}, "index": 0}
    chunk = {"candidates": [candidate], "modelVersion": _model(request.path)}
    if last:
        candidate["finishReason"] = "STOP"
        chunk["usageMetadata"] = USAGE
    return chunk


def respond(request, next_turn):
    path = request.path or ""
    if request.method != "POST":
        return Response(404, {"error": {"code": 404, "message": f"no {request.method} {path}"}})
    if ":streamGenerateContent" in path:
        entry = next_turn()
        if "tool" in entry:
            call = {
                "functionCall": {
                    "name": "run_shell_command",
                    "args": {"command": entry["tool"], "description": "scripted tool call"},
                }
            }
            events = [(None, _chunk(request, [call], last=True))]
        elif "call" in entry:
            # Any other tool, by its name and arguments: {"call": {"name": ..., "args": {...}}}.
            call = {"functionCall": {"name": entry["call"]["name"], "args": entry["call"].get("args", {})}}
            events = [(None, _chunk(request, [call], last=True))]
        else:
            text = entry.get("text", "Done.")
            events = [(None, _chunk(request, [{"text": text}], last=True))]
        return Response(events=events)
    if ":generateContent" in path:
        return Response(json_body=_side_answer(request))
    if ":countTokens" in path:
        return Response(json_body={"totalTokens": 100})
    return Response(404, {"error": {"code": 404, "message": f"model_server: no {path}"}})
