#!/bin/sh
# deny-destructive.sh: a hookd guard for PreToolUse, matcher "Bash".
#
# Reads the event (one line of JSON) on stdin, takes tool_input.command, and refuses shell commands that
# destroy work or a system beyond repair. A refusal is exit 2 with one line on stderr: what was refused,
# why, and what to do instead (the agent is told that line). Anything else: exit 0, nothing printed.
#
# Refused:
#   rm -r / rm -rf / rm -fr / rm -r -f ... of /, a top-level folder (/usr, /home, /tmp, ...), your home
#       (~, $HOME, ${HOME}) or a folder above it, the working folder or a folder above it (., .., *), or
#       "$VAR/" and "$VAR/*" (that is / when VAR is empty); rm --no-preserve-root, always
#   git push --force / -f / +refspec      (git push --force-with-lease is allowed)
#   git reset --hard
#   git clean -f, -fd, -fdx ...           (git clean -n, the dry run, is allowed)
#   mkfs, mkfs.*, mke2fs
#   dd of=/dev/...                        (of=/dev/null, /dev/stdout, ... are allowed), "> /dev/sda"
#   chmod / chown / chgrp -R on / or a top-level folder or your home
#   fork bombs such as  :(){ :|:& };:
#
# The command is split the way a shell splits it (quotes, escapes, comments, newlines, ;, &&, ||, |,
# $(...), backquotes, here-documents), and wrappers are seen through (sudo, env, nohup, timeout, xargs,
# command, exec, sh -c "...", bash -lc "...", eval "..."), so that  sudo rm -rf /  is refused while
#   echo "rm -rf /"   or   git commit -m "never git reset --hard"   are not. A cd is followed:
#   cd build && rm -rf *  is fine, cd .. && rm -rf project  is not.
#
# It is a seat belt against accidents, not a sandbox: a program that wants to delete your home folder can
# do it in a hundred ways a shell-line check cannot see (python -c, a script file, find -delete, ...).
#
# Fail-safe: an event with no command to judge (another tool, a missing or odd field, input that is not
# JSON) is let through, silently. If python3 is missing the script exits 1 with a line saying so: with
# on_failure = "refuse" (see hooks.toml) every Bash call is then refused with that line, which says what
# to fix. A guard that cannot look must not wave things through.
#
# Knob (environment, e.g. the hook's env in hooks.toml):
#   DENY_ALL_RM_RF=1   refuse every recursive forced rm (rm -rf build too), not only the dangerous ones.
#
# Needs: POSIX sh and python3 (standard library only; no jq). One python3 process per call.
#
# Try it:
#   echo '{"tool_name":"Bash","tool_input":{"command":"rm -rf /"}}' | sh deny-destructive.sh; echo "exit $?"

# The checks, in Python. The code sits between single quotes for sh: it must hold no single quote itself
# (not even in a comment); write \x27 where a regex needs one.
# shellcheck disable=SC2016 # the $ signs are Python text, not sh expansions
PY='
import json, os, re, sys

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
    "nohup": set(), "setsid": set(), "command": set(), "builtin": set(), "exec": set(), "time": set(),
    "then": set(), "do": set(), "else": set(), "elif": set(), "if": set(), "while": set(), "until": set(),
    "!": set(), "{": set(), "}": set(),
}
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
OPERATORS = ("&&", "||", ";;", "|&", ">>", "<<", ">&", "<&", "&>", ">|", "<>", ";", "&", "|", "(", ")",
             "<", ">", "\n")
