#!/usr/bin/env python3
# approve-read-only.py: a hookd hook for PreToolUse, matcher "Bash".
#
# Takes tool_input.command from the event and approves shell commands that only read, so that the agent
# runs them without asking you first, with the answer
#
#   {"allow": "read-only command"}
#
# For anything else it says nothing: the agent's normal permission flow decides (it asks you, or its own
# rules let the command run). It never refuses.
#
# Two ways to run it, one set of rules:
#   --worker   hookd's worker protocol (docs/settings.md, "The worker protocol"), as config/hooks.toml runs
#              it: started once, it reads one event per line on stdin and writes one line per event on
#              stdout, {"hookd_id": N} to say nothing or {"hookd_id": N, "allow": "read-only command"}, N
#              being the event's own number. Python starts once, not on every shell command.
#   --once     (or no argument) one-shot, as any agent runs a command hook: the event on stdin (to its
#              end); it prints {"allow": "read-only command"} or nothing, and exits 0. For an agent's own
#              hook settings, or a `command` hook of hookd's. Python starts on every call then: tens of
#              milliseconds each.
#
# Approved, alone or joined by && or | (every part must be one of these):
#   ls [options] [PATH...]                        pwd [-L|-P]
#   git status / log / diff / show [options]      git branch (listing only: -a, -r, -v, --list, ...)
#   cat / head / tail / wc / grep / rg [known options] [PATH...]
# where every PATH is inside the project: the event's "cwd", after following symlinks. So
#   cat src/main.rs     git log --oneline | head -20     grep -rn 'TODO' src     rg -i todo
# are approved, while these are not:
#   cat ../../etc/passwd   cat /etc/passwd   cat ~/.ssh/id_rsa   cat link-to-outside   (paths outside)
#   ls > out.txt   grep x f | tee log   git branch new   git diff --output=f   (they write)
#   ls; rm -rf x   ls && rm x   cat $(cat list)   cat `x`   echo "$HOME"   (more than reading)
#   FOO=1 ls   sudo cat f   tail -f log   grep -R x .   rg --pre sh x   (settings, privileges, programs)
# A glob (cat *.txt) is approved when everything it can match is inside the project. A project that is
# / or your home folder (or holds it) is no project: nothing that names a path is approved there; nor is
# a command the tool runs in another folder (a "directory" or "workdir" in tool_input).
#
# Be conservative: any option it does not know, any shell syntax beyond quotes, && and | (;, ||, &, $,
# backquotes, redirections, braces, newlines, comments) makes it say nothing. When in doubt, it says
# nothing, so the worst it does is leave you a prompt you would have had without it.
#
# Limits: it judges the command line, not what the programs do when they run. git runs programs the
# repository's own settings name (core.fsmonitor, diff.external, textconv drivers, ...): approve git
# commands only in repositories whose .git/config you trust, or remove git from READ_ONLY_GIT below. A
# file can be read-only and still hold secrets: cat .env is inside the project, and approved.
#
# Needs: python3 (standard library only). Fail-safe: input that is not an event, or any error in the
# script itself, approves nothing. One-shot, it prints nothing then (an error in the script writes its
# traceback on stderr). As a worker it still answers every line, so that no answer lands on the wrong
# event: a line it cannot read gets {"hookd_id": N} (N when it can be found at the line's start, else
# {}), saying nothing, never an allow, and a line on stderr (hookd's log) says why; a blank line is no
# event and gets no answer. A worker that dies or hangs fails the hook, and on_failure = "ignore" (the
# example settings) leaves the agent to ask, as without the hook.
#
# Try it:
#   echo '{"cwd":"'"$PWD"'","tool_name":"Bash","tool_input":{"command":"git status && ls -la"}}' \
#     | python3 approve-read-only.py
#   (then "cat /etc/passwd" instead: nothing is printed)
#   echo '{"hookd_id":1,"cwd":"'"$PWD"'","tool_name":"Bash","tool_input":{"command":"ls"}}' \
#     | python3 approve-read-only.py --worker

import fnmatch
import json
import os
import re
import sys
import traceback

ANSWER = {"allow": "read-only command"}

# The git subcommands approved, and the options of theirs that write a file, read one from anywhere, or
# run a program (never approved, wherever they appear, as --name or --name=value).
READ_ONLY_GIT = {"status", "log", "diff", "show", "branch"}
GIT_OPTIONS_NOT_READ_ONLY = {"--output", "--no-index", "--ext-diff", "--open-files-in-pager"}
# git branch options that list; anything else (a name to create, -d, -m, -u, --edit-description...) is not.
GIT_BRANCH_LISTING = {
    "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "-l", "--list", "--show-current",
    "-i", "--ignore-case", "--color", "--no-color", "--column", "--no-column", "--omit-empty",
    "--merged", "--no-merged", "--contains", "--no-contains",  # alone: of HEAD
}
GIT_BRANCH_LISTING_WITH_VALUE = {"--contains", "--no-contains", "--merged", "--no-merged", "--points-at",
                                 "--sort", "--format", "--color", "--column", "--abbrev"}


