use super::*;

fn env() -> Env {
    let mut env = Env {
        home: Some("/home/u".into()),
        ..Env::default()
    };
    env.vars.insert("HOME".into(), "/home/u".into());
    env
}

fn programs(line: &str) -> Vec<Vec<String>> {
    read(line, &env())
        .into_iter()
        .map(|c| c.words.into_iter().map(|w| w.text).collect())
        .collect()
}

#[test]
fn operators_split_commands_and_quotes_join_words() {
    assert_eq!(
        programs("cd 'a b' && echo \"x y\"; ls|wc -l || true & sleep 1"),
        vec![
            vec!["cd", "a b"],
            vec!["echo", "x y"],
            vec!["ls"],
            vec!["wc", "-l"],
            vec!["true"],
            vec!["sleep", "1"],
        ]
    );
    assert_eq!(programs("'r''m' -rf x"), vec![vec!["rm", "-rf", "x"]]);
    assert_eq!(programs("r\\m -rf x"), vec![vec!["rm", "-rf", "x"]]);
    assert_eq!(
        programs("$'\\x72m' -rf x"),
        vec![vec!["rm", "-rf", "x"]],
        "ANSI-C quoting"
    );
}

#[test]
fn home_and_known_variables_are_expanded_and_unknown_ones_marked() {
    let commands = read("rm ~/a $HOME/b ${HOME}/c $NOPE/d ~x", &env());
    let words: Vec<(&str, bool)> = commands[0]
        .words
        .iter()
        .map(|w| (w.text.as_str(), w.known))
        .collect();
    assert_eq!(
        words,
        vec![
            ("rm", true),
            ("/home/u/a", true),
            ("/home/u/b", true),
            ("/home/u/c", true),
            ("$NOPE/d", false),
            ("~x", true)
        ]
    );
    assert_eq!(
        programs("W=~/.config/hookd; rm -rf $W"),
        vec![vec!["rm", "-rf", "/home/u/.config/hookd"]],
        "a variable set on the line is known after it"
    );
}

#[test]
fn redirections_are_read_with_their_targets() {
    let commands = read("echo hi > a 2>>b &>c 2>&1 >&2 < d >|e", &env());
    assert_eq!(commands.len(), 1);
    let redirects: Vec<(bool, &str)> = commands[0]
        .redirects
        .iter()
        .map(|r| (r.writes, r.target.text.as_str()))
        .collect();
    assert_eq!(
        redirects,
        vec![
            (true, "a"),
            (true, "b"),
            (true, "c"),
            (false, "d"),
            (true, "e")
        ]
    );
    assert_eq!(commands[0].words.len(), 2);
}

#[test]
fn nested_commands_are_read_too() {
    assert_eq!(
        programs("echo $(rm -f a) `mv b c` \"$(cat <(ls d))\""),
        vec![
            vec!["rm", "-f", "a"],
            vec!["mv", "b", "c"],
            vec!["ls", "d"],
            vec!["cat", "/dev/fd/ls d"],
            vec!["echo", "$(rm -f a)", "$(mv b c)", "$(cat <(ls d))"],
        ]
    );
    assert_eq!(
        programs("if true; then rm x; fi; for f in a b; do rm $f; done"),
        vec![vec!["true"], vec!["rm", "x"], vec!["rm", "$f"]]
    );
}

#[test]
fn here_documents_are_kept_with_their_command() {
    let commands = read("bash <<'EOF'\nrm -rf x\nEOF\necho done", &env());
    assert_eq!(commands.len(), 3, "{commands:?}");
    assert_eq!(commands[0].program(), "rm", "the shell's script is read");
    assert_eq!(commands[1].program(), "bash");
    assert_eq!(commands[2].program(), "echo");
    let commands = read("bash <<< 'rm -rf y'", &env());
    assert_eq!(commands[0].program(), "rm");
}

#[test]
fn nothing_is_lost_on_odd_input() {
    for line in [
        "", "'", "\"", "$(", "`", "${", "a >", "<<", "\\", "$'\\x", "((", "))", "|||", ";;&",
        "x=1", "2>",
    ] {
        let _ = read(line, &env());
    }
    let deep = "sh -c ".repeat(200) + "x";
    assert!(!read(&deep, &env()).is_empty());
    let nested = "$(".repeat(5000);
    assert!(!read(&nested, &env()).is_empty());
}

/// Every command read from `line`, as its words joined (an unknown word in `?(...)`), with `@N` for
/// its depth when nested, `[sub]`, `[cond]` and `[unknown: why]` when so.
fn show(line: &str) -> Vec<String> {
    read(line, &env()).iter().map(describe).collect()
}

fn describe(command: &Command) -> String {
    let mut text = command
        .words
        .iter()
        .map(|w| {
            if w.known {
                w.text.clone()
            } else {
                format!("?({})", w.text)
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    if command.depth > 0 {
        text.push_str(&format!(" @{}", command.depth));
    }
    if command.subshell {
        text.push_str(" [sub]");
    }
    if command.conditional {
        text.push_str(" [cond]");
    }
    if command.unknown_from.is_some() {
        text.push_str(" [unknown]");
    }
    text
}

#[test]
fn probe() {
    for line in std::env::var("PROBE").unwrap_or_default().split(" ;;; ") {
        if line.is_empty() {
            continue;
        }
        eprintln!("{line}\n  => {:#?}", show(line));
    }
}

/// Lines built to make a reader slow (each about 1 MB): every one is read, with a result. What they
/// cost is bounded by the budget of work per line, not asserted here as a time.
#[test]
fn pathological_lines_are_read_in_bounded_work() {
    const N: usize = 1 << 20;
    let fill = |unit: &str| unit.repeat(N / unit.len());
    let long_value = format!("a={}; ", "x".repeat(4000));
    let vars: String = (0..40_000).map(|n| format!("v{n}=1;")).collect();
    let functions: String = (1..24)
        .map(|n| format!("f{n}(){{ f{}; f{}; }}; ", n - 1, n - 1))
        .collect();
    let lines = [
        fill("$("),
        fill("<<a "),
        fill("<<a\n"),
        fill("{ "),
        fill("( "),
        fill("if "),
        fill("{ ") + &fill("fi "),
        long_value + &fill("$a "),
        vars + &fill("$(x)"),
        format!("f0(){{ rm x; }}; {functions} f23"),
        fill("{a,b}{c,d}{e,f}{g,h}{i,j} "),
        fill("sh -c "),
        fill("echo $(("),
        fill("`"),
        fill("x | "),
        fill("case x in "),
        fill("[[ "),
        fill("f(){ "),
        fill("f(){ :; }; f "),
        fill("eval "),
        fill("xargs "),
        fill("parallel a ::: b "),
        fill("a=$a$a; "),
        format!("python3 -c '{}'", fill("os.system(")),
        format!("lua -e '{}'", fill("[[")),
        format!("awk '{}'", fill("print ")),
        format!("node -e '{}'", fill("require(\"child_process\").exec(x); ")),
        format!("perl -e '{}'", fill("system ")),
    ];
    for line in &lines {
        let commands = read(line, &env());
        assert!(
            commands.len() < 4 * N,
            "{}: {} commands",
            &line[..40],
            commands.len()
        );
    }
}
