#!/usr/bin/env -S python3 -I -S
# deny-destructive.py: a hookd guard for PreToolUse, matcher "Bash".
#
# Takes tool_input.command from the event and refuses shell commands that destroy work or a system beyond
# repair, with a reason that says what was refused, why, and what to do instead (the agent is told it).
#
# Two ways to run it, one set of rules:
#   --worker   hookd's worker protocol (docs/settings.md, "The worker protocol"), as config/hooks.toml runs
#              it: started once, it reads one event per line on stdin and writes one line per event on
#              stdout, {"hookd_id": N} to say nothing or {"hookd_id": N, "refused": "REASON"}, N being the
#              event's own number. Python starts once, not on every shell command: a decision then takes
#              tens of microseconds instead of the tens of milliseconds a Python start costs.
#   --once     (or no argument) one-shot, as any agent runs a command hook: the event on stdin (to its
#              end), exit 2 with the reason on stderr to refuse, exit 0 and nothing printed to let the
#              command through. For an agent's own hook settings (Claude Code, Gemini CLI, ...), or a
#              `command` hook of hookd's. Python starts on every call then: tens of milliseconds each.
#   The one-shot is the default so that a copy run as a plain command hook anywhere refuses the way every
#   agent understands; a copy started as a worker without --worker waits for an end of input that never
#   comes, times out, and its on_failure refuses: neither mistake lets a command through.
#
# Refused:
#   rm -r / rm -rf / rm -fr / rm -r -f ... of /, a top-level folder (/usr, /home, /tmp, ...), your home
#       (~, $HOME, ${HOME}, ${HOME:-x}) or a folder above it, the working folder ($PWD, $(pwd), ., .., *)
#       or a folder above it, or "$VAR/" and "$VAR/*" (that is / when VAR is empty); rm
#       --no-preserve-root, always
#   find ... -delete, find ... -exec rm ...   from /, a top-level folder or your home, whatever the tests
#       (find ~ -type f -delete is all your files); from the working folder or above only with no test
#       before the -delete (find . -delete): find . -name '*.o' -delete is allowed
#   mv of /, a top-level folder, your home or a folder above it (mv ~ /tmp/x)
#   git push --force / -f / +refspec      (git push --force-with-lease is allowed)
#   git push --mirror, git push --delete / -d, git push REMOTE :BRANCH, git push --prune
#   git reset --hard, git checkout -f, and throwing away every uncommitted change at once:
#       git checkout -- .   git checkout .   git restore .   (git restore FILE, git restore --staged . are
#       allowed)
#   git branch -D (and --delete --force)  (git branch -d, which refuses unmerged work, is allowed)
#   git clean -f, -fd, -fdx ...           (git clean -n, the dry run, is allowed)
#   a download piped into a shell or an interpreter: curl URL | sh, wget -qO- URL | sudo bash,
#       curl URL | python3, and sh -c "$(curl URL)"  (curl -o install.sh URL, then reading it, is allowed)
#   mkfs, mkfs.*, mke2fs
#   dd of=/dev/...                        (of=/dev/null, /dev/stdout, ... are allowed), "> /dev/sda"
#   chmod / chown / chgrp -R on / or a top-level folder or your home
#   fork bombs such as  :(){ :|:& };:
#
# The command is split the way a shell splits it (quotes, escapes, $'...', comments, newlines, ;, &&, ||, |,
# $(...), backquotes, here-documents, {a,b}), and wrappers are seen through (sudo, env, nohup, timeout,
# xargs, command, exec, flock, chrt, taskset, sh -c "...", bash -lc "...", su -c "...", eval "..."), so
# that  sudo rm -rf /  is refused while
#   echo "rm -rf /"   or   git commit -m "never git reset --hard"   or   grep 'rm -rf' notes.txt   or a
# here-document that mentions rm -rf /   are not. A cd is followed: cd build && rm -rf *  is fine,
#   cd .. && rm -rf project  is not; but not a cd that stays in a subshell or may not run:
#   (cd build); rm -rf *   and   true || cd build; rm -rf *   are judged in the working folder. A download
#   run as a file is seen too: bash <(curl URL), source <(wget -qO- URL), bash < <(curl URL).
#
# It is a seat belt against accidents, not a sandbox: a program that wants to delete your home folder can
# do it in a hundred ways a shell-line check cannot see (python -c, a script file, a variable, ...).
#
# Fail-closed where it matters: an event with no command to judge (another tool, a missing or odd field)
# is let through, silently; but input that is not a JSON object, or an error in the checks themselves, is
# refused with a reason saying so (a guard that cannot look must not wave things through). As a worker it
# answers every line, so an event it cannot read still gets a well-formed refusal, with the event's
# hookd_id when it can be found; and if python3 is missing or the worker dies, hookd fails the hook and
# on_failure = "refuse" (hooks.toml) refuses with that reason.
#
# Knob (environment, e.g. the hook's env in hooks.toml; a worker reads it once, at its start):
#   DENY_ALL_RM_RF=1   refuse every recursive forced rm (rm -rf build too), not only the dangerous ones.
#
# Needs: python3 (standard library only), found on PATH by the #! line, which runs it as python3 -I -S:
# no PYTHON* variable and no user site changes the checks, and a one-shot starts without importing site
# (26 ms of each start on a machine with many site-packages). The line needs an env that knows -S (GNU
# coreutils 8.30 and later, macOS, the BSDs); where env does not (busybox), the hook fails, and refuses
# with env's error: run it as  python3 -I -S deny-destructive.py  there.
#
# Try it:
#   echo '{"tool_name":"Bash","tool_input":{"command":"rm -rf /"}}' | ./deny-destructive.py; echo "exit $?"
#   echo '{"hookd_id":1,"tool_name":"Bash","tool_input":{"command":"rm -rf /"}}' | ./deny-destructive.py --worker

