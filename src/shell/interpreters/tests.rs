//! Code given to interpreters, read for the commands it runs and the files it deletes.

/// Each line, and every command read from it, in the order they run (see `shell::tests::show`).
fn table(rows: &[(&str, &[&str])]) {
    for (line, expected) in rows {
        assert_eq!(crate::shell::tests::show(line), *expected, "{line}");
    }
}

/// The commands read from each line but the interpreter's own (its last).
fn inner(rows: &[(&str, &[&str])]) {
    for (line, expected) in rows {
        let mut read = crate::shell::tests::show(line);
        read.pop();
        assert_eq!(read, *expected, "{line}");
    }
}

#[test]
fn awk_runs_what_system_and_its_pipes_are_given() {
    inner(&[
        ("awk 'BEGIN{system(\"rm -rf /\")}'", &["rm -rf / @1 [sub]"]),
        (
            "gawk -F: '{ system(\"rm \" $1) }' f",
            &["rm ?((expression)) @1 [sub]"],
        ),
        (
            "mawk 'BEGIN { print \"rm -rf /\" | \"sh\" }'",
            &["sh @1 [sub]", "rm -rf / @1 [sub]"],
        ),
        ("nawk '{ \"date\" | getline d }'", &["date @1 [sub]"]),
        ("awk -f prog.awk x", &[]),
        ("awk '{ print $1 }' f", &[]),
        (
            "awk '{ system($0) }'",
            &["?(system($0)) @1 [sub] [unknown]"],
        ),
    ]);
}

#[test]
fn python_runs_its_shell_calls_and_deletes() {
    inner(&[
        (
            "python -c 'import os; os.system(\"rm -rf /\")'",
            &["rm -rf / @1 [sub]"],
        ),
        (
            "python3 -c 'import os; os.popen(\"rm -rf ~\")'",
            &["rm -rf /home/u @1 [sub]"],
        ),
        (
            "python3 -c 'import subprocess; subprocess.run([\"rm\",\"-rf\",\"/\"])'",
            &["rm -rf / @1 [sub]"],
        ),
        (
            "python3 -c 'import subprocess as sp; sp.check_call(\"rm -rf /\", shell=True)'",
            &["rm -rf / @1 [sub]"],
        ),
        (
            "python3 -c 'import subprocess; subprocess.Popen([\"sudo\", \"rm\", \"-rf\", \"/\"])'",
            &["rm -rf / @2 [sub]", "sudo rm -rf / @1 [sub]"],
        ),
        (
            "python3 -c 'import shutil; shutil.rmtree(\"/\"); shutil.rmtree(p)'",
            &["rm -r / @1 [sub]", "rm -r ?(p) @1 [sub]"],
        ),
        (
            "python3 -c 'import os; os.remove(\"/etc/x\"); os.unlink(\"/y\"); os.rmdir(\"/d\")'",
            &["rm /etc/x @1 [sub]", "rm /y @1 [sub]", "rmdir /d @1 [sub]"],
        ),
        (
            "python3 -c 'import os; os.system(cmd)'",
            &["?(os.system(cmd)) @1 [sub] [unknown]"],
        ),
        (
            "python3 -c 'import os; os.system(\"rm -rf \" + path)'",
            &["rm -rf ?((expression)) @1 [sub]"],
        ),
        (
            "python3 -c 'import os; os.system(f\"rm -rf {p}\")'",
            &["rm -rf ?((expression)) @1 [sub]"],
        ),
        (
            "python3 - <<EOF\nimport os\nos.system('rm -rf ~')\nEOF",
            &["rm -rf /home/u @1 [sub]"],
        ),
        (
            "echo 'import os; os.system(\"rm -rf /\")' | python3",
            &[
                "echo import os; os.system(\"rm -rf /\") [sub]",
                "rm -rf / @1 [sub]",
            ],
        ),
        ("python3 script.py -c x", &[]),
        ("python3 -m http.server", &[]),
        (
            "python3 -c 'print(1); x.remove(2); app.run(debug=True)'",
            &[],
        ),
    ]);
}

