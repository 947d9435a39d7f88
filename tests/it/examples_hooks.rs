//! The example hooks of `config/` written in Python — approve-read-only, rm-to-trash, redact-secrets —
//! run as hookd runs them: a real `python3` process with the event as one line of JSON on stdin, its
//! answer read from stdout. Each test holds one promise of a script's header comment: what it answers,
//! the look-alikes it must leave alone (it prints nothing then), and for rm-to-trash that the rewritten
//! command really moves the files. Then the example settings with them, checked by `hookd check`; the
//! three as the real config/hooks.toml runs them, workers of a real daemon: one process each across
//! fires, a killed one replaced and the fires after it answered as before; and each worker's answers to
//! lines it cannot read, which never approve, rewrite, or pass an output unchecked.
//!
//! python3 is not checked for (tests/it/common/require.rs): the tests cannot do without it, and
//! spawning it fails them, loudly.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};

use crate::common::*;

/// A safety net for one run of a script (never a speed assertion).
const T: Duration = Duration::from_secs(20);

const CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/config");

/// Runs `config/SCRIPT` with python3, `event` on stdin and `env` set (HOOKD_TRASH removed unless given);
/// checks that it exits 0 with nothing on stderr, and returns its stdout as JSON, or None when it printed
/// nothing (the hook said nothing).
fn run_script(script: &str, event: &Value, env: &[(&str, &str)]) -> Option<Value> {
    run_script_raw(script, &event.to_string(), env)
}

fn run_script_raw(script: &str, stdin: &str, env: &[(&str, &str)]) -> Option<Value> {
    let mut cmd = Command::new("python3");
    cmd.arg(Path::new(CONFIG).join(script))
        .env_remove("HOOKD_TRASH");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = run_with_deadline(cmd, Some(&format!("{stdin}\n")), T);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(
        code(&out.status),
        0,
        "{script} on {stdin}: {stdout} {stderr}"
    );
    assert_eq!(stderr, "", "{script} on {stdin} wrote to stderr");
    let stdout = stdout.trim();
    if stdout.is_empty() {
        return None;
    }
    Some(
        serde_json::from_str(stdout)
            .unwrap_or_else(|e| panic!("{script} on {stdin}: {e}: {stdout}")),
    )
}

/// A project folder `proj` in a sandbox, with files to read and delete, and beside it a folder
/// `outside` that symlinks in the project point to.
struct Project {
    sb: Sandbox,
}

impl Project {
    fn new() -> Project {
        let sb = Sandbox::new();
        for dir in ["proj/src", "proj/build/obj", "outside"] {
            fs::create_dir_all(sb.p(dir)).unwrap();
        }
        for (file, content) in [
            ("proj/notes", "rm the old logs\n"),
            ("proj/my notes.txt", "a space in the name\n"),
            ("proj/src/main.rs", "fn main() {} // TODO\n"),
            ("proj/src/lib.rs", "// TODO\n"),
            ("proj/src/a.o", ""),
            ("proj/src/b.o", ""),
            ("proj/build/obj/x.o", ""),
            ("outside/secret", "not the project's\n"),
        ] {
            fs::write(sb.p(file), content).unwrap();
        }
        std::os::unix::fs::symlink(sb.p("outside/secret"), sb.p("proj/link-out")).unwrap();
        std::os::unix::fs::symlink(sb.p("outside"), sb.p("proj/dir-out")).unwrap();
        Project { sb }
    }

    fn dir(&self) -> PathBuf {
        self.sb.p("proj")
    }

    fn cwd(&self) -> String {
        self.dir().to_str().unwrap().to_string()
    }

    /// A PreToolUse event for the Bash tool running `command` in the project, as Claude Code sends it.
    fn bash(&self, command: &str) -> Value {
        bash_in(&self.cwd(), command)
    }
}

fn bash_in(cwd: &str, command: &str) -> Value {
    json!({
        "session_id": "s1", "hook_event_name": "PreToolUse", "cwd": cwd, "tool_name": "Bash",
        "tool_input": {"command": command, "description": "a command"},
    })
}

// ---- approve-read-only.py ------------------------------------------------------------------------------

const APPROVE: &str = "approve-read-only.py";

fn approved(p: &Project, command: &str) -> bool {
    match run_script(APPROVE, &p.bash(command), &[]) {
        None => false,
        Some(answer) => {
            assert_eq!(
                answer,
                json!({"allow": "read-only command"}),
                "on {command:?}"
            );
            true
        }
    }
}