import json
import os
import re
import sys
import traceback

SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"}
# Words that run the rest of the line as a command, and the options of theirs that take a value.
WRAPPERS = {
    "sudo": {"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "-R"},
    "doas": {"-u", "-C"},
    "env": {"-u", "-C", "--unset", "--chdir"},
    "nice": {"-n", "--adjustment"},
    "ionice": {"-c", "-n", "-p", "--class", "--classdata"},
    "timeout": {"-s", "-k", "--signal", "--kill-after"},
    "stdbuf": {"-i", "-o", "-e"},
    "xargs": {"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args",
              "--max-procs", "--max-lines", "--max-chars"},
    "nohup": set(), "setsid": set(), "command": set(), "builtin": set(), "exec": {"-a"}, "time": set(),
    # These take one operand before the command: flock FILE, chrt PRIORITY, taskset MASK.
    "flock": {"-w", "--wait", "--timeout", "-E", "--conflict-exit-code"}, "chrt": set(), "taskset": set(),
    "then": set(), "do": set(), "else": set(), "elif": set(), "if": set(), "while": set(), "until": set(),
    "!": set(), "{": set(), "}": set(),
}
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
OPERATORS = ("&&", "||", ";;", "|&", ">>", "<<", ">&", "<&", "&>", ">|", "<>", ";", "&", "|", "(", ")",
             "<", ">", "\n")
HEREDOC = re.compile(r"(?<!<)<<(?!<)(-?)[ \t]*(?:\"([^\"\n]*)\"|'([^'\n]*)'|\\?([^\s;&|<>()\"']+))")
FED_TO_A_SHELL = re.compile(r"(?:^|[\s;&|(/])(?:ba|da|z|k|mk)?sh(?:\s+-[A-Za-z]+)*\s*$")
PIPED_TO_A_SHELL = re.compile(r"\|\s*(?:sudo\s+)?(?:\S*/)?(?:ba|da|z|k|mk)?sh(?:\s|$)")
# The body before NAME|NAME& is bounded: unbounded, a long line of "a{ a{ a{ ..." took seconds (each { tried
# against the whole rest of the line), and a fork bomb is short. So is NAME: unbounded, each start in a long
# run of plain characters (a 20 KB JSON payload of curl -d, with a | after it) was tried at every length,
# and the check took seconds, past the hook's timeout.
FORK_BOMB = re.compile(r"([^\s(){}|&;<>$`\"']{1,64})\s*(?:\(\s*\)\s*)?\{(?:[^}]{0,200}?[\s;{|&])?\1\s*\|\s*\1\s*&")
PLAIN = re.compile(r"[^\s\\\"'$`#;&|()<>]+")  # a run of characters that mean nothing special to sh
BLOCK_DEVICE = re.compile(r"^/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|md|dm-|loop|sr|mapper/|disk/)")
HARMLESS_DEVICES = {"/dev/null", "/dev/zero", "/dev/full", "/dev/stdout", "/dev/stderr", "/dev/tty"}


# Programs that fetch from the network, and interpreters that run a program read from stdin (the
# interpreters other than shells only when given no program: curl URL | python3 -m json.tool is fine).
DOWNLOADERS = {"curl", "wget", "fetch", "aria2c", "http", "https", "xh"}
INTERPRETER = re.compile(r"^(?:python[0-9.]*|pypy[0-9.]*|perl[0-9.]*|ruby[0-9.]*|node|nodejs|deno|bun|php[0-9.]*)$")
# find's options that do not choose files: what comes before a -delete without being one of these is a test.
FIND_OPTIONS = {"-depth", "-d", "-xdev", "-mount", "-follow", "-noleaf", "-ignore_readdir_race",
                "-noignore_readdir_race", "-daystart", "-regextype", "-maxdepth", "-mindepth", "-warn",
                "-nowarn", "-print", "-print0", "-ls"}
FIND_DELETERS = {"rm", "unlink", "shred", "rmdir"}
# Pathspecs that mean the whole working tree (or the folder one is in) to git, wherever that is.
WHOLE_TREE = {".", "./", "*", ":", ":/", ":/*", ":/.", ":(top)", ":(top)."}


class Refuse(Exception):
    pass


def lex(text):
    """Splits shell text into ("word", text) and ("op", operator) items, as a shell would."""
    items, word, in_word, i, n = [], [], False, 0, len(text)

    def flush():
        nonlocal word, in_word
        if in_word:
            items.append(("word", "".join(word)))
        word, in_word = [], False

    while i < n:
        c = text[i]
        if c in " \t\r":
            flush()
            i += 1
        elif c == "#" and not in_word:  # a comment runs to the end of the line
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c == "\\":
            if text.startswith("\n", i + 1):  # a line continuation
                i += 2
                continue
            word.append(text[i + 1:i + 2])
            in_word, i = True, i + 2
        elif text.startswith("$'", i):  # $'...': bash's C-style string, \x2f and all (rm -rf $'/usr')
            j, value = ansi_c(text, i + 2)
            word.append(value)
            in_word, i = True, j
        elif text.startswith("$\"", i):  # $"...": a double-quoted string, translated; the same to us
            i += 1
        elif c == "'":
            j = text.find("'", i + 1)
            j = n if j < 0 else j
            word.append(text[i + 1:j])
            in_word, i = True, j + 1
        elif c == "\"":
            j = i + 1
            while j < n and text[j] != "\"":
                if text[j] == "\\" and j + 1 < n:
                    if text[j + 1] in "\"\\$`":
                        word.append(text[j + 1])
                    elif text[j + 1] != "\n":
                        word.append(text[j:j + 2])
                    j += 2
                elif text.startswith("$(", j):
                    end = closing_paren(text, j + 1)
                    word.append(text[j:end + 1])
                    j = end + 1
                else:
                    word.append(text[j])
                    j += 1
            in_word, i = True, j + 1
        elif text.startswith(("$(", "<(", ">("), i):  # a command or process substitution stays whole,
            # checked later on its own
            end = closing_paren(text, i + 1)
            word.append(text[i:end + 1])
            in_word, i = True, end + 1
        elif c == "`":
            j = text.find("`", i + 1)
            j = n if j < 0 else j
            word.append(text[i:j + 1])
            in_word, i = True, j + 1
        elif PLAIN.match(text, i):
            run = PLAIN.match(text, i).group()
            word.append(run)
            in_word, i = True, i + len(run)
        else:
            op = next((o for o in OPERATORS if text.startswith(o, i)), None)
            if op is None:
                word.append(c)
                in_word, i = True, i + 1
                continue
            if op[0] in "<>" and in_word and "".join(word).isdigit():
                word, in_word = [], False  # the 2 of 2>&1 names a file descriptor, not an argument
            flush()
            items.append(("op", op))
            i += len(op)
    flush()
    return items


ANSI_C_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
                  "v": "\v", "\\": "\\", "'": "'", "\"": "\"", "?": "?"}
