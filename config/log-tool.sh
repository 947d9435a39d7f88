#!/bin/sh
# log-tool.sh: a hookd hook for PostToolUse (and PostToolUseFailure, PreToolUse: any tool moment).
#
# Appends one JSON line per tool call to a JSON-lines file, and says nothing (no stdout, exit 0):
#
#   {"at":"2026-11-30T05:19:00Z","agent":"claude-code","event":{...the event as hookd sent it...}}
#
# The event holds session_id, hook_event_name (the moment), tool_name, tool_input, and at PostToolUse the
# tool_response too. Read the log with, for example:
#   jq -c '[.at, .event.session_id, .event.hook_event_name, .event.tool_name, .event.tool_input]' FILE
#
# The file: $HOOKD_TOOL_LOG if set, else $XDG_STATE_HOME/hookd/tool-calls.jsonl, else
# ~/.local/state/hookd/tool-calls.jsonl. Its folder is created. Both are private (umask 077): tool inputs
# and outputs can hold secrets. The file only grows: rotate or delete it as you see fit.
#
# Lines from hooks running at once are kept whole with flock(1) when it is installed (util-linux).
#
# Try it:
#   HOOKD_TOOL_LOG=/tmp/t.jsonl sh log-tool.sh < some-event.json && python3 -m json.tool < /tmp/t.jsonl

log=${HOOKD_TOOL_LOG:-${XDG_STATE_HOME:-$HOME/.local/state}/hookd/tool-calls.jsonl}
umask 077

# The event is one line of JSON; drop line breaks anyway, so that a pretty-printed event fed by hand still
# makes one line (JSON allows raw line breaks only between tokens, where they mean nothing).
event=$(tr -d '\r\n') || exit 0
# Trim white space at both ends; anything but a JSON object is not an event: skip it.
event=${event#"${event%%[![:space:]]*}"}
event=${event%"${event##*[![:space:]]}"}
case $event in
    '{'*'}') ;;
    *) exit 0 ;;
esac

at=$(date -u +%Y-%m-%dT%H:%M:%SZ)
agent=${HOOKD_AGENT:-}
case $agent in
    *[!A-Za-z0-9._-]*) agent= ;; # it goes into JSON as is: keep only names that need no escaping
esac

case $log in
    */*) mkdir -p "${log%/*}" 2>/dev/null ;;
esac
# The redirection sits on a { } group, not on `exec`: a failed `exec 9>>file` makes sh exit with status 2,
# which hookd would read as a refusal. Whatever goes wrong here, the hook says nothing and exits 0.
{
    if command -v flock >/dev/null 2>&1; then
        flock -w 2 9 # the lock is held through fd 9, open until the group ends
    fi
    printf '{"at":"%s","agent":"%s","event":%s}\n' "$at" "$agent" "$event" >&9
} 2>/dev/null 9>>"$log" || echo "log-tool: cannot append to $log" >&2
exit 0