HEREDOC = re.compile(r"(?<!<)<<(?!<)(-?)[ \t]*(?:\"([^\"\n]*)\"|\x27([^\x27\n]*)\x27|\\?([^\s;&|<>()\"\x27]+))")
FED_TO_A_SHELL = re.compile(r"(?:^|[\s;&|(/])(?:ba|da|z|k|mk)?sh(?:\s+-[A-Za-z]+)*\s*$")
PIPED_TO_A_SHELL = re.compile(r"\|\s*(?:sudo\s+)?(?:\S*/)?(?:ba|da|z|k|mk)?sh(?:\s|$)")
FORK_BOMB = re.compile(r"([^\s(){}|&;<>$`\"\x27]+)\s*(?:\(\s*\)\s*)?\{(?:[^}]*?[\s;{|&])?\1\s*\|\s*\1\s*&")
PLAIN = re.compile(r"[^\s\\\"\x27$`#;&|()<>]+")  # a run of characters that mean nothing special to sh
BLOCK_DEVICE = re.compile(r"^/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|md|dm-|loop|sr|mapper/|disk/)")
HARMLESS_DEVICES = {"/dev/null", "/dev/zero", "/dev/full", "/dev/stdout", "/dev/stderr", "/dev/tty"}


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
        elif c == "\x27":
            j = text.find("\x27", i + 1)
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
        elif text.startswith("$(", i):  # a command substitution stays whole, checked later on its own
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
    i = word.find("$(")
    while i >= 0:
        end = closing_paren(word, i + 1)
        found.append(word[i + 2:end])
        i = word.find("$(", end)
    return found


def simple_commands(items):
    """Groups lexed items into (words, redirection targets) per simple command."""
    commands, words, targets, redirect = [], [], [], None
    for kind, value in items:
        if kind == "op":
            if "<" in value or ">" in value:
                redirect = value
                continue
            if words or targets:
                commands.append((words, targets))
            words, targets, redirect = [], [], None
        elif redirect:
            if ">" in redirect:
                targets.append(value)
            redirect = None
        else:
            words.append(value)
    if words or targets:
        commands.append((words, targets))
    return commands


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


def check_script(text, ctx, depth=0):
    if depth > 8:
        return
    if "{" in text and "|" in text and FORK_BOMB.search(text):
        raise Refuse("this is a fork bomb (a function that starts copies of itself without end and freezes"
                     " the machine); do not run it")
    text, fed = strip_heredocs(text)
    for body in fed:
        check_script(body, ctx, depth + 1)
    for words, targets in simple_commands(lex(text)):
        for word in words + targets:
            for inner in substitutions(word):
                check_script(inner, ctx, depth + 1)
        for target in targets:
            if BLOCK_DEVICE.match(target):
                raise Refuse(f"writing to {target} with a redirection overwrites a disk device; write to a regular"
                             " file instead, or ask the user")
        check_command(words, ctx, depth)


def check_command(words, ctx, depth):
    # See through assignments and wrappers: FOO=1 sudo -u root nohup rm -rf / is still rm -rf /.
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
            if name == "timeout" and i < len(words):
                i += 1  # the duration
        else:
            break
    words = words[i:]
    if not words:
        return
    name, args = os.path.basename(words[0]), words[1:]
    if name in ("cd", "pushd"):
        follow_cd(args, ctx)
    elif name in SHELLS:
        check_shell(args, ctx, depth)
    elif name == "eval":
        check_script(" ".join(args), ctx, depth + 1)
    elif name == "rm":
        check_rm(args, ctx)
    elif name == "git":
        check_git(args)
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


def follow_cd(args, ctx):
    """cd build && rm -rf *: the * is in build. A cd to a place we cannot know leaves relative paths unjudged."""
    args = [a for a in args if a not in ("-L", "-P", "-e", "-@", "--")]
    if not args:
        ctx["cwd"] = ctx["home"]
    elif args[0] == "-":
        ctx["cwd"] = None
    else:
        target = expand_home(args[0], ctx)
        if "$" in target or "`" in target or (ctx["cwd"] is None and not target.startswith("/")):
            ctx["cwd"] = None
        else:
            ctx["cwd"] = absolute(target, ctx["cwd"] or "/")