ANSI_C_NUMBER = re.compile(r"x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|([0-7]{1,3})|c(.)", re.S)


def ansi_c(text, start):
    """The string of $'...' whose body starts at start, as bash decodes it; and the index after its '."""
    out, i, n = [], start, len(text)
    while i < n and text[i] != "'":
        if text[i] != "\\" or i + 1 >= n:
            out.append(text[i])
            i += 1
            continue
        m = ANSI_C_NUMBER.match(text, i + 1)
        if text[i + 1] in ANSI_C_ESCAPES:
            out.append(ANSI_C_ESCAPES[text[i + 1]])
            i += 2
        elif m:
            hex2, hex4, hex8, octal, control = m.groups()
            if control is not None:
                out.append(chr(ord(control) & 0x1f))
            else:
                code = int(octal, 8) if octal else int(hex2 or hex4 or hex8, 16)
                out.append(chr(code) if code < 0x110000 else "")
            i = m.end()
        else:
            out.append(text[i:i + 2])
            i += 2
    return i + 1, "".join(out)


def closing_paren(text, start):
    """Index of the ) that closes the ( at start (or the last index when there is none)."""
    depth = 0
    for j in range(start, len(text)):
        if text[j] == "(":
            depth += 1
        elif text[j] == ")":
            depth -= 1
            if depth == 0:
                return j
    return len(text) - 1


def substitutions(word):
    """The commands inside $(...) and `...` in a word."""
    found = re.findall(r"`([^`]*)`", word)
    for opener in ("$(", "<(", ">("):
        i = word.find(opener)
        while i >= 0:
            end = closing_paren(word, i + 1)
            found.append(word[i + 2:end])
            i = word.find(opener, end)
    return found


def simple_commands(items):
    """Groups lexed items into simple commands, each a dict: its words, its redirection targets (> FILE) and
    sources (< FILE), piped (its input is the output of the command before it: cmd | this), and the
    operators before and after it (None at the start or end). A ( or ) between them is an item of its own,
    the string "(" or ")": what a subshell does to its folder stays in it."""
    commands, redirect, before = [], None, None

    def new():
        return {"words": [], "targets": [], "sources": [], "piped": False, "before": before, "after": None}

    current = new()
    for kind, value in items:
        if kind == "op":
            if "<" in value or ">" in value:
                redirect = value
                continue
            if current["words"] or current["targets"] or current["sources"]:
                current["after"] = value
                commands.append(current)
            if value in ("(", ")"):
                commands.append(value)
            else:
                before = value
            piped = current["piped"] if value in ("(", ")") else value in ("|", "|&")
            current = new()
            current["piped"] = piped  # (curl URL) | sh is still piped
            redirect = None
        elif redirect:
            if ">" in redirect:
                current["targets"].append(value)
            elif redirect == "<":
                current["sources"].append(value)
            redirect = None
        else:
            current["words"].append(value)
    if current["words"] or current["targets"] or current["sources"]:
        commands.append(current)
    return commands