#[test]
fn approve_read_only_approves_commands_that_only_read() {
    let p = Project::new();
    let inside = format!("{}/notes", p.cwd());
    for command in [
        "ls",
        "ls -la src",
        "pwd",
        "git status",
        "git status --porcelain",
        "git log --oneline -5",
        "git diff HEAD~1 -- src",
        "git show HEAD:src/main.rs",
        "git --no-pager log -p",
        "git branch",
        "git branch -a -v",
        "git branch --list 'feat*'",
        "cat src/main.rs",
        "cat 'my notes.txt'",
        &format!("cat {inside}"),
        "cat src/../notes",
        "head -n 5 notes",
        "tail -3 notes",
        "tail -n +2 notes",
        "wc -l notes src/main.rs",
        "grep 'rm' notes",
        "grep -rn TODO src",
        "grep -e x -e y notes",
        "rg -i todo",
        "rg -n 'fn main' src",
        "cat src/*.rs",
        "git log --oneline | head -20",
        "git status && git diff",
        "grep -c TODO src/main.rs | wc -l",
    ] {
        assert!(approved(&p, command), "{command:?} was not approved");
    }
}

#[test]
fn approve_read_only_says_nothing_of_commands_that_do_more_than_read() {
    let p = Project::new();
    for command in [
        // look-alikes: the words of a reader, or of a writer, in another role
        "echo \"rm -rf x\"",
        "ls > out.txt",
        "ls >> out.txt",
        "cat notes > copy",
        "grep x notes | tee copy",
        "git log | sh",
        // chains with a command that is not read-only
        "ls; rm -rf x",
        "ls && rm -rf x",
        "git status && git commit -am wip",
        "ls || rm x",
        "ls &",
        "ls\nrm x",
        // expansions and settings
        "cat $(cat list)",
        "cat `cat list`",
        "cat \"$HOME/.bashrc\"",
        "FOO=1 ls",
        "sudo cat notes",
        "cat {notes,src/main.rs}",
        // git that writes, or reads outside the repository, or runs what an option names
        "git branch new-feature",
        "git branch -D main",
        "git branch -m old new",
        "git diff --output=patch",
        "git diff --no-index /etc/passwd notes",
        "git -c core.pager=sh log",
        "git commit -m x",
        "git push",
        // options of readers that do more
        "tail -f notes",
        "grep -R TODO .",
        "grep -f patterns notes",
        "rg --pre cat x",
        "rg -L x",
        "wc --files0-from=list",
        "rm -rf x",
        "python3 -c 'print(1)'",
    ] {
        assert!(!approved(&p, command), "{command:?} was approved");
    }
}

#[test]
fn approve_read_only_says_nothing_of_paths_outside_the_project() {
    let p = Project::new();
    let outside = p.sb.p("outside/secret");
    for command in [
        "cat ../../etc/passwd",
        "cat /etc/passwd",
        "cat ../outside/secret",
        "cat src/../../outside/secret",
        &format!("cat {}", outside.display()),
        "cat ~/.ssh/id_rsa",
        "cat '~/.ssh/id_rsa'",
        "cat ~root/.bashrc",
        "cat a=~/.bashrc",
        "cat link-out",
        "cat dir-out/secret",
        "grep -r x dir-out",
        "head ../outside/secret",
        "rg x /etc",
        "rg --files /etc",
        "grep --color x /etc/passwd",
        "ls /etc",
        // a glob that reaches the symlink out, or could match . or ..
        "cat *",
        "cat .*/secret",
        "git log && cat /etc/passwd",
    ] {
        assert!(!approved(&p, command), "{command:?} was approved");
    }
}

#[test]
fn approve_read_only_says_nothing_where_there_is_no_project() {
    // A cwd of / (or your home) holds everything: no path there is approved; git needs none.
    for command in ["cat etc/passwd", "ls", "grep -r x"] {
        assert_eq!(
            run_script(APPROVE, &bash_in("/", command), &[]),
            None,
            "{command:?}"
        );
    }
    let no_cwd = json!({"tool_name": "Bash", "tool_input": {"command": "cat notes"}});
    assert_eq!(run_script(APPROVE, &no_cwd, &[]), None);
}

#[test]
fn approve_read_only_never_refuses_and_ignores_what_is_not_a_bash_call() {
    let p = Project::new();
    let read = json!({"cwd": p.cwd(), "tool_name": "Read", "tool_input": {"file_path": "notes"}});
    assert_eq!(run_script(APPROVE, &read, &[]), None);
    let argv = json!({"cwd": p.cwd(), "tool_name": "Bash", "tool_input": {"command": ["ls"]}});
    assert_eq!(run_script(APPROVE, &argv, &[]), None);
    // Run in another folder than the event's cwd (Gemini CLI's "directory"): not judged.
    let mut elsewhere = p.bash("cat notes");
    elsewhere["tool_input"]["directory"] = json!("/etc");
    assert_eq!(run_script(APPROVE, &elsewhere, &[]), None);
    elsewhere["tool_input"]["directory"] = json!(p.cwd());
    assert!(run_script(APPROVE, &elsewhere, &[]).is_some());
    for stdin in ["", "not json", "[1,2]", "{\"tool_input\": 3}"] {
        assert_eq!(run_script_raw(APPROVE, stdin, &[]), None, "{stdin:?}");
    }
}