class Options:
    """The options a reader takes that are known to only read: short letters, short letters that take a
    value (in the same word or the next), long names, long names that take a value (--name=VALUE or
    --name VALUE; a name in both sets takes one only as --name=VALUE). A -NUMBER (head -5, grep -3) is
    allowed when numbers is true. pattern_first: the first operand is a pattern, not a path (grep, rg),
    unless -e/--regexp gave one or an option of no_pattern (rg --files) says there is none."""

    def __init__(self, short="", short_value="", long=(), long_value=(), numbers=False, pattern_first=False,
                 no_pattern=()):
        self.short, self.short_value = short, short_value
        self.long, self.long_value = set(long), set(long_value)
        self.numbers, self.pattern_first, self.no_pattern = numbers, pattern_first, set(no_pattern)


# Left out on purpose: tail -f/-F/--follow (never ends), grep -R/--dereference-recursive and rg -L/--follow
# (follow symlinks out of the project), grep -f and rg -f/--ignore-file (read a file named anywhere),
# grep -d/-D, rg --pre (runs a program on every file) and -z/--search-zip (runs decompressors), and
# wc --files0-from (reads a list of files from anywhere).
READERS = {
    "cat": Options(short="AbeEnstTuv",
                   long={"show-all", "number-nonblank", "show-ends", "number", "squeeze-blank", "show-tabs",
                         "show-nonprinting"}),
    "head": Options(short="qvz", short_value="nc", long={"quiet", "silent", "verbose", "zero-terminated"},
                    long_value={"lines", "bytes"}, numbers=True),
    "tail": Options(short="qvz", short_value="nc", long={"quiet", "silent", "verbose", "zero-terminated"},
                    long_value={"lines", "bytes"}, numbers=True),
    "wc": Options(short="clmwL", long={"bytes", "chars", "lines", "words", "max-line-length", "total"}),
    "grep": Options(
        short="EFGPiyvwxcoqsnhHlLbarIzZUT", short_value="eABCm",
        long={"extended-regexp", "fixed-strings", "basic-regexp", "perl-regexp", "ignore-case",
              "no-ignore-case", "invert-match", "word-regexp", "line-regexp", "count", "only-matching",
              "quiet", "silent", "no-messages", "line-number", "no-filename", "with-filename",
              "files-with-matches", "files-without-match", "byte-offset", "text", "recursive",
              "null", "null-data", "initial-tab", "color", "colour"},
        long_value={"regexp", "after-context", "before-context", "context", "max-count", "include",
                    "exclude", "exclude-dir", "label", "binary-files"},
        numbers=True, pattern_first=True),
    "rg": Options(
        short="iSswxvclnNFUHIoaqPu0", short_value="egtTABCmMrjd",
        long={"ignore-case", "smart-case", "case-sensitive", "word-regexp", "line-regexp", "invert-match",
              "count", "count-matches", "files-with-matches", "files-without-match", "line-number",
              "no-line-number", "fixed-strings", "multiline", "with-filename", "no-filename", "heading",
              "no-heading", "only-matching", "text", "quiet", "pcre2", "unrestricted", "hidden",
              "no-ignore", "no-ignore-vcs", "files", "json", "vimgrep", "column", "stats", "trim",
              "null", "no-messages", "type-list", "byte-offset"},
        long_value={"regexp", "glob", "iglob", "type", "type-not", "after-context", "before-context",
                    "context", "max-count", "max-depth", "max-columns", "sort", "sortr", "color", "colors",
                    "replace", "threads", "max-filesize", "encoding"},
        pattern_first=True, no_pattern={"files", "type-list"}),
}

# The fields some agents give for the folder a shell command runs in (Gemini CLI's run_shell_command takes
# "directory" or "dir_path", Codex "workdir"): a command that runs elsewhere than the event's cwd is not
# judged.
FOLDER_FIELDS = ("directory", "dir_path", "workdir", "cwd")
GLOB = set("*?")
# Characters that mean more than a word to the shell when not quoted, and make this hook say nothing.
UNSUPPORTED = set("$`;<>(){}[]!#\n\r")
ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
MAX_GLOB_ENTRIES = 10000  # a glob that looks at more entries than this is not judged


class Unsure(Exception):
    """Something this hook does not judge: it says nothing."""