def check_script(text, ctx, depth=0):
    if depth > 8:
        return
    if "{" in text and "|" in text and FORK_BOMB.search(text):
        raise Refuse("this is a fork bomb (a function that starts copies of itself without end and freezes"
                     " the machine); do not run it")
    text, fed = strip_heredocs(text)
    for body in fed:
        check_script(body, dict(ctx), depth + 1)  # a shell of its own: its cd stays there
    downloader = None  # the program that fetches what flows down this pipeline, if one does
    subshells = []  # the folder each open ( was entered from
    for item in simple_commands(lex(text)):
        if item == "(":
            subshells.append(ctx["cwd"])
            continue
        if item == ")":
            if subshells:
                ctx["cwd"] = subshells.pop()
            continue
        words, targets, piped = item["words"], item["targets"], item["piped"]
        for word in words + targets + item["sources"]:
            for inner in substitutions(word):
                check_script(inner, dict(ctx), depth + 1)  # run in a subshell: its cd stays there
        for target in targets:
            if BLOCK_DEVICE.match(target):
                raise Refuse(f"writing to {target} with a redirection overwrites a disk device; write to a regular"
                             " file instead, or ask the user")
        command = unwrap(words)
        name = os.path.basename(command[0]) if command else ""
        if not piped:
            downloader = None
        if downloader and runs_stdin(name, command[1:]):
            raise Refuse(f"{downloader} ... | {name} runs a script from the internet that nobody has read; download"
                         f" it to a file ({downloader_to_file(downloader)}), read it, then run it, or ask the user")
        if runs_stdin(name, command[1:]):
            fetched = next(filter(None, map(downloaded, item["sources"])), None)
        else:
            fetched = downloaded(script_file(name, command[1:]))
        if fetched:
            raise Refuse(f"{name} <({fetched} ...) runs a script from the internet that nobody has read; download"
                         f" it to a file ({downloader_to_file(fetched)}), read it, then run it, or ask the user")
        if name in DOWNLOADERS:
            downloader = name
        if name in ("cd", "pushd") and (item["before"] in ("|", "|&", "||") or item["after"] in ("|", "|&", "&")):
            continue  # a cd in a pipeline or in the background runs in a subshell; after || it may not run
        check_command(command, ctx, depth)


def script_file(name, args):
    """The script that a shell, an interpreter or source/. runs from a file: its first operand, else None."""
    if name not in SHELLS and name not in ("source", ".") and not INTERPRETER.match(name):
        return None
    i = 0
    while i < len(args):
        if args[i] in ("-o", "+o", "-O", "+O"):
            i += 2
        elif args[i].startswith(("-", "+")) and args[i] != "-":
            i += 1
        else:
            return args[i]
    return None


def downloaded(word):
    """The program that fetches what <(PROGRAM ...) gives, when word is such a process substitution of a
    downloader (curl, wget, ...); None otherwise."""
    if not word or not word.startswith("<(") or not word.endswith(")"):
        return None
    command = unwrap([w for kind, w in lex(word[2:-1]) if kind == "word"])
    name = os.path.basename(command[0]) if command else ""
    return name if name in DOWNLOADERS else None


def unwrap(words):
    """The command that words run, seen through assignments and wrappers: FOO=1 sudo -u root nohup rm -rf /
    is rm -rf /."""
    i = 0
    while i < len(words):
        word = words[i]
        name = os.path.basename(word)
        if ASSIGNMENT.match(word):
            i += 1
        elif name in WRAPPERS:
            i += 1
            while i < len(words) and words[i].startswith("-") and len(words[i]) > 1:
                option = words[i]
                i += 1
                if option == "--":
                    break
                if option in WRAPPERS[name] and i < len(words):
                    i += 1
            if name in ("timeout", "flock", "chrt", "taskset") and i < len(words):
                i += 1  # the duration, the lock file, the priority, the CPU mask
        else:
            break
    return words[i:]


def check_command(words, ctx, depth):
    if not words:
        return
    name, args = os.path.basename(words[0]), words[1:]
    if name in ("cd", "pushd"):
        follow_cd(args, ctx)
    elif name in SHELLS:
        check_shell(name, args, ctx, depth)
    elif name == "su":  # su -c SCRIPT [USER]: SCRIPT runs in the user's shell
        for k, arg in enumerate(args):
            script = args[k + 1] if arg in ("-c", "--command") and k + 1 < len(args) else \
                arg.split("=", 1)[1] if arg.startswith("--command=") else None
            if script is not None:
                check_script(script, dict(ctx), depth + 1)
    elif name == "eval":
        script = " ".join(args)
        refuse_downloaded_script(name, script)
        check_script(script, ctx, depth + 1)
    elif name == "rm":
        check_rm(args, ctx)
    elif name == "find":
        check_find(args, ctx)
    elif name == "mv":
        check_mv(args, ctx)
    elif name == "git":
        check_git(args, ctx)
    elif name.startswith("mkfs") or name == "mke2fs":
        raise Refuse(f"{name} formats a disk or partition and erases everything on it; ask the user to do it")
    elif name == "dd":
        for arg in args:
            device = arg[3:]
            if arg.startswith("of=/dev/") and device not in HARMLESS_DEVICES and not device.startswith(("/dev/fd/", "/dev/shm/")):
                raise Refuse(f"dd {arg} writes straight onto a device and can wipe a disk; write to a regular file"
                             " (of=./disk.img), or ask the user")
    elif name in ("chmod", "chown", "chgrp"):
        check_recursive_owner_or_mode(name, args, ctx)