// ---- rm-to-trash.py ------------------------------------------------------------------------------------

const TRASH: &str = "rm-to-trash.py";

/// The rewritten command for `command` in the project, or None when the hook said nothing. Checks that
/// the answer is a rewrite of the command alone: nothing added, no other field of tool_input given.
fn rewritten(p: &Project, command: &str, env: &[(&str, &str)]) -> Option<String> {
    let answer = run_script(TRASH, &p.bash(command), env)?;
    let fields: Vec<&String> = answer.as_object().unwrap().keys().collect();
    assert_eq!(fields, ["input"], "on {command:?}: {answer}");
    let input = answer["input"].as_object().unwrap();
    assert_eq!(input.len(), 1, "on {command:?}: {answer}");
    Some(input["command"].as_str().unwrap().to_string())
}

/// Splits `mkdir -p -- TRASH && mv -- PATHS TRASH/` into (TRASH, PATHS) as written; panics on any
/// other shape.
fn trash_and_paths(command: &str) -> (String, String) {
    let rest = command
        .strip_prefix("mkdir -p -- ")
        .unwrap_or_else(|| panic!("{command}"));
    let (trash, mv) = rest.split_once(" && mv -- ").unwrap();
    let paths = mv
        .strip_suffix(&format!(" {trash}/"))
        .unwrap_or_else(|| panic!("{command}"));
    (trash.to_string(), paths.to_string())
}

/// Runs `command` with sh in the project, as the agent would.
fn sh_in(p: &Project, command: &str) {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c").arg(command).current_dir(p.dir());
    let out = run_with_deadline(cmd, None, T);
    assert!(out.status.success(), "{command}: {}", text(&out.stderr));
}

#[test]
fn rm_to_trash_rewrites_one_rm_into_a_move_that_works() {
    let p = Project::new();
    let command = rewritten(&p, "rm -rf build \"my notes.txt\"", &[]).expect("rewritten");
    let (trash, paths) = trash_and_paths(&command);
    assert_eq!(paths, "build 'my notes.txt'");
    // <cwd>/.trash/<UTC time>, e.g. 20261201T061500.123456Z
    let stamp = trash
        .strip_prefix(&format!("{}/.trash/", p.cwd()))
        .unwrap_or_else(|| panic!("{trash}"));
    assert!(
        stamp.len() == 23 && stamp.as_bytes()[8] == b'T' && stamp.ends_with('Z'),
        "{stamp}"
    );

    sh_in(&p, &command);
    assert!(!p.sb.p("proj/build").exists() && !p.sb.p("proj/my notes.txt").exists());
    assert!(Path::new(&trash).join("build/obj/x.o").is_file(), "{trash}");
    assert_eq!(
        fs::read_to_string(Path::new(&trash).join("my notes.txt")).unwrap(),
        "a space in the name\n"
    );
}

#[test]
fn rm_to_trash_keeps_globs_for_the_shell_and_quotes_everything_else() {
    let p = Project::new();
    for (rm, paths) in [
        ("rm -f src/*.o", "src/*.o"),
        ("rm 'src/*.o'", "'src/*.o'"),
        ("rm -i -v notes", "notes"),
        ("rm -r -f build", "build"),
        ("rm -fr build", "build"),
        ("rm notes -f", "notes"),
        ("rm -- -x", "-x"),
        ("rm \"it's\"", "'it'\"'\"'s'"),
        ("rm ~/junk", "~/junk"),
        // outside the project too: moving is safer than deleting
        ("rm -rf ../outside", "../outside"),
        ("rm ../other/file", "../other/file"),
        // without -f a path not there stays, for mv to say so as rm would; with -f it is left out
        ("rm missing", "missing"),
        ("rm -f missing notes src/*.zz src/*.o", "notes src/*.o"),
    ] {
        let command = rewritten(&p, rm, &[]).unwrap_or_else(|| panic!("{rm:?} not rewritten"));
        assert_eq!(trash_and_paths(&command).1, paths, "{rm:?}");
    }

    // The shell expands the glob for mv as it would have for rm.
    let command = rewritten(&p, "rm -f src/*.o", &[]).unwrap();
    sh_in(&p, &command);
    let trash = trash_and_paths(&command).0;
    assert!(Path::new(&trash).join("a.o").is_file() && Path::new(&trash).join("b.o").is_file());
    assert!(!p.sb.p("proj/src/a.o").exists() && p.sb.p("proj/src/main.rs").exists());
}