def check_shell(args, ctx, depth):
    """sh -c SCRIPT, bash -lc SCRIPT, ...: check SCRIPT."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-o", "+o", "-O", "+O"):
            i += 2
        elif arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]:
            if i + 1 < len(args):
                check_script(args[i + 1], ctx, depth + 1)
            return
        elif arg.startswith(("-", "+")):
            i += 1
        else:
            return  # a script file: not ours to read


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


def check_git(args):
    i = 0
    while i < len(args) and args[i].startswith("-"):  # git -C dir -c k=v --no-pager ... SUBCOMMAND
        i += 2 if args[i] in ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env") else 1
    if i >= len(args):
        return
    sub, rest = args[i], args[i + 1:]
    if "--" in rest:
        rest = rest[:rest.index("--")]
    if sub == "push":
        force = "--force" in rest or any(a.startswith("+") for a in rest)
        for arg in rest:
            if arg.startswith("-") and not arg.startswith("--"):
                flags = arg[1:].split("o")[0]  # -o takes a value: what follows it is not flags
                force |= "f" in flags
        if force:
            raise Refuse("git push --force can overwrite commits others pushed; use git push --force-with-lease"
                         " (it stops if the remote moved on), or ask the user")
    elif sub == "reset" and "--hard" in rest:
        raise Refuse("git reset --hard throws away uncommitted changes for good; use git stash (it can be undone),"
                     " git restore FILE for specific files, or ask the user")
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


def danger(target, ctx, count_working_folder):
    """What deleting (or rewriting) target would hit, when that is too much; None when it is fine."""
    home, project = ctx["home"], ctx["project"]
    if not target:
        return None  # rm -rf "" deletes nothing
    m = re.match(r"^\$(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)(.*)$", target, re.S)
    if m and m.group(1) not in ("HOME", "{HOME}"):
        variable, rest = m.group(1), m.group(2)
        name = re.match(r"\{?(\w*)", variable).group(1)
        if rest in ("/", "/*", "/.", "/.*") and "?" not in variable:
            return f"/ when ${name} is empty or unset (write ${{{name}:?}}{rest} to stop on an empty variable)"
        return None
    target = expand_home(target, ctx)
    head, tail = os.path.split(target)
    everything_in = tail in ("*", ".*", "{*,.*}")
    if everything_in:
        target = head or "."
    if "$" in target or (ctx["cwd"] is None and not target.startswith("/")):
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


def expand_home(target, ctx):
    """~, ~/x, $HOME/x, ${HOME}/x -> the home folder; ~user/x -> the home folder of that user."""
    for prefix in ("~", "$HOME", "${HOME}"):
        if target == prefix or target.startswith(prefix + "/"):
            return ctx["home"] + target[len(prefix):]
    if target.startswith("~"):
        return os.path.expanduser(target)
    return target


def absolute(path, base):
    """The normalized absolute path of path seen from base (one leading slash, never two)."""
    return "/" + os.path.normpath(os.path.join(base, path)).lstrip("/")


def main():
    try:
        event = json.loads(sys.stdin.buffer.read() or b"null")
    except ValueError:
        return 0
    tool_input = event.get("tool_input") if isinstance(event, dict) else None
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if isinstance(command, list) and all(isinstance(w, str) for w in command):  # an argv
        command = " ".join("\x27" + w.replace("\x27", "\x27\\\x27\x27") + "\x27" for w in command)
    if not isinstance(command, str) or not command.strip():
        return 0
    cwd = event.get("cwd")
    if not (isinstance(cwd, str) and cwd.startswith("/")):
        try:
            cwd = os.getcwd()
        except OSError:
            cwd = "/"
    home = os.environ.get("HOME", "")
    if not home.startswith("/"):
        try:
            import pwd
            home = pwd.getpwuid(os.getuid()).pw_dir
        except (ImportError, KeyError):
            home = "/"
    cwd = absolute(cwd, "/")
    ctx = {
        "cwd": cwd,  # where relative paths are, following cd
        "project": cwd,  # the working folder of the event, which must not be deleted
        "home": absolute(home, "/"),
        "deny_all_rm_rf": os.environ.get("DENY_ALL_RM_RF", "") not in ("", "0", "false", "no"),
    }
    try:
        check_script(command, ctx)
    except Refuse as refusal:
        reason = " ".join(str(refusal).split())  # one line, whatever the target held
        if len(reason) > 400:
            reason = reason[:397] + "..."
        sys.stderr.write(f"blocked by hookd deny-destructive: {reason}\n")
        return 2
    return 0


sys.exit(main())
'

if ! command -v python3 >/dev/null 2>&1; then
    echo "deny-destructive: python3 is not installed, so no command can be checked; install python3, or set enabled = false on this hook in hooks.toml" >&2
    exit 1
fi
# -I: ignore PYTHON* variables and the user site (nothing from outside changes the checks); -S: start faster.
exec python3 -I -S -c "$PY"