def runs_stdin(name, args):
    """Whether `name args` runs a program it reads on its stdin: sh, bash -s, python3, perl -, ..."""
    if name == "busybox" and args:
        return runs_stdin(args[0], args[1:])
    if name in SHELLS:
        i = 0
        while i < len(args):
            arg = args[i]
            if arg in ("-o", "+o", "-O", "+O"):
                i += 2
            elif arg == "--" or arg == "-":
                return True if arg == "-" else i + 1 >= len(args)
            elif arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]:
                return False  # sh -c SCRIPT: the script is the argument
            elif arg.startswith("-") and not arg.startswith("--") and "s" in arg[1:]:
                return True  # bash -s ARGS: the script is stdin
            elif arg.startswith(("-", "+")):
                i += 1
            else:
                return False  # a script file
        return True
    if INTERPRETER.match(name):
        for arg in args:
            if arg == "-":
                return True
            if arg.startswith("-") and (arg[1:2] in ("c", "e", "m", "E", "p", "r") or arg.startswith(("--eval", "--print"))):
                return False  # a program given on the line
            if not arg.startswith("-"):
                return False  # a script file
        return True
    return False


def downloader_to_file(downloader):
    return "wget -O install.sh URL" if downloader == "wget" else f"{downloader} -o install.sh URL"


def refuse_downloaded_script(name, script):
    """sh -c "$(curl URL)", eval "$(wget -qO- URL)": the script is whatever the download gives."""
    for inner in substitutions(script):
        command = unwrap([w for kind, w in lex(inner) if kind == "word"])
        if command and os.path.basename(command[0]) in DOWNLOADERS:
            downloader = os.path.basename(command[0])
            raise Refuse(f"{name} \"$({downloader} ...)\" runs a script from the internet that nobody has read;"
                         f" download it to a file ({downloader_to_file(downloader)}), read it, then run it, or ask"
                         " the user")


def strip_heredocs(text):
    """Removes here-document bodies (prose, not commands); returns the rest and the bodies fed to a shell."""
    lines, kept, fed, i = text.split("\n"), [], [], 0
    while i < len(lines):
        line = lines[i]
        kept.append(line)
        i += 1
        for m in HEREDOC.finditer(line):
            delimiter = next(g for g in m.groups()[1:] if g is not None)
            body = []
            while i < len(lines):
                current = lines[i]
                i += 1
                if (current.lstrip("\t") if m.group(1) else current) == delimiter:
                    break
                body.append(current)
            if FED_TO_A_SHELL.search(line[:m.start()]) or PIPED_TO_A_SHELL.search(line[m.end():]):
                fed.append("\n".join(body))
    return "\n".join(kept), fed