#[test]
fn rm_to_trash_uses_hookd_trash_when_set() {
    let p = Project::new();
    let trash = p.sb.p("my trash");
    let trash = trash.to_str().unwrap();
    let command = rewritten(&p, "rm notes", &[("HOOKD_TRASH", trash)]).unwrap();
    assert_eq!(
        command,
        format!("mkdir -p -- '{trash}' && mv -- notes '{trash}'/")
    );
    sh_in(&p, &command);
    assert!(p.sb.p("my trash/notes").is_file());
}

#[test]
fn rm_to_trash_says_nothing_of_anything_but_one_plain_rm() {
    let p = Project::new();
    for command in [
        // look-alikes
        "echo \"rm -rf x\"",
        "grep 'rm' notes",
        "git rm notes",
        // more than one rm, or rm fed by something else
        "rm a; rm b",
        "rm a && ls",
        "ls && rm a",
        "ls | xargs rm",
        "xargs rm < list",
        "rm $(cat list)",
        "rm `cat list`",
        "find . -name '*.o' -delete",
        "sudo rm x",
        "FOO=1 rm x",
        "rm \"$DIR\"",
        "rm $DIR/x",
        "rm {a,b}",
        "rm [ab]",
        "rm ~root/x",
        "rm x > log",
        "rm x\nrm y",
        // rm of nothing, or with options it does not rewrite
        "rm",
        "rm -rf",
        "rm -f missing",
        "rm -rf missing/ src/*.zz",
        "rm -rf --",
        "rm ''",
        "rm -rf --no-preserve-root x",
        "rm --one-file-system -r x",
        // what cannot or must not be moved into the trash
        "rm -rf .",
        "rm -rf ..",
        "rm -rf /",
        "rm -rf /usr",
        "rm -rf ~",
        "rm -rf .*",
        &format!("rm -rf {}", p.cwd()),
        "rm -rf .trash",
        "rm -rf .trash/20261201T061500.123456Z",
    ] {
        assert_eq!(
            rewritten(&p, command, &[]),
            None,
            "{command:?} was rewritten"
        );
    }
    let no_cwd = json!({"tool_name": "Bash", "tool_input": {"command": "rm x"}});
    assert_eq!(run_script(TRASH, &no_cwd, &[]), None);
    let mut elsewhere = p.bash("rm notes");
    elsewhere["tool_input"]["workdir"] = json!("src");
    assert_eq!(run_script(TRASH, &elsewhere, &[]), None);
    for stdin in ["", "not json", "{\"tool_input\": {\"command\": 5}}"] {
        assert_eq!(run_script_raw(TRASH, stdin, &[]), None, "{stdin:?}");
    }
}

// ---- redact-secrets.py ---------------------------------------------------------------------------------

const REDACT: &str = "redact-secrets.py";

/// A PostToolUse event for Bash whose tool_response is `response`.
fn post(response: Value) -> Value {
    json!({
        "session_id": "s1", "hook_event_name": "PostToolUse", "cwd": "/tmp", "tool_name": "Bash",
        "tool_input": {"command": "cat .env"}, "tool_response": response,
    })
}

/// What the hook makes of a tool_response that is one string: the redacted string, or None.
fn redacted(output: &str) -> Option<String> {
    let answer = run_script(REDACT, &post(json!(output)), &[])?;
    assert_eq!(answer.as_object().unwrap().len(), 1, "{answer}");
    Some(
        answer["output"]
            .as_str()
            .expect("a string for a string")
            .to_string(),
    )
}

/// Secrets of every kind, made up (and built at run time, so that no scanner takes this file for a leak).
fn secrets() -> Vec<(&'static str, String)> {
    let alnum36 = "a1B2c3D4e5F6g7H8i9J0".repeat(2)[..36].to_string();
    vec![
        ("aws-access-key", "AKIAIOSFODNN7EXAMPLE".to_string()),
        ("github-token", format!("ghp_{alnum36}")),
        ("github-token", format!("gho_{alnum36}")),
        ("github-token", format!("ghs_{alnum36}")),
        ("github-token", format!("ghu_{alnum36}")),
        (
            "github-token",
            format!("github_pat_11{}_{}", "A".repeat(20), alnum36),
        ),
        (
            "slack-token",
            format!("xoxb-{}-{}", "1234567890", "AbCdEfGhIjKl"),
        ),
        ("slack-token", format!("xoxp-{}", "1234-5678-abcdefghij")),
        ("openai-key", format!("sk-{}", alnum36)),
        ("openai-key", format!("sk-proj-{}", alnum36)),
        ("anthropic-key", format!("sk-ant-api03-{}", alnum36)),
        (
            "jwt",
            format!(
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.{}",
                alnum36
            ),
        ),
    ]
}

