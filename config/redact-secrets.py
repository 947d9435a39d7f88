#!/usr/bin/env python3
# redact-secrets.py: a hookd hook for PostToolUse, any tool.
#
# Looks for secrets in the event's tool_response, what the tool gave back: every string in it, whatever its shape (a string; an object or array of strings, nested, as
# Claude Code's {"stdout": ..., "stderr": ...} for Bash). Each secret found is replaced by
# [REDACTED:KIND], and the hook prints the whole tool_response back, in the same shape, as
#
#   {"output": {"stdout": "AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key]\n", "stderr": "", ...}}
#
# so that the model sees it redacted. When nothing was found it says nothing. Object keys, numbers,
# booleans and null are kept as they are.
#
# Two ways to run it, one set of patterns:
#   --worker   hookd's worker protocol (docs/settings.md, "The worker protocol"), as config/hooks.toml runs
#              it: started once, it reads one event per line on stdin and writes one line per event on
#              stdout, {"hookd_id": N} to say nothing or {"hookd_id": N, "output": ...}, N being the
#              event's own number. Python starts once, not on every tool call.
#   --once     (or no argument) one-shot, as any agent runs a command hook: the event on stdin (to its
#              end); it prints {"output": ...} or nothing, and exits 0. For an agent's own hook settings,
#              or a `command` hook of hookd's. Python starts on every call then: tens of milliseconds each.
#
# Found (KIND):
#   private-key      -----BEGIN ... PRIVATE KEY----- up to its END line (or the end of the text, when cut)
#   bearer-token     the token of an Authorization: Bearer / Token header; basic-auth: of Authorization: Basic
#   jwt              eyJ....eyJ....signature (a JSON Web Token)
#   github-token     ghp_, gho_, ghs_, ghu_, ghr_ tokens and github_pat_ fine-grained tokens
#   slack-token      xoxb-, xoxa-, xoxp-, xoxr-, xoxs-
#   anthropic-key    sk-ant-...;  openai-key: sk-... (20 or more characters, with a digit)
#   aws-access-key   AKIA... and ASIA... access key ids (20 characters)
#   password, token, secret, private-key, api-key
#                    the value (not the name) of NAME=VALUE and of "NAME": "VALUE" (JSON), where NAME is or
#                    ends with password, passwd, passphrase, token, secret, api_key, apikey, access_key,
#                    secret_key, private_key, in any case (DB_PASSWORD=, GITHUB_TOKEN=, ?token=... in a
#                    URL; not max_tokens=). Kept: $VAR, ${VAR}, {{ var }}, <placeholder>, ****, null,
#                    true, and a name in code: connect(password=password, token=self.token)
#
# Limits: it finds secrets that look like secrets. A password in prose, a key of an unknown format, or a
# secret split across two strings passes. It can also redact what is no secret (token=5 in a log line),
# and the model may copy a [REDACTED:...] it was shown into a file it edits: redact what you must, and
# keep secrets out of the project rather than count on this. Before PostToolUse the tool has run: this
# hides the output from the model, not from the tool.
#
# Needs: python3 (standard library only).
#
# When it cannot look, it never answers as if the output were clean or redacted:
#   one-shot   input that is not JSON (or not an object) is no event: it prints nothing. An error in the
#              script itself (a bug, an output nested too deep) exits 1 with the error on stderr: the hook
#              failed, and its on_failure decides, "ignore" passing the output as it is and "refuse"
#              withholding it.
#   worker     it answers every line, so that no answer lands on the wrong event, and a line it cannot
#              read (not JSON, not an object), or an error of its own, is answered by withholding the
#              output: {"hookd_id": N, "refused": REASON, "output": "[redact-secrets withheld this tool's
#              output: ...]"} (N when it can be found at the line's start), the model shown that notice
#              instead of what it could not check, whatever on_failure says (a worker has no way to fail
#              one event alone), and the error on stderr (hookd's log). A blank line is no event and gets
#              no answer. A worker that dies or hangs fails the hook: on_failure decides, as for a one-shot.
#
# Try it:
#   echo '{"tool_name":"Bash","tool_response":{"stdout":"token=abc123\n","stderr":""}}' \
#     | python3 redact-secrets.py
#   echo '{"hookd_id":1,"tool_name":"Bash","tool_response":{"stdout":"token=abc123\n"}}' \
#     | python3 redact-secrets.py --worker