def check_shell(name, args, ctx, depth):
    """sh -c SCRIPT, bash -lc SCRIPT, ...: check SCRIPT."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-o", "+o", "-O", "+O"):
            i += 2
        elif arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]:
            rest = args[i + 1:]
            if rest[:1] in (["--"], ["-"]):  # sh -c -- SCRIPT: the end of the options, then the script
                rest = rest[1:]
            if rest:
                refuse_downloaded_script(f"{name} -c", rest[0])
                check_script(rest[0], dict(ctx), depth + 1)  # a shell of its own: its cd stays there
            return
        elif arg.startswith(("-", "+")):
            i += 1
        else:
            return  # a script file: not ours to read


def check_find(args, ctx):
    """find START... EXPRESSION with -delete or -exec rm: where it starts, and whether a test comes first."""
    i = 0
    while i < len(args) and (args[i] in ("-H", "-L", "-P") or args[i][:2] in ("-D", "-O")):
        i += 2 if args[i] == "-D" else 1  # -D DEBUGOPTS; -O3
    starts = []
    while i < len(args) and not args[i].startswith("-") and args[i] not in ("(", "!", ","):
        starts.append(args[i])
        i += 1
    expression = args[i:]
    tested = False  # a test before the deleting action: -name, -type, -newer, ( ... ), !, ...
    deleting = None
    for j, word in enumerate(expression):
        if word == "-delete" or (word in ("-exec", "-execdir", "-ok", "-okdir") and j + 1 < len(expression)
                                 and os.path.basename(expression[j + 1]) in FIND_DELETERS):
            deleting = word if word == "-delete" else f"{word} {os.path.basename(expression[j + 1])}"
            break
        if word in ("(", "!", "-not") or (word.startswith("-") and word not in FIND_OPTIONS):
            tested = True
    if not deleting:
        return
    for start in starts or ["."]:
        what = danger(start, ctx, count_working_folder=False)
        if what:
            raise Refuse(f"find {start} ... {deleting} deletes files all over {what}, whatever tests come with it;"
                         " run it on the project's own folders (e.g. find ./build -name '*.o' -delete), or ask"
                         " the user")
        what = None if tested else danger(start, ctx, count_working_folder=True)
        if what:
            raise Refuse(f"find {start} {deleting} with no test before {deleting} deletes everything in {what};"
                         f" put the tests first (e.g. find {start} -name '*.o' -delete), or ask the user")


def check_mv(args, ctx):
    """mv ~ /tmp/x: a home, a top-level folder or / moved away is as gone for the system as deleted."""
    operands, into, options_done, i = [], None, False, 0
    while i < len(args):
        arg = args[i]
        if options_done or arg == "-" or not arg.startswith("-"):
            operands.append(arg)
        elif arg == "--":
            options_done = True
        elif arg in ("-t", "--target-directory"):
            into = args[i + 1] if i + 1 < len(args) else ""
            i += 1
        elif arg in ("-S", "--suffix"):
            i += 1  # the backup suffix
        elif arg.startswith("--target-directory="):
            into = arg.split("=", 1)[1]
        elif arg.startswith("-t") and not arg.startswith("--"):
            into = arg[2:]  # -tDIR
        i += 1
    for source in operands if into is not None else operands[:-1]:
        what = danger(source, ctx, count_working_folder=False)
        if what:
            raise Refuse(f"mv {source} would move {what} away, which breaks everything that looks for it there;"
                         " move only the specific files or subfolders you mean, by path, or ask the user")


def follow_cd(args, ctx):
    """cd build && rm -rf *: the * is in build. A cd to a place we cannot know leaves relative paths unjudged."""
    args = [a for a in args if a not in ("-L", "-P", "-e", "-@", "--")]
    if not args:
        ctx["cwd"] = ctx["home"]
    elif args[0] == "-":
        ctx["cwd"] = None
    else:
        target = expand(args[0], ctx)
        if "$" in target or "`" in target or (ctx["cwd"] is None and not target.startswith("/")):
            ctx["cwd"] = None
        else:
            ctx["cwd"] = absolute(target, ctx["cwd"] or "/")


def check_rm(args, ctx):
    recursive = force = no_preserve_root = False
    targets, options_done = [], False
    for arg in args:
        if options_done or arg == "-" or not arg.startswith("-"):
            targets.append(arg)
        elif arg == "--":
            options_done = True
        elif arg.startswith("--"):
            long = arg[2:].split("=")[0]
            recursive |= len(long) >= 3 and "recursive".startswith(long)
            force |= len(long) >= 1 and "force".startswith(long)
            no_preserve_root |= len(long) >= 3 and "no-preserve-root".startswith(long)
        else:
            recursive |= "r" in arg or "R" in arg
            force |= "f" in arg
    if not recursive:
        return
    if no_preserve_root:
        raise Refuse("rm --no-preserve-root exists only to delete /; delete the specific paths you mean, by path")
    for target in targets:
        what = danger(target, ctx, count_working_folder=True)
        if what:
            raise Refuse(f"rm -r {target} would delete {what}; delete only the specific files or subfolders you mean,"
                         " by path (e.g. rm -rf ./build), or ask the user")
    if force and ctx["deny_all_rm_rf"]:
        raise Refuse("rm -rf is turned off here (DENY_ALL_RM_RF=1); delete files one by one without -r -f, or ask"
                     " the user")


def check_git(args, ctx):
    i = 0
    while i < len(args) and args[i].startswith("-"):  # git -C dir -c k=v --no-pager ... SUBCOMMAND
        i += 2 if args[i] in ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env") else 1
    if i >= len(args):
        return
    sub, rest, paths = args[i], args[i + 1:], []
    if "--" in rest:  # after --, only paths
        paths = rest[rest.index("--") + 1:]
        rest = rest[:rest.index("--")]
    short = "".join(a[1:] for a in rest if a.startswith("-") and not a.startswith("--"))
    if sub == "push":
        check_push(rest)
    elif sub == "reset" and "--hard" in rest:
        raise Refuse("git reset --hard throws away uncommitted changes for good; use git stash (it can be undone),"
                     " git restore FILE for specific files, or ask the user")
    elif sub == "checkout":
        if "--force" in rest or "-f" in rest:
            raise Refuse("git checkout --force throws away uncommitted changes for good; commit or git stash them"
                         " first (git stash can be undone), or ask the user")
        # Without --, a word is a branch unless it can only be a path (git checkout .).
        for path in paths + [a for a in rest if a in WHOLE_TREE]:
            refuse_whole_tree("git checkout -- " + path, path, ctx)
    elif sub == "restore":
        staged = "--staged" in rest or "S" in short
        worktree = "--worktree" in rest or "W" in short
        if staged and not worktree:
            return  # unstaging only: the changes stay in the files
        values = {"-s", "--source", "--pathspec-from-file"}
        words = [a for k, a in enumerate(rest) if not a.startswith("-") and (k == 0 or rest[k - 1] not in values)]
        for path in paths + words:
            refuse_whole_tree("git restore " + path, path, ctx)
    elif sub == "branch":
        delete = "--delete" in rest or "d" in short or "D" in short
        force = "--force" in rest or "D" in short or "f" in short
        if delete and force:
            raise Refuse("git branch -D deletes a branch even when its commits are on no other branch, and then they"
                         " are lost; use git branch -d (it refuses to delete work that is not merged), or ask the"
                         " user")
    elif sub == "clean":
        force = dry_run = False
        for arg in rest:
            if arg in ("--force", "--dry-run"):
                force |= arg == "--force"
                dry_run |= arg == "--dry-run"
            elif arg.startswith("-") and not arg.startswith("--"):
                flags = arg[1:].split("e")[0]  # -e takes a pattern
                force |= "f" in flags
                dry_run |= "n" in flags
        if force and not dry_run:
            raise Refuse("git clean -f deletes untracked files (work not yet committed) for good; run git clean -n"
                         " to list them and remove specific paths, or ask the user")


def check_push(rest):
    force = "--force" in rest or any(a.startswith("+") for a in rest)
    delete = "--delete" in rest or "--prune" in rest
    takes_a_value = {"-o", "--push-option", "--repo", "--receive-pack", "--exec"}
    for k, arg in enumerate(rest):
        if arg.startswith("-") and not arg.startswith("--"):
            flags = arg[1:].split("o")[0]  # -o takes a value: what follows it is not flags
            force |= "f" in flags
            delete |= "d" in flags
        elif not arg.startswith("-") and (k == 0 or rest[k - 1] not in takes_a_value):
            delete |= arg.startswith(":") and len(arg) > 1  # :BRANCH pushes nothing onto BRANCH: deletes it
    if "--mirror" in rest:
        raise Refuse("git push --mirror makes the remote a copy of this repository, deleting and overwriting its"
                     " branches and tags; push the branches you mean (git push origin BRANCH), or ask the user")
    if delete:
        raise Refuse("this git push deletes branches or tags on the remote, for everyone who uses them; push"
                     " without deleting, or ask the user to delete them")
    if force:
        raise Refuse("git push --force can overwrite commits others pushed; use git push --force-with-lease"
                     " (it stops if the remote moved on), or ask the user")


def refuse_whole_tree(command, path, ctx):
    """git checkout -- . and git restore . throw away every uncommitted change below the folder at once."""
    what = "the working folder" if path in WHOLE_TREE else danger(path, ctx, count_working_folder=True)
    if what:
        raise Refuse(f"{command} throws away every uncommitted change in {what} for good; use git stash (it can"
                     " be undone), git restore FILE for the specific files you mean, or ask the user")


def check_recursive_owner_or_mode(name, args, ctx):
    options = [a for a in args if a.startswith("-") and len(a) > 1]
    operands = [a for a in args if not (a.startswith("-") and len(a) > 1)]
    recursive = any(a == "--recursive" or (not a.startswith("--") and "R" in a) for a in options)
    if not recursive:
        return
    if not any(a.startswith("--reference") for a in options):
        operands = operands[1:]  # the mode or owner
    for target in operands:
        what = danger(target, ctx, count_working_folder=False)
        if what:
            raise Refuse(f"{name} -R {target} would change {what}, which can break the system; apply it to the"
                         " specific project paths you mean, or ask the user")


def braces(word, limit=64):
    """The words bash's brace expansion makes of word ({~,x} is ~ and x), at most limit of them."""
    m = re.search(r"\{([^{}]*,[^{}]*)\}", word)
    if not m:
        return [word]
    found = []
    for part in m.group(1).split(","):
        found.extend(braces(word[:m.start()] + part + word[m.end():], limit))
        if len(found) >= limit:
            break
    return found[:limit]