def lex(command):
    """Splits command into words and the operators && and |. A word is a list of (text, quoted) pieces.
    Raises Unsure at anything else the shell would read as more than plain words."""
    items, word, i, n = [], None, 0, len(command)
    while i < n:
        c = command[i]
        if c in " \t":
            if word is not None:
                items.append(("word", word))
            word = None
            i += 1
            continue
        if c == "&" or c == "|":
            if word is not None:
                items.append(("word", word))
            word = None
            if c == "&" and command.startswith("&&", i):
                items.append(("op", "&&"))
                i += 2
            elif c == "|" and not command.startswith(("||", "|&"), i):
                items.append(("op", "|"))
                i += 1
            else:
                raise Unsure("&, || or |&")
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
        items.append(("word", word))
    return items


def text_of(word):
    return "".join(text for text, _ in word)


def has_glob(word):
    return any(not quoted and any(ch in GLOB for ch in text) for text, quoted in word)


def glob_pattern(word):
    """The word as an fnmatch pattern: quoted * and ? are matched literally."""
    return "".join(text if not quoted else re.sub(r"([*?\[])", r"[\1]", text) for text, quoted in word)


def split_commands(items):
    """The simple commands (lists of words) between the operators; Unsure if one is empty."""
    commands, current = [], []
    for kind, value in items:
        if kind == "op":
            if not current:
                raise Unsure("an operator with no command before it")
            commands.append(current)
            current = []
        else:
            current.append(value)
    if not current:
        raise Unsure("an operator with no command after it")
    commands.append(current)
    return commands


class Project:
    """The project folder (the event's cwd, symlinks resolved), and whether a path stays inside it."""

    def __init__(self, cwd):
        self.root = os.path.realpath(cwd) if isinstance(cwd, str) and cwd.startswith("/") else None
        home = os.path.realpath(os.path.expanduser("~"))
        if self.root is not None and (not os.path.isdir(self.root) or self.root == "/"
                                      or home == self.root or home.startswith(self.root + "/")):
            self.root = None  # / or a folder holding your home is not a project to approve reads in

    def holds(self, path):
        real = os.path.realpath(os.path.join(self.root, path))
        return real == self.root or real.startswith(self.root + "/")

    def check_path(self, word):
        """Unsure unless every file the shell can make of word is inside the project."""
        if self.root is None:
            raise Unsure("no project folder to judge paths in")
        text = text_of(word)
        if not text or text.startswith("~") or any(t == "~" and not quoted for t, quoted in word):
            raise Unsure("an empty path, or a ~ the shell may expand (~/x, ~user, bash's a=~/x)")
        if not self.holds(text):  # the word as it stands (also what the shell passes when no file matches)
            raise Unsure(f"{text} is outside the project")
        if has_glob(word):
            if "**" in text:
                raise Unsure("** (with globstar it reaches any depth)")
            for match in self.matches(glob_pattern(word)):
                if not self.holds(match):
                    raise Unsure(f"{match} is outside the project")

    def matches(self, pattern):
        """Every path the glob pattern can match, hidden files included (more than the shell matches, never
        less). Unsure when a part could match . or .. or when it looks at too many entries."""
        absolute = pattern.startswith("/")
        found, seen = ["/" if absolute else ""], 0
        for part in [p for p in pattern.split("/") if p]:
            if not any(ch in part for ch in "*?["):
                found = [os.path.join(f, unescape(part)) for f in found]
                continue
            if fnmatch.fnmatchcase(".", part) or fnmatch.fnmatchcase("..", part):
                raise Unsure("a glob that can match . or ..")
            next_found = []
            for f in found:
                try:
                    entries = os.listdir(os.path.join(self.root, f) if f else self.root)
                except OSError:
                    continue
                seen += len(entries)
                if seen > MAX_GLOB_ENTRIES:
                    raise Unsure("a glob over too many files")
                next_found += [os.path.join(f, e) for e in entries if fnmatch.fnmatchcase(e, part)]
            found = next_found
        return found


def unescape(part):
    """A glob part with no wildcard left: its [*] [?] [[] back to plain characters."""
    return re.sub(r"\[([*?\[])\]", r"\1", part)


def check_reader(name, words, project):
    """cat, head, tail, wc, grep, rg: known options only, and every path inside the project."""
    if project.root is None:
        raise Unsure("no project folder to judge paths in (they read the working folder when given none)")
    spec = READERS[name]
    operands, pattern_given, i = [], False, 0
    while i < len(words):
        arg = text_of(words[i])
        i += 1
        if arg == "--":
            operands += words[i:]
            break
        if arg == "-" or not arg.startswith("-"):
            operands.append(words[i - 1])
        elif arg.startswith("--"):
            long, _, _ = arg[2:].partition("=")
            if long in spec.long_value:
                if "=" not in arg:
                    if i >= len(words):
                        raise Unsure(f"--{long} with no value")
                    i += 1
                pattern_given |= long == "regexp"
            elif long in spec.long and ("=" not in arg or long in ("color", "colour")):
                pattern_given |= long in spec.no_pattern
            else:
                raise Unsure(f"an option not known to only read: {arg}")
        elif spec.numbers and arg[1:].isdigit():
            continue
        else:
            for j, letter in enumerate(arg[1:], start=1):
                if letter in spec.short_value:
                    pattern_given |= letter == "e"
                    if j == len(arg) - 1:  # the value is the next word
                        if i >= len(words):
                            raise Unsure(f"-{letter} with no value")
                        i += 1
                    break  # the rest of the word is the value
                if letter not in spec.short:
                    raise Unsure(f"an option not known to only read: -{letter}")
    if spec.pattern_first and not pattern_given and operands:
        operands = operands[1:]
    for word in operands:
        if text_of(word) != "-":  # - is stdin
            project.check_path(word)