#[test]
fn redact_secrets_redacts_each_kind_of_token() {
    for (kind, secret) in secrets() {
        let output = format!("found: {secret} (at line 3)\n");
        let got = redacted(&output).unwrap_or_else(|| panic!("{kind} {secret} not redacted"));
        assert_eq!(
            got,
            format!("found: [REDACTED:{kind}] (at line 3)\n"),
            "{secret}"
        );
    }
}

#[test]
fn redact_secrets_redacts_private_keys_headers_and_assignments() {
    let body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ";
    for (output, expected) in [
        (
            format!(
                "-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n{body}\n\
                 -----END OPENSSH PRIVATE KEY-----\nnext line\n"
            ),
            "[REDACTED:private-key]\nnext line\n".to_string(),
        ),
        (
            format!("-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"),
            "[REDACTED:private-key]".to_string(),
        ),
        // cut short (head -3 id_rsa): redacted to the end
        (
            format!("-----BEGIN PRIVATE KEY-----\n{body}\n"),
            "[REDACTED:private-key]".to_string(),
        ),
        (
            "curl -H 'Authorization: Bearer abc.DEF-123_x' https://api".to_string(),
            "curl -H 'Authorization: Bearer [REDACTED:bearer-token]' https://api".to_string(),
        ),
        (
            "authorization: token 0123456789abcdef\n".to_string(),
            "authorization: token [REDACTED:bearer-token]\n".to_string(),
        ),
        (
            "password=hunter2\nDB_PASSWORD='s3cr3t pass'\nGITHUB_TOKEN=abc123\n\
             client_secret=xyz\napi_key=k1\n"
                .to_string(),
            "password=[REDACTED:password]\nDB_PASSWORD='[REDACTED:password]'\nGITHUB_TOKEN=[REDACTED:token]\n\
             client_secret=[REDACTED:secret]\napi_key=[REDACTED:api-key]\n"
                .to_string(),
        ),
        (
            "GET /v1/items?token=abc123&page=2".to_string(),
            "GET /v1/items?token=[REDACTED:token]&page=2".to_string(),
        ),
        (
            "{\"password\": \"hunter2\", \"user\": \"bob\"}".to_string(),
            "{\"password\": \"[REDACTED:password]\", \"user\": \"bob\"}".to_string(),
        ),
        // a token named by an assignment is redacted once, by its kind
        (
            format!("SLACK_TOKEN={}", "xoxb-1234567890-AbCdEfGhIjKl"),
            "SLACK_TOKEN=[REDACTED:slack-token]".to_string(),
        ),
    ] {
        assert_eq!(redacted(&output).as_deref(), Some(expected.as_str()), "{output:?}");
    }
}

#[test]
fn redact_secrets_says_nothing_of_clean_output() {
    for output in [
        "",
        "total 0\ndrwxr-xr-x 2 me me 40 Dec  1 06:00 src\n",
        "max_tokens=100 tokenizer=bpe num_tokens: 5",
        "connect(password=password, token=self.token)",
        "password=$DB_PASSWORD token=${TOKEN} secret={{ vault.secret }} api_key=<your key>",
        "password= token=\"\" secret=*****",
        "risk-assessment-framework-document and ask-the-user-before-deleting",
        "AKIA is a prefix; ghp_ too; sk-short",
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
        "Authorization: Bearer $TOKEN",
        "already [REDACTED:github-token]",
    ] {
        assert_eq!(redacted(output), None, "{output:?}");
    }
    // Clean objects, arrays, numbers; and events with no tool_response at all.
    let claude = json!({"stdout": "ok\n", "stderr": "", "interrupted": false, "isImage": false});
    assert_eq!(run_script(REDACT, &post(claude), &[]), None);
    assert_eq!(
        run_script(REDACT, &post(json!([1, "two", null])), &[]),
        None
    );
    let pre = bash_in("/tmp", "echo password=hunter2");
    assert_eq!(run_script(REDACT, &pre, &[]), None);
    for stdin in ["", "not json", "[\"password=x\"]"] {
        assert_eq!(run_script_raw(REDACT, stdin, &[]), None, "{stdin:?}");
    }
}