import json
import re
import sys
import traceback

NAMES = (r"(?:password|passwd|passphrase|token|secret|api[_-]?key|apikey|access[_-]?key|secret[_-]?key"
         r"|private[_-]?key)")
# The NAME of a secret: the keyword alone or ending a longer name after _ . or - (DB_PASSWORD, github_token,
# aws.secret), not inside a word (max_tokens, tokenizer, secretary are not names of secrets).
SECRET_NAME = re.compile(r"(?i)(?:^|[_.-])" + NAMES + r"$")
# Any name of an assignment; the patterns below take every NAME=VALUE and keep those whose NAME is not a
# SECRET_NAME (one pass over the text, where a pattern with the keywords inside would backtrack).
NAME = r"(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]+"

# (KIND, pattern, group): the text of the group is replaced; group 0 is the whole match. In this order:
# the longer forms first, so that a key inside a private key block is one redaction, not several.
PATTERNS = [
    ("private-key", re.compile(
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|\Z)"), 0),
    ("bearer-token", re.compile(
        r"(?i)\bAuthorization\b[\"']?\s*[:=]\s*[\"']?(?:Bearer|Token)\s+([A-Za-z0-9._~+/=-]+)"), 1),
    ("basic-auth", re.compile(
        r"(?i)\bAuthorization\b[\"']?\s*[:=]\s*[\"']?Basic\s+([A-Za-z0-9._~+/=-]+)"), 1),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"), 0),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})\b"), 0),
    ("slack-token", re.compile(r"\bxox[baprs]-[A-Za-z0-9-]{10,}"), 0),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}"), 0),
    ("openai-key", re.compile(r"\bsk-(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,}"), 0),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), 0),
    # NAME=VALUE (env files, shells, URLs, logs): the value runs to white space, a quote or & ; , )
    ("assignment", re.compile(r"(" + NAME + r")=(\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'&;,)]+)"), 2),
    # "NAME": "VALUE" (JSON)
    ("assignment", re.compile(r"\"(" + NAME + r")\"\s*:\s*(\"(?:[^\"\\\n]|\\.)*\")"), 2),
]

# Values that are no secret: a variable, a template, a placeholder, empty, already masked or redacted.
NOT_A_SECRET = re.compile(r"^[\"']?(?:\$|\{\{|%\(|\[REDACTED:|<|\**[\"']?$)")
# An unquoted value that is a name in code, as in connect(password=password, token=self.token): kept when
# a ) or , follows it. So are the words for nothing.
CODE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
NOTHING = {"none", "null", "nil", "undefined", "true", "false"}


def kind_of_name(name):
    """password, token, secret, private-key or api-key: what the NAME of NAME=VALUE says it holds."""
    name = name.lower()
    for keyword, kind in (("pass", "password"), ("token", "token"), ("secret", "secret"),
                          ("private", "private-key")):
        if keyword in name:
            return kind
    return "api-key"


def keep_value(m, value):
    """Whether the value of NAME=VALUE at match m is no secret (or NAME names none)."""
    if not SECRET_NAME.search(m.group(1)) or NOT_A_SECRET.match(value) or value.lower() in NOTHING:
        return True
    after = m.string[m.end():m.end() + 1]
    return CODE_NAME.fullmatch(value) is not None and after in (")", ",")