def danger(target, ctx, count_working_folder):
    """What deleting (or rewriting) target would hit, when that is too much; None when it is fine."""
    if target.endswith("/{*,.*}"):
        return one_danger(target, ctx, count_working_folder)  # everything in a folder, seen as a whole
    for word in braces(target):
        what = one_danger(word, ctx, count_working_folder)
        if what:
            return what
    return None


def one_danger(target, ctx, count_working_folder):
    home, project = ctx["home"], ctx["project"]
    if not target:
        return None  # rm -rf "" deletes nothing
    # ${HOME:-x}, ${HOME-x}, ${HOME:=x}, ${HOME:?x}: HOME and PWD are set, so each is $HOME (or $PWD).
    target = re.sub(r"^\$\{(HOME|PWD):?[-=?][^}]*\}", r"${\1}", target)
    m = re.match(r"^\$(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)(.*)$", target, re.S)
    if m and m.group(1) not in ("HOME", "{HOME}", "PWD", "{PWD}"):
        variable, rest = m.group(1), m.group(2)
        name = re.match(r"\{?(\w*)", variable).group(1)
        if rest in ("/", "/*", "/.", "/.*") and "?" not in variable:
            return f"/ when ${name} is empty or unset (write ${{{name}:?}}{rest} to stop on an empty variable)"
        return None
    target = expand(target, ctx)
    head, tail = os.path.split(target)
    everything_in = tail in ("*", ".*", "{*,.*}")
    if everything_in:
        target = head or "."
    if "$" in target or "`" in target or (ctx["cwd"] is None and not target.startswith("/")):
        return None  # somewhere we cannot know
    path = absolute(target, ctx["cwd"] or "/")
    if path == "/":
        what = "the whole filesystem (/)"
    elif path == home:
        what = f"your home folder ({path})"
    elif home.startswith(path + "/"):
        what = f"{path}, which holds your home folder"
    elif path.count("/") == 1:
        what = f"the system folder {path}"
    elif count_working_folder and path == project:
        what = f"the working folder ({path})"
    elif count_working_folder and project.startswith(path + "/"):
        what = f"{path}, which holds the working folder"
    else:
        return None
    return "everything in " + what if everything_in else what


