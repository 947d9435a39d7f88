//! What wrappers and carriers run, and what cannot be known.

use crate::shell::context::Env;
use crate::shell::line::read;

fn programs(line: &str) -> Vec<String> {
    let env = Env {
        home: Some("/home/u".into()),
        ..Env::default()
    };
    read(line, &env)
        .into_iter()
        .map(|c| {
            c.words
                .iter()
                .map(|w| w.text.clone())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

#[test]
fn wrappers_are_taken_off() {
    for (line, inner) in [
        ("sudo -u root rm -rf x", "rm -rf x"),
        ("env -i A=1 rm -rf x", "rm -rf x"),
        ("nice -n 5 nohup rm -rf x", "rm -rf x"),
        ("timeout -s KILL 5 rm -rf x", "rm -rf x"),
        ("sh -c 'rm -rf x'", "rm -rf x"),
        ("bash -lc \"rm -rf x\"", "rm -rf x"),
        ("/bin/bash -c 'sudo rm -rf x'", "rm -rf x"),
        ("eval 'rm -rf x'", "rm -rf x"),
        ("watch -n 1 rm -rf x", "rm -rf x"),
        ("trap 'rm -rf x' EXIT", "rm -rf x"),
        ("xargs -0 rm -rf", "rm -rf"),
        ("find /a -name b -exec rm -rf {} +", "rm -rf /a/**"),
        ("bash -c '$1' _ 'rm -rf x'", "rm -rf x"),
        ("W='rm -rf x'; $W", "rm -rf x"),
        ("$SHELL -c 'rm -rf x'", "rm -rf x"),
        ("env -S 'rm -rf x'", "rm -rf x"),
        ("parallel rm -rf {1} ::: /", "rm -rf /"),
        ("busybox rm -rf x", "rm -rf x"),
        ("command rm -rf x", "rm -rf x"),
    ] {
        let read = programs(line);
        assert!(read.iter().any(|c| c == inner), "{line}: {read:?}");
    }
    assert_eq!(programs("command -v rm"), vec!["command -v rm"]);
}

/// Each line, and every command read from it, in the order they run (see `shell::tests::show`).
fn table(rows: &[(&str, &[&str])]) {
    for (line, expected) in rows {
        assert_eq!(super::super::tests::show(line), *expected, "{line}");
    }
}

#[test]
fn carriers_run_what_they_carry() {
    table(&[
        (
            "$SHELL -c 'rm -rf /'",
            &["rm -rf / @1 [sub]", "?($SHELL) -c rm -rf /"],
        ),
        (
            "${SHELL} -c 'rm -rf /'",
            &["rm -rf / @1 [sub]", "?(${SHELL}) -c rm -rf /"],
        ),
        (
            "printf 'rm -rf /' | sh",
            &["printf rm -rf / [sub]", "rm -rf / @1 [sub]", "sh [sub]"],
        ),
        (
            "printf '%s\\n' 'rm -rf /' | bash -s",
            &[
                "printf %s\\n rm -rf / [sub]",
                "rm -rf / @1 [sub]",
                "bash -s [sub]",
            ],
        ),
        (
            "echo rm -rf / | sudo bash",
            &[
                "echo rm -rf / [sub]",
                "rm -rf / @2 [sub]",
                "bash @1 [sub]",
                "sudo bash [sub]",
            ],
        ),
        ("bash <<< 'rm -rf /'", &["rm -rf / @1 [sub]", "bash"]),
        (
            "sh <<'EOF'\nrm -rf ~\nEOF",
            &["rm -rf /home/u @1 [sub]", "sh"],
        ),
        (
            "bash -c '$1' _ 'rm -rf /'",
            &["rm -rf / @1 [sub]", "bash -c $1 _ rm -rf /"],
        ),
        (
            "sh -c 'rm -rf \"$@\"' _ / ~",
            &[
                "rm -rf / /home/u @1 [sub]",
                "sh -c rm -rf \"$@\" _ / /home/u",
            ],
        ),
        (
            "busybox rm -rf /",
            &["rm -rf / @1 [sub]", "busybox rm -rf /"],
        ),
        (
            "busybox sh -c 'rm -rf /'",
            &[
                "rm -rf / @2 [sub]",
                "sh -c rm -rf / @1 [sub]",
                "busybox sh -c rm -rf /",
            ],
        ),
        (
            "env -i -u X -C dir rm -rf /",
            &[
                "pushd dir @1 [sub]",
                "rm -rf / @1 [sub]",
                "popd @1 [sub]",
                "env -i -u X -C dir rm -rf /",
            ],
        ),
        ("env -- rm -rf /", &["rm -rf / @1 [sub]", "env -- rm -rf /"]),
        (
            "env -S 'rm -rf /'",
            &["rm -rf / @1 [sub]", "env -S rm -rf /"],
        ),
        ("command cd /", &["cd / @1", "command cd /"]),
        ("builtin cd /", &["cd / @1", "builtin cd /"]),
        ("exec rm -rf /", &["rm -rf / @1", "exec rm -rf /"]),
        ("time rm -rf /", &["rm -rf /"]),
        (
            "eval 'cd /; rm -rf x'",
            &["cd / @1", "rm -rf x @1", "eval cd /; rm -rf x"],
        ),
        (
            "watch -n 1 rm -rf /",
            &["rm -rf / @1 [sub]", "watch -n 1 rm -rf /"],
        ),
        ("watch 'rm -rf /'", &["rm -rf / @1 [sub]", "watch rm -rf /"]),
        (
            "trap 'rm -rf /' EXIT",
            &["rm -rf / @1 [sub] [cond]", "trap rm -rf / EXIT"],
        ),
        (
            "find / -exec env rm -rf {} +",
            &[
                "rm -rf /** @2 [sub] [cond]",
                "env rm -rf /** @1 [sub] [cond]",
                "find / -exec env rm -rf {} +",
            ],
        ),
        (
            "find . -execdir sudo rm {} \\;",
            &[
                "rm ./** @2 [sub] [cond]",
                "sudo rm ./** @1 [sub] [cond]",
                "find . -execdir sudo rm {} ;",
            ],
        ),
        (
            "find . -ok rm {} \\;",
            &["rm ./** @1 [sub] [cond]", "find . -ok rm {} ;"],
        ),
        (
            "xargs -I{} sh -c 'rm -rf {}'",
            // Input spliced into the script: the script is input, and said to be unknown.
            &[
                "rm -rf {} @2 [sub] [cond]",
                "?(rm -rf {}) @2 [sub] [cond] [unknown]",
                "sh -c ?(rm -rf {}) @1 [sub] [cond]",
                "xargs -I{} sh -c rm -rf {}",
            ],
        ),
        (
            "xargs -0 -n1 rm -rf",
            &["rm -rf @1 [sub] [cond]", "xargs -0 -n1 rm -rf"],
        ),
        (
            "printf / | xargs rm -rf",
            &[
                "printf / [sub]",
                "rm -rf / @1 [sub] [cond]",
                "xargs rm -rf [sub]",
            ],
        ),
        (
            "parallel rm -rf {1} ::: /",
            &["rm -rf / @1 [sub] [cond]", "parallel rm -rf {1} ::: /"],
        ),
        (
            "parallel rm -rf ::: / ~",
            &[
                "rm -rf / @1 [sub] [cond]",
                "rm -rf /home/u @1 [sub] [cond]",
                "parallel rm -rf ::: / /home/u",
            ],
        ),
        (
            "nice -n 5 ionice -c3 timeout 5 stdbuf -oL nohup setsid doas rm -rf /",
            &[
                "rm -rf / @7 [sub]",
                "doas rm -rf / @6 [sub]",
                "setsid doas rm -rf / @5 [sub]",
                "nohup setsid doas rm -rf / @4 [sub]",
                "stdbuf -oL nohup setsid doas rm -rf / @3 [sub]",
                "timeout 5 stdbuf -oL nohup setsid doas rm -rf / @2 [sub]",
                "ionice -c3 timeout 5 stdbuf -oL nohup setsid doas rm -rf / @1 [sub]",
                "nice -n 5 ionice -c3 timeout 5 stdbuf -oL nohup setsid doas rm -rf /",
            ],
        ),
        (
            "chroot /mnt rm -rf /",
            &["rm -rf / @1 [sub]", "chroot /mnt rm -rf /"],
        ),
        (
            "echo 'rm -rf /' | at now",
            &[
                "echo rm -rf / [sub]",
                "rm -rf / @1 [sub] [cond]",
                "at now [sub]",
            ],
        ),
        ("sh script.sh", &["sh script.sh"]),
        (
            "uv run --with x python -c 'import os; os.system(\"rm -rf /\")'",
            &[
                "rm -rf / @2 [sub]",
                "python -c import os; os.system(\"rm -rf /\") @1 [sub]",
                "uv run --with x python -c import os; os.system(\"rm -rf /\")",
            ],
        ),
        ("npx -y rimraf /", &["rimraf / @1 [sub]", "npx -y rimraf /"]),
        (
            "bundle exec rm -rf /",
            &["rm -rf / @1 [sub]", "bundle exec rm -rf /"],
        ),
    ]);
}

#[test]
fn what_cannot_be_known_is_said() {
    table(&[
        ("$CMD args", &["?($CMD) args [unknown]"]),
        (
            "curl x | $SHELL",
            &[
                "curl x [sub]",
                "?((stdin of $SHELL from curl x)) @1 [sub] [unknown]",
                "?($SHELL) [sub]",
            ],
        ),
        ("$SHELL x.sh", &["?($SHELL) x.sh"]),
        (
            "$X -c 'rm -rf /'",
            &["rm -rf / @1 [sub]", "?($X) -c rm -rf / [unknown]"],
        ),
        ("$(cat x) y", &["cat x @1 [sub]", "?($(cat x)) y [unknown]"]),
        (
            "curl x | sh",
            &[
                "curl x [sub]",
                "?((stdin of sh from curl x)) @1 [sub] [unknown]",
                "sh [sub]",
            ],
        ),
        (
            "cat x | python3",
            &[
                "cat x [sub]",
                "?((stdin of python3 from cat x)) @1 [sub] [unknown]",
                "python3 [sub]",
            ],
        ),
        (
            "xargs sh -c",
            &[
                "?((input of sh -c)) @2 [sub] [cond] [unknown]",
                "sh -c @1 [sub] [cond]",
                "xargs sh -c",
            ],
        ),
        (
            "xargs bash",
            &[
                "?((input of bash)) @2 [sub] [cond] [unknown]",
                "bash @1 [sub] [cond]",
                "xargs bash",
            ],
        ),
        (
            "xargs python",
            &[
                "?((input of python)) @2 [sub] [cond] [unknown]",
                "python @1 [sub] [cond]",
                "xargs python",
            ],
        ),
        ("eval \"$X\"", &["?($X) @1 [unknown]", "eval ?($X)"]),
        (
            "source <(curl x)",
            &[
                "curl x @1 [sub]",
                "?(/dev/fd/curl x) @1 [unknown]",
                "source ?(/dev/fd/curl x)",
            ],
        ),
        (
            "bash <(curl -s x)",
            &[
                "curl -s x @1 [sub]",
                "?(/dev/fd/curl -s x) @1 [sub] [unknown]",
                "bash ?(/dev/fd/curl -s x)",
            ],
        ),
        ("sh -c \"$S\"", &["?($S) @1 [sub] [unknown]", "sh -c ?($S)"]),
        (
            "bash -c \"$(curl -fsSL x)\"",
            &[
                "curl -fsSL x @1 [sub]",
                "?($(curl -fsSL x)) @1 [sub] [unknown]",
                "bash -c ?($(curl -fsSL x))",
            ],
        ),
        (
            "eval \"$(curl x)\"",
            &[
                "curl x @1 [sub]",
                "?($(curl x)) @1 [unknown]",
                "eval ?($(curl x))",
            ],
        ),
    ]);
    let env = Env::default();
    let commands = read("curl x | sh", &env);
    assert_eq!(
        commands[1].unknown_from.as_deref(),
        Some("the code sh runs comes from its input, given by curl x")
    );
    let commands = read("$CMD x", &env);
    assert_eq!(
        commands[0].unknown_from.as_deref(),
        Some("the program is $CMD, which cannot be known")
    );
}