#[test]
fn redact_secrets_keeps_the_shape_of_the_response() {
    let aws = "AKIAIOSFODNN7EXAMPLE";
    // Claude Code's Bash: an object; only the field with the secret changes.
    let claude = json!({
        "stdout": format!("AWS_ACCESS_KEY_ID={aws}\nregion=eu-west-1\n"),
        "stderr": "warning: password=hunter2",
        "interrupted": false, "isImage": false, "exitCode": 0,
    });
    let answer = run_script(REDACT, &post(claude), &[]).expect("redacted");
    assert_eq!(
        answer,
        json!({"output": {
            "stdout": "AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key]\nregion=eu-west-1\n",
            "stderr": "warning: password=[REDACTED:password]",
            "interrupted": false, "isImage": false, "exitCode": 0,
        }})
    );

    // An MCP tool's content blocks: nested objects and arrays, keys kept (even a key named like a secret).
    let mcp = json!({
        "content": [
            {"type": "text", "text": format!("key {aws}")},
            {"type": "text", "text": "nothing here"},
        ],
        "isError": false,
        "token=abc": ["kept key", 3, null],
    });
    let answer = run_script(REDACT, &post(mcp), &[]).expect("redacted");
    assert_eq!(
        answer,
        json!({"output": {
            "content": [
                {"type": "text", "text": "key [REDACTED:aws-access-key]"},
                {"type": "text", "text": "nothing here"},
            ],
            "isError": false,
            "token=abc": ["kept key", 3, null],
        }})
    );

    // A string in, a string out; an array in, an array out.
    let answer = run_script(REDACT, &post(json!(format!("id {aws}"))), &[]).unwrap();
    assert_eq!(answer, json!({"output": "id [REDACTED:aws-access-key]"}));
    let answer = run_script(REDACT, &post(json!(["a", format!("b {aws}"), 1])), &[]).unwrap();
    assert_eq!(
        answer,
        json!({"output": ["a", "b [REDACTED:aws-access-key]", 1]})
    );
}

// ---- the example settings with them --------------------------------------------------------------------

#[test]
fn the_example_scripts_are_executable_and_in_the_example_settings() {
    for script in [APPROVE, TRASH, REDACT] {
        let mode = fs::metadata(Path::new(CONFIG).join(script))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(
            mode & 0o111,
            0o111,
            "{script}: mode {mode:o}, not executable"
        );
    }
    let sb = Sandbox::with_example_config();
    let out = run_hookd(
        &["check", "--config", sb.config().to_str().unwrap()],
        None,
        T,
    );
    let listing = text(&out.stdout);
    assert_eq!(code(&out.status), 0, "{listing} {}", text(&out.stderr));
    for (name, line_has) in [
        ("approve-read-only", "matcher \"Bash\""),
        ("rm-to-trash", "(disabled)"),
        ("redact-secrets", "timeout 5s"),
    ] {
        let line = listing
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} not listed: {listing}"));
        assert!(line.contains(line_has), "{line}");
        let worker = format!("worker [\"./{name}.py\", \"--worker\"] x1");
        assert!(line.contains(&worker), "{name} is not a worker: {line}");
    }
}

/// A daemon on a copy of config/ as it stands (the example settings and every script), with rm-to-trash
/// turned on in the copy, and a project `proj` holding `build/` and `notes.txt`.
struct Examples {
    d: Daemon,
    cwd: String,
}

impl Examples {
    fn start() -> Examples {
        let sb = Sandbox::with_example_config();
        let settings = fs::read_to_string(sb.config()).unwrap();
        let (before, after) = settings.split_once("name = \"rm-to-trash\"").unwrap();
        assert!(
            after.contains("\nenabled = false\n"),
            "rm-to-trash is on already"
        );
        let after = after.replacen("\nenabled = false\n", "\nenabled = true\n", 1);
        fs::write(
            sb.config(),
            format!("{before}name = \"rm-to-trash\"{after}"),
        )
        .unwrap();
        fs::create_dir_all(sb.p("proj/build")).unwrap();
        fs::write(sb.p("proj/notes.txt"), "hi\n").unwrap();
        let cwd = sb.p("proj").to_str().unwrap().to_string();
        Examples {
            d: Daemon::start(sb),
            cwd,
        }
    }

    /// The one worker of hook `name` in `status`, running: its pid.
    fn worker_pid(&self, name: &str) -> i32 {
        let status = self.d.status();
        let slots = status["workers"][name]
            .as_array()
            .unwrap_or_else(|| panic!("{name} is no worker: {status}"));
        assert_eq!(slots.len(), 1, "{status}");
        assert_eq!(slots[0]["state"], "running", "{status}");
        slots[0]["pid"].as_i64().expect("a pid") as i32
    }

    fn bash(&self, command: &str) -> Value {
        self.d.fire("PreToolUse", bash_in(&self.cwd, command))
    }

