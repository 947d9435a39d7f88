#!/bin/sh
# git-context.sh: a hookd hook for UserPromptSubmit.
#
# When the agent works in a git work tree, prints the branch and a short status, which hookd reads as
# "adds" (plain text on stdout): the agent gets it as context with the prompt, e.g.
#
#   git branch: main, tracking origin/main [ahead 1]
#   git status:
#    M src/x.rs
#   ?? notes.txt
#
# At most 20 status lines, then a count of the rest. Outside a work tree it prints nothing. It never fails
# loudly: every error means "say nothing", exit 0.
#
# Where: $CLAUDE_PROJECT_DIR, which hookd sets to the event's cwd. Run by hand (no hookd), the current
# folder.
#
# Try it:   sh git-context.sh    (in a repository, then in /tmp)

if [ -n "${CLAUDE_PROJECT_DIR:-}" ]; then
    dir=$CLAUDE_PROJECT_DIR
elif [ -n "${HOOKD_CONFIG_DIR:-}" ]; then
    # Under hookd with no cwd in the event, the hook runs in the settings folder, whose repository (if
    # any) says nothing about the agent's project.
    exit 0
else
    dir=.
fi

# Never take .git/index.lock: the agent's own git commands, running at the same time, must not trip on us.
GIT_OPTIONAL_LOCKS=0
export GIT_OPTIONAL_LOCKS

# One git process: the first line is "## branch...upstream [ahead N]", the rest is `git status --short`.
# Outside a work tree git exits 128 and we say nothing.
status=$(git -C "$dir" -c core.quotepath=off -c color.status=never status --short --branch 2>/dev/null) || exit 0
[ -n "$status" ] || exit 0

newline='
'
first=${status%%"$newline"*}
case $status in
    *"$newline"*) changes=${status#*"$newline"} ;;
    *) changes= ;;
esac

branch=${first#'## '}
case $branch in
    'No commits yet on '*) branch="${branch#'No commits yet on '} (no commits yet)" ;;
    'HEAD (no branch)'*) branch='(detached HEAD)' ;;
    *...*) branch="${branch%%...*}, tracking ${branch#*...}" ;;
esac

echo "git branch: $branch"
if [ -z "$changes" ]; then
    echo "git status: clean"
else
    echo "git status:"
    printf '%s\n' "$changes" | awk -v max=20 '
        NR <= max { print }
        END { if (NR > max) printf "... and %d more changed paths\n", NR - max }'
fi
exit 0