def expand(target, ctx):
    """~, ~/x, $HOME/x, ${HOME}/x -> the home folder; ~user/x -> the home folder of that user; $PWD,
    ${PWD}, $(pwd), `pwd` -> the folder the command is in at that point (after any cd), when known."""
    for prefix in ("~", "$HOME", "${HOME}"):
        if target == prefix or target.startswith(prefix + "/"):
            return ctx["home"] + target[len(prefix):]
    if target == "~-" or target.startswith("~-/"):
        return "$OLDPWD" + target[2:]  # the folder before the last cd: not known here
    for prefix in ("$PWD", "${PWD}", "$(pwd)", "`pwd`", "$(pwd -L)", "$(pwd -P)", "~+"):
        if (target == prefix or target.startswith(prefix + "/")) and ctx["cwd"] is not None:
            return ctx["cwd"] + target[len(prefix):]
    if target.startswith("~"):
        return os.path.expanduser(target)
    return target


def absolute(path, base):
    """The normalized absolute path of path seen from base (one leading slash, never two)."""
    return "/" + os.path.normpath(os.path.join(base, path)).lstrip("/")


class Unreadable(Exception):
    """Input that is not an event: it says nothing about the command, so nothing can be let through."""


PREFIX = "blocked by hookd deny-destructive: "


def home_folder():
    home = os.environ.get("HOME", "")
    if not home.startswith("/"):
        try:
            import pwd
            home = pwd.getpwuid(os.getuid()).pw_dir
        except (ImportError, KeyError):
            home = "/"
    return absolute(home, "/")


def own_folder():
    try:
        return os.getcwd()
    except OSError:
        return "/"


# What every decision of this process shares: read once (a worker keeps them for its life; hookd restarts
# it when its env changes).
HOME = home_folder()
# Where relative paths are when the event has no cwd: the settings folder, for a worker and a command hook alike.
HERE = own_folder()
DENY_ALL_RM_RF = os.environ.get("DENY_ALL_RM_RF", "") not in ("", "0", "false", "no")


def decide(event):
    """The refusal of an event (a dict), as one line; None to let it through."""
    if not isinstance(event, dict):
        raise Unreadable("the event is not a JSON object")
    tool_input = event.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if isinstance(command, list) and all(isinstance(w, str) for w in command):  # an argv
        command = " ".join("'" + w.replace("'", "'\\''") + "'" for w in command)
    if not isinstance(command, str) or not command.strip():
        return None
    cwd = event.get("cwd")
    cwd = absolute(cwd if isinstance(cwd, str) and cwd.startswith("/") else HERE, "/")
    ctx = {
        "cwd": cwd,  # where relative paths are, following cd
        "project": cwd,  # the working folder of the event, which must not be deleted
        "home": HOME,
        "deny_all_rm_rf": DENY_ALL_RM_RF,
    }
    try:
        check_script(command, ctx)
    except Refuse as refusal:
        return one_line(PREFIX + str(refusal))
    return None


def one_line(reason):
    reason = " ".join(reason.split())  # one line, whatever the command held
    return reason[:397] + "..." if len(reason) > 400 else reason


def judged(read_event):
    """decide() of the event read_event() gives, never raising: what cannot be read or judged is refused."""
    try:
        return decide(read_event())
    except (Unreadable, ValueError) as e:  # ValueError: not JSON, or not UTF-8
        return one_line(f"{PREFIX}the event could not be read ({e}), so the command was not checked; this is a"
                        " bug in what called the guard: report it, and ask the user to run the command")
    except Exception as e:  # a bug in the checks: say so, and keep the command from running unchecked
        traceback.print_exc(file=sys.stderr)
        return one_line(f"{PREFIX}the guard failed on this command ({type(e).__name__}: {e}), so it was not"
                        " checked; split it into simpler commands, or ask the user to run it")


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

        reason = judged(read)
        answer = {}
        event = parsed.get("event")
        if isinstance(event, dict) and "hookd_id" in event:
            answer["hookd_id"] = event["hookd_id"]
        elif HOOKD_ID.match(line):  # an event that would not parse still names itself, at the start
            answer["hookd_id"] = int(HOOKD_ID.match(line).group(1))
        if reason:
            answer["refused"] = reason
        stdout.write(json.dumps(answer) + "\n")
        stdout.flush()


def once():
    """A command hook: the event is all of stdin; exit 2 with the reason on stderr refuses."""
    reason = judged(lambda: json.loads(sys.stdin.buffer.read()))
    if reason:
        sys.stderr.write(reason + "\n")
        return 2
    return 0


def main(argv):
    if argv == ["--worker"]:
        return worker()
    if argv in ([], ["--once"]):
        return once()
    sys.stderr.write(f"deny-destructive: unknown arguments {' '.join(argv)!r}: give --worker (a hookd worker hook)"
                     " or nothing (a command hook)\n")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
