#!/usr/bin/env python3
# rm-to-trash.py: a hookd hook for PreToolUse, matcher "Bash".
#
# Takes tool_input.command from the event and, when it is one plain rm, rewrites it to move what it names
# into a trash folder instead, where you can take it back:
#
#   rm -rf build "my notes.txt"
#   -> {"input": {"command": "mkdir -p -- /abs/project/.trash/20261201T061500.123456Z && mv -- build
#                 'my notes.txt' /abs/project/.trash/20261201T061500.123456Z/"}}     (on one line)
#
# The trash folder: $HOOKD_TRASH if set (~ and a relative path are taken from your home and the event's
# cwd), else <cwd>/.trash/<UTC time>, one folder per rm. Every path is quoted for the shell (shlex.quote);
# the unquoted * and ? of a glob are kept, so the shell expands them for mv as it would have for rm, and ~/
# too. The agent is told nothing more: the command runs rewritten, other fields of tool_input kept.
# Add .trash/ to your .gitignore, and empty it now and then: rm -rf .trash is left as it is.
#
# Rewritten: one rm, with the options -r -R -f -i -I -v -d (alone or together: -rf, -fv) and their long
# forms, and --, of one or more paths, inside the project or not (moving is safer than deleting). With -f,
# paths that are not there (and globs that match nothing) are left out, as rm -f passes over them; when
# none is left, the rm runs as written.
# Left as it is (prints nothing; the rm runs as written, or as other hooks and the agent decide):
#   anything more than one rm: rm a; rm b   rm a && ls   ls | xargs rm   rm $(cat list)   find . -delete
#   echo "rm -rf x"   sudo rm x   FOO=1 rm x   rm $DIR   rm {a,b}   rm [ab]   rm with other options
#   a command the tool runs in another folder than the event's cwd (a "directory" or "workdir" field)
#   rm with no path; rm of /, a top-level folder, your home or a folder above it, the project or a folder
#   above it, ., .., and the trash folder itself or anything in it (emptying the trash deletes for real)
#
# Why it is off in the example settings: the agent believes it deleted, yet the files take disk space until
# you empty .trash/; a path named twice by its last part (rm a/x b/x) keeps only the last in the trash;
# rm of a folder without -r, which rm refuses, is moved; and the agent sees mv's messages, not rm's (and
# no -i prompts). Turn it on where taking files back matters more.
#
# Two ways to run it, one set of rules:
#   --worker   hookd's worker protocol (docs/settings.md, "The worker protocol"): started once, it reads one
#              event per line on stdin and writes one line per event on stdout, {"hookd_id": N} to say
#              nothing or {"hookd_id": N, "input": {...}}, N being the event's own number. Python starts
#              once, not on every shell command. config/hooks.toml runs it so, when it is turned on.
#   --once     (or no argument) one-shot, as any agent runs a command hook: the event on stdin (to its
#              end); it prints {"input": {...}} or nothing, and exits 0. For an agent's own hook settings,
#              or a `command` hook of hookd's. Python starts on every call then: tens of milliseconds each.
# HOOKD_TRASH is read for each rm, from the environment the process started with (hookd restarts a
# worker when the hook's env changes).
#
# Needs: python3 (standard library only). Fail-safe: input that is not an event, or any error in the
# script itself, rewrites nothing: the rm runs as written. One-shot, it prints nothing then (an error in
# the script writes its traceback on stderr). As a worker it still answers every line, so that no answer
# lands on the wrong event: a line it cannot read gets {"hookd_id": N} (N when it can be found at the
# line's start, else {}), saying nothing, and a line on stderr (hookd's log) says why; a blank line is no
# event and gets no answer.
#
# Try it:
#   echo '{"cwd":"'"$PWD"'","tool_name":"Bash","tool_input":{"command":"rm -rf build"}}' \
#     | python3 rm-to-trash.py
#   echo '{"hookd_id":1,"cwd":"'"$PWD"'","tool_name":"Bash","tool_input":{"command":"rm -rf build"}}' \
#     | python3 rm-to-trash.py --worker

import glob
import json
import os
import re
import shlex
import sys
import time
import traceback

RM = {"rm", "/bin/rm", "/usr/bin/rm"}
SHORT_OPTIONS = set("rRfiIvd")
LONG_OPTIONS = {"--recursive", "--force", "--verbose", "--dir", "--interactive", "--interactive=always",
                "--interactive=once", "--interactive=never"}