    fn post(&self, stdout: &str) -> Value {
        let mut event = post(json!({"stdout": stdout, "stderr": ""}));
        event["cwd"] = json!(self.cwd);
        self.d.fire("PostToolUse", event)
    }

    /// Fires what each of the three answers and checks the answer: approve-read-only allows `ls -la`,
    /// rm-to-trash rewrites `rm -rf build`, redact-secrets redacts a key and says nothing of clean output.
    /// `failed` lists hooks allowed to have failed instead (a worker just killed).
    fn expect_answers(&self, failed: &[&str]) {
        let may_fail = |name: &str, h: &Value| failed.contains(&name) && h["outcome"] == "failed";
        let resp = self.bash("ls -la");
        let h = hook(&resp, "approve-read-only");
        if !may_fail("approve-read-only", h) {
            assert_eq!(h["outcome"], "allowed", "{resp}");
            assert_eq!(resp["permission"], "allow", "{resp}");
        }
        let h = hook(&resp, "rm-to-trash");
        assert!(
            may_fail("rm-to-trash", h) || h["outcome"] == "nothing",
            "{resp}"
        );

        let resp = self.bash("rm -rf build");
        assert_eq!(resp["refused"], false, "{resp}");
        let h = hook(&resp, "approve-read-only");
        assert!(
            may_fail("approve-read-only", h) || h["outcome"] == "nothing",
            "{resp}"
        );
        let h = hook(&resp, "rm-to-trash");
        if !may_fail("rm-to-trash", h) {
            assert_eq!(h["outcome"], "rewrote", "{resp}");
            let command = resp["input"]["command"].as_str().unwrap_or_default();
            let trash = format!("mkdir -p -- {}/.trash/", self.cwd);
            assert!(
                command.starts_with(&trash) && command.contains(" && mv -- build "),
                "{resp}"
            );
        }

        let resp = self.post("AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n");
        let h = hook(&resp, "redact-secrets");
        if !may_fail("redact-secrets", h) {
            assert_eq!(h["outcome"], "rewrote", "{resp}");
            assert_eq!(
                resp["output"]["stdout"], "AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key]\n",
                "{resp}"
            );
        }
        let resp = self.post("nothing secret here\n");
        let h = hook(&resp, "redact-secrets");
        if !may_fail("redact-secrets", h) {
            assert_eq!(h["outcome"], "nothing", "{resp}");
            assert!(resp.get("output").is_none(), "{resp}");
        }
    }
}

const WORKERS: [(&str, &str); 3] = [
    ("approve-read-only", APPROVE),
    ("rm-to-trash", TRASH),
    ("redact-secrets", REDACT),
];

/// The example settings run the three as workers: one process each, started with the settings, answers
/// fire after fire as the one-shot scripts do.
#[test]
fn the_example_settings_run_the_three_scripts_as_workers() {
    let e = Examples::start();
    let pids: Vec<i32> = WORKERS.iter().map(|(name, _)| e.worker_pid(name)).collect();
    for _ in 0..5 {
        e.expect_answers(&[]);
    }
    let after: Vec<i32> = WORKERS.iter().map(|(name, _)| e.worker_pid(name)).collect();
    assert_eq!(after, pids, "a worker was replaced");
    // Read once they answered: a pid just started may not have exec'd the script yet.
    for ((_, script), pid) in WORKERS.iter().zip(&pids) {
        let cmdline = fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap();
        assert!(
            cmdline.contains(&format!("{script}\0--worker")),
            "{cmdline:?}"
        );
    }
}

/// A worker killed is started again, and the fires after it are answered as before; the fire that found
/// it dead fails (on_failure "ignore": the agent goes on as without the hook), never a wrong answer.
#[test]
fn a_killed_example_worker_is_replaced_and_answers_again() {
    let e = Examples::start();
    for (name, _) in WORKERS {
        let pid = e.worker_pid(name);
        kill(Pid::from_raw(pid), Signal::SIGKILL).unwrap();
        e.expect_answers(&[name]);
        wait_until(T, &format!("a new {name} worker"), || {
            let status = e.d.status();
            let slot = &status["workers"][name][0];
            slot["state"] == "running" && slot["pid"].as_i64().is_some_and(|p| p as i32 != pid)
        });
        e.expect_answers(&[]);
    }
}

/// Runs `config/SCRIPT --worker` with `lines` on stdin; returns (exit code, the answers, stderr).
fn run_worker(script: &str, lines: &[&str]) -> (i32, Vec<Value>, String) {
    let mut cmd = Command::new("python3");
    cmd.arg(Path::new(CONFIG).join(script))
        .arg("--worker")
        .env_remove("HOOKD_TRASH");
    let out = run_with_deadline(cmd, Some(&(lines.join("\n") + "\n")), T);
    let answers = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{script}: {e}: {l}")))
        .collect();
    (code(&out.status), answers, text(&out.stderr))
}