def redact(text):
    """The text with each secret replaced by [REDACTED:KIND]."""
    for kind, pattern, group in PATTERNS:
        def replace(m, kind=kind, group=group):
            value = m.group(group)
            if kind == "assignment":
                if keep_value(m, value):
                    return m.group(0)
                kind = kind_of_name(m.group(1))
                quoted = value[:1] in ("'", '"') and len(value) > 1 and value[-1] == value[0]
                quote = value[0] if quoted else ""
                replacement = f"{quote}[REDACTED:{kind}]{quote}"
            elif value.startswith("[REDACTED:"):
                return m.group(0)
            else:
                replacement = f"[REDACTED:{kind}]"
            start, end = m.start(group) - m.start(0), m.end(group) - m.start(0)
            whole = m.group(0)
            return whole[:start] + replacement + whole[end:]
        text = pattern.sub(replace, text)
    return text


def walk(value):
    """The value with every string in it redacted, in the same shape."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [walk(item) for item in value]
    if isinstance(value, dict):
        return {key: walk(item) for key, item in value.items()}
    return value


def answer(event):
    """The answer to print for the event, or None to say nothing."""
    if not isinstance(event, dict) or "tool_response" not in event:
        return None
    response = event["tool_response"]
    redacted = walk(response)
    if redacted == response:
        return None
    return {"output": redacted}


def once():
    """A command hook: the event is all of stdin; the answer, or nothing, on stdout."""
    try:
        event = json.loads(sys.stdin.buffer.read() or b"null")
    except ValueError:
        return 0  # not an event to look at: nothing to say
    try:
        result = answer(event)
    except Exception as e:  # noqa: BLE001 - a redactor that cannot look must not let the output through
        sys.stderr.write("redact-secrets: could not look at the output: %s\n" % e)
        return 1
    if result is not None:
        sys.stdout.write(json.dumps(result) + "\n")
    return 0


def withheld(why):
    """The answer of a worker that could not look at an output: the model is shown a notice instead."""
    why = " ".join(why.split())[:200]
    return {
        "refused": f"redact-secrets could not check this tool's output for secrets ({why}), so it is withheld"
                   " from you; tell the user, who can read it where the tool ran",
        "output": f"[redact-secrets withheld this tool's output: it could not be checked for secrets ({why})]",
    }


HOOKD_ID = re.compile(rb'^\s*\{\s*"hookd_id"\s*:\s*(\d+)')


def worker():
    """One answer line per event line, in order, each echoing the event's hookd_id, until stdin ends."""
    stdin, stdout = sys.stdin.buffer, sys.stdout
    while True:
        line = stdin.readline()
        if not line:
            return 0
        if not line.strip():
            continue  # not an event; hookd never sends one, and an answer to it would be out of step
        event = None
        try:
            event = json.loads(line)
            if not isinstance(event, dict):
                raise ValueError("the event is not a JSON object")
            result = answer(event) or {}
        except ValueError as e:  # not JSON, not UTF-8, not an object
            sys.stderr.write(f"redact-secrets: an event could not be read ({e}); its output was withheld\n")
            result = withheld(f"the event could not be read: {e}")
        except Exception as e:  # noqa: BLE001 - a bug, or an output nested too deep: withhold, never pass
            traceback.print_exc(file=sys.stderr)
            result = withheld(f"{type(e).__name__}: {e}")
        sys.stderr.flush()
        reply = {}
        if isinstance(event, dict) and "hookd_id" in event:
            reply["hookd_id"] = event["hookd_id"]
        elif HOOKD_ID.match(line):  # an event that would not parse still names itself, at the start
            reply["hookd_id"] = int(HOOKD_ID.match(line).group(1))
        reply.update(result)
        stdout.write(json.dumps(reply) + "\n")
        stdout.flush()


def main(argv):
    if argv == ["--worker"]:
        return worker()
    if argv in ([], ["--once"]):
        return once()
    sys.stderr.write(f"redact-secrets: unknown arguments {' '.join(argv)!r}: give --worker (a hookd worker"
                     " hook) or nothing (a command hook)\n")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