# The fields some agents give for the folder a shell command runs in (Gemini CLI's run_shell_command takes
# "directory" or "dir_path", Codex "workdir"): a command that runs elsewhere than the event's cwd is not
# judged.
FOLDER_FIELDS = ("directory", "dir_path", "workdir", "cwd")
GLOB = "*?"
# Characters that mean more than a word to the shell when not quoted, and make this hook say nothing.
UNSUPPORTED = set("$`;&|<>(){}[]!#\n\r")


class Unsure(Exception):
    """Something this hook does not rewrite: it says nothing."""


def lex(command):
    """Splits command into words, each a list of (text, quoted) pieces. Raises Unsure at anything the shell
    would read as more than plain words (operators, expansions, redirections, ...)."""
    words, word, i, n = [], None, 0, len(command)
    while i < n:
        c = command[i]
        if c in " \t":
            if word is not None:
                words.append(word)
            word = None
            i += 1
            continue
        if word is None:
            word = []
        if c == "'":
            j = command.find("'", i + 1)
            if j < 0:
                raise Unsure("an unclosed quote")
            word.append((command[i + 1:j], True))
            i = j + 1
        elif c == '"':
            j, text = i + 1, []
            while j < n and command[j] != '"':
                if command[j] in "$`":
                    raise Unsure("an expansion in double quotes")
                if command[j] == "\\" and j + 1 < n and command[j + 1] in '"\\$`\n':
                    text.append(command[j + 1])
                    j += 2
                else:
                    text.append(command[j])
                    j += 1
            if j >= n:
                raise Unsure("an unclosed quote")
            word.append(("".join(text), True))
            i = j + 1
        elif c == "\\":
            if i + 1 >= n or command[i + 1] in "\n\r":
                raise Unsure("a trailing backslash or a line continuation")
            word.append((command[i + 1], True))
            i += 2
        elif c in UNSUPPORTED:
            raise Unsure(f"shell syntax: {c!r}")
        else:
            word.append((c, False))
            i += 1
    if word is not None:
        words.append(word)
    return words


def text_of(word):
    return "".join(text for text, _ in word)


def has_glob(word):
    return any(not quoted and any(ch in GLOB for ch in text) for text, quoted in word)


def tilde(word):
    """Whether the word starts with an unquoted ~ that the shell expands to your home: ~ or ~/..."""
    first = word[0]
    return not first[1] and first[0] == "~" and (len(word) == 1 or (word[1][0] == "/" and not word[1][1]))


def render(word):
    """The word for the shell again: quoted, except the unquoted * ? of a glob and a leading ~ (kept bare
    for the shell to expand), so that mv gets what rm would have got."""
    out, run = [], []
    pieces = list(word)
    if tilde(word):
        out.append("~")
        pieces = pieces[1:]
    for text, quoted in pieces:
        for ch in text:
            if not quoted and ch in GLOB:
                if run:
                    out.append(shlex.quote("".join(run)))
                    run = []
                out.append(ch)
            else:
                run.append(ch)
    if run:
        out.append(shlex.quote("".join(run)))
    return "".join(out)


def plain_path(word, home):
    """The word's path as the shell passes it (a ~ expanded, glob characters left as they are)."""
    text = text_of(word)
    return home + text[1:] if tilde(word) else text


def targets(words):
    """The paths of `rm OPTIONS PATHS`, and whether -f was given; Unsure at an option this hook does not
    know."""
    paths, options_done, force = [], False, False
    for word in words:
        arg = text_of(word)
        if options_done or arg == "-" or not arg.startswith("-"):
            paths.append(word)  # GNU rm reads options after paths too: only -- ends them
        elif arg == "--":
            options_done = True
        elif arg.startswith("--"):
            if arg not in LONG_OPTIONS:
                raise Unsure(f"an rm option this hook does not rewrite: {arg}")
            force |= arg == "--force"
        elif not set(arg[1:]) <= SHORT_OPTIONS:
            raise Unsure(f"an rm option this hook does not rewrite: {arg}")
        else:
            force |= "f" in arg
    return paths, force


def absolute(path, base):
    return os.path.normpath(os.path.join(base, path))


def under(path, folder):
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def check_target(path, cwd, home, trash_base):
    """Unsure when moving path is wrong or cannot work: the trash itself, a folder holding the trash or the
    project, the filesystem's top, your home. (Lexical: rm of a symlink removes the link, and mv moves it.)"""
    name = os.path.basename(path.rstrip("/"))
    if name in ("", ".", ".."):
        raise Unsure(f"{path}: ., .. or /")
    full = absolute(path, cwd)
    if full == "/" or full.count("/") == 1 or under(home, full) or under(cwd, full):
        raise Unsure(f"{path}: /, a top-level folder, your home or the project (or a folder holding them)")
    if under(full, trash_base) or under(trash_base, full):
        raise Unsure(f"{path}: the trash folder, or a folder holding it")


