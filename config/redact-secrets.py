#!/usr/bin/env python3
# redact-secrets.py: a hookd hook for PostToolUse, any tool.
#
# Reads the event (one line of JSON) on stdin and looks for secrets in tool_response, what the tool gave
# back: every string in it, whatever its shape (a string; an object or array of strings, nested, as
# Claude Code's {"stdout": ..., "stderr": ...} for Bash). Each secret found is replaced by
# [REDACTED:KIND], and the hook prints the whole tool_response back, in the same shape, as
#
#   {"output": {"stdout": "AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key]\n", "stderr": "", ...}}
#
# so that the model sees it redacted. When nothing was found it prints nothing (says nothing). Object keys,
# numbers, booleans and null are kept as they are.
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
# Needs: python3 (standard library only). Fail-safe: input that is not an event, or any error in the
# script itself, prints nothing.
#
# Try it:
#   echo '{"tool_name":"Bash","tool_response":{"stdout":"token=abc123\n","stderr":""}}' \
#     | python3 redact-secrets.py

import json
import re
import sys

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


def main():
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


if __name__ == "__main__":
    sys.exit(main())