#[test]
fn javascript_perl_ruby_php_and_lua_run_their_shell_calls_and_deletes() {
    inner(&[
        (
            "node -e 'require(\"child_process\").execSync(\"rm -rf /\")'",
            &["rm -rf / @1 [sub]"],
        ),
        (
            "node -e 'const cp = require(\"child_process\"); cp.spawn(\"rm\", [\"-rf\", \"/\"])'",
            &["rm -rf / @1 [sub]"],
        ),
        (
            "node --eval 'require(\"child_process\").execFileSync(\"rm\", [\"-rf\", \"~\"])'",
            &["rm -rf ~ @1 [sub]"],
        ),
        (
            "node -e 'require(\"fs\").rmSync(\"/\", {recursive: true, force: true})'",
            &["rm -r / @1 [sub]"],
        ),
        ("node -p 'fs.unlinkSync(\"/x\")'", &["rm /x @1 [sub]"]),
        ("node -e 'fs.rmdirSync(\"/d\")'", &["rmdir /d @1 [sub]"]),
        ("node -e 'console.log(/a/.exec(s))'", &[]),
        (
            "deno eval 'Deno.remove(\"/x\", {recursive: true})'",
            &["rm -r /x @1 [sub]"],
        ),
        ("bun -e 'await $`rm -rf /`'", &["rm -rf / @1 [sub]"]),
        ("perl -e 'system(\"rm -rf /\")'", &["rm -rf / @1 [sub]"]),
        (
            "perl -E 'system \"rm\", \"-rf\", \"/\"'",
            &["rm -rf / @1 [sub]"],
        ),
        (
            "perl -e '`rm -rf ~`; qx(ls)'",
            &["rm -rf /home/u @1 [sub]", "ls @1 [sub]"],
        ),
        (
            "perl -MFile::Path -e 'rmtree(\"/a\"); remove_tree(\"/b\"); unlink \"/c\"'",
            &["rm -r /a @1 [sub]", "rm -r /b @1 [sub]", "rm /c @1 [sub]"],
        ),
        ("perl -ne 'print if /x/' f", &[]),
        // A glob call's pattern is the files deleted.
        ("perl -e 'unlink glob(\"/etc/*\")'", &["rm /etc/* @1 [sub]"]),
        (
            "perl -e 'unlink glob \"/home/*/.*\"'",
            &["rm /home/*/.* @1 [sub]"],
        ),
        (
            "ruby -e 'FileUtils.rm_rf(Dir[\"/home/*\"]); FileUtils.rm(Dir.glob(\"/x/*\"))'",
            &["rm -rf /home/* @1 [sub]", "rm -f /x/* @1 [sub]"],
        ),
        ("php -r 'unlink(glob($p));'", &["rm ?(glob($p)) @1 [sub]"]),
        ("perl -e'exec \"rm -rf /\"'", &["rm -rf / @1 [sub]"]),
        (
            "ruby -e 'system(\"rm -rf /\"); `rm x`; %x(rm y)'",
            &["rm -rf / @1 [sub]", "rm x @1 [sub]", "rm y @1 [sub]"],
        ),
        (
            "ruby -rfileutils -e 'FileUtils.rm_rf(\"/z\"); FileUtils.rm_r(\"/w\")'",
            &["rm -rf /z @1 [sub]", "rm -rf /w @1 [sub]"],
        ),
        (
            "php -r 'system(\"rm -rf /\"); shell_exec(\"ls\"); unlink(\"/x\");'",
            &["rm -rf / @1 [sub]", "ls @1 [sub]", "rm /x @1 [sub]"],
        ),
        ("php -r '$db->exec($sql);'", &[]),
        (
            "lua -e 'os.execute(\"rm -rf /\"); os.remove(\"/y\")'",
            &["rm -rf / @1 [sub]", "rm /y @1 [sub]"],
        ),
    ]);
    table(&[(
        "node -e 'require(\"child_process\").exec(cmd)'",
        &[
            "?(exec(cmd)) @1 [sub] [unknown]",
            "node -e require(\"child_process\").exec(cmd)",
        ],
    )]);
}
