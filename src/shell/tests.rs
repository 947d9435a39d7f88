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
        vec![
            vec!["true"],
            vec!["rm", "x"],
            vec!["rm", "a"],
            vec!["rm", "b"]
        ]
    );
}

#[test]
fn a_substitution_of_what_echo_or_printf_prints_is_that_text() {
    // The word is the output, split at blanks unquoted; the echo is read too, nested.
    assert_eq!(
        programs("$(echo ls) -la; `echo pwd`; $(printf 'rm -rf') ~"),
        vec![
            vec!["echo", "ls"],
            vec!["ls", "-la"],
            vec!["echo", "pwd"],
            vec!["pwd"],
            vec!["printf", "rm -rf"],
            vec!["rm", "-rf", "/home/u"],
        ]
    );
    assert_eq!(
        programs("touch \"$(echo a b)\""),
        vec![vec!["echo", "a", "b"], vec!["touch", "a b"]],
        "quoted, one word"
    );
    // What is not known stays a command's output: another program, an unknown word, two commands.
    for line in [
        "$(cat f) x",
        "$(echo $X) x",
        "$(echo a; echo b) x",
        "$(echo a | tr a b) x",
    ] {
        let commands = read(line, &env());
        let last = commands.last().expect(line);
        assert!(!last.words[0].known, "{line}: {commands:?}");
    }
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
pub(super) fn show(line: &str) -> Vec<String> {
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

/// Each line, and every command read from it (see [`show`]), in the order they run.
fn table(rows: &[(&str, &[&str])]) {
    for (line, expected) in rows {
        assert_eq!(show(line), *expected, "{line}");
    }
}

#[test]
fn a_function_runs_where_it_is_called_not_where_it_is_defined() {
    table(&[
        ("f() { rm -rf /; }", &[]),
        ("function f { rm -rf /; }", &[]),
        ("function f() { rm -rf /; }", &[]),
        ("f() { rm -rf /; }; f", &["rm -rf / @1", "f"]),
        (
            "function f { rm -rf ~; }\necho hi; f",
            &["echo hi", "rm -rf /home/u @1", "f"],
        ),
        (
            "f(){ rm \"$1\"; }; f /x; f /y",
            &["rm /x @1", "f /x", "rm /y @1", "f /y"],
        ),
        ("f(){ f; }; f", &["f @1", "f"]),
        (
            "f(){ g; }; g(){ f; rm x; }; f",
            &["f @2", "rm x @2", "g @1", "f"],
        ),
        (
            "f() ( cd /; rm -rf x ); f",
            &["cd / @1 [sub]", "rm -rf x @1 [sub]", "f"],
        ),
        ("f() { cd /; }; f; rm -rf x", &["cd / @1", "f", "rm -rf x"]),
        ("f() { echo }; }; f", &["echo } @1", "f"]),
    ]);
}

#[test]
fn arithmetic_and_single_quotes_run_nothing() {
    table(&[
        ("echo $(( 1 + 2 ))", &["echo ?($(( 1 + 2 )))"]),
        ("time -p rm x; ! rm y", &["rm x", "rm y"]),
        ("echo $(( (1 + 2) * 3 ))", &["echo ?($(( (1 + 2) * 3 )))"]),
        ("(( i++ )); (( j = i * 2 ))", &[]),
        ("echo $[1+2]", &["echo ?($[1+2])"]),
        (
            "for ((i=0; i<3; i++)); do echo $i; done",
            &["echo ?($i) [cond]"],
        ),
        ("echo '`rm -rf /`'", &["echo `rm -rf /`"]),
        ("echo '$(rm -rf /)'", &["echo $(rm -rf /)"]),
        (
            "echo $(( $(rm q) + 1 ))",
            &["rm q @1 [sub]", "echo ?($(( $(rm q) + 1 )))"],
        ),
        (
            "[[ -f x && $(rm y) ]] && rm z",
            &["rm y @1 [sub]", "rm z [cond]"],
        ),
    ]);
}

#[test]
fn each_command_says_whether_it_runs_in_a_subshell_or_may_not_run() {
    table(&[
        ("cd x && rm y; cd z", &["cd x", "rm y [cond]", "cd z"]),
        ("false || cd x; rm y", &["false", "cd x [cond]", "rm y"]),
        (
            "(cd w; rm v) | cat & echo done",
            &["cd w [sub]", "rm v [sub]", "cat [sub]", "echo done"],
        ),
        ("cd a | cat; rm b", &["cd a [sub]", "cat [sub]", "rm b"]),
        ("cd a & rm b", &["cd a [sub]", "rm b"]),
        (
            "{ cd a; rm b; } & cd c",
            &["cd a [sub]", "rm b [sub]", "cd c"],
        ),
        ("{ cd a; rm b; }", &["cd a", "rm b"]),
        (
            "echo $(cd a; rm b)",
            &["cd a @1 [sub]", "rm b @1 [sub]", "echo ?($(cd a; rm b))"],
        ),
        (
            "if cd a; then rm b; elif cd c; then rm d; else rm e; fi; rm f",
            &[
                "cd a",
                "rm b [cond]",
                "cd c [cond]",
                "rm d [cond]",
                "rm e [cond]",
                "rm f",
            ],
        ),
        (
            "while cd a; do rm b; done; until false; do cd c; done",
            &["cd a", "rm b [cond]", "false", "cd c [cond]"],
        ),
        (
            "for f in a b; do cd $f; done; rm x",
            &["cd a [cond]", "cd b @1 [cond]", "rm x"],
        ),
        (
            "for f in a $(ls); do cd $f; done",
            &["ls @1 [sub]", "cd ?($f) [cond]"],
        ),
        (
            "case $x in a|b) cd y;; (*) rm z;; esac; rm w",
            &["cd y [cond]", "rm z [cond]", "rm w"],
        ),
        (
            "a && { cd b; rm c; }; rm d",
            &["a", "cd b [cond]", "rm c [cond]", "rm d"],
        ),
        (
            "a && (cd b) || rm c",
            &["a", "cd b [sub] [cond]", "rm c [cond]"],
        ),
        ("cat <(cd a)", &["cd a @1 [sub]", "cat ?(/dev/fd/cd a)"]),
    ]);
}

#[test]
fn unquoted_expansions_are_split_into_words() {
    table(&[
        ("W='rm -rf ~'; $W", &["rm -rf ~"]),
        ("W=\"rm -rf\"; $W /", &["rm -rf /"]),
        ("W='a b'; echo \"$W\" $W", &["echo a b a b"]),
        ("E=; rm $E -rf \"$E\"", &["rm -rf "]),
        ("set -- a; X='-r -f'; rm $X /", &["set -- a", "rm -r -f /"]),
        (
            "rm -rf ${HOME:-/tmp}/x ${NOPE:-/y}",
            &["rm -rf /home/u/x /y"],
        ),
        (
            ": ${X:=~/a}; rm $X ${Y=b} $Y; P=$(pwd); rm ${P:-/}",
            &[
                ": /home/u/a",
                "rm /home/u/a b b",
                "pwd @1 [sub]",
                "rm ?(${P:-/})",
            ],
        ),
        ("exec > >(tee log)", &["tee log @1 [sub]", "exec"]),
        (
            "a=(x $(rm y) z); echo ${a[0]}",
            &["rm y @1 [sub]", "echo ?(${a[0]})"],
        ),
    ]);
}

#[test]
fn a_pipe_s_feeders_are_found_past_nested_commands() {
    let line = "curl x | tee y | sh; echo rm -rf / | bash";
    let commands = read(line, &env());
    let programs =
        |at: usize| -> Vec<&str> { feeders(&commands, at).iter().map(|c| c.program()).collect() };
    let at = |program: &str| {
        commands
            .iter()
            .position(|c| c.program() == program)
            .unwrap()
    };
    assert_eq!(programs(at("sh")), vec!["tee", "curl"]);
    assert_eq!(programs(at("bash")), vec!["echo"]);
    assert_eq!(programs(at("curl")), Vec::<&str>::new());
}

/// Lines of random pieces of shell and of the languages read inside it: reading any of them gives a
/// result, and never panics.
#[test]
fn random_lines_never_panic() {
    const PIECES: &[&str] = &[
        "rm",
        " ",
        "'",
        "\"",
        "$(",
        ")",
        "(",
        "`",
        "{",
        "}",
        ";",
        "&",
        "|",
        "<<",
        "EOF",
        "\n",
        "$",
        "x=",
        "f()",
        "{ ",
        "if ",
        "then ",
        "fi",
        "case ",
        " in ",
        ";;",
        "esac",
        "[[",
        "]]",
        "((",
        "))",
        "$((",
        "${",
        "sh -c ",
        "python3 -c ",
        "awk ",
        "xargs ",
        "parallel ",
        ":::",
        "find . -exec ",
        "\\",
        "#",
        "~",
        "*",
        "$@",
        "$1",
        "env -S ",
        "printf ",
        "echo ",
        "os.system(",
        "\"rm x\"",
        "[",
        "]",
        ",",
        "function ",
        "eval ",
        "trap ",
        "%x(",
        "qx(",
        "$'\\x",
        "<(",
        ">(",
        ">",
        "2>&1",
        "<<<",
        "<<-",
        "-",
        "--",
        "é",
        "f",
        "node -e ",
        "perl -e ",
        "ruby -e ",
        "print | \"sh\"",
        "system(",
        "[[=",
        "$[",
        "for ",
        "do ",
        "done",
        "while ",
        "{a,b}",
        "W='a b'; $W",
        "$W",
        "%s",
        "-I{}",
        "{}",
        "+",
        "\t",
        "@(",
        "!",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |bound: usize| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) as usize % bound
    };
    for _ in 0..20_000 {
        let length = next(40);
        let line: String = (0..length).map(|_| PIECES[next(PIECES.len())]).collect();
        let _ = read(&line, &env());
    }
}

#[test]
fn a_line_left_inside_a_quote_says_so_at_its_own_level_only() {
    let open = |line: &str| {
        read(line, &Env::default())
            .iter()
            .any(|c| c.unknown_from.as_deref() == Some(UNCLOSED_QUOTE))
    };
    assert!(open("rm -rf x 'y"));
    assert!(open("echo \"x"));
    assert!(!open("echo 'x' \"y\""));
    assert!(!open("echo \"it's\" # don't"));
    assert!(!open("cat <<'E'\ndon't\nE"));
    // Inside a nested line the open quote is that shell's error: it runs nothing.
    assert!(!open("bash -c \"'x\""));
}

#[test]
fn positional_parameters_doubled_again_and_again_stay_bounded() {
    // Each `set -- "$@" "$@"` doubles them: 2 << 12 words unbounded, and twice as many for each more.
    let line = format!(
        "set -- a b; {} rm -rf \"$@\"",
        "set -- \"$@\" \"$@\";".repeat(12)
    );
    let commands = read(&line, &env());
    let rm = commands.last().unwrap();
    assert_eq!(rm.program(), "rm");
    assert!(
        rm.words.len() <= context::MAX_POSITIONAL + 2,
        "{} words",
        rm.words.len()
    );
    assert!(
        rm.args().iter().any(|w| !w.known),
        "what was not kept cannot be known"
    );
    // A few are kept as they are.
    assert_eq!(
        programs("set -- a b; set -- \"$@\" \"$@\"; rm \"$@\""),
        vec![
            vec!["set", "--", "a", "b"],
            vec!["set", "--", "a", "b", "a", "b"],
            vec!["rm", "a", "b", "a", "b"]
        ]
    );
}