def check_git(args):
    while args and text_of(args[0]) in ("--no-pager", "-P"):
        args = args[1:]
    if not args or text_of(args[0]) not in READ_ONLY_GIT:
        raise Unsure("not a read-only git subcommand (or a git option before it)")
    sub, rest = text_of(args[0]), [text_of(a) for a in args[1:]]
    for arg in rest:
        if arg.split("=")[0] in GIT_OPTIONS_NOT_READ_ONLY or arg.startswith("-O"):
            raise Unsure(f"git {sub} {arg} writes or reads outside the repository")
    if sub == "branch":
        listing = any(a in ("-l", "--list") for a in rest)
        for arg in rest:
            if arg.startswith("-"):
                if arg not in GIT_BRANCH_LISTING and not (
                        "=" in arg and arg.split("=")[0] in GIT_BRANCH_LISTING_WITH_VALUE):
                    raise Unsure(f"git branch {arg} may change branches (or wants its value as {arg}=VALUE)")
            elif not listing:
                raise Unsure(f"git branch {arg} creates a branch")


def check_command(words, project):
    name = text_of(words[0])
    if ENV_ASSIGNMENT.match(name) or has_glob(words[0]):
        raise Unsure("an environment assignment or a glob as the command")
    args = words[1:]
    if name == "pwd":
        if any(text_of(a) not in ("-L", "-P") for a in args):
            raise Unsure("pwd with arguments")
    elif name == "ls":
        if project.root is None:
            raise Unsure("no project folder to judge paths in")
        options_done = False
        for word in args:
            arg = text_of(word)
            if not options_done and arg == "--":
                options_done = True
            elif options_done or not arg.startswith("-") or arg == "-":
                project.check_path(word)
    elif name == "git":
        check_git(args)
    elif name in READERS:
        check_reader(name, args, project)
    else:
        raise Unsure(f"{name} is not a read-only command this hook knows")


def judge(event):
    """The answer to print for the event, or None to say nothing."""
    if not isinstance(event, dict) or event.get("tool_name", "Bash") != "Bash":
        return None
    tool_input = event.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if not isinstance(command, str) or not command.strip():
        return None
    if any(tool_input.get(field) not in (None, "", event.get("cwd")) for field in FOLDER_FIELDS):
        return None
    project = Project(event.get("cwd"))
    try:
        for words in split_commands(lex(command)):
            check_command(words, project)
    except Unsure:
        return None
    return ANSWER


def judged(read_event, unreadable):
    """judge() of the event read_event() gives, never raising: an event that cannot be read (then
    unreadable(error) is called) or an error in the checks (its traceback goes to stderr) approves
    nothing."""
    try:
        event = read_event()
    except ValueError as e:  # not JSON, or not UTF-8
        unreadable(e)
        return None
    try:
        return judge(event)
    except Exception:  # noqa: BLE001 - a bug in the checks: say nothing, the normal flow decides
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
            sys.stderr.write(f"approve-read-only: an event could not be read ({e}); it approved nothing\n")
            sys.stderr.flush()

        allow = judged(read, unreadable)
        event = parsed.get("event")
        answer = {}
        if isinstance(event, dict) and "hookd_id" in event:
            answer["hookd_id"] = event["hookd_id"]
        elif HOOKD_ID.match(line):  # an event that would not parse still names itself, at the start
            answer["hookd_id"] = int(HOOKD_ID.match(line).group(1))
        if isinstance(event, dict) and allow is not None:
            answer.update(allow)
        stdout.write(json.dumps(answer) + "\n")
        stdout.flush()


def once():
    """A command hook: the event is all of stdin; the answer, or nothing, on stdout; exit 0."""
    answer = judged(lambda: json.loads(sys.stdin.buffer.read() or b"null"), lambda e: None)
    if answer is not None:
        sys.stdout.write(json.dumps(answer) + "\n")
    return 0


def main(argv):
    if argv == ["--worker"]:
        return worker()
    if argv in ([], ["--once"]):
        return once()
    sys.stderr.write(f"approve-read-only: unknown arguments {' '.join(argv)!r}: give --worker (a hookd worker"
                     " hook) or nothing (a command hook)\n")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