def rewrite(event):
    """The answer to print for the event, or None to say nothing."""
    if not isinstance(event, dict) or event.get("tool_name", "Bash") != "Bash":
        return None
    tool_input = event.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    cwd = event.get("cwd")
    if not isinstance(command, str) or not isinstance(cwd, str) or not cwd.startswith("/"):
        return None
    if any(tool_input.get(field) not in (None, "", cwd) for field in FOLDER_FIELDS):
        return None
    cwd = os.path.normpath(cwd)
    home = os.path.normpath(os.path.expanduser("~"))
    try:
        words = lex(command)
        if not words or text_of(words[0]) not in RM or has_glob(words[0]):
            return None
        paths, force = targets(words[1:])
        if not paths:
            return None  # rm of nothing
        configured = os.environ.get("HOOKD_TRASH", "")
        if configured:
            trash = trash_base = absolute(os.path.expanduser(configured), cwd)
        else:
            trash_base = os.path.join(cwd, ".trash")
            now = time.time()
            stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f".{int(now % 1 * 1e6):06d}Z"
            trash = os.path.join(trash_base, stamp)
        missing = []  # what rm -f would pass over in silence, and mv would stop at
        for word in paths:
            path = plain_path(word, home)
            if not path:
                raise Unsure("an empty path")
            if any(text == "~" and not quoted for text, quoted in word[1 if tilde(word) else 0:]):
                raise Unsure("a ~ the shell may expand otherwise (~user, a=~)")
            check_target(path, cwd, home, trash_base)
            if not has_glob(word):
                if not os.path.lexists(absolute(path, cwd)):
                    missing.append(word)
            else:
                pattern = "".join(text if not quoted else glob.escape(text) for text, quoted in word)
                if tilde(word):
                    pattern = glob.escape(home) + pattern[1:]
                if any(ch in GLOB for part in pattern.split("/") if part.startswith(".") for ch in part):
                    raise Unsure("a glob of hidden names (.* can match . and ..)")
                if not pattern.startswith("/"):
                    pattern = os.path.join(glob.escape(cwd), pattern)
                matches = glob.glob(pattern)
                for match in matches:
                    check_target(match, cwd, home, trash_base)
                if not matches:
                    missing.append(word)
    except Unsure:
        return None
    if force:
        paths = [word for word in paths if word not in missing]
        if not paths:
            return None  # rm -f of nothing there: it succeeds, in silence
    moved = " ".join(render(word) for word in paths)
    quoted_trash = shlex.quote(trash)
    return {"input": {"command": f"mkdir -p -- {quoted_trash} && mv -- {moved} {quoted_trash}/"}}


def judged(read_event, unreadable):
    """rewrite() of the event read_event() gives, never raising: an event that cannot be read (then
    unreadable(error) is called) or an error in the script (its traceback goes to stderr) rewrites
    nothing."""
    try:
        event = read_event()
    except ValueError as e:  # not JSON, or not UTF-8
        unreadable(e)
        return None
    try:
        return rewrite(event)
    except Exception:  # noqa: BLE001 - a bug: say nothing, the rm runs as written
        traceback.print_exc(file=sys.stderr)
        return None


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
        parsed = {}

        def read():
            parsed["event"] = json.loads(line)
            return parsed["event"]

        def unreadable(e):
            sys.stderr.write(f"rm-to-trash: an event could not be read ({e}); it rewrote nothing\n")
            sys.stderr.flush()

        rewritten = judged(read, unreadable)
        event = parsed.get("event")
        answer = {}
        if isinstance(event, dict) and "hookd_id" in event:
            answer["hookd_id"] = event["hookd_id"]
        elif HOOKD_ID.match(line):  # an event that would not parse still names itself, at the start
            answer["hookd_id"] = int(HOOKD_ID.match(line).group(1))
        if isinstance(event, dict) and rewritten is not None:
            answer.update(rewritten)
        stdout.write(json.dumps(answer) + "\n")
        stdout.flush()


def once():
    """A command hook: the event is all of stdin; the rewrite, or nothing, on stdout; exit 0."""
    answer = judged(lambda: json.loads(sys.stdin.buffer.read() or b"null"), lambda e: None)
    if answer is not None:
        sys.stdout.write(json.dumps(answer) + "\n")
    return 0


def main(argv):
    if argv == ["--worker"]:
        return worker()
    if argv in ([], ["--once"]):
        return once()
    sys.stderr.write(f"rm-to-trash: unknown arguments {' '.join(argv)!r}: give --worker (a hookd worker hook)"
                     " or nothing (a command hook)\n")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