/// Lines that are no event: not JSON, a cut event that names its hookd_id, an array, a blank line.
const UNREADABLE: [&str; 4] = [
    "not json",
    "{\"hookd_id\": 7, \"tool_input\": {\"command\": \"ls\"",
    "[1, 2]",
    "",
];

/// Each line that is no event gets one well-formed answer (a blank line none, or every later answer would
/// be one behind), carrying its hookd_id where it can be found, and saying nothing: no approval, no
/// rewrite. The events after them are answered as ever.
#[test]
fn the_approver_and_the_trash_workers_say_nothing_to_lines_they_cannot_read() {
    let p = Project::new();
    let event = |id: i64, command: &str| {
        let mut event = p.bash(command);
        event["hookd_id"] = json!(id);
        event.to_string()
    };
    for (script, good, answer) in [
        (APPROVE, "cat notes", "allow"),
        (TRASH, "rm notes", "input"),
    ] {
        let (good, other) = (event(8, good), event(9, "echo hi"));
        let lines: Vec<&str> = UNREADABLE
            .iter()
            .copied()
            .chain([good.as_str(), other.as_str()])
            .collect();
        let (code, answers, stderr) = run_worker(script, &lines);
        assert_eq!(code, 0, "{script}: {stderr}");
        assert_eq!(answers.len(), 5, "{script}: {answers:?}");
        assert_eq!(
            answers[..3],
            [json!({}), json!({"hookd_id": 7}), json!({})],
            "{script}"
        );
        assert_eq!(answers[3]["hookd_id"], 8, "{script}");
        assert!(answers[3].get(answer).is_some(), "{script}: {}", answers[3]);
        assert_eq!(answers[4], json!({"hookd_id": 9}), "{script}");
        // Why, on stderr (hookd's log): the two lines that are not JSON.
        assert_eq!(
            stderr.matches("an event could not be read").count(),
            2,
            "{script}: {stderr}"
        );
    }
}

/// The redactor cannot look at the output of a line it cannot read: it withholds it, with a refusal that
/// says why, rather than say nothing and let it through unchecked.
#[test]
fn the_redactor_worker_withholds_what_it_cannot_read() {
    let secret = json!({"hookd_id": 8, "tool_name": "Bash",
                        "tool_response": {"stdout": "id AKIAIOSFODNN7EXAMPLE", "stderr": ""}})
    .to_string();
    let clean = json!({"hookd_id": 9, "tool_response": "clean"}).to_string();
    let no_output = json!({"hookd_id": 10, "tool_name": "Read"}).to_string();
    let lines: Vec<&str> = UNREADABLE
        .iter()
        .copied()
        .chain([secret.as_str(), clean.as_str(), no_output.as_str()])
        .collect();
    let (code, answers, stderr) = run_worker(REDACT, &lines);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(answers.len(), 6, "{answers:?}");
    for (answer, id) in answers[..3].iter().zip([None, Some(7), None]) {
        assert_eq!(
            answer.get("hookd_id").and_then(Value::as_i64),
            id,
            "{answer}"
        );
        let reason = answer["refused"].as_str().unwrap_or_default();
        assert!(
            reason.starts_with("redact-secrets could not check this tool's output for secrets"),
            "{answer}"
        );
        let shown = answer["output"].as_str().unwrap_or_default();
        assert!(
            shown.starts_with("[redact-secrets withheld this tool's output: "),
            "{answer}"
        );
    }
    assert_eq!(
        answers[3],
        json!({"hookd_id": 8, "output": {"stdout": "id [REDACTED:aws-access-key]", "stderr": ""}})
    );
    assert_eq!(answers[4], json!({"hookd_id": 9}));
    assert_eq!(answers[5], json!({"hookd_id": 10}));
    assert_eq!(
        stderr.matches("an event could not be read").count(),
        3,
        "{stderr}"
    );
}

/// A wrong argument is an error, not a one-shot that waits for an event.
#[test]
fn the_example_scripts_refuse_unknown_arguments() {
    for (name, script) in WORKERS {
        let mut cmd = Command::new("python3");
        cmd.arg(Path::new(CONFIG).join(script)).arg("--wroker");
        let out = run_with_deadline(cmd, Some(""), T);
        assert_eq!(code(&out.status), 1, "{script}");
        assert_eq!(
            text(&out.stderr),
            format!(
                "{name}: unknown arguments '--wroker': give --worker (a hookd worker hook) or nothing \
                 (a command hook)\n"
            )
        );
    }
}
